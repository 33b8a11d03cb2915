// NameKey: the key a name people type reserves, so that names which look alike are one key.
//
// A reserved key (DecideScope::Reserve) is compared byte for byte. A name typed by people needs a
// key in which the spellings a reader cannot tell apart are equal. MakeNameKey builds it in five
// steps, all from Unicode data (ICU):
//   1. Trim: leading and trailing White_Space go.
//   2. Refuse the characters not allowed in a name: controls (Cc), line and paragraph separators
//      (Zl, Zp), the bidirectional embeddings, overrides and isolates (U+202A-U+202E,
//      U+2066-U+2069), private use (Co), unassigned code points and noncharacters (Cn).
//   3. NFKC: compatibility forms become their plain letters (full-width ｃｏｎｔｏｓｏ, the
//      ligature ﬁ, ℌ).
//   4. Confusables: in a name with Latin letters, each letter of another script that looks like
//      Latin text (the UTS #39 skeleton of its case folding or of its capital is Latin text,
//      ASCII first) becomes that text: Cyrillic а is a, so pаypal is paypal; Cyrillic і is i;
//      Cyrillic м and М are m. Latin letters, and every letter of a name without Latin letters,
//      are kept as they are.
//   5. NFKC_Casefold: case folding for every script (Straße and STRASSE are one), NFC, and every
//      default-ignorable code point removed (the soft hyphen, the zero-width space and joiners,
//      the word joiner, the bidirectional marks). White space the folding leaves at either end
//      is trimmed; a name with nothing left is blank.
// Why not the UTS #39 skeleton itself: it maps Latin letters too (m to rn, 1 to l, 0 to O), so
// as every name's key it would merge Burn and Bum and change the key of every name with an m;
// as the key of the mixed-script names only, it would key Mіcrosoft (a Cyrillic і) rnicrosoft,
// beside microsoft. What stays distinct: names that differ in a visible letter of one script (Burn
// and Bum, café and cafe, B0B and BOB), a name in another script alone that looks like a Latin
// one (Cyrillic сосо and Latin coco), names of scripts other than Latin mixed together, runs of
// inner spaces of different lengths.
// The rule is idempotent (the key of a key is the key) and blind to case (a name lower-cased has
// the name's key).
//
// Thread-safety: the functions are safe to call from any number of threads at once.
#pragma once

#include <string>
#include <string_view>

namespace wow {

struct NameKeyResult {
  enum class Kind {
    kKey,         // `key` is the name's key
    kBlank,       // nothing visible is left: empty, white space, default-ignorable characters
    kNotAllowed,  // `code_point` is the first character not allowed in a name
    kNotUtf8,     // the name is not well-formed UTF-8
  };
  Kind kind = Kind::kKey;
  std::string key;          // kKey: the key, UTF-8, not empty; otherwise empty
  char32_t code_point = 0;  // kNotAllowed: the character; otherwise 0

  bool ok() const { return kind == Kind::kKey; }
};

// The key of `name` (the rule above). Every outcome of any input is a value; throws
// Error(kInternal) only when ICU has no data (a broken installation). The key may be longer than
// the name (NFKC expands some characters: U+FDFA is 18 characters); check its length against the
// store's limit (kMaxReservationKeyBytes) before reserving it.
NameKeyResult MakeNameKey(std::string_view name);

// `name` without leading and trailing White_Space (step 1), the form to show and store. Ill-formed
// UTF-8 is replaced by U+FFFD. Never throws.
std::string TrimName(std::string_view name);

// "U+202E RIGHT-TO-LEFT OVERRIDE": the code point and its Unicode name, for messages
// ("U+E000" alone when it has no name).
std::string CodePointLabel(char32_t code_point);

}  // namespace wow
