// The catalog's behaviour, one test per statement of seed 004, with aggregateSpec (no database).
#include <gtest/gtest.h>

#include "catalog.h"
#include "wow/command_processor.h"
#include "wow/event_log.h"
#include "wow/name_key.h"
#include "wow/testing/aggregate_spec.h"

namespace eshop {
namespace {

using wow::AggregateRef;
using wow::ReservationTenancy;
using wow::testing::AggregateSpec;

AggregateRef Brand(const std::string& id, const std::string& tenant = "t1") {
  return {std::string(kContext), "brand", tenant, id};
}

class BrandSpec : public ::testing::Test {
 protected:
  AggregateSpec<Named> spec_{BrandType(), Brand("b1")};
};

TEST_F(BrandSpec, CreateReservesTheNamesKey) {
  spec_.When(CreateBrand{"Contoso"}).ExpectEvents(BrandCreated{"Contoso", "contoso"});
  EXPECT_TRUE(spec_.Holds(kBrandNames, "contoso"));
  const auto r = spec_.reservations().Find(
      wow::DecideScope::ScopeOf(spec_.self(), kBrandNames, ReservationTenancy::kTenant), "contoso");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, wow::ReservationState::kConfirmed) << "confirmed once the events appended";
  EXPECT_EQ(r->version, 1);
}

// Drafts: the creating decision schedules the expiry; publishing cancels it; the expiry frees the
// name of a draft still unpublished, once, and leaves a published one alone.
constexpr std::int64_t kDraftMs = 7LL * 24 * 3600 * 1000;

TEST_F(BrandSpec, ADraftHoldsItsNameAndItsCreatingDecisionSchedulesItsExpiry) {
  const wow::EpochMillis due = spec_.clock().NowMillis() + kDraftMs;
  spec_.When(CreateBrand{"Contoso", true, kDraftMs})
      .ExpectEvents(BrandCreated{"Contoso", "contoso", true})
      .ExpectTimerScheduled(kDraftExpiry, due, Brand("b1"), ExpireBrandDraft{})
      .ExpectState(Named{"Contoso", "contoso", std::string(kDraft)});
  EXPECT_TRUE(spec_.Holds(kBrandNames, "contoso"));
  spec_.When(CreateBrand{"Contoso"}).ExpectRejection(rejections::kAlreadyCreated);
}

TEST_F(BrandSpec, ADraftNotPublishedInTimeExpiresOnceAndFreesItsName) {
  spec_.When(CreateBrand{"Contoso", true, kDraftMs});
  spec_.AdvanceTime(std::chrono::milliseconds(kDraftMs - 1)).ExpectNoOp();
  EXPECT_TRUE(spec_.Holds(kBrandNames, "contoso"));
  spec_.AdvanceTime(std::chrono::milliseconds(1))
      .ExpectEvents(BrandDraftExpired{})
      .ExpectState(Named{"Contoso", "", std::string(kExpired)});
  EXPECT_FALSE(spec_.Holds(kBrandNames, "contoso"));
  spec_.AdvanceTime(std::chrono::milliseconds(10 * kDraftMs)).ExpectNoOp();
  const wow::CommandResult taken = spec_.Send(Brand("b2"), CreateBrand{"CONTOSO"});
  EXPECT_EQ(taken.kind, wow::CommandResult::Kind::kAccepted) << taken.message;
  spec_.When(PublishBrand{}).ExpectRejection(rejections::kDraftExpired);
  spec_.When(RenameBrand{"Fabrikam"}).ExpectRejection(rejections::kDraftExpired);
}

TEST_F(BrandSpec, PublishingCancelsTheExpirySoAPublishedDraftIsNeverExpired) {
  spec_.When(CreateBrand{"Contoso", true, kDraftMs});
  spec_.When(PublishBrand{})
      .ExpectEvents(BrandPublished{})
      .ExpectTimerCancelled(kDraftExpiry)
      .ExpectState(Named{"Contoso", "contoso", std::string(kPublished)});
  spec_.AdvanceTime(std::chrono::milliseconds(2 * kDraftMs)).ExpectNoOp();
  EXPECT_TRUE(spec_.Holds(kBrandNames, "contoso"));
  spec_.When(PublishBrand{}).ExpectRejection(rejections::kNotDraft);
  // Were the expiry to come anyway (a timer fired before its cancel was applied), it is a no-op.
  spec_.When(ExpireBrandDraft{}).ExpectNoOp();
  EXPECT_TRUE(spec_.Holds(kBrandNames, "contoso"));
}

TEST_F(BrandSpec, ADraftRenamedBeforeItExpiresReleasesTheNameItHoldsThenOnly) {
  spec_.When(CreateBrand{"Contoso", true, kDraftMs});
  spec_.When(RenameBrand{"Fabrikam"}).ExpectEvents(BrandRenamed{"Fabrikam", "fabrikam"});
  EXPECT_FALSE(spec_.Holds(kBrandNames, "contoso"));
  spec_.AdvanceTime(std::chrono::milliseconds(kDraftMs)).ExpectEvents(BrandDraftExpired{});
  EXPECT_FALSE(spec_.Holds(kBrandNames, "fabrikam"));
  spec_.When(CreateBrand{"Contoso", true, 0}).ExpectRejection(rejections::kAlreadyCreated);
  AggregateSpec<Named> other(BrandType(), Brand("b9"));
  other.When(CreateBrand{"Northwind", true, 0}).ExpectRejection(rejections::kInvalidDraftTime);
}

TEST_F(BrandSpec, CreateTrimsTheName) {
  spec_.When(CreateBrand{"  Contoso \t"}).ExpectEvents(BrandCreated{"Contoso", "contoso"});
  spec_.ExpectState(Named{"Contoso", "contoso"});
}

TEST_F(BrandSpec, BlankNameIsRejected) {
  spec_.When(CreateBrand{"  \t "}).ExpectRejection(rejections::kBlankName);
  EXPECT_EQ(spec_.version(), 0);
}

TEST_F(BrandSpec, NameAnotherBrandHoldsIsRejectedAsTaken) {
  spec_.GivenReservation(kBrandNames, "contoso")
      .When(CreateBrand{" CONTOSO "})
      .ExpectRejection(rejections::kNameTaken);
  EXPECT_EQ(spec_.result()->message, "Another brand is named \"CONTOSO\".");
  EXPECT_FALSE(spec_.Holds(kBrandNames, "contoso"));
  EXPECT_EQ(spec_.version(), 0) << "a rejection appends nothing";
}

TEST_F(BrandSpec, TheEventRecordsTheKeyReserved) {
  spec_.When(CreateBrand{" Stra\u00DFe "}).ExpectEvents(BrandCreated{"Stra\u00DFe", "strasse"});
  spec_.ExpectState(Named{"Stra\u00DFe", "strasse"});
  EXPECT_TRUE(spec_.Holds(kBrandNames, "strasse"));
}

// Names that look alike are one name (wow::MakeNameKey; its own tests are tests/core).
TEST_F(BrandSpec, NamesThatLookAlikeAreTaken) {
  for (const char* lookalike :
       {"CONTOSO", " contoso ", "Con\u00ADtoso", "Contoso\u200B", "Con\u2060toso",
        "\uFF23\uFF4F\uFF4E\uFF54\uFF4F\uFF53\uFF4F", "C\u043Entoso" /* Cyrillic о */}) {
    AggregateSpec<Named> spec(BrandType(), Brand("b1"));
    spec.GivenReservation(kBrandNames, "contoso")
        .When(CreateBrand{lookalike})
        .ExpectRejection(rejections::kNameTaken);
  }
  spec_.GivenReservation(kBrandNames, "strasse")
      .When(CreateBrand{"STRASSE"})
      .ExpectRejection(rejections::kNameTaken);
  spec_.When(CreateBrand{"Stra\u00DFe"}).ExpectRejection(rejections::kNameTaken);
}

TEST_F(BrandSpec, AMixedScriptLookalikeOfALatinNameIsTaken) {
  spec_.GivenCommand(CreateBrand{"PayPal"});
  EXPECT_EQ(spec_.Send(Brand("b2"), CreateBrand{"P\u0430yPal"}).code, rejections::kNameTaken);
  EXPECT_EQ(spec_.Send(Brand("b3"), CreateBrand{"\u0420ayPal"}).code, rejections::kNameTaken);
}

TEST_F(BrandSpec, NamesInOtherScriptsAreTheirOwnAndDistinct) {
  int n = 0;
  for (const char* name :
       {"\u6771\u4EAC\u30C7\u30B6\u30A4\u30F3", "\u30BD\u30CB\u30FC",
        "\u039A\u03CC\u03C3\u03BC\u03BF\u03C2", "\u041C\u043E\u0441\u043A\u0432\u0430",
        "\u0441\u043E\u0441\u043E", "coco", "Burn", "Bum"}) {
    const auto created = spec_.Send(Brand("b" + std::to_string(++n)), CreateBrand{name});
    EXPECT_EQ(created.kind, wow::CommandResult::Kind::kAccepted) << name << ": " << created.code;
  }
}

TEST_F(BrandSpec, ANameOfInvisibleCharactersIsBlank) {
  spec_.When(CreateBrand{"\u200B\u200B"}).ExpectRejection(rejections::kBlankName);
  spec_.When(CreateBrand{" \u00AD \u2060 "}).ExpectRejection(rejections::kBlankName);
  EXPECT_EQ(spec_.version(), 0);
}

TEST_F(BrandSpec, ANameWithACharacterNotAllowedIsInvalid) {
  spec_.When(CreateBrand{"\u202Eosotnoc"}).ExpectRejection(rejections::kInvalidName);
  EXPECT_EQ(spec_.result()->message, "A brand name cannot contain U+202E RIGHT-TO-LEFT OVERRIDE.");
  spec_.When(CreateBrand{"Con\ttoso"}).ExpectRejection(rejections::kInvalidName);
  spec_.When(CreateBrand{"Con\u2066toso"}).ExpectRejection(rejections::kInvalidName);
  spec_.When(CreateBrand{"Con\uE000toso"}).ExpectRejection(rejections::kInvalidName);
  spec_.When(CreateBrand{"Con\U000E01F0toso"}).ExpectRejection(rejections::kInvalidName);
  spec_.When(CreateBrand{"Con\xFFtoso"}).ExpectRejection(rejections::kInvalidName);
  EXPECT_EQ(spec_.version(), 0);
  spec_.GivenCommand(CreateBrand{"Contoso"})
      .When(RenameBrand{"Contoso\u202E"})
      .ExpectRejection(rejections::kInvalidName);
  EXPECT_TRUE(spec_.Holds(kBrandNames, "contoso"));
}

TEST_F(BrandSpec, ANameWhoseKeyIsOverTheStoresLimitIsTooLong) {
  std::string name;
  for (int i = 0; i < 60; ++i) name += "\uFDFA";  // 180 bytes; NFKC: 18 letters and spaces each
  spec_.When(CreateBrand{name}).ExpectRejection(rejections::kNameTooLong);
}

TEST_F(BrandSpec, RenameReservesTheNewKeyAndReleasesTheOldOne) {
  spec_.GivenCommand(CreateBrand{"Contoso"})
      .When(RenameBrand{"Fabrikam"})
      .ExpectEvents(BrandRenamed{"Fabrikam", "fabrikam"});
  EXPECT_TRUE(spec_.Holds(kBrandNames, "fabrikam"));
  EXPECT_FALSE(spec_.Holds(kBrandNames, "contoso"));
}

TEST_F(BrandSpec, ANewSpellingOfTheSameNameKeepsItsKey) {
  spec_.GivenCommand(CreateBrand{"Contoso"})
      .When(RenameBrand{"CONTOSO"})
      .ExpectEvents(BrandRenamed{"CONTOSO", "contoso"});
  EXPECT_TRUE(spec_.Holds(kBrandNames, "contoso"));
  spec_.ExpectState(Named{"CONTOSO", "contoso"});
}

TEST_F(BrandSpec, RenameToTheSameNameIsANoOp) {
  spec_.GivenCommand(CreateBrand{"Contoso"}).When(RenameBrand{" Contoso "}).ExpectNoOp();
  EXPECT_EQ(spec_.version(), 1);
}

// (That a decision rejected after recording a release releases nothing is proven in
// tests/runtime/command_life_test.cc: the catalog never rejects after releasing.)
TEST_F(BrandSpec, ARenameToATakenNameIsRejectedAndKeepsTheOldName) {
  spec_.GivenCommand(CreateBrand{"Contoso"})
      .GivenReservation(kBrandNames, "fabrikam")
      .When(RenameBrand{"Fabrikam"})
      .ExpectRejection(rejections::kNameTaken);
  spec_.ExpectState(Named{"Contoso", "contoso"});
  EXPECT_TRUE(spec_.Holds(kBrandNames, "contoso"));
  EXPECT_EQ(spec_.version(), 1);
}

TEST_F(BrandSpec, DeleteKeepsTheKeys) {
  spec_.GivenCommand(CreateBrand{"Contoso"}).When(wow::DeleteAggregate{});
  ASSERT_TRUE(spec_.result());
  EXPECT_EQ(spec_.result()->kind, wow::CommandResult::Kind::kAccepted);
  EXPECT_TRUE(spec_.deleted());
  EXPECT_TRUE(spec_.Holds(kBrandNames, "contoso"));
  const auto other = spec_.Send(Brand("b2"), CreateBrand{"contoso"});
  EXPECT_EQ(other.code, rejections::kNameTaken) << "a deleted brand still holds its name";
}

TEST_F(BrandSpec, ADeletedBrandRefusesCommandsUntilRestored) {
  spec_.GivenCommand(CreateBrand{"Contoso"}).GivenCommand(wow::DeleteAggregate{});
  spec_.When(RenameBrand{"Fabrikam"}).ExpectRejection("AGGREGATE_DELETED");
  spec_.When(wow::DeleteAggregate{}).ExpectRejection("AGGREGATE_DELETED");
  spec_.When(wow::RestoreAggregate{});
  spec_.When(RenameBrand{"Fabrikam"}).ExpectEvents(BrandRenamed{"Fabrikam", "fabrikam"});
  EXPECT_TRUE(spec_.Holds(kBrandNames, "fabrikam"));
}

TEST_F(BrandSpec, RestoreFindsTheKeysStillHeld) {
  spec_.GivenCommand(CreateBrand{"Contoso"}).GivenCommand(wow::DeleteAggregate{});
  spec_.When(wow::RestoreAggregate{});
  ASSERT_TRUE(spec_.result());
  EXPECT_EQ(spec_.result()->kind, wow::CommandResult::Kind::kAccepted);
  EXPECT_FALSE(spec_.deleted());
  EXPECT_TRUE(spec_.Holds(kBrandNames, "contoso"));
  spec_.When(RenameBrand{"Contoso Ltd"}).ExpectEvents(BrandRenamed{"Contoso Ltd", "contoso ltd"});
}

TEST_F(BrandSpec, ADeleteThatGivesTheKeyUpReleasesItInTheAggregatesOwnCommandFirst) {
  // The catalog's way to give a name up before a delete: rename the brand away from it.
  spec_.GivenCommand(CreateBrand{"Contoso"}).GivenCommand(RenameBrand{"Contoso (retired)"});
  spec_.When(wow::DeleteAggregate{});
  EXPECT_FALSE(spec_.Holds(kBrandNames, "contoso"));
  EXPECT_EQ(spec_.Send(Brand("b2"), CreateBrand{"Contoso"}).kind,
            wow::CommandResult::Kind::kAccepted);
}

TEST_F(BrandSpec, AnotherTenantMayHoldTheSameKey) {
  spec_.When(CreateBrand{"Contoso"}).ExpectEvents(BrandCreated{"Contoso", "contoso"});
  EXPECT_EQ(spec_.Send(Brand("b9", "t2"), CreateBrand{"Contoso"}).kind,
            wow::CommandResult::Kind::kAccepted);
  EXPECT_EQ(spec_.Send(Brand("b3", "t1"), CreateBrand{"Contoso"}).code, rejections::kNameTaken);
}

// Both types on one processor and one store: the namespaces keep their keys apart.
TEST(CatalogNamespaces, ABrandAndACategoryMayShareAName) {
  auto clock = std::make_shared<wow::ManualClock>();
  auto log = std::shared_ptr<wow::EventLog>(wow::NewMemoryEventLog(std::string(kContext), clock));
  log->Create(1);
  std::shared_ptr<wow::ReservationStore> keys = wow::NewMemoryReservationStore(clock);
  wow::CommandProcessor processor(log, keys, clock);
  processor.Register(BrandType());
  processor.Register(CategoryType());
  const AggregateRef category{std::string(kContext), "category", "t1", "c1"};
  EXPECT_EQ(processor.Process(Brand("b1"), wow::CommandMessage::Of(CreateBrand{"Contoso"})).kind,
            wow::CommandResult::Kind::kAccepted);
  EXPECT_EQ(processor.Process(category, wow::CommandMessage::Of(CreateCategory{"Contoso"})).kind,
            wow::CommandResult::Kind::kAccepted);
  EXPECT_TRUE(keys->Find(
      wow::DecideScope::ScopeOf(category, kCategoryNames, ReservationTenancy::kTenant), "contoso"));
  EXPECT_EQ(processor.Process(Brand("b2"), wow::CommandMessage::Of(CreateBrand{"Contoso"})).code,
            rejections::kNameTaken)
      << "the store is shared: a second brand of that name is refused";
}

TEST_F(BrandSpec, CreateTwiceIsRejected) {
  spec_.GivenCommand(CreateBrand{"Contoso"})
      .When(CreateBrand{"Other"})
      .ExpectRejection(rejections::kAlreadyCreated);
  spec_.ExpectState(Named{"Contoso", "contoso"});
  EXPECT_EQ(spec_.version(), 1);
}

TEST_F(BrandSpec, ARepeatedRequestIdReturnsTheOriginalOutcomeAndAppendsNothing) {
  spec_.When(CreateBrand{"Contoso"}, "request-1").ExpectEvents(BrandCreated{"Contoso", "contoso"});
  spec_.When(CreateBrand{"Contoso"}, "request-1");
  ASSERT_TRUE(spec_.result());
  EXPECT_EQ(spec_.result()->kind, wow::CommandResult::Kind::kDuplicate);
  EXPECT_EQ(spec_.result()->version, 1);
  EXPECT_EQ(spec_.version(), 1);
}

TEST_F(BrandSpec, GivenEventsAndGivenStateSetTheHistory) {
  spec_.Given(BrandCreated{"Contoso", "contoso"}, BrandRenamed{"Fabrikam", "fabrikam"})
      .ExpectState(Named{"Fabrikam", "fabrikam"});
  AggregateSpec<Named> given_state(BrandType(), Brand("b5"));
  given_state.GivenState(Named{"Northwind", "northwind"})
      .When(RenameBrand{"Northwind"})
      .ExpectNoOp();
}

// Brands named before the events carried their key: the event is {"name": ...} alone, and the
// key then reserved was LegacyNameKey's (trimmed, lower-cased, NFC).
struct LegacyBrandCreated {
  static constexpr std::string_view kType = BrandCreated::kType;
  std::string name;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LegacyBrandCreated, name)

class LegacyBrandSpec : public BrandSpec {
 protected:
  // The brand b1 was created as `name` under the old rule, holding its old key.
  void GivenLegacyBrand(const std::string& name) {
    spec_.Given(LegacyBrandCreated{name});
    spec_.reservations().Confirm(
        wow::DecideScope::ScopeOf(spec_.self(), kBrandNames, ReservationTenancy::kTenant),
        LegacyNameKey(name), spec_.self(), 1);
  }
};

TEST_F(LegacyBrandSpec, TheStateHoldsTheOldKey) {
  EXPECT_EQ(LegacyNameKey(" Stra\u00DFe "), "stra\u00DFe");
  GivenLegacyBrand("Stra\u00DFe");
  spec_.ExpectState(Named{"Stra\u00DFe", "stra\u00DFe"});
}

// What `wow reservations lookalikes` relies on: the rule applied to a name's old key gives the
// name's key.
TEST(LegacyNameKeys, TheRuleOfAnOldKeyIsTheRuleOfItsName) {
  for (const char* name :
       {"Contoso", "Stra\u00DFe", "STRASSE", "Con\u00ADtoso", "\uFF23\uFF4F\uFF4E\uFF54\uFF4F",
        "P\u0430yPal", "\u041C\u0456\u0441rosoft", "\u0130stanbul", "\u039F\u0394\u039F\u03A3",
        "\u13AApple", "\u042F\u043D\u0434\u0435\u043A\u0441 Go", "\uFB01ne", "\u00C4PFEL"}) {
    EXPECT_EQ(wow::MakeNameKey(LegacyNameKey(name)).key, wow::MakeNameKey(name).key) << name;
  }
}

TEST_F(LegacyBrandSpec, ARenameReleasesTheOldKey) {
  GivenLegacyBrand("Stra\u00DFe");
  spec_.When(RenameBrand{"Fabrikam"}).ExpectEvents(BrandRenamed{"Fabrikam", "fabrikam"});
  EXPECT_FALSE(spec_.Holds(kBrandNames, "stra\u00DFe"));
  EXPECT_TRUE(spec_.Holds(kBrandNames, "fabrikam"));
  EXPECT_EQ(spec_.Send(Brand("b2"), CreateBrand{"Stra\u00DFe"}).kind,
            wow::CommandResult::Kind::kAccepted);
}

TEST_F(LegacyBrandSpec, ARenameToANewSpellingMovesToTheNewKey) {
  GivenLegacyBrand("Stra\u00DFe");
  spec_.When(RenameBrand{"STRASSE"}).ExpectEvents(BrandRenamed{"STRASSE", "strasse"});
  EXPECT_TRUE(spec_.Holds(kBrandNames, "strasse"));
  EXPECT_FALSE(spec_.Holds(kBrandNames, "stra\u00DFe"));
}

TEST_F(LegacyBrandSpec, AKeyBothRulesAgreeOnIsKept) {
  GivenLegacyBrand("Contoso");
  spec_.When(RenameBrand{"CONTOSO"}).ExpectEvents(BrandRenamed{"CONTOSO", "contoso"});
  EXPECT_TRUE(spec_.Holds(kBrandNames, "contoso"));
  EXPECT_EQ(spec_.Send(Brand("b2"), CreateBrand{"Contoso"}).code, rejections::kNameTaken);
}

TEST_F(LegacyBrandSpec, DeleteAndRestoreKeepTheOldKey) {
  GivenLegacyBrand("Stra\u00DFe");
  spec_.When(wow::DeleteAggregate{});
  EXPECT_TRUE(spec_.Holds(kBrandNames, "stra\u00DFe"));
  spec_.When(wow::RestoreAggregate{});
  EXPECT_TRUE(spec_.Holds(kBrandNames, "stra\u00DFe"));
  spec_.When(RenameBrand{"Fabrikam"}).ExpectEvents(BrandRenamed{"Fabrikam", "fabrikam"});
  EXPECT_FALSE(spec_.Holds(kBrandNames, "stra\u00DFe"));
}

TEST_F(BrandSpec, AnOverLongNameIsRejected) {
  spec_.When(CreateBrand{std::string(kMaxNameBytes + 1, 'x')})
      .ExpectRejection(rejections::kNameTooLong);
}

// SYSTEM tenancy: a key unique across the context's tenants (seed 004). The catalog reserves
// per tenant; this aggregate reserves its code across tenants.
struct ClaimCode {
  static constexpr std::string_view kType = "test.ClaimCode";
  std::string code;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ClaimCode, code)
struct CodeClaimed {
  static constexpr std::string_view kType = "test.CodeClaimed";
  std::string code;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CodeClaimed, code)

std::shared_ptr<const wow::AggregateType<Named>> CouponType() {
  auto type = std::make_shared<wow::AggregateType<Named>>("coupon");
  type->Apply<CodeClaimed>([](Named& s, const CodeClaimed& e) { s.name = e.code; })
      .Decide<ClaimCode>([](const Named&, const ClaimCode& c, wow::DecideScope& scope) {
        if (!scope.Reserve("shop.coupon-code", c.code, ReservationTenancy::kSystem)) {
          return wow::Decision::Reject("CODE_TAKEN", "taken in some tenant");
        }
        return wow::Decision::Events(CodeClaimed{c.code});
      });
  return type;
}

TEST(SystemTenancy, SpansTheContextsTenants) {
  AggregateSpec<Named> spec(CouponType(), {"shop", "coupon", "t1", "c1"});
  spec.When(ClaimCode{"WELCOME"}).ExpectEvents(CodeClaimed{"WELCOME"});
  EXPECT_TRUE(spec.Holds("shop.coupon-code", "WELCOME", ReservationTenancy::kSystem));
  EXPECT_EQ(spec.Send(AggregateRef{"shop", "coupon", "t2", "c2"}, ClaimCode{"WELCOME"}).code,
            "CODE_TAKEN");
}

TEST(SystemTenancy, GivenReservationInTheSystemTenantRejects) {
  AggregateSpec<Named> spec(CouponType(), {"shop", "coupon", "t1", "c1"});
  spec.GivenReservation("shop.coupon-code", "WELCOME", ReservationTenancy::kSystem)
      .When(ClaimCode{"WELCOME"})
      .ExpectRejection("CODE_TAKEN");
}

}  // namespace
}  // namespace eshop
