#include "catalog.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include "wow/error.h"

namespace eshop {
namespace {

using wow::Decision;
using wow::DecideScope;

icu::UnicodeString TrimmedUnicode(std::string_view name) {
  icu::UnicodeString text = icu::UnicodeString::fromUTF8(
      icu::StringPiece(name.data(), static_cast<int32_t>(name.size())));
  int32_t begin = 0;
  int32_t end = text.length();
  while (begin < end && u_isUWhiteSpace(text.char32At(begin))) begin = text.moveIndex32(begin, 1);
  while (end > begin && u_isUWhiteSpace(text.char32At(text.moveIndex32(end, -1)))) {
    end = text.moveIndex32(end, -1);
  }
  return icu::UnicodeString(text, begin, end - begin);
}

std::string ToUtf8(const icu::UnicodeString& text) {
  std::string out;
  text.toUTF8String(out);
  return out;
}

// The kind of named aggregate: the brand or the category, with its namespace and messages.
template <typename Create, typename Rename, typename Created, typename Renamed>
std::shared_ptr<const wow::AggregateType<Named>> NamedType(std::string type, std::string_view ns,
                                                           std::string noun) {
  // Rejects a blank or over-long name, or one another aggregate of this type holds; nullopt when
  // this aggregate may take `name`.
  auto take = [ns, noun](const std::string& name, DecideScope& scope) -> std::optional<Decision> {
    const std::string trimmed = TrimName(name);
    if (trimmed.empty()) {
      return Decision::Reject(std::string(rejections::kBlankName), "A " + noun + " needs a name.");
    }
    if (trimmed.size() > kMaxNameBytes) {
      return Decision::Reject(std::string(rejections::kNameTooLong),
                              "A " + noun + " name has at most " + std::to_string(kMaxNameBytes) +
                                  " bytes.");
    }
    if (!scope.Reserve(ns, NameKey(name))) {
      return Decision::Reject(std::string(rejections::kNameTaken),
                              "Another " + noun + " is named \"" + trimmed + "\".");
    }
    return std::nullopt;
  };
  auto aggregate = std::make_shared<wow::AggregateType<Named>>(std::move(type));
  aggregate->Apply<Created>([](Named& s, const Created& e) { s.name = e.name; })
      .template Apply<Renamed>([](Named& s, const Renamed& e) { s.name = e.name; })
      .template Decide<Create>([take, noun](const Named& s, const Create& c, DecideScope& scope) {
        if (!s.name.empty()) {
          return Decision::Reject(std::string(rejections::kAlreadyCreated),
                                  "This " + noun + " exists already.");
        }
        if (auto refused = take(c.name, scope)) return *refused;
        return Decision::Events(Created{TrimName(c.name)});
      })
      .template Decide<Rename>([take, ns, noun](const Named& s, const Rename& c, DecideScope& scope) {
        if (s.name.empty()) {
          return Decision::Reject(std::string(rejections::kNotFound), "No such " + noun + ".");
        }
        if (TrimName(c.name) == s.name) return Decision::NoOp();
        if (auto refused = take(c.name, scope)) return *refused;
        // A new spelling of the same name keeps its key.
        if (NameKey(c.name) != NameKey(s.name)) scope.Release(ns, NameKey(s.name));
        return Decision::Events(Renamed{TrimName(c.name)});
      });
  return aggregate;
}

}  // namespace

std::string TrimName(std::string_view name) { return ToUtf8(TrimmedUnicode(name)); }

// ICU's NFC normaliser and root locale, built once. ICU builds them lazily with its own
// once-flags; building them under a C++ static makes the hand-over to other threads one that
// ThreadSanitizer (and the language) sees.
struct NameKeyIcu {
  const icu::Normalizer2* nfc;
  const icu::Locale* root;
};
const NameKeyIcu& Icu() {
  static const NameKeyIcu icu = [] {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
    if (U_FAILURE(status)) {
      throw wow::Error(wow::ErrorCode::kInternal,
                       std::string("ICU has no NFC normaliser: ") + u_errorName(status));
    }
    const icu::Locale& root = icu::Locale::getRoot();
    icu::UnicodeString probe = icu::UnicodeString::fromUTF8("A\u0308 \u03A3");
    probe.toLower(root);  // loads the case-mapping data now, under this static
    nfc->normalize(probe, status);
    return NameKeyIcu{nfc, &root};
  }();
  return icu;
}

std::string NameKey(std::string_view name) {
  icu::UnicodeString text = TrimmedUnicode(name);
  text.toLower(*Icu().root);
  UErrorCode status = U_ZERO_ERROR;
  icu::UnicodeString normal = Icu().nfc->normalize(text, status);
  if (U_FAILURE(status)) {
    throw wow::Error(wow::ErrorCode::kInternal,
                     std::string("ICU cannot normalise a name: ") + u_errorName(status));
  }
  return ToUtf8(normal);
}

std::shared_ptr<const wow::AggregateType<Named>> BrandType() {
  static const auto type =
      NamedType<CreateBrand, RenameBrand, BrandCreated, BrandRenamed>("brand", kBrandNames, "brand");
  return type;
}

std::shared_ptr<const wow::AggregateType<Named>> CategoryType() {
  static const auto type = NamedType<CreateCategory, RenameCategory, CategoryCreated,
                                     CategoryRenamed>("category", kCategoryNames, "category");
  return type;
}

}  // namespace eshop
