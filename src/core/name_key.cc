#include "wow/name_key.h"

#include <fmt/format.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/uscript.h>
#include <unicode/uspoof.h>
#include <unicode/utf8.h>

#include <memory>
#include <optional>

#include "wow/error.h"

namespace wow {
namespace {

// ICU's NFKC and NFKC_Casefold normalisers and a spoof checker, built once. ICU builds its data
// lazily with its own once-flags; building both under a C++ static makes the hand-over to other
// threads one that ThreadSanitizer (and the language) sees. A spoof checker's skeleton is safe to
// compute from several threads on one instance.
struct NameKeyIcu {
  const icu::Normalizer2* nfkc = nullptr;
  const icu::Normalizer2* fold = nullptr;
  std::unique_ptr<USpoofChecker, decltype(&uspoof_close)> spoof{nullptr, &uspoof_close};
};

[[noreturn]] void ThrowIcuFailure(const char* what, UErrorCode status) {
  throw Error(ErrorCode::kInternal, std::string("ICU ") + what + ": " + u_errorName(status) +
                                        " (is the ICU data installed?)");
}

const NameKeyIcu& Icu() {
  static const NameKeyIcu icu = [] {
    NameKeyIcu built;
    UErrorCode status = U_ZERO_ERROR;
    built.nfkc = icu::Normalizer2::getNFKCInstance(status);
    if (U_FAILURE(status)) ThrowIcuFailure("has no NFKC normaliser", status);
    built.fold = icu::Normalizer2::getNFKCCasefoldInstance(status);
    if (U_FAILURE(status)) ThrowIcuFailure("has no NFKC_Casefold normaliser", status);
    built.spoof.reset(uspoof_open(&status));
    if (U_FAILURE(status)) ThrowIcuFailure("cannot open a spoof checker", status);
    icu::UnicodeString probe = icu::UnicodeString::fromUTF8("\xD0\xB0");  // Cyrillic a
    icu::UnicodeString skeleton;
    uspoof_getSkeletonUnicodeString(built.spoof.get(), 0, probe, skeleton, &status);
    built.nfkc->normalize(probe, status);  // loads the data now, under this static
    built.fold->normalize(probe, status);
    if (U_FAILURE(status))
      ThrowIcuFailure("cannot load its normalisation or confusables data", status);
    return built;
  }();
  return icu;
}

icu::UnicodeString Trimmed(const icu::UnicodeString& text) {
  int32_t begin = 0;
  int32_t end = text.length();
  while (begin < end && u_isUWhiteSpace(text.char32At(begin))) begin = text.moveIndex32(begin, 1);
  while (end > begin && u_isUWhiteSpace(text.char32At(text.moveIndex32(end, -1)))) {
    end = text.moveIndex32(end, -1);
  }
  return icu::UnicodeString(text, begin, end - begin);
}

icu::UnicodeString TrimmedUtf8(std::string_view name) {
  return Trimmed(icu::UnicodeString::fromUTF8(
      icu::StringPiece(name.data(), static_cast<int32_t>(name.size()))));
}

bool IsWellFormedUtf8(std::string_view s) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(s.data());
  const auto length = static_cast<int32_t>(s.size());
  for (int32_t i = 0; i < length;) {
    UChar32 c;
    U8_NEXT(bytes, i, length, c);
    if (c < 0) return false;
  }
  return true;
}

// Step 2 of the rule. (Surrogates cannot be in well-formed UTF-8.)
bool NotAllowed(UChar32 c) {
  switch (u_charType(c)) {
    case U_CONTROL_CHAR:
    case U_LINE_SEPARATOR:
    case U_PARAGRAPH_SEPARATOR:
    case U_PRIVATE_USE_CHAR:
    case U_UNASSIGNED:
      return true;
    default:
      break;
  }
  switch (u_charDirection(c)) {
    case U_LEFT_TO_RIGHT_EMBEDDING:
    case U_LEFT_TO_RIGHT_OVERRIDE:
    case U_RIGHT_TO_LEFT_EMBEDDING:
    case U_RIGHT_TO_LEFT_OVERRIDE:
    case U_POP_DIRECTIONAL_FORMAT:
    case U_LEFT_TO_RIGHT_ISOLATE:
    case U_RIGHT_TO_LEFT_ISOLATE:
    case U_FIRST_STRONG_ISOLATE:
    case U_POP_DIRECTIONAL_ISOLATE:
      return true;
    default:
      return false;
  }
}

UScriptCode ScriptOf(UChar32 c) {
  UErrorCode status = U_ZERO_ERROR;
  return uscript_getScript(c, &status);  // fails only for c out of range
}

bool IsLatinOrCommon(UScriptCode script) {
  return script == USCRIPT_LATIN || script == USCRIPT_COMMON || script == USCRIPT_INHERITED;
}

// Whether `text` is Latin text: Latin letters, with Common and Inherited characters (digits,
// marks) only beside them.
bool IsLatinText(const icu::UnicodeString& text) {
  bool latin = false;
  for (int32_t i = 0; i < text.length(); i = text.moveIndex32(i, 1)) {
    const UScriptCode script = ScriptOf(text.char32At(i));
    if (!IsLatinOrCommon(script)) return false;
    latin = latin || script == USCRIPT_LATIN;
  }
  return latin;
}

icu::UnicodeString Normalized(const icu::Normalizer2& normalizer, const icu::UnicodeString& text) {
  UErrorCode status = U_ZERO_ERROR;
  icu::UnicodeString normal = normalizer.normalize(text, status);
  if (U_FAILURE(status)) ThrowIcuFailure("cannot normalise a name", status);
  return normal;
}

bool IsAscii(const icu::UnicodeString& text) {
  for (int32_t i = 0; i < text.length(); ++i) {
    if (text.charAt(i) > 0x7F) return false;
  }
  return true;
}

// The Latin text `c` looks like, or `c` itself: the UTS #39 skeleton of its case folding or of
// its capital, whichever is Latin text, ASCII first (Cyrillic і is i, м is not ʍ but m as М is
// M). A letter and its capital give the same text, so a name lower-cased has the name's key.
icu::UnicodeString LatinLookalike(UChar32 c) {
  std::optional<icu::UnicodeString> latin;
  for (const UChar32 form : {u_foldCase(c, U_FOLD_CASE_DEFAULT), u_toupper(c)}) {
    UErrorCode status = U_ZERO_ERROR;
    icu::UnicodeString skeleton;
    uspoof_getSkeletonUnicodeString(Icu().spoof.get(), 0, icu::UnicodeString(form), skeleton,
                                    &status);
    if (U_FAILURE(status)) ThrowIcuFailure("cannot compute a skeleton", status);
    if (!IsLatinText(skeleton)) continue;
    if (IsAscii(skeleton)) return skeleton;
    if (!latin) latin = skeleton;
  }
  return latin.value_or(icu::UnicodeString(c));
}

// Step 4, on `text` in NFKC: in text with a Latin letter, each letter of another script that looks
// like Latin text becomes that text.
icu::UnicodeString LatinLookalikesResolved(const icu::UnicodeString& text) {
  bool has_latin = false;
  bool has_other = false;
  for (int32_t i = 0; i < text.length(); i = text.moveIndex32(i, 1)) {
    const UScriptCode script = ScriptOf(text.char32At(i));
    has_latin = has_latin || script == USCRIPT_LATIN;
    has_other = has_other || !IsLatinOrCommon(script);
  }
  if (!has_latin || !has_other) return text;
  icu::UnicodeString resolved;
  for (int32_t i = 0; i < text.length(); i = text.moveIndex32(i, 1)) {
    const UChar32 c = text.char32At(i);
    if (IsLatinOrCommon(ScriptOf(c))) {
      resolved.append(c);
    } else {
      resolved.append(LatinLookalike(c));
    }
  }
  return resolved;
}

std::string ToUtf8(const icu::UnicodeString& text) {
  std::string out;
  text.toUTF8String(out);
  return out;
}

}  // namespace

NameKeyResult MakeNameKey(std::string_view name) {
  NameKeyResult result;
  if (!IsWellFormedUtf8(name)) {
    result.kind = NameKeyResult::Kind::kNotUtf8;
    return result;
  }
  const icu::UnicodeString trimmed = TrimmedUtf8(name);
  for (int32_t i = 0; i < trimmed.length(); i = trimmed.moveIndex32(i, 1)) {
    const UChar32 c = trimmed.char32At(i);
    if (NotAllowed(c)) {
      result.kind = NameKeyResult::Kind::kNotAllowed;
      result.code_point = static_cast<char32_t>(c);
      return result;
    }
  }
  const icu::UnicodeString key =
      Trimmed(Normalized(*Icu().fold, LatinLookalikesResolved(Normalized(*Icu().nfkc, trimmed))));
  if (key.isEmpty()) {
    result.kind = NameKeyResult::Kind::kBlank;
    return result;
  }
  result.key = ToUtf8(key);
  return result;
}

std::string TrimName(std::string_view name) { return ToUtf8(TrimmedUtf8(name)); }

std::string CodePointLabel(char32_t code_point) {
  char name[256];
  UErrorCode status = U_ZERO_ERROR;
  const int32_t length =
      u_charName(static_cast<UChar32>(code_point), U_UNICODE_CHAR_NAME, name, sizeof name, &status);
  if (U_FAILURE(status) || length <= 0)
    return fmt::format("U+{:04X}", static_cast<uint32_t>(code_point));
  return fmt::format("U+{:04X} {}", static_cast<uint32_t>(code_point),
                     std::string_view(name, length));
}

}  // namespace wow
