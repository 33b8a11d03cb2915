// The eShop catalog domain (seed 004): brands and categories whose names are unique per tenant.
//
// A name is trimmed (wow::TrimName); its key is wow::MakeNameKey's (wow/name_key.h: Unicode case
// folding, compatibility forms and invisible characters folded away, Latin look-alikes of other
// scripts in a Latin name made Latin), so "Contoso", " CONTOSO ", "Con\u00ADtoso" and
// "p\u0430ypal"/"paypal" are one name each. Brands and categories reserve their keys in two
// namespaces, so a brand and a category may share a name. The created and renamed events record
// the key reserved; a rename reserves the new key and releases the recorded one (a new spelling
// of the same key keeps it); deleting keeps every key, so a restored brand still holds its name.
// Events recorded before the events carried a key took LegacyNameKey's key, and the state
// takes that one for them, so a rename or a delete of such a brand still finds the key it holds.
//
// Thread-safety: the aggregate types are immutable once built; CheckName and LegacyNameKey are
// safe to call from any thread.
#pragma once

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
#define ESHOP_NAMED_EVENT(Name, type_name)                      \
  struct Name {                                                 \
    static constexpr std::string_view kType = type_name;        \
    std::string name;                                           \
    std::string key;                                            \
    friend bool operator==(const Name&, const Name&) = default; \
  };                                                            \
  NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Name, name, key)
ESHOP_NAMED_COMMAND(CreateBrand, "eshop.CreateBrand")
ESHOP_NAMED_COMMAND(RenameBrand, "eshop.RenameBrand")
ESHOP_NAMED_EVENT(BrandCreated, "eshop.BrandCreated")
ESHOP_NAMED_EVENT(BrandRenamed, "eshop.BrandRenamed")
ESHOP_NAMED_COMMAND(CreateCategory, "eshop.CreateCategory")
ESHOP_NAMED_COMMAND(RenameCategory, "eshop.RenameCategory")
ESHOP_NAMED_EVENT(CategoryCreated, "eshop.CategoryCreated")
ESHOP_NAMED_EVENT(CategoryRenamed, "eshop.CategoryRenamed")
#undef ESHOP_NAMED_COMMAND
#undef ESHOP_NAMED_EVENT

// The state of a brand or a category: its name ("" before it is created) and the key it holds.
struct Named {
  std::string name;
  std::string key;
  friend bool operator==(const Named&, const Named&) = default;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Named, name, key)

// The aggregate types "brand" and "category".
std::shared_ptr<const wow::AggregateType<Named>> BrandType();
std::shared_ptr<const wow::AggregateType<Named>> CategoryType();

// The catalog's read models: the projection "catalog" keeps a row per brand (table "brands") and
// per category ("categories"), under the aggregate's tenant and id, at the aggregate's version,
// indexed by the name's key, with the body {"id", "name", "version", "deleted"}. Each stream puts
// its aggregate's row once, at its version, so applying a stream again changes nothing.
inline constexpr std::string_view kBrandRows = "brands";
inline constexpr std::string_view kCategoryRows = "categories";
std::shared_ptr<const wow::Projection> CatalogProjection();

}  // namespace eshop
