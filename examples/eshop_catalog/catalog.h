// The eShop catalog domain (seed 004): brands and categories whose names are unique per tenant.
//
// A name is trimmed; its key is the trimmed name lower-cased (Unicode, by ICU) and NFC-normalised,
// so "Contoso", " contoso " and "CONTOSO" are one name, and so are "ÄPFEL" and "äpfel". Brands and
// categories reserve their keys in two namespaces, so a brand and a category may share a name.
// A rename reserves the new key and releases the old one (a new spelling of the same key keeps
// it); deleting keeps every key, so a restored brand still holds its name.
//
// Thread-safety: the aggregate types are immutable once built; NameKey is thread-safe.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "wow/aggregate.h"

namespace eshop {

inline constexpr std::string_view kContext = "eshop-catalog";
inline constexpr std::string_view kBrandNames = "eshop-catalog.brand-name";
inline constexpr std::string_view kCategoryNames = "eshop-catalog.category-name";
inline constexpr size_t kMaxNameBytes = 200;

namespace rejections {
inline constexpr std::string_view kBlankName = "BLANK_NAME";
inline constexpr std::string_view kNameTaken = "NAME_TAKEN";
inline constexpr std::string_view kNameTooLong = "NAME_TOO_LONG";
inline constexpr std::string_view kAlreadyCreated = "ALREADY_CREATED";
inline constexpr std::string_view kNotFound = "NOT_FOUND";
}  // namespace rejections

// `name` without leading and trailing Unicode white space. Invalid UTF-8 is replaced (U+FFFD).
std::string TrimName(std::string_view name);

// The key `name` reserves: trimmed, lower-cased for every script (ICU, root locale), NFC.
std::string NameKey(std::string_view name);

// Commands and events. A brand and a category are alike; each has its own types.
#define ESHOP_NAMED_MESSAGE(Name, type_name)                        \
  struct Name {                                                     \
    static constexpr std::string_view kType = type_name;            \
    std::string name;                                               \
    friend bool operator==(const Name&, const Name&) = default;     \
  };                                                                \
  NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Name, name)
ESHOP_NAMED_MESSAGE(CreateBrand, "eshop.CreateBrand")
ESHOP_NAMED_MESSAGE(RenameBrand, "eshop.RenameBrand")
ESHOP_NAMED_MESSAGE(BrandCreated, "eshop.BrandCreated")
ESHOP_NAMED_MESSAGE(BrandRenamed, "eshop.BrandRenamed")
ESHOP_NAMED_MESSAGE(CreateCategory, "eshop.CreateCategory")
ESHOP_NAMED_MESSAGE(RenameCategory, "eshop.RenameCategory")
ESHOP_NAMED_MESSAGE(CategoryCreated, "eshop.CategoryCreated")
ESHOP_NAMED_MESSAGE(CategoryRenamed, "eshop.CategoryRenamed")
#undef ESHOP_NAMED_MESSAGE

// The state of a brand or a category: its name ("" before it is created).
struct Named {
  std::string name;
  friend bool operator==(const Named&, const Named&) = default;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Named, name)

// The aggregate types "brand" and "category".
std::shared_ptr<const wow::AggregateType<Named>> BrandType();
std::shared_ptr<const wow::AggregateType<Named>> CategoryType();

}  // namespace eshop
