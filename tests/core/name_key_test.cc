#include "wow/name_key.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace wow {
namespace {

using Kind = NameKeyResult::Kind;

std::string KeyOf(std::string_view name) {
  const NameKeyResult result = MakeNameKey(name);
  EXPECT_TRUE(result.ok()) << "no key for \"" << name << "\"";
  return result.key;
}

TEST(NameKey, TrimsAndFoldsTheCaseOfEveryScript) {
  EXPECT_EQ(KeyOf("Contoso"), "contoso");
  EXPECT_EQ(KeyOf("  CONTOSO \t\n"), "contoso");
  EXPECT_EQ(KeyOf("\u00C4PFEL"), KeyOf("a\u0308pfel"));  // NFC: precomposed and combining
  EXPECT_EQ(KeyOf("\u00C4PFEL"), "\u00E4pfel");
  EXPECT_EQ(KeyOf("\u039F\u0394\u039F\u03A3"), KeyOf("\u03BF\u03B4\u03BF\u03C2"));  // ΟΔΟΣ, οδος
}

TEST(NameKey, SharpSIsDoubleS) {
  EXPECT_EQ(KeyOf("Stra\u00DFe"), "strasse");
  EXPECT_EQ(KeyOf("STRASSE"), "strasse");
}

TEST(NameKey, DefaultIgnorableCharactersAreRemoved) {
  for (const char* name : {"Con\u00ADtoso", "Contoso\u200B", "Con\u2060toso", "Con\u200Dtoso",
                           "\uFEFFContoso", "Con\u200Etoso"}) {
    EXPECT_EQ(KeyOf(name), "contoso") << name;
  }
}

TEST(NameKey, CompatibilityFormsAreTheirPlainLetters) {
  EXPECT_EQ(KeyOf("\uFF23\uFF4F\uFF4E\uFF54\uFF4F\uFF53\uFF4F"), "contoso");  // full-width
  EXPECT_EQ(KeyOf("\uFB01ne"), "fine");                                       // the ligature fi
  EXPECT_EQ(KeyOf("Contoso\u3000Ltd"), "contoso ltd");                        // ideographic space
}

TEST(NameKey, NothingVisibleIsBlank) {
  for (const char* name :
       {"", "   ", "\t\n", "\u200B", "\u200B\u200B\u200B", "\u00AD", " \u200B \u2060 ", "\u3000"}) {
    const NameKeyResult result = MakeNameKey(name);
    EXPECT_EQ(result.kind, Kind::kBlank) << name;
    EXPECT_EQ(result.key, "");
  }
}

TEST(NameKey, RefusesCharactersNotAllowedInAName) {
  const std::vector<std::pair<std::string, char32_t>> refused{
      {"Con\ttoso", U'\t'},                  // a control inside (trimming takes only the ends)
      {std::string("Con\0toso", 8), U'\0'},  // NUL
      {"Con\u0085toso", U'\u0085'},          // a C1 control
      {"Con\u2028toso", U'\u2028'},          // line separator
      {"Con\u2029toso", U'\u2029'},          // paragraph separator
      {"\u202Eosotnoc", U'\u202E'},          // right-to-left override
      {"Con\u202Atoso", U'\u202A'},          // left-to-right embedding
      {"Con\u202Ctoso", U'\u202C'},          // pop directional formatting
      {"\u2067Contoso\u2069", U'\u2067'},    // right-to-left isolate
      {"Con\u2068toso", U'\u2068'},          // first strong isolate
      {"Con\uE000toso", U'\uE000'},          // private use
      {"Con\U000F0000toso", U'\U000F0000'},  // supplementary private use
      {"Con\U000E01F0toso", U'\U000E01F0'},  // unassigned
      {"Con\U0001FFFEtoso", U'\U0001FFFE'},  // a noncharacter
      {"Con\uFDD0toso", U'\uFDD0'},          // a noncharacter
  };
  for (const auto& [name, code_point] : refused) {
    const NameKeyResult result = MakeNameKey(name);
    EXPECT_EQ(result.kind, Kind::kNotAllowed) << CodePointLabel(code_point);
    EXPECT_EQ(result.code_point, code_point) << CodePointLabel(code_point);
    EXPECT_EQ(result.key, "");
  }
}

TEST(NameKey, RefusesIllFormedUtf8) {
  for (const std::string name : {"Con\xFFtoso", "\xC3", "\xED\xA0\x80", "\xC0\xAF"}) {
    EXPECT_EQ(MakeNameKey(name).kind, Kind::kNotUtf8);
  }
}

TEST(NameKey, LatinLookalikesOfAnotherScriptInALatinNameAreLatin) {
  EXPECT_EQ(KeyOf("p\u0430ypal"), "paypal");                  // Cyrillic а
  EXPECT_EQ(KeyOf("P\u0410YPAL"), "paypal");                  // Cyrillic А
  EXPECT_EQ(KeyOf("M\u0456\u0441rosoft"), "microsoft");       // Cyrillic і, с; the m kept
  EXPECT_EQ(KeyOf("Micr\u03BFsoft"), "microsoft");            // Greek ο
  EXPECT_EQ(KeyOf("\u041C\u0456\u0441rosoft"), "microsoft");  // Cyrillic М
  EXPECT_EQ(KeyOf("\u043C\u0456\u0441rosoft"), "microsoft");  // Cyrillic м, as its capital
  EXPECT_EQ(KeyOf("\u0391pple"), "apple");                    // Greek Α
  EXPECT_EQ(KeyOf("\u13AApple"), "apple");                    // Cherokee Ꭺ
  EXPECT_EQ(KeyOf("Appl\u0435"), "apple");                    // Cyrillic е
}

TEST(NameKey, NamesInOneScriptKeepTheirLetters) {
  EXPECT_EQ(KeyOf("\u6771\u4EAC\u30C7\u30B6\u30A4\u30F3"), "\u6771\u4EAC\u30C7\u30B6\u30A4\u30F3");
  EXPECT_EQ(KeyOf("\u30BD\u30CB\u30FC"), "\u30BD\u30CB\u30FC");            // ソニー
  EXPECT_EQ(KeyOf("Sony \u30BD\u30CB\u30FC"), "sony \u30BD\u30CB\u30FC");  // Latin and Katakana
  EXPECT_EQ(KeyOf("\u041C\u043E\u0441\u043A\u0432\u0430"), "\u043C\u043E\u0441\u043A\u0432\u0430");
  EXPECT_EQ(KeyOf("\u039A\u03CC\u03C3\u03BC\u03BF\u03C2"), "\u03BA\u03CC\u03C3\u03BC\u03BF\u03C3");
  EXPECT_EQ(KeyOf("modern"), "modern");  // not the skeleton "rnodern"
  EXPECT_EQ(KeyOf("Office 365"), "office 365");
}

TEST(NameKey, DistinctNamesStayDistinct) {
  const std::vector<std::string> names{
      "Contoso",
      "Contoso Ltd",
      "Bum",
      "Burn",
      "caf\u00E9",
      "cafe",
      "coco",
      "\u0441\u043E\u0441\u043E",              // Cyrillic сосо: a whole other script
      "\u041C\u043E\u0441\u043A\u0432\u0430",  // Москва
      "\u039A\u03CC\u03C3\u03BC\u03BF\u03C2",  // Κόσμος
      "\u6771\u4EAC",                          // 東京
      "\u4EAC\u90FD",                          // 京都
      "\u30BD\u30CB\u30FC",                    // ソニー
      "\u0AA8\u0AAE\u0AB8\u0ACD\u0AA4\u0AC7",  // Gujarati
      "\u05E9\u05DC\u05D5\u05DD",              // Hebrew
      "\u0645\u0631\u062D\u0628\u0627",        // Arabic
      "B0B",
      "BOB",
      "l1",
      "ll",
      "\u0430",              // Cyrillic а alone
      "\u0392\u041E\u0412",  // Greek Β, Cyrillic О В: no Latin
  };
  std::set<std::string> keys;
  for (const std::string& name : names) keys.insert(KeyOf(name));
  EXPECT_EQ(keys.size(), names.size());
}

TEST(NameKey, TheKeyOfAKeyIsTheKey) {
  for (const char* name : {"Contoso", "Stra\u00DFe", "p\u0430ypal", "\u13AApple", "\u0130stanbul",
                           "\u039F\u0394\u039F\u03A3", "\u042F\u043D\u0434\u0435\u043A\u0441 Go",
                           "\uFB01ne", "\uFDFA"}) {
    const std::string key = KeyOf(name);
    EXPECT_EQ(KeyOf(key), key) << name;
  }
}

TEST(NameKey, AKeyMayBeLongerThanItsName) {
  const std::string name = "\uFDFA";  // one character, 3 bytes, of 18 letters and spaces
  EXPECT_GT(KeyOf(name).size(), 30u);
}

TEST(NameKey, TrimNameTakesOnlyWhiteSpaceAtTheEnds) {
  EXPECT_EQ(TrimName("  Con toso \u3000\n"), "Con toso");
  EXPECT_EQ(TrimName("\u200BContoso"), "\u200BContoso");  // not white space: the name keeps it
  EXPECT_EQ(TrimName("a\xFF"), "a\uFFFD");
}

TEST(NameKey, CodePointLabelNamesTheCharacter) {
  EXPECT_EQ(CodePointLabel(U'\u202E'), "U+202E RIGHT-TO-LEFT OVERRIDE");
  EXPECT_EQ(CodePointLabel(U'\U0001F600'), "U+1F600 GRINNING FACE");
  EXPECT_EQ(CodePointLabel(U'\uE000'), "U+E000");
  EXPECT_EQ(CodePointLabel(U'\x07'), "U+0007");
}

}  // namespace
}  // namespace wow
