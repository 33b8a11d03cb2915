// The eShop catalog domain (seed 004): brands and categories whose names are unique per tenant.
//
// A name is trimmed (wow::TrimName); its key is wow::MakeNameKey's (wow/name_key.h: Unicode case
// folding, compatibility forms and invisible characters folded away, Latin look-alikes of other
// scripts in a Latin name made Latin), so "Contoso", " CONTOSO ", "Con\u00ADtoso" and
// "p\u0430ypal"/"paypal" are one name each. Brands and categories reserve their keys in two
// namespaces, so a brand and a category may share a name. The created and renamed events record
// the key reserved; a rename reserves the new key and releases the recorded one (a new spelling
// of the same key keeps it); deleting keeps every key, so a restored brand still holds its name.
// A create may make a draft: it holds its name like any brand, and its creating decision
// schedules the kDraftExpiry timer `draft_ms` later; publishing cancels the timer; when the timer
// fires on a draft still unpublished, the draft expires and releases the key it holds then (at
// the expiry's version, so a key the aggregate reserved later is not touched); on a published
// draft the expiry changes nothing.
// Events recorded before the events carried a key took LegacyNameKey's key, and the state
// takes that one for them, so a rename or a delete of such a brand still finds the key it holds.
//
// Thread-safety: the aggregate types are immutable once built; CheckName and LegacyNameKey are
// safe to call from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "wow/aggregate.h"
#include "wow/projection.h"

namespace eshop {

inline constexpr std::string_view kContext = "eshop-catalog";
inline constexpr std::string_view kBrandNames = "eshop-catalog.brand-name";
inline constexpr std::string_view kCategoryNames = "eshop-catalog.category-name";
inline constexpr size_t kMaxNameBytes = 200;

namespace rejections {
inline constexpr std::string_view kBlankName = "BLANK_NAME";
inline constexpr std::string_view kInvalidName = "INVALID_NAME";
inline constexpr std::string_view kNameTaken = "NAME_TAKEN";
inline constexpr std::string_view kNameTooLong = "NAME_TOO_LONG";
inline constexpr std::string_view kAlreadyCreated = "ALREADY_CREATED";
inline constexpr std::string_view kNotFound = "NOT_FOUND";
inline constexpr std::string_view kNotDraft = "NOT_DRAFT";
inline constexpr std::string_view kDraftExpired = "DRAFT_EXPIRED";
inline constexpr std::string_view kInvalidDraftTime = "INVALID_DRAFT_TIME";
}  // namespace rejections

// The key of a name, or why the name has none.
struct CheckedName {
  std::string name;     // the name, trimmed
  std::string key;      // its key (wow::MakeNameKey) when `code` is empty
  std::string code;     // kBlankName, kInvalidName or kNameTooLong; empty when the name is good
  std::string message;  // why, for people, when `code` is set
};

// `name` trimmed and its key, or the refusal of a blank name, of one with a character not allowed
// in a name (or not UTF-8), or of one over kMaxNameBytes (or whose key is over the store's
// limit). `noun` ("brand") words the message.
CheckedName CheckName(std::string_view name, std::string_view noun);

// The key the catalog reserved for `name` before it used wow::MakeNameKey: trimmed, lower-cased
// for every script (ICU, root locale), NFC. Only for events recorded then (they carry no key).
std::string LegacyNameKey(std::string_view name);

// Commands and events. A brand and a category are alike; each has its own types. An event
// records the name (trimmed) and the key it reserved ("" in an event recorded before events
// carried the key).
#define ESHOP_NAMED_COMMAND(Name, type_name)                    \
  struct Name {                                                 \
    static constexpr std::string_view kType = type_name;        \
    std::string name;                                           \
    friend bool operator==(const Name&, const Name&) = default; \
  };                                                            \
  NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Name, name)
// A create: the name, and for a draft the time it has to be published in (then it expires).
#define ESHOP_CREATE_COMMAND(Name, type_name)                   \
  struct Name {                                                 \
    static constexpr std::string_view kType = type_name;        \
    std::string name;                                           \
    bool draft = false;                                         \
    std::int64_t draft_ms = 0;                                  \
    friend bool operator==(const Name&, const Name&) = default; \
  };                                                            \
  NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Name, name, draft, draft_ms)
#define ESHOP_CREATED_EVENT(Name, type_name)                    \
  struct Name {                                                 \
    static constexpr std::string_view kType = type_name;        \
    std::string name;                                           \
    std::string key;                                            \
    bool draft = false;                                         \
    friend bool operator==(const Name&, const Name&) = default; \
  };                                                            \
  NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Name, name, key, draft)
#define ESHOP_EMPTY_MESSAGE(Name, type_name)                    \
  struct Name {                                                 \
    static constexpr std::string_view kType = type_name;        \
    friend bool operator==(const Name&, const Name&) = default; \
  };                                                            \
  WOW_DEFINE_EMPTY_MESSAGE(Name)
#define ESHOP_NAMED_EVENT(Name, type_name)                      \
  struct Name {                                                 \
    static constexpr std::string_view kType = type_name;        \
    std::string name;                                           \
    std::string key;                                            \
    friend bool operator==(const Name&, const Name&) = default; \
  };                                                            \
  NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Name, name, key)
ESHOP_CREATE_COMMAND(CreateBrand, "eshop.CreateBrand")
ESHOP_NAMED_COMMAND(RenameBrand, "eshop.RenameBrand")
ESHOP_EMPTY_MESSAGE(PublishBrand, "eshop.PublishBrand")
ESHOP_EMPTY_MESSAGE(ExpireBrandDraft, "eshop.ExpireBrandDraft")
ESHOP_CREATED_EVENT(BrandCreated, "eshop.BrandCreated")
ESHOP_NAMED_EVENT(BrandRenamed, "eshop.BrandRenamed")
ESHOP_EMPTY_MESSAGE(BrandPublished, "eshop.BrandPublished")
ESHOP_EMPTY_MESSAGE(BrandDraftExpired, "eshop.BrandDraftExpired")
ESHOP_CREATE_COMMAND(CreateCategory, "eshop.CreateCategory")
ESHOP_NAMED_COMMAND(RenameCategory, "eshop.RenameCategory")
ESHOP_EMPTY_MESSAGE(PublishCategory, "eshop.PublishCategory")
ESHOP_EMPTY_MESSAGE(ExpireCategoryDraft, "eshop.ExpireCategoryDraft")
ESHOP_CREATED_EVENT(CategoryCreated, "eshop.CategoryCreated")
ESHOP_NAMED_EVENT(CategoryRenamed, "eshop.CategoryRenamed")
ESHOP_EMPTY_MESSAGE(CategoryPublished, "eshop.CategoryPublished")
ESHOP_EMPTY_MESSAGE(CategoryDraftExpired, "eshop.CategoryDraftExpired")
#undef ESHOP_NAMED_COMMAND
#undef ESHOP_NAMED_EVENT
#undef ESHOP_CREATE_COMMAND
#undef ESHOP_CREATED_EVENT
#undef ESHOP_EMPTY_MESSAGE

// The timer a draft's creating decision schedules: due when the draft time is over, it sends the
// aggregate its Expire...Draft command. Publishing cancels it.
inline constexpr std::string_view kDraftExpiry = "draft-expiry";

// The state of a brand or a category: its name ("" before it is created), the key it holds ("" once
// an expired draft released it), and its status: kPublished, kDraft (created as a draft, holding
// its name, not published yet) or kExpired (a draft not published in time: its name released; it
// takes no command but delete).
inline constexpr std::string_view kPublished = "published";
inline constexpr std::string_view kDraft = "draft";
inline constexpr std::string_view kExpired = "expired";
struct Named {
  std::string name;
  std::string key;
  std::string status = std::string(kPublished);
  friend bool operator==(const Named&, const Named&) = default;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Named, name, key, status)

// The aggregate types "brand" and "category".
std::shared_ptr<const wow::AggregateType<Named>> BrandType();
std::shared_ptr<const wow::AggregateType<Named>> CategoryType();

// The catalog's read models: the projection "catalog" keeps a row per brand (table "brands") and
// per category ("categories"), under the aggregate's tenant and id, at the aggregate's version,
// indexed by the name's key, with the body {"id", "name", "version", "deleted", "status"} (status
// kPublished, kDraft or kExpired). Each stream puts
// its aggregate's row once, at its version, so applying a stream again changes nothing.
inline constexpr std::string_view kBrandRows = "brands";
inline constexpr std::string_view kCategoryRows = "categories";
std::shared_ptr<const wow::Projection> CatalogProjection();

}  // namespace eshop
