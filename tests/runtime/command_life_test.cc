// A command's life (DESIGN §4) path by path, over every backend: a key is never held by two
// aggregates, whatever a late fact, a slow attempt, a conflict or a failure does; each attempt
// holds its keys under a hold of its own and gives them up when its events surely did not land.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <set>

#include "catalog.h"
#include "runtime/runtime_fixture.h"
#include "wow/error.h"
#include "wow/incidents.h"
#include "wow/store_wrappers.h"

namespace wow {
namespace {

using eshop::CreateBrand;
using eshop::RenameBrand;
using runtime_test::Brand;
using runtime_test::BrandNames;
using runtime_test::kTtl;

class CommandLife : public runtime_test::Runtime {};

// A log that runs `before` once, just before the first append of `ref` at `version` goes through.
class HookBeforeAppend : public EventLogWrapper {
 public:
  HookBeforeAppend(std::shared_ptr<EventLog> log, AggregateRef ref, Version version,
                   std::function<void()> before)
      : EventLogWrapper(std::move(log)),
        ref_(std::move(ref)),
        version_(version),
        before_(std::move(before)) {}
  AppendResult Append(const Stream& stream) override {
    if (stream.ref == ref_ && stream.version == version_ && !ran_.exchange(true)) before_();
    return target().Append(stream);
  }

 private:
  const AggregateRef ref_;
  const Version version_;
  const std::function<void()> before_;
  std::atomic<bool> ran_{false};
};

// A late release: b1 renames "Alpha" to "Beta" and back while the reservation
// subscription is one stream behind; the subscription delivers the release of "alpha" (v2) after
// b1's third attempt reserved "alpha" again and before that attempt appends.
TEST_P(CommandLife, ALateReleaseLeavesTheKeyToTheAttemptThatReservedItAgain) {
  auto processor = Processor();
  const AggregateRef b1 = Brand("b1");
  ASSERT_EQ(processor->Process(b1, CommandMessage::Of(CreateBrand{"Alpha"})).version, 1);
  ASSERT_EQ(CatchUpReservations(), 1);  // the subscription has delivered v1
  ASSERT_EQ(processor->Process(b1, CommandMessage::Of(RenameBrand{"Beta"})).version, 2);

  CommandResult rival;
  auto held_back = std::make_shared<HookBeforeAppend>(stores_.log, b1, 3, [&] {
    EXPECT_EQ(CatchUpReservations(), 1);  // the subscription delivers v2, late
    rival = Processor()->Process(Brand("b2"), CommandMessage::Of(CreateBrand{"Alpha"}));
  });
  const CommandResult back =
      Processor(held_back)->Process(b1, CommandMessage::Of(RenameBrand{"Alpha"}));

  EXPECT_EQ(rival.code, eshop::rejections::kNameTaken) << "b2 took the key b1's attempt held";
  EXPECT_EQ(back.kind, CommandResult::Kind::kAccepted);
  EXPECT_EQ(back.version, 3);
  ASSERT_TRUE(Key("alpha"));
  EXPECT_EQ(Key("alpha")->owner, b1);
  EXPECT_EQ(Key("alpha")->state, ReservationState::kConfirmed);
  EXPECT_EQ(Key("alpha")->version, 3);
}

// The same, with the subscription replaying from the start (a crash, a lease moved): v1's
// confirmation of "alpha" is superseded by v2's release, which is superseded by nothing yet.
TEST_P(CommandLife, AReplayFromTheStartLeavesTheKeyToTheAttemptThatReservedItAgain) {
  auto processor = Processor();
  const AggregateRef b1 = Brand("b1");
  ASSERT_EQ(processor->Process(b1, CommandMessage::Of(CreateBrand{"Alpha"})).version, 1);
  ASSERT_EQ(processor->Process(b1, CommandMessage::Of(RenameBrand{"Beta"})).version, 2);

  CommandResult rival;
  auto replaying = std::make_shared<HookBeforeAppend>(stores_.log, b1, 3, [&] {
    EXPECT_EQ(CatchUpReservations(), 2);
    rival = Processor()->Process(Brand("b2"), CommandMessage::Of(CreateBrand{"Alpha"}));
  });
  EXPECT_EQ(Processor(replaying)->Process(b1, CommandMessage::Of(RenameBrand{"Alpha"})).version, 3);
  EXPECT_EQ(rival.code, eshop::rejections::kNameTaken);
  ASSERT_TRUE(Key("alpha"));
  EXPECT_EQ(Key("alpha")->owner, b1);
  EXPECT_EQ(Key("alpha")->version, 3);
  EXPECT_FALSE(Key("beta")) << "v3 released beta";
}

// b1's attempt loses its pending key before its append (an operator's release at ANY_VERSION, as
// after an expiry) and b2 takes it. Where the append checks its keys in its own transaction, b1
// decides again and finds the key taken; elsewhere the append lands and the confirmation that
// finds b2 is an incident, never silent.
TEST_P(CommandLife, AKeyLostBeforeTheAppendIsNeverSilentlyHeldByTwo) {
  const AggregateRef b1 = Brand("b1");
  const AggregateRef b2 = Brand("b2");
  const std::uint64_t incidents = KeyIncidentCount();
  auto losing = std::make_shared<HookBeforeAppend>(stores_.log, b1, 1, [&] {
    ASSERT_TRUE(stores_.reservations->Release(BrandNames(), "alpha", b1, kAnyVersion));
    ASSERT_EQ(Processor()->Process(b2, CommandMessage::Of(CreateBrand{"Alpha"})).kind,
              CommandResult::Kind::kAccepted);
  });
  const CommandResult created =
      Processor(losing)->Process(b1, CommandMessage::Of(CreateBrand{"Alpha"}));
  ASSERT_TRUE(Key("alpha"));
  EXPECT_EQ(Key("alpha")->owner, b2);
  if (GetParam().append_confirms_keys) {
    EXPECT_EQ(created.code, eshop::rejections::kNameTaken) << "decided again on the lost key";
    EXPECT_TRUE(stores_.log->Read(b1, 1, kAnyVersion).empty());
    EXPECT_EQ(KeyIncidentCount(), incidents);
  } else {
    EXPECT_EQ(created.kind, CommandResult::Kind::kAccepted);
    EXPECT_EQ(KeyIncidentCount(), incidents + 1);
    const std::optional<KeyIncident> incident = LastKeyIncident();
    ASSERT_TRUE(incident);
    EXPECT_EQ(incident->key, "alpha");
    EXPECT_EQ(incident->claimant, b1);
    EXPECT_EQ(incident->version, 1);
    EXPECT_EQ(incident->holder, b2);
    EXPECT_NE(Describe(*incident).find(ToString(b2)), std::string::npos) << Describe(*incident);
  }
}

// Records every Reserve and Abandon, and runs `on_reserve` after each reserve.
class RecordsHolds : public ReservationStoreWrapper {
 public:
  using ReservationStoreWrapper::ReservationStoreWrapper;
  bool Reserve(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold, std::chrono::milliseconds ttl) override {
    const bool held = ReservationStoreWrapper::Reserve(scope, key, owner, hold, ttl);
    {
      std::lock_guard lock(mutex);
      reserves.push_back(hold);
    }
    if (on_reserve) on_reserve();
    return held;
  }
  bool Abandon(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold) override {
    {
      std::lock_guard lock(mutex);
      abandons.push_back(hold);
    }
    return ReservationStoreWrapper::Abandon(scope, key, owner, hold);
  }
  std::mutex mutex;
  std::vector<std::string> reserves;
  std::vector<std::string> abandons;
  std::function<void()> on_reserve;
};

// An attempt whose decision took half its reservations' time to live no longer trusts them where
// the append does not check them: it decides again. Where the append checks them, it appends.
TEST_P(CommandLife, AnAttemptOlderThanHalfItsReservationsTtlDecidesAgainUnlessTheAppendChecks) {
  auto recording = std::make_shared<RecordsHolds>(stores_.reservations);
  bool slow = true;
  recording->on_reserve = [&] {
    if (std::exchange(slow, false)) clock_->Advance(kTtl / 2);
  };
  const CommandResult created =
      Processor(nullptr, recording)->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Alpha"}));
  EXPECT_EQ(created.kind, CommandResult::Kind::kAccepted);
  ASSERT_TRUE(Key("alpha"));
  EXPECT_EQ(Key("alpha")->state, ReservationState::kConfirmed);
  if (GetParam().append_confirms_keys) {
    EXPECT_EQ(recording->reserves.size(), 1u);
    EXPECT_TRUE(recording->abandons.empty());
  } else {
    ASSERT_EQ(recording->reserves.size(), 2u) << "the slow attempt decided again";
    EXPECT_EQ(recording->abandons, std::vector<std::string>{recording->reserves[0]})
        << "the slow attempt gave its hold up";
  }
}

// A log whose first `conflicts` appends meet a version conflict.
class ConflictsFirst : public EventLogWrapper {
 public:
  ConflictsFirst(std::shared_ptr<EventLog> log, int conflicts)
      : EventLogWrapper(std::move(log)), conflicts_(conflicts) {}
  AppendResult Append(const Stream& stream) override {
    if (conflicts_.fetch_sub(1) > 0) return AppendResult::Conflict();
    return target().Append(stream);
  }

 private:
  std::atomic<int> conflicts_;
};

TEST_P(CommandLife, EachAttemptHoldsItsKeysUnderAFreshHold) {
  auto recording = std::make_shared<RecordsHolds>(stores_.reservations);
  auto processor = Processor(std::make_shared<ConflictsFirst>(stores_.log, 1), recording);
  EXPECT_EQ(processor->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Alpha"})).version, 1);
  ASSERT_EQ(recording->reserves.size(), 2u);
  EXPECT_NE(recording->reserves[0], recording->reserves[1]);
  EXPECT_EQ(recording->abandons, std::vector<std::string>{recording->reserves[0]})
      << "the conflicted attempt, and only it, abandoned its hold";
  ASSERT_TRUE(Key("alpha"));
  EXPECT_EQ(Key("alpha")->state, ReservationState::kConfirmed);
}

// A log whose every append meets a version conflict.
class AlwaysConflicts : public EventLogWrapper {
 public:
  using EventLogWrapper::EventLogWrapper;
  AppendResult Append(const Stream&) override { return AppendResult::Conflict(); }
};

TEST_P(CommandLife, AKeyTheAggregateHoldsStaysHeldWhateverAFailedAttemptDoes) {
  const AggregateRef b1 = Brand("b1");
  ASSERT_EQ(Processor()->Process(b1, CommandMessage::Of(CreateBrand{"Contoso"})).version, 1);
  auto failing = Processor(std::make_shared<AlwaysConflicts>(stores_.log));
  // The new spelling reserves the key b1 holds again, in every attempt; each attempt abandons.
  EXPECT_THROW(failing->Process(b1, CommandMessage::Of(RenameBrand{"CONTOSO"})), Error);
  ASSERT_TRUE(Key("contoso"));
  EXPECT_EQ(Key("contoso")->owner, b1);
  EXPECT_EQ(Key("contoso")->state, ReservationState::kConfirmed);
  EXPECT_EQ(Key("contoso")->version, 1);
}

TEST_P(CommandLife, AReleaseIsOnlyRecordedSoAConflictedDecisionReleasesNothing) {
  const AggregateRef b1 = Brand("b1");
  ASSERT_EQ(Processor()->Process(b1, CommandMessage::Of(CreateBrand{"Alpha"})).version, 1);
  auto failing = Processor(std::make_shared<AlwaysConflicts>(stores_.log));
  EXPECT_THROW(failing->Process(b1, CommandMessage::Of(RenameBrand{"Beta"})), Error);
  ASSERT_TRUE(Key("alpha"));
  EXPECT_EQ(Key("alpha")->owner, b1);
  EXPECT_EQ(Key("alpha")->state, ReservationState::kConfirmed);
  EXPECT_FALSE(Key("beta")) << "every attempt abandoned its hold";
}

// A gadget: a test aggregate whose decide functions reserve or release a key, then answer as the
// command says.
struct Gadget {
  std::string name;
};
struct GadgetNamed {
  static constexpr std::string_view kType = "test.GadgetNamed";
  std::string name;
};
struct Act {
  static constexpr std::string_view kType = "test.Act";
  std::string reserve;  // a key to reserve first, if any
  std::string release;  // a key to release first, if any
  std::string then;     // "events", "reject", "noop" or "throw"
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GadgetNamed, name)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Act, reserve, release, then)

constexpr std::string_view kGadgetNames = "test.gadget-name";

std::shared_ptr<const AggregateBehavior> GadgetType() {
  auto type = std::make_shared<AggregateType<Gadget>>("gadget");
  type->Apply<GadgetNamed>([](Gadget& g, const GadgetNamed& e) { g.name = e.name; })
      .Decide<Act>([](const Gadget&, const Act& act, DecideScope& scope) -> Decision {
        if (!act.reserve.empty() && !scope.Reserve(kGadgetNames, act.reserve)) {
          return Decision::Reject("TAKEN", act.reserve + " is taken");
        }
        if (!act.release.empty()) scope.Release(kGadgetNames, act.release);
        if (act.then == "reject") return Decision::Reject("NO", "rejected after reserving");
        if (act.then == "noop") return Decision::NoOp();
        if (act.then == "throw") throw std::runtime_error("the decide function failed");
        return Decision::Events(GadgetNamed{act.reserve});
      });
  return type;
}

class GadgetLife : public CommandLife {
 protected:
  std::unique_ptr<CommandProcessor> GadgetProcessor(
      std::shared_ptr<EventLog> log = nullptr,
      std::shared_ptr<ReservationStore> reservations = nullptr) {
    auto processor = std::make_unique<CommandProcessor>(
        log ? log : stores_.log, reservations ? reservations : stores_.reservations, clock_,
        CommandProcessorOptions{.reservation_ttl = kTtl, .max_attempts = 3, .workers = 1});
    processor->Register(GadgetType());
    return processor;
  }
  std::optional<Reservation> GadgetKey(const std::string& key) {
    return stores_.reservations->Find(
        {std::string(eshop::kContext), "gadget", "t1", std::string(kGadgetNames)}, key);
  }
  const AggregateRef g1_{std::string(eshop::kContext), "gadget", "t1", "g1"};
};

TEST_P(GadgetLife, ARejectionAfterReservingAbandonsTheHold) {
  auto recording = std::make_shared<RecordsHolds>(stores_.reservations);
  const CommandResult result =
      GadgetProcessor(nullptr, recording)->Process(g1_, CommandMessage::Of(Act{"k", "", "reject"}));
  EXPECT_EQ(result.kind, CommandResult::Kind::kRejected);
  EXPECT_EQ(recording->abandons, recording->reserves);
  EXPECT_FALSE(GadgetKey("k"));
}

TEST_P(GadgetLife, ANoOpAfterReservingAbandonsTheHold) {
  auto recording = std::make_shared<RecordsHolds>(stores_.reservations);
  const CommandResult result =
      GadgetProcessor(nullptr, recording)->Process(g1_, CommandMessage::Of(Act{"k", "", "noop"}));
  EXPECT_EQ(result.kind, CommandResult::Kind::kNoOp);
  EXPECT_EQ(recording->abandons, recording->reserves);
  EXPECT_FALSE(GadgetKey("k"));
}

TEST_P(GadgetLife, AReleaseIsOnlyRecordedSoADecisionRejectedAfterItReleasesNothing) {
  ASSERT_EQ(GadgetProcessor()->Process(g1_, CommandMessage::Of(Act{"k", "", "events"})).version, 1);
  EXPECT_EQ(GadgetProcessor()->Process(g1_, CommandMessage::Of(Act{"", "k", "reject"})).kind,
            CommandResult::Kind::kRejected);
  ASSERT_TRUE(GadgetKey("k"));
  EXPECT_EQ(GadgetKey("k")->state, ReservationState::kConfirmed);
}

TEST_P(GadgetLife, AReleaseIsOnlyRecordedSoADecisionThatThrowsReleasesNothing) {
  ASSERT_EQ(GadgetProcessor()->Process(g1_, CommandMessage::Of(Act{"k", "", "events"})).version, 1);
  EXPECT_THROW(GadgetProcessor()->Process(g1_, CommandMessage::Of(Act{"", "k", "throw"})),
               std::runtime_error);
  ASSERT_TRUE(GadgetKey("k"));
  EXPECT_EQ(GadgetKey("k")->state, ReservationState::kConfirmed);
  EXPECT_EQ(GadgetKey("k")->owner, g1_);
}

// A log that lets a rival stream of the same aggregate land just before the first append.
class RivalLandsFirst : public EventLogWrapper {
 public:
  RivalLandsFirst(std::shared_ptr<EventLog> log, Stream rival)
      : EventLogWrapper(std::move(log)), rival_(std::move(rival)) {}
  AppendResult Append(const Stream& stream) override {
    if (!landed_.exchange(true)) {
      EXPECT_TRUE(target().Append(rival_).appended());
    }
    return target().Append(stream);
  }

 private:
  const Stream rival_;
  std::atomic<bool> landed_{false};
};

TEST_P(CommandLife, AVersionConflictReloadsAndDecidesOnTheNewState) {
  const AggregateRef b1 = Brand("b1");
  ASSERT_EQ(Processor()->Process(b1, CommandMessage::Of(CreateBrand{"Alpha"})).version, 1);
  // Another node renames b1 to "Beta" first.
  Stream rival;
  rival.ref = b1;
  rival.version = 2;
  rival.request_id = "rival";
  rival.events = {EventRecord{std::string(eshop::BrandRenamed::kType),
                              nlohmann::json(eshop::BrandRenamed{"Beta", "beta"}).dump()}};
  rival.reserved = {KeyFact{std::string(eshop::kBrandNames), "beta", ReservationTenancy::kTenant}};
  rival.released = {KeyFact{std::string(eshop::kBrandNames), "alpha", ReservationTenancy::kTenant}};
  auto processor = Processor(std::make_shared<RivalLandsFirst>(stores_.log, rival));
  const CommandResult renamed = processor->Process(b1, CommandMessage::Of(RenameBrand{"Gamma"}));
  ASSERT_EQ(renamed.kind, CommandResult::Kind::kAccepted);
  EXPECT_EQ(renamed.version, 3);
  const std::vector<Stream> third = stores_.log->Read(b1, 3, 3);
  ASSERT_EQ(third.size(), 1u);
  // Decided on the reloaded state: the name it gives up is the rival's "beta", not "alpha".
  EXPECT_EQ(third[0].released, (std::vector<KeyFact>{{std::string(eshop::kBrandNames), "beta",
                                                      ReservationTenancy::kTenant}}));
}

// A log that never finds a request id by lookup, so the append must find the duplicate itself.
class HidesRequestIds : public EventLogWrapper {
 public:
  using EventLogWrapper::EventLogWrapper;
  std::optional<Entry> FindByRequestId(const std::string&, const std::string&,
                                       const std::string&) override {
    return std::nullopt;
  }
};

TEST_P(CommandLife, ADuplicateFoundByTheAppendAnswersDuplicateAndAbandonsTheHolds) {
  const CommandResult original =
      Processor()->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Alpha"}), "request-1");
  ASSERT_EQ(original.kind, CommandResult::Kind::kAccepted);
  auto recording = std::make_shared<RecordsHolds>(stores_.reservations);
  auto processor = Processor(std::make_shared<HidesRequestIds>(stores_.log), recording);
  // Another brand under the same request id: the pre-check is blind, the append is not.
  const CommandResult again =
      processor->Process(Brand("b2"), CommandMessage::Of(CreateBrand{"Zeta"}), "request-1");
  EXPECT_EQ(again.kind, CommandResult::Kind::kDuplicate);
  EXPECT_EQ(again.version, 1);
  EXPECT_EQ(again.position, original.position);
  // The original as the append found it: its aggregate and events, for the caller's answer.
  EXPECT_EQ(again.target, Brand("b1"));
  ASSERT_EQ(again.events.size(), original.events.size());
  EXPECT_EQ(again.events.front().body, original.events.front().body);
  EXPECT_EQ(recording->abandons, recording->reserves);
  EXPECT_FALSE(Key("zeta"));
}

// A log whose appends fail as a lost connection would: the outcome is not known.
class AppendThrows : public EventLogWrapper {
 public:
  using EventLogWrapper::EventLogWrapper;
  AppendResult Append(const Stream&) override {
    throw Error(ErrorCode::kUnavailable, "the connection was lost");
  }
};

TEST_P(CommandLife, AnExceptionFromTheAppendKeepsTheHolds) {
  auto recording = std::make_shared<RecordsHolds>(stores_.reservations);
  auto processor = Processor(std::make_shared<AppendThrows>(stores_.log), recording);
  EXPECT_THROW(processor->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Alpha"})), Error);
  EXPECT_TRUE(recording->abandons.empty());
  ASSERT_TRUE(Key("alpha"));
  EXPECT_EQ(Key("alpha")->state, ReservationState::kPending) << "kept, to expire or be confirmed";
}

INSTANTIATE_TEST_SUITE_P(Backends, CommandLife, ::testing::ValuesIn(runtime_test::Backends()),
                         [](const auto& info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(Backends, GadgetLife, ::testing::ValuesIn(runtime_test::Backends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace wow
