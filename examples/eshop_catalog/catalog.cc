#include "catalog.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <variant>

#include "wow/error.h"
#include "wow/name_key.h"
#include "wow/reservation_store.h"

namespace eshop {
namespace {

using wow::Decision;
using wow::DecideScope;

// ICU's NFC normaliser and root locale, built once. ICU builds them lazily with its own
// once-flags; building them under a C++ static makes the hand-over to other threads one that
// ThreadSanitizer (and the language) sees.
struct LegacyIcu {
  const icu::Normalizer2* nfc;
  const icu::Locale* root;
};
const LegacyIcu& Icu() {
  static const LegacyIcu icu = [] {
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
    return LegacyIcu{nfc, &root};
  }();
  return icu;
}

// The state of an aggregate named `name` holding `key`; an event recorded before events carried
// the key reserved LegacyNameKey(name).
Named NamedBy(const std::string& name, const std::string& key) {
  return Named{name, key.empty() ? LegacyNameKey(name) : key};
}

// The kind of named aggregate: the brand or the category, with its namespace and messages.
template <typename Create, typename Rename, typename Publish, typename Expire, typename Created,
          typename Renamed, typename Published, typename Expired>
std::shared_ptr<const wow::AggregateType<Named>> NamedType(std::string type, std::string_view ns,
                                                           std::string noun) {
  // Reserves the key of `name` for this aggregate. Returns the name checked, or the rejection of
  // a name CheckName refuses, or of one another aggregate holds.
  auto take = [ns, noun](const std::string& name,
                         DecideScope& scope) -> std::variant<CheckedName, Decision> {
    CheckedName checked = CheckName(name, noun);
    if (!checked.code.empty()) return Decision::Reject(checked.code, checked.message);
    if (!scope.Reserve(ns, checked.key)) {
      return Decision::Reject(std::string(rejections::kNameTaken),
                              "Another " + noun + " is named \"" + checked.name + "\".");
    }
    return checked;
  };
  auto expired = [noun] {
    return Decision::Reject(std::string(rejections::kDraftExpired),
                            "This " + noun + " was a draft not published in time.");
  };
  auto aggregate = std::make_shared<wow::AggregateType<Named>>(std::move(type));
  aggregate->Reserves(ns)  // per tenant
      .Apply<Created>([](Named& s, const Created& e) {
        s = NamedBy(e.name, e.key);
        s.status = std::string(e.draft ? kDraft : kPublished);
      })
      .template Apply<Renamed>([](Named& s, const Renamed& e) {
        const Named named = NamedBy(e.name, e.key);
        s.name = named.name;
        s.key = named.key;
      })
      .template Apply<Published>(
          [](Named& s, const Published&) { s.status = std::string(kPublished); })
      .template Apply<Expired>([](Named& s, const Expired&) {
        s.status = std::string(kExpired);
        s.key.clear();
      })
      .template Decide<Create>([take, noun](const Named& s, const Create& c, DecideScope& scope) {
        if (!s.name.empty()) {
          return Decision::Reject(std::string(rejections::kAlreadyCreated),
                                  "This " + noun + " exists already.");
        }
        if (c.draft && c.draft_ms <= 0) {
          return Decision::Reject(std::string(rejections::kInvalidDraftTime),
                                  "A draft needs a positive draft time.");
        }
        auto taken = take(c.name, scope);
        if (auto* refused = std::get_if<Decision>(&taken)) return *refused;
        CheckedName& checked = std::get<CheckedName>(taken);
        if (c.draft) scope.Schedule(kDraftExpiry, scope.Now() + c.draft_ms, scope.self(), Expire{});
        return Decision::Events(Created{std::move(checked.name), std::move(checked.key), c.draft});
      })
      .template Decide<Rename>(
          [take, ns, noun, expired](const Named& s, const Rename& c, DecideScope& scope) {
            if (s.name.empty()) {
              return Decision::Reject(std::string(rejections::kNotFound), "No such " + noun + ".");
            }
            if (s.status == kExpired) return expired();
            if (wow::TrimName(c.name) == s.name) return Decision::NoOp();
            auto taken = take(c.name, scope);
            if (auto* refused = std::get_if<Decision>(&taken)) return *refused;
            CheckedName& checked = std::get<CheckedName>(taken);
            // A new spelling of the same name keeps its key.
            if (checked.key != s.key) scope.Release(ns, s.key);
            return Decision::Events(Renamed{std::move(checked.name), std::move(checked.key)});
          })
      .template Decide<Publish>(
          [noun, expired](const Named& s, const Publish&, DecideScope& scope) {
            if (s.name.empty()) {
              return Decision::Reject(std::string(rejections::kNotFound), "No such " + noun + ".");
            }
            if (s.status == kExpired) return expired();
            if (s.status != kDraft) {
              return Decision::Reject(std::string(rejections::kNotDraft),
                                      "This " + noun + " is published already.");
            }
            scope.Cancel(kDraftExpiry);
            return Decision::Events(Published{});
          })
      .template Decide<Expire>([ns](const Named& s, const Expire&, DecideScope& scope) {
        // Published meanwhile (or never a draft): nothing to expire.
        if (s.status != kDraft) return Decision::NoOp();
        scope.Release(ns, s.key);
        return Decision::Events(Expired{});
      });
  return aggregate;
}

}  // namespace

CheckedName CheckName(std::string_view name, std::string_view noun) {
  CheckedName checked{wow::TrimName(name), "", "", ""};
  const std::string a = "A " + std::string(noun);
  wow::NameKeyResult key = wow::MakeNameKey(name);
  switch (key.kind) {
    case wow::NameKeyResult::Kind::kKey:
      if (checked.name.size() > kMaxNameBytes || key.key.size() > wow::kMaxReservationKeyBytes) {
        checked.code = rejections::kNameTooLong;
        checked.message = a + " name has at most " + std::to_string(kMaxNameBytes) + " bytes.";
      } else {
        checked.key = std::move(key.key);
      }
      break;
    case wow::NameKeyResult::Kind::kBlank:
      checked.code = rejections::kBlankName;
      checked.message = a + " needs a name.";
      break;
    case wow::NameKeyResult::Kind::kNotAllowed:
      checked.code = rejections::kInvalidName;
      checked.message = a + " name cannot contain " + wow::CodePointLabel(key.code_point) + ".";
      break;
    case wow::NameKeyResult::Kind::kNotUtf8:
      checked.code = rejections::kInvalidName;
      checked.message = a + " name is UTF-8 text.";
      break;
  }
  return checked;
}

std::string LegacyNameKey(std::string_view name) {
  const std::string trimmed = wow::TrimName(name);
  icu::UnicodeString text = icu::UnicodeString::fromUTF8(
      icu::StringPiece(trimmed.data(), static_cast<int32_t>(trimmed.size())));
  text.toLower(*Icu().root);
  UErrorCode status = U_ZERO_ERROR;
  const icu::UnicodeString normal = Icu().nfc->normalize(text, status);
  if (U_FAILURE(status)) {
    throw wow::Error(wow::ErrorCode::kInternal,
                     std::string("ICU cannot normalise a name: ") + u_errorName(status));
  }
  std::string out;
  normal.toUTF8String(out);
  return out;
}

std::shared_ptr<const wow::AggregateType<Named>> BrandType() {
  static const auto type =
      NamedType<CreateBrand, RenameBrand, PublishBrand, ExpireBrandDraft, BrandCreated,
                BrandRenamed, BrandPublished, BrandDraftExpired>("brand", kBrandNames, "brand");
  return type;
}

std::shared_ptr<const wow::AggregateType<Named>> CategoryType() {
  static const auto type =
      NamedType<CreateCategory, RenameCategory, PublishCategory, ExpireCategoryDraft,
                CategoryCreated, CategoryRenamed, CategoryPublished, CategoryDraftExpired>(
          "category", kCategoryNames, "category");
  return type;
}

std::shared_ptr<const wow::Projection> CatalogProjection() {
  static const auto projection = [] {
    auto catalog = std::make_shared<wow::Projection>(
        "catalog", std::vector<std::string>{std::string(kBrandRows), std::string(kCategoryRows)});
    catalog->OnEntry([](const wow::Entry& entry, wow::ReadModelWriter& rows) {
      const wow::Stream& stream = entry.stream;
      const std::string table(stream.ref.aggregate == BrandType()->name() ? kBrandRows
                                                                          : kCategoryRows);
      const std::optional<wow::ReadModelRow> stored =
          rows.Find(table, stream.ref.tenant_id, stream.ref.id);
      nlohmann::json body =
          stored
              ? nlohmann::json::parse(stored->body)
              : nlohmann::json{{"id", stream.ref.id}, {"deleted", false}, {"status", kPublished}};
      std::string key = stored ? stored->index_key : "";
      for (const wow::EventRecord& event : stream.events) {
        if (event.type == wow::AggregateDeleted::kType) body["deleted"] = true;
        if (event.type == wow::AggregateRestored::kType) body["deleted"] = false;
        if (event.type == BrandPublished::kType || event.type == CategoryPublished::kType) {
          body["status"] = kPublished;
        }
        if (event.type == BrandDraftExpired::kType || event.type == CategoryDraftExpired::kType) {
          body["status"] = kExpired;
        }
        const nlohmann::json fields = nlohmann::json::parse(event.body);
        if (fields.value("draft", false)) body["status"] = kDraft;
        if (fields.contains("name") && fields.contains("key")) {
          const std::string name = fields["name"].get<std::string>();
          const std::string recorded = fields["key"].get<std::string>();
          body["name"] = name;
          key = recorded.empty() ? LegacyNameKey(name) : recorded;
        }
      }
      body["version"] = stream.version;
      rows.Put({table, stream.ref.tenant_id, stream.ref.id, stream.version, key, body.dump()});
    });
    return catalog;
  }();
  return projection;
}

}  // namespace eshop
