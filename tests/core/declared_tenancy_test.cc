// A namespace's tenancy declared once, on the aggregate type (AggregateType::Reserves): Reserve
// and Release take it from there, and a call that names the other tenancy or an undeclared
// namespace is an error, so a release never silently misses the key it means.
#include <gtest/gtest.h>

#include "wow/aggregate.h"
#include "wow/decide_scope.h"
#include "wow/error.h"

namespace wow {
namespace {

struct Empty {};

constexpr std::string_view kEmails = "emails";
constexpr std::string_view kHandles = "handles";

class DeclaredTenancy : public ::testing::Test {
 protected:
  std::shared_ptr<AggregateType<Empty>> Declared() {
    auto type = std::make_shared<AggregateType<Empty>>("account");
    type->Reserves(kEmails, ReservationTenancy::kSystem).Reserves(kHandles);
    return type;
  }
  DecideScope ScopeOf(const AggregateRef& self, const NamespaceTenancies* declared) {
    return DecideScope(self, NewId(), *reservations_, *clock_, std::chrono::seconds(30), declared);
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::unique_ptr<ReservationStore> reservations_ = NewMemoryReservationStore(clock_);
  const AggregateRef ada_{"shop", "account", "acme", "ada"};
  const AggregateRef bob_{"shop", "account", "globex", "bob"};
};

TEST_F(DeclaredTenancy, ReserveAndReleaseTakeTheDeclaredTenancy) {
  const auto type = Declared();
  DecideScope ada = ScopeOf(ada_, &type->tenancies());
  ASSERT_TRUE(ada.Reserve(kEmails, "ada@example.com"));
  EXPECT_EQ(ada.reserved().back().tenancy, ReservationTenancy::kSystem);
  DecideScope bob = ScopeOf(bob_, &type->tenancies());
  EXPECT_FALSE(bob.Reserve(kEmails, "ada@example.com")) << "system-wide: another tenant's";
  EXPECT_TRUE(bob.Reserve(kHandles, "ada")) << "per tenant: the same key in another tenant";
  ada.Release(kEmails, "old@example.com");
  EXPECT_EQ(ada.released().back().tenancy, ReservationTenancy::kSystem);
}

TEST_F(DeclaredTenancy, AnotherTenancyOrAnUndeclaredNamespaceIsAnErrorAndReservesNothing) {
  const auto type = Declared();
  DecideScope ada = ScopeOf(ada_, &type->tenancies());
  EXPECT_TRUE(ada.Reserve(kEmails, "a@example.com", ReservationTenancy::kSystem)) << "agrees";
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { ada.Release(kEmails, "a@example.com", ReservationTenancy::kTenant); },
           [&] { ada.Reserve(kEmails, "b@example.com", ReservationTenancy::kTenant); },
           [&] { ada.Reserve("phones", "555"); }}) {
    try {
      call();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("account"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(ada.reserved().size(), 1u);
  EXPECT_TRUE(ada.released().empty());
  EXPECT_FALSE(reservations_->Find(DecideScope::ScopeOf(ada_, kEmails, ReservationTenancy::kTenant),
                                   "b@example.com"));
}

TEST_F(DeclaredTenancy, ATypeThatDeclaresNothingNamesTheTenancyOnEachCall) {
  DecideScope ada = ScopeOf(ada_, nullptr);
  ASSERT_TRUE(ada.Reserve("phones", "555"));
  EXPECT_EQ(ada.reserved().back().tenancy, ReservationTenancy::kTenant) << "the default";
  ASSERT_TRUE(ada.Reserve("phones", "556", ReservationTenancy::kSystem));
  EXPECT_EQ(ada.reserved().back().tenancy, ReservationTenancy::kSystem);
}

TEST_F(DeclaredTenancy, ANamespaceDeclaredTwiceWithAnotherTenancyIsRefused) {
  auto type = Declared();
  EXPECT_NO_THROW(type->Reserves(kEmails, ReservationTenancy::kSystem)) << "the same again";
  EXPECT_THROW(type->Reserves(kEmails, ReservationTenancy::kTenant), Error);
  EXPECT_THROW(type->Reserves(""), Error);
}

}  // namespace
}  // namespace wow
