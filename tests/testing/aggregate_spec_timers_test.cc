// AggregateSpec and timers: ExpectTimerScheduled, ExpectTimerCancelled and AdvanceTime, on an
// account that expires unless it is verified within a day.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <wow/testing/aggregate_spec.h>

#include <chrono>
#include <string>
#include <string_view>

namespace {

struct RegisterAccount {
  static constexpr std::string_view kType = "accounts.RegisterAccount";
  std::string email;
};
struct VerifyAccount {
  static constexpr std::string_view kType = "accounts.VerifyAccount";
};
struct ExpireUnverified {
  static constexpr std::string_view kType = "accounts.ExpireUnverified";
};
struct AccountRegistered {
  static constexpr std::string_view kType = "accounts.AccountRegistered";
  std::string email;
};
struct AccountVerified {
  static constexpr std::string_view kType = "accounts.AccountVerified";
};
struct AccountExpired {
  static constexpr std::string_view kType = "accounts.AccountExpired";
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RegisterAccount, email)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(AccountRegistered, email)
WOW_DEFINE_EMPTY_MESSAGE(VerifyAccount)
WOW_DEFINE_EMPTY_MESSAGE(ExpireUnverified)
WOW_DEFINE_EMPTY_MESSAGE(AccountVerified)
WOW_DEFINE_EMPTY_MESSAGE(AccountExpired)

struct Account {
  std::string email;
  bool verified = false;
  bool expired = false;
};

constexpr std::string_view kVerification = "verification";
constexpr std::string_view kEmails = "accounts.email";
constexpr auto kDay = std::chrono::hours(24);

std::shared_ptr<wow::AggregateType<Account>> AccountType() {
  auto account = std::make_shared<wow::AggregateType<Account>>("account");
  account
      ->Apply<AccountRegistered>([](Account& s, const AccountRegistered& e) { s.email = e.email; })
      .Apply<AccountVerified>([](Account& s, const AccountVerified&) { s.verified = true; })
      .Apply<AccountExpired>([](Account& s, const AccountExpired&) { s.expired = true; })
      .Decide<RegisterAccount>(
          [](const Account&, const RegisterAccount& c, wow::DecideScope& scope) {
            if (!scope.Reserve(kEmails, c.email, wow::ReservationTenancy::kSystem)) {
              return wow::Decision::Reject("EMAIL_TAKEN", c.email + " is taken");
            }
            const wow::EpochMillis due = scope.Now() + std::chrono::milliseconds(kDay).count();
            scope.Schedule(kVerification, due, scope.self(), ExpireUnverified{});
            return wow::Decision::Events(AccountRegistered{c.email});
          })
      .Decide<VerifyAccount>([](const Account&, const VerifyAccount&, wow::DecideScope& scope) {
        scope.Cancel(kVerification);
        return wow::Decision::Events(AccountVerified{});
      })
      .Decide<ExpireUnverified>([](const Account& s, const ExpireUnverified&, wow::DecideScope&) {
        if (s.verified || s.expired) return wow::Decision::NoOp();
        return wow::Decision::Events(AccountExpired{});
      });
  return account;
}

const wow::AggregateRef kAda{"accounts", "account", "t1", "a-1"};

TEST(AggregateSpecTimers, ExpectTimerScheduledChecksDueTimeTargetAndCommand) {
  wow::testing::AggregateSpec<Account> spec(AccountType(), kAda);
  const wow::EpochMillis due = spec.clock().NowMillis() + std::chrono::milliseconds(kDay).count();
  spec.When(RegisterAccount{"ada@example.com"})
      .ExpectTimerScheduled(kVerification)
      .ExpectTimerScheduled(kVerification, due, kAda, ExpireUnverified{});
}

TEST(AggregateSpecTimers, ExpectTimerScheduledFailsWhenTheCommandSetNone) {
  wow::testing::AggregateSpec<Account> spec(AccountType(), kAda);
  spec.GivenCommand(RegisterAccount{"ada@example.com"}).When(VerifyAccount{});
  EXPECT_NONFATAL_FAILURE(spec.ExpectTimerScheduled(kVerification), "to be scheduled");
}

TEST(AggregateSpecTimers, ExpectTimerScheduledFailsOnAnotherDueTime) {
  wow::testing::AggregateSpec<Account> spec(AccountType(), kAda);
  const wow::EpochMillis now = spec.clock().NowMillis();
  spec.When(RegisterAccount{"ada@example.com"});
  EXPECT_NONFATAL_FAILURE(spec.ExpectTimerScheduled(kVerification, now, kAda, ExpireUnverified{}),
                          "due time");
}

TEST(AggregateSpecTimers, ExpectTimerCancelledSeesTheCancel) {
  wow::testing::AggregateSpec<Account> spec(AccountType(), kAda);
  spec.GivenCommand(RegisterAccount{"ada@example.com"})
      .When(VerifyAccount{})
      .ExpectTimerCancelled(kVerification);
  spec.When(RegisterAccount{"ada@example.com"});
  EXPECT_NONFATAL_FAILURE(spec.ExpectTimerCancelled(kVerification), "to be cancelled");
}

TEST(AggregateSpecTimers, AdvanceTimeFiresTheTimerOnceDue) {
  wow::testing::AggregateSpec<Account> spec(AccountType(), kAda);
  spec.GivenCommand(RegisterAccount{"ada@example.com"});
  spec.AdvanceTime(kDay - std::chrono::minutes(1)).ExpectNoOp();
  EXPECT_FALSE(spec.state().expired);
  spec.AdvanceTime(std::chrono::minutes(1)).ExpectEvents(AccountExpired{});
  EXPECT_TRUE(spec.state().expired);
  EXPECT_FALSE(spec.timers().Find(kAda, std::string(kVerification)).has_value());
}

TEST(AggregateSpecTimers, AdvanceTimeFiresNoCancelledTimer) {
  wow::testing::AggregateSpec<Account> spec(AccountType(), kAda);
  spec.GivenCommand(RegisterAccount{"ada@example.com"}).GivenCommand(VerifyAccount{});
  spec.AdvanceTime(2 * kDay).ExpectNoOp();
  EXPECT_FALSE(spec.state().expired);
}

TEST(AggregateSpecTimers, ExpectEventsAfterAdvanceTimeFailsWhenNoTimerFired) {
  wow::testing::AggregateSpec<Account> spec(AccountType(), kAda);
  spec.GivenCommand(RegisterAccount{"ada@example.com"});
  EXPECT_NONFATAL_FAILURE(spec.AdvanceTime(std::chrono::hours(1)).ExpectEvents(AccountExpired{}),
                          "expected events, got noop");
}

TEST(AggregateSpecReservations, GivenReservationOfAnotherTenantsOwner) {
  wow::testing::AggregateSpec<Account> spec(AccountType(), kAda);
  const wow::AggregateRef other_tenant{"accounts", "account", "t2", "b-1"};
  spec.GivenReservation(kEmails, "ada@example.com", other_tenant, wow::ReservationTenancy::kSystem)
      .When(RegisterAccount{"ada@example.com"})
      .ExpectRejection("EMAIL_TAKEN");
  EXPECT_FALSE(spec.Holds(kEmails, "ada@example.com", wow::ReservationTenancy::kSystem));
}

}  // namespace
