// The command processor and the subscriptions end to end (DESIGN §4), over every backend.
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <thread>

#include "catalog.h"
#include "runtime/runtime_fixture.h"
#include "support/temp_dir.h"
#include "wow/command_processor.h"
#include "wow/error.h"
#include "wow/store_wrappers.h"
#include "wow/subscription.h"
#include "wow/timer_service.h"
#ifdef WOW_HAVE_SQLITE
#include "wow/sqlite.h"
#endif

namespace wow {
namespace {

using eshop::CreateBrand;
using eshop::RenameBrand;
using std::chrono::milliseconds;
using namespace runtime_test;

TEST_P(Runtime, ConcurrentCreatesOfOneNameInManySpellingsCreateExactlyOneBrand) {
  auto processor = Processor();
  const std::vector<std::string> spellings = {"Contoso", " contoso",    "CONTOSO ",
                                              "cOnToSo", "\tContoso\t", "contoso"};
  constexpr int kThreads = 32;
  std::barrier start(kThreads);
  std::atomic<int> accepted{0};
  std::atomic<int> taken{0};
  std::vector<std::jthread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      const CommandResult result =
          processor->Process(Brand("b" + std::to_string(i)),
                             CommandMessage::Of(CreateBrand{spellings[i % spellings.size()]}));
      if (result.kind == CommandResult::Kind::kAccepted) ++accepted;
      if (result.code == eshop::rejections::kNameTaken) ++taken;
    });
  }
  threads.clear();
  EXPECT_EQ(accepted.load(), 1);
  EXPECT_EQ(taken.load(), kThreads - 1);
  const auto keys = stores_.reservations->List(BrandNames(), "", 100);
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].key, "contoso");
  EXPECT_EQ(keys[0].state, ReservationState::kConfirmed);
  int brands = 0;
  for (int p = 0; p < 4; ++p) brands += static_cast<int>(stores_.log->ReadAfter(p, 0, 100).size());
  EXPECT_EQ(brands, 1);
}

TEST_P(Runtime, ReplayedReleasesOfARenameChainKeepTheKeyALaterFactConfirmed) {
  auto processor = Processor();
  const AggregateRef brand = Brand("b1");
  ASSERT_EQ(processor->Process(brand, CommandMessage::Of(CreateBrand{"Alpha"})).version, 1);
  ASSERT_EQ(processor->Process(brand, CommandMessage::Of(RenameBrand{"Beta"})).version, 2);
  ASSERT_EQ(processor->Process(brand, CommandMessage::Of(RenameBrand{"Alpha"})).version, 3);
  ASSERT_TRUE(Key("alpha"));
  EXPECT_EQ(Key("alpha")->version, 3);
  EXPECT_FALSE(Key("beta"));

  // The subscription replays every stream from the start: v2's release of "alpha" is old.
  EXPECT_EQ(CatchUpReservations(), 3);
  ASSERT_TRUE(Key("alpha"));
  EXPECT_EQ(Key("alpha")->owner, brand);
  EXPECT_EQ(Key("alpha")->state, ReservationState::kConfirmed);
  EXPECT_EQ(Key("alpha")->version, 3);
  EXPECT_FALSE(Key("beta")) << "v3 released beta after v2's replayed confirm";
}

// A reservation store that fails every Confirm and Release: a process that stops between its
// append and its confirmation.
class StopsBeforeConfirming : public ReservationStoreWrapper {
 public:
  using ReservationStoreWrapper::ReservationStoreWrapper;
  bool Confirm(const ReservationScope&, const std::string&, const AggregateRef&, Version) override {
    throw Error(ErrorCode::kUnavailable, "the process stopped");
  }
  bool Release(const ReservationScope&, const std::string&, const AggregateRef&, Version) override {
    throw Error(ErrorCode::kUnavailable, "the process stopped");
  }
};

// Counts the confirmations the processor asks for.
class CountsConfirms : public ReservationStoreWrapper {
 public:
  using ReservationStoreWrapper::ReservationStoreWrapper;
  bool Confirm(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ++confirms;
    return ReservationStoreWrapper::Confirm(scope, key, owner, version);
  }
  std::atomic<int> confirms{0};
};

TEST_P(Runtime, TheProcessorConfirmsAfterTheAppendOnlyWhenTheAppendDidNot) {
  auto counting = std::make_shared<CountsConfirms>(stores_.reservations);
  ASSERT_EQ(Processor(nullptr, counting)
                ->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Contoso"}))
                .kind,
            CommandResult::Kind::kAccepted);
  EXPECT_EQ(counting->confirms.load(), GetParam().append_confirms_keys ? 0 : 1);
  ASSERT_TRUE(Key("contoso"));
  EXPECT_EQ(Key("contoso")->state, ReservationState::kConfirmed);
  EXPECT_EQ(Key("contoso")->version, 1);
}

TEST_P(Runtime, AProcessStoppedBetweenAppendAndConfirmLosesNoKey) {
  auto crashing = std::make_shared<StopsBeforeConfirming>(stores_.reservations);
  const CommandResult created =
      Processor(nullptr, crashing)
          ->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Contoso"}));
  ASSERT_EQ(created.kind, CommandResult::Kind::kAccepted);
  ASSERT_TRUE(Key("contoso"));
  if (GetParam().append_confirms_keys) {
    // No moment between the append and the confirmation to stop in: one transaction did both.
    EXPECT_EQ(Key("contoso")->state, ReservationState::kConfirmed);
  } else {
    EXPECT_EQ(Key("contoso")->state, ReservationState::kPending) << "never confirmed";
  }

  EXPECT_EQ(CatchUpReservations(), 1);
  ASSERT_TRUE(Key("contoso"));
  EXPECT_EQ(Key("contoso")->state, ReservationState::kConfirmed);
  EXPECT_EQ(Key("contoso")->version, 1);

  clock_->Advance(kTtl * 10);
  EXPECT_EQ(Processor()->Process(Brand("b2"), CommandMessage::Of(CreateBrand{"contoso"})).code,
            eshop::rejections::kNameTaken);
}

#ifdef WOW_HAVE_MONGO
TEST_P(Runtime, AConfirmationAMongoFailPointKillsIsAppliedFromTheLog) {
  if (!GetParam().mongo_reservations && !GetParam().mongo_stores) {
    GTEST_SKIP() << "a fail point of the MongoDB test server";
  }
  Key("warm-up");  // the reservation collection and its format record
  if (GetParam().mongo_stores) {
    // The log's collection and its record, and the subscription's lease and checkpoint: their
    // updates come before the fail point's.
    ASSERT_EQ(Processor()->Process(Brand("b0"), CommandMessage::Of(CreateBrand{"Fabrikam"})).kind,
              CommandResult::Kind::kAccepted);
    EXPECT_EQ(CatchUpReservations(), 1);
  }
  // The create's reserve passes; its confirmation, and libmongoc's retry of it, meet a closed
  // connection: the append landed, the confirmation did not.
  testing_support::SetFailPoint(testing_support::SharedMongoTestServer().uri(),
                                R"({"skip": 1, "times": 2})",
                                R"({"failCommands": ["update"], "closeConnection": true})");
  const CommandResult created =
      Processor()->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Contoso"}));
  ASSERT_EQ(created.kind, CommandResult::Kind::kAccepted);
  ASSERT_TRUE(Key("contoso"));
  EXPECT_EQ(Key("contoso")->state, ReservationState::kPending) << "the confirmation was killed";

  EXPECT_EQ(CatchUpReservations(), 1);
  EXPECT_EQ(Key("contoso")->state, ReservationState::kConfirmed);
  EXPECT_EQ(Key("contoso")->version, 1);
  clock_->Advance(kTtl * 10);
  EXPECT_EQ(Processor()->Process(Brand("b2"), CommandMessage::Of(CreateBrand{"contoso"})).code,
            eshop::rejections::kNameTaken);
}
#endif

TEST_P(Runtime, TheSubscriptionConfirmsAKeyWhoseExpiredPendingWasTheOwners) {
  auto crashing = std::make_shared<StopsBeforeConfirming>(stores_.reservations);
  ASSERT_EQ(Processor(nullptr, crashing)
                ->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Contoso"}))
                .kind,
            CommandResult::Kind::kAccepted);
  clock_->Advance(kTtl * 2);  // the pending reservation expired before the subscription ran
  EXPECT_EQ(CatchUpReservations(), 1);
  ASSERT_TRUE(Key("contoso"));
  EXPECT_EQ(Key("contoso")->state, ReservationState::kConfirmed);
}

// A log whose every append meets a version conflict.
class AlwaysConflicts : public EventLogWrapper {
 public:
  using EventLogWrapper::EventLogWrapper;
  AppendResult Append(const Stream&) override {
    ++appends;
    return AppendResult::Conflict();
  }
  std::atomic<int> appends{0};
};

TEST_P(Runtime, AVersionConflictDecidesAgainBoundedThenFailsClearly) {
  auto log = std::make_shared<AlwaysConflicts>(stores_.log);
  auto processor = Processor(log);
  try {
    processor->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Contoso"}));
    FAIL() << "no error after endless conflicts";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kAborted);
    EXPECT_NE(std::string(e.what()).find("version conflict"), std::string::npos) << e.what();
  }
  EXPECT_EQ(log->appends.load(), 8) << "one append per decision, max_attempts decisions";
  EXPECT_FALSE(Key("contoso")) << "every attempt abandoned its hold";
}

// A log that appends, or not, then answers that the outcome is unknown.
class UnknownOutcome : public EventLogWrapper {
 public:
  UnknownOutcome(std::shared_ptr<EventLog> log, bool lands)
      : EventLogWrapper(std::move(log)), lands_(lands) {}
  AppendResult Append(const Stream& stream) override {
    if (lands_) target().Append(stream);
    return AppendResult::Unknown("the connection was lost");
  }

 private:
  bool lands_;
};

TEST_P(Runtime, AnUnknownOutcomeAbandonsNothingAndAKeyThatDidNotLandExpires) {
  auto processor = Processor(std::make_shared<UnknownOutcome>(stores_.log, false));
  const CommandResult result =
      processor->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Contoso"}));
  EXPECT_EQ(result.kind, CommandResult::Kind::kUnknown);
  ASSERT_TRUE(Key("contoso"));
  EXPECT_EQ(Key("contoso")->state, ReservationState::kPending) << "not abandoned";
  EXPECT_EQ(Processor()->Process(Brand("b2"), CommandMessage::Of(CreateBrand{"Contoso"})).code,
            eshop::rejections::kNameTaken);
  clock_->Advance(kTtl);
  EXPECT_EQ(CatchUpReservations(), 0);
  EXPECT_EQ(Processor()->Process(Brand("b2"), CommandMessage::Of(CreateBrand{"Contoso"})).kind,
            CommandResult::Kind::kAccepted);
}

TEST_P(Runtime, AnUnknownOutcomeThatLandedIsConfirmedFromTheLog) {
  auto processor = Processor(std::make_shared<UnknownOutcome>(stores_.log, true));
  EXPECT_EQ(processor->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Contoso"})).kind,
            CommandResult::Kind::kUnknown);
  EXPECT_EQ(CatchUpReservations(), 1);
  ASSERT_TRUE(Key("contoso"));
  EXPECT_EQ(Key("contoso")->state, ReservationState::kConfirmed);
  EXPECT_EQ(Key("contoso")->owner, Brand("b1"));
}

// A brand type whose decide function reserves, then throws.
struct Explode {
  static constexpr std::string_view kType = "test.Explode";
};
void to_json(nlohmann::json& json, const Explode&) { json = nlohmann::json::object(); }
void from_json(const nlohmann::json&, Explode&) {}

TEST_P(Runtime, ADecideFunctionThatThrowsAbandonsItsHolds) {
  auto type = std::make_shared<AggregateType<eshop::Named>>("gadget");
  type->Decide<Explode>([](const eshop::Named&, const Explode&, DecideScope& scope) -> Decision {
    EXPECT_TRUE(scope.Reserve("test.gadget-name", "boom"));
    throw std::runtime_error("the decide function failed");
  });
  CommandProcessor processor(stores_.log, stores_.reservations, clock_);
  processor.Register(type);
  const AggregateRef gadget{std::string(eshop::kContext), "gadget", "t1", "g1"};
  EXPECT_THROW(processor.Process(gadget, CommandMessage::Of(Explode{})), std::runtime_error);
  EXPECT_FALSE(stores_.reservations->Find(
      {std::string(eshop::kContext), "gadget", "t1", "test.gadget-name"}, "boom"));
  EXPECT_EQ(stores_.log->Read(gadget, 1, kAnyVersion).size(), 0u);
}

// A log that counts the conflicts its appends meet.
class CountsConflicts : public EventLogWrapper {
 public:
  using EventLogWrapper::EventLogWrapper;
  AppendResult Append(const Stream& stream) override {
    AppendResult result = target().Append(stream);
    if (result.kind() == AppendResult::Kind::kConflict) ++conflicts;
    return result;
  }
  std::atomic<int> conflicts{0};
};

TEST_P(Runtime, ConcurrentCommandsOfOneAggregateRunOneAtATime) {
  auto log = std::make_shared<CountsConflicts>(stores_.log);
  auto processor = Processor(log);
  ASSERT_EQ(processor->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Name 0"})).kind,
            CommandResult::Kind::kAccepted);
  std::vector<std::future<CommandResult>> results;
  for (int i = 1; i <= 40; ++i) {
    results.push_back(processor->Submit(
        Brand("b1"), CommandMessage::Of(RenameBrand{"Name " + std::to_string(i)})));
  }
  for (auto& result : results) EXPECT_EQ(result.get().kind, CommandResult::Kind::kAccepted);
  EXPECT_EQ(log->conflicts.load(), 0) << "serialised per aggregate, no decision raced another";
  EXPECT_EQ(processor->Load(Brand("b1")).version, 41);
}

TEST_P(Runtime, BadCommandsAreRefusedAndWriteNothing) {
  auto processor = Processor();
  EXPECT_THROW(processor->Process({"other-context", "brand", "t1", "b1"},
                                  CommandMessage::Of(CreateBrand{"x"})),
               Error);
  EXPECT_THROW(processor->Process({std::string(eshop::kContext), "unknown", "t1", "b1"},
                                  CommandMessage::Of(CreateBrand{"x"})),
               Error);
  EXPECT_THROW(processor->Process(Brand("b1"), CommandMessage{"eshop.Nope", {}}), Error);
  EXPECT_THROW(processor->Process(Brand("b1"), CommandMessage{"eshop.CreateBrand", {{"name", 5}}}),
               Error);
  for (int p = 0; p < 4; ++p) EXPECT_EQ(stores_.log->Head(p), 0);
  EXPECT_TRUE(stores_.reservations->List(BrandNames(), "", 10).empty());
}

// An aggregate that sets and cancels timers.
struct Remind {
  static constexpr std::string_view kType = "test.Remind";
  std::string key;
  bool cancel = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Remind, key, cancel)
struct Reminded {
  static constexpr std::string_view kType = "test.Reminded";
  std::string key;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Reminded, key)

TEST_P(Runtime, TheTimerSubscriptionAppliesTimerFacts) {
  auto type = std::make_shared<AggregateType<eshop::Named>>("reminder");
  type->Apply<Reminded>([](eshop::Named&, const Reminded&) {})
      .Decide<Remind>([](const eshop::Named&, const Remind& c, DecideScope& scope) {
        if (c.cancel) {
          scope.Cancel(c.key);
        } else {
          scope.Schedule(c.key, scope.Now() + 60'000, scope.self(), Remind{c.key, true});
        }
        return Decision::Events(Reminded{c.key});
      });
  CommandProcessor processor(stores_.log, stores_.reservations, clock_);
  processor.Register(type);
  const AggregateRef reminder{std::string(eshop::kContext), "reminder", "t1", "r1"};
  ASSERT_EQ(processor.Process(reminder, CommandMessage::Of(Remind{"daily"})).kind,
            CommandResult::Kind::kAccepted);
  SubscriptionRunner runner(stores_.log, {NewTimerSubscription(stores_.timers, 4)});
  EXPECT_EQ(runner.CatchUp(), 1);
  auto timer = stores_.timers->Find(reminder, "daily");
  ASSERT_TRUE(timer);
  EXPECT_EQ(timer->due_at, clock_->NowMillis() + 60'000);
  EXPECT_EQ(timer->version, 1);
  EXPECT_EQ(timer->command_type, Remind::kType);
  EXPECT_EQ(nlohmann::json::parse(timer->body)["cancel"], true);

  ASSERT_EQ(processor.Process(reminder, CommandMessage::Of(Remind{"daily", true})).kind,
            CommandResult::Kind::kAccepted);
  EXPECT_EQ(runner.CatchUp(), 1);
  EXPECT_FALSE(stores_.timers->Find(reminder, "daily"));
}

TEST_P(Runtime, AStartedRunnerConfirmsKeysInTheBackground) {
  auto crashing = std::make_shared<StopsBeforeConfirming>(stores_.reservations);
  SubscriptionRunner runner(stores_.log,
                            {NewReservationSubscription(stores_.reservations, stores_.log)},
                            {.node = "n1", .lease_ttl = milliseconds(300)});
  runner.Start();
  ASSERT_EQ(Processor(nullptr, crashing)
                ->Process(Brand("b1"), CommandMessage::Of(CreateBrand{"Contoso"}))
                .kind,
            CommandResult::Kind::kAccepted);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline &&
         Key("contoso").value_or(Reservation{}).state != ReservationState::kConfirmed) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  runner.Stop();
  ASSERT_TRUE(Key("contoso"));
  EXPECT_EQ(Key("contoso")->state, ReservationState::kConfirmed);
}

INSTANTIATE_TEST_SUITE_P(Backends, Runtime, ::testing::ValuesIn(Backends()),
                         [](const auto& info) { return info.param.name; });

// An aggregate whose timers send it Ping: taken while it is open, rejected while closed.
struct Pinger {
  int pings = 0;
  bool open = true;
};
struct Arm {
  static constexpr std::string_view kType = "test.Arm";
  std::string key;
  std::int64_t delay_ms = 0;
  bool retry = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Arm, key, delay_ms, retry)
struct Ping {
  static constexpr std::string_view kType = "test.Ping";
  bool unused = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Ping, unused)
struct SetOpen {
  static constexpr std::string_view kType = "test.SetOpen";
  bool open = true;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SetOpen, open)
struct Armed {
  static constexpr std::string_view kType = "test.Armed";
  std::string key;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Armed, key)
struct Pinged {
  static constexpr std::string_view kType = "test.Pinged";
  bool unused = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Pinged, unused)
struct OpenSet {
  static constexpr std::string_view kType = "test.OpenSet";
  bool open = true;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OpenSet, open)

std::shared_ptr<AggregateType<Pinger>> PingerType() {
  auto type = std::make_shared<AggregateType<Pinger>>("pinger");
  type->Apply<Armed>([](Pinger&, const Armed&) {})
      .Apply<Pinged>([](Pinger& state, const Pinged&) { ++state.pings; })
      .Apply<OpenSet>([](Pinger& state, const OpenSet& e) { state.open = e.open; })
      .Decide<Arm>([](const Pinger&, const Arm& c, DecideScope& scope) {
        TimerRule rule;
        if (c.retry) rule = {TimerRule::Kind::kRetry, 3, 1'000, 1'500};
        scope.Schedule(c.key, scope.Now() + c.delay_ms, scope.self(), Ping{}, rule);
        return Decision::Events(Armed{c.key});
      })
      .Decide<Ping>([](const Pinger& state, const Ping&, DecideScope&) {
        if (!state.open) return Decision::Reject("CLOSED", "the pinger is closed");
        return Decision::Events(Pinged{});
      })
      .Decide<SetOpen>([](const Pinger&, const SetOpen& c, DecideScope&) {
        return Decision::Events(OpenSet{c.open});
      });
  return type;
}

class TimerServiceTest : public Runtime {
 protected:
  void SetUp() override {
    Runtime::SetUp();
    if (IsSkipped()) return;  // a backend whose server is not there
    processor_ = Processor();
    processor_->Register(PingerType());
    runner_ = std::make_unique<SubscriptionRunner>(
        stores_.log, std::vector{NewTimerSubscription(stores_.timers, 4)},
        SubscriptionRunnerOptions{.node = "n1"});
    service_ = std::make_unique<TimerService>(stores_.log, stores_.timers, processor_, clock_,
                                              TimerServiceOptions{.node = "n1"});
  }

  CommandResult Send(const CommandMessage& command) {
    return processor_->Process(pinger_, command);
  }

  // The timer subscription caught up with the log, then one pass of the service.
  int Pass() {
    runner_->CatchUp();
    return service_->FireDue();
  }

  int Pings() {
    const LoadedAggregate loaded = processor_->Load(pinger_);
    return dynamic_cast<const TypedState<Pinger>&>(*loaded.state).state.pings;
  }

  const AggregateRef pinger_{std::string(eshop::kContext), "pinger", "t1", "p1"};
  std::shared_ptr<CommandProcessor> processor_;
  std::unique_ptr<SubscriptionRunner> runner_;  // the timer subscription, fed by CatchUp
  std::unique_ptr<TimerService> service_;
};

TEST_P(TimerServiceTest, ADueTimerFiresItsCommandOnceAndIsDeleted) {
  ASSERT_EQ(Send(CommandMessage::Of(Arm{"k", 60'000})).kind, CommandResult::Kind::kAccepted);
  EXPECT_EQ(Pass(), 0) << "not due yet";
  clock_->Advance(milliseconds(60'000));
  EXPECT_EQ(Pass(), 1);
  EXPECT_EQ(Pings(), 1);
  EXPECT_FALSE(stores_.timers->Find(pinger_, "k")) << "done: deleted";
  clock_->Advance(milliseconds(60'000));
  EXPECT_EQ(Pass(), 0);
  EXPECT_EQ(Pings(), 1);
}

// A TimerStore whose every settle finds its timers changed, as if another node got there first.
class LosesEverySettle : public TimerStoreWrapper {
 public:
  using TimerStoreWrapper::TimerStoreWrapper;
  int Settle(const std::vector<TimerChange>&) override {
    ++settles;
    return 0;
  }
  int settles = 0;
};

TEST_P(TimerServiceTest, AServiceOnATimerStoreWrapperSeesItsOverrideAndFiresNothingItCannotClaim) {
  auto timers = std::make_shared<LosesEverySettle>(stores_.timers);
  TimerService service(stores_.log, timers, processor_, clock_, {.node = "n1"});
  ASSERT_EQ(Send(CommandMessage::Of(Arm{"k", 0})).kind, CommandResult::Kind::kAccepted);
  runner_->CatchUp();
  EXPECT_EQ(service.FireDue(), 0);
  EXPECT_EQ(timers->settles, 1) << "the claim went to the override";
  EXPECT_EQ(Pings(), 0);
  ASSERT_TRUE(timers->Find(pinger_, "k")) << "Find forwarded to the wrapped store";
  EXPECT_EQ(timers->Find(pinger_, "k")->state, TimerState::kPending);
}

TEST_P(TimerServiceTest, ATimerWhoseClaimExpiredFiresAgainAsADuplicateNotASecondCommand) {
  ASSERT_EQ(Send(CommandMessage::Of(Arm{"k", 0})).kind, CommandResult::Kind::kAccepted);
  runner_->CatchUp();
  // A node claimed it, sent the command, and died before settling.
  const Timer due = stores_.timers->Due({0, 1, 2, 3}, clock_->NowMillis(), 10).at(0);
  ASSERT_EQ(stores_.timers->Settle({{TimerChange::Kind::kClaim, due, clock_->NowMillis() + 5}}), 1);
  ASSERT_EQ(processor_
                ->Process(pinger_, CommandMessage::Of(Ping{}),
                          "timer:" + due.timer_id + ":" + std::to_string(due.attempt))
                .kind,
            CommandResult::Kind::kAccepted);
  EXPECT_EQ(service_->FireDue(), 0) << "claimed until its expiry";
  clock_->Advance(milliseconds(5));
  EXPECT_EQ(service_->FireDue(), 1);
  EXPECT_EQ(Pings(), 1) << "the second firing is the first's request again";
  EXPECT_FALSE(stores_.timers->Find(pinger_, "k"));
}

TEST_P(TimerServiceTest, ARejectedRetryTimerBacksOffThenParksAndTheTargetsChangeRearmsIt) {
  ASSERT_EQ(Send(CommandMessage::Of(SetOpen{false})).kind, CommandResult::Kind::kAccepted);
  ASSERT_EQ(Send(CommandMessage::Of(Arm{"k", 0, /*retry=*/true})).kind,
            CommandResult::Kind::kAccepted);
  EXPECT_EQ(Pass(), 1);
  auto timer = stores_.timers->Find(pinger_, "k");
  ASSERT_TRUE(timer);
  EXPECT_EQ(timer->state, TimerState::kPending);
  EXPECT_EQ(timer->attempt, 1);
  EXPECT_EQ(timer->due_at, clock_->NowMillis() + 1'000) << "backoff_ms";
  EXPECT_EQ(Pass(), 0);

  clock_->Advance(milliseconds(1'000));
  EXPECT_EQ(Pass(), 1);
  timer = stores_.timers->Find(pinger_, "k");
  EXPECT_EQ(timer->attempt, 2);
  EXPECT_EQ(timer->due_at, clock_->NowMillis() + 1'500) << "doubled, at most max_backoff_ms";

  clock_->Advance(milliseconds(1'500));
  EXPECT_EQ(Pass(), 1);
  timer = stores_.timers->Find(pinger_, "k");
  EXPECT_EQ(timer->state, TimerState::kParked) << "three attempts made";
  EXPECT_EQ(timer->attempt, 3);
  EXPECT_EQ(timer->parked_version, 2) << "the target's version that rejected it";
  clock_->Advance(milliseconds(60'000));
  EXPECT_EQ(Pass(), 0) << "parked timers are not due";

  ASSERT_EQ(Send(CommandMessage::Of(SetOpen{true})).kind, CommandResult::Kind::kAccepted);
  EXPECT_EQ(Pass(), 1) << "the target changed: re-armed and fired";
  EXPECT_EQ(Pings(), 1);
  EXPECT_FALSE(stores_.timers->Find(pinger_, "k"));
}

TEST_P(TimerServiceTest, ALateStreamOfTheTargetNoLaterThanTheOneThatRejectedItLeavesItParked) {
  ASSERT_EQ(Send(CommandMessage::Of(SetOpen{false})).kind, CommandResult::Kind::kAccepted);
  ASSERT_EQ(Send(CommandMessage::Of(Arm{"k", 0})).kind, CommandResult::Kind::kAccepted);
  EXPECT_EQ(Pass(), 1);
  ASSERT_EQ(stores_.timers->Find(pinger_, "k")->state, TimerState::kParked);
  ASSERT_EQ(stores_.timers->Find(pinger_, "k")->parked_version, 2);

  // The target's streams delivered again, late (a subscription of a partition read behind the
  // others, or replaying after a lost checkpoint): versions 1 and 2 saw the refusal already.
  const std::shared_ptr<Subscription> late = NewTimerSubscription(stores_.timers, 4);
  for (const Entry& entry : stores_.log->ReadEntries(pinger_, {1, 2})) late->Handle(entry);
  EXPECT_EQ(stores_.timers->Find(pinger_, "k")->state, TimerState::kParked);
  EXPECT_EQ(Pass(), 0) << "still parked: firing again would meet the same refusal";

  ASSERT_EQ(Send(CommandMessage::Of(SetOpen{true})).kind, CommandResult::Kind::kAccepted);
  EXPECT_EQ(Pass(), 1) << "version 3, later than the refusal: re-armed and fired";
  EXPECT_EQ(Pings(), 1);
}

TEST_P(TimerServiceTest, ARejectedOnceTimerParksAtOnceAndABadCommandParksToo) {
  ASSERT_EQ(Send(CommandMessage::Of(SetOpen{false})).kind, CommandResult::Kind::kAccepted);
  ASSERT_EQ(Send(CommandMessage::Of(Arm{"k", 0})).kind, CommandResult::Kind::kAccepted);
  EXPECT_EQ(Pass(), 1);
  EXPECT_EQ(stores_.timers->Find(pinger_, "k")->state, TimerState::kParked);

  // A timer whose command no aggregate takes: refused as bad input, so parked.
  runner_->CatchUp();
  Timer bad = *stores_.timers->Find(pinger_, "k");
  bad.key = "bad";
  bad.timer_id = NewId();
  bad.command_type = "test.Nothing";
  bad.state = TimerState::kPending;
  bad.due_at = clock_->NowMillis();
  bad.attempt = 0;
  bad.parked_version = 0;
  ASSERT_TRUE(stores_.timers->Put(bad));
  EXPECT_EQ(service_->FireDue(), 1);
  EXPECT_EQ(stores_.timers->Find(pinger_, "bad")->state, TimerState::kParked);
  EXPECT_EQ(stores_.timers->Find(pinger_, "bad")->parked_version, 0)
      << "no version refused it: any later stream of the target re-arms it";
}

// A due timer of the pinger whose target is `target`, put straight into the store.
Timer DueTimerAt(const AggregateRef& owner, const AggregateRef& target, EpochMillis now) {
  Timer t;
  t.owner = owner;
  t.key = "elsewhere";
  t.partition = PartitionOf(owner.tenant_id, owner.id, 4);
  t.timer_id = NewId();
  t.version = 1;
  t.due_at = now;
  t.target = target;
  t.command_type = std::string(Ping::kType);
  t.body = nlohmann::json(Ping{}).dump();
  return t;
}

TEST_P(TimerServiceTest, ATimerOfAnotherContextWithNoProcessorThereIsParkedAtOnceAndCounted) {
  const AggregateRef billing{"billing", "pinger", "t1", "p9"};
  ASSERT_TRUE(stores_.timers->Put(DueTimerAt(pinger_, billing, clock_->NowMillis())));
  EXPECT_EQ(service_->FireDue(), 0) << "no command sent";
  const auto timer = stores_.timers->Find(pinger_, "elsewhere");
  ASSERT_TRUE(timer);
  EXPECT_EQ(timer->state, TimerState::kParked);
  EXPECT_EQ(timer->attempt, 1);
  EXPECT_EQ(service_->stats().unroutable, 1u);
  EXPECT_EQ(service_->stats().parked, 1u);
  EXPECT_EQ(service_->stats().fired, 0u);
  clock_->Advance(milliseconds(60'000));
  EXPECT_EQ(service_->FireDue(), 0) << "parked: not due again";
}

TEST_P(TimerServiceTest, ATimerOfAnotherContextFiresThroughThatContextsProcessor) {
  StoreSetOptions options;
  options.clock = clock_;
  options.partitions = 4;
  auto billing_processor =
      std::make_shared<CommandProcessor>(OpenStores("memory:", "billing", options));
  billing_processor->Register(PingerType());
  EXPECT_THROW(service_->Route(processor_), Error) << "the service's own context";
  service_->Route(billing_processor);
  const AggregateRef billing{"billing", "pinger", "t1", "p9"};
  ASSERT_TRUE(stores_.timers->Put(DueTimerAt(pinger_, billing, clock_->NowMillis())));
  EXPECT_EQ(service_->FireDue(), 1);
  const LoadedAggregate loaded = billing_processor->Load(billing);
  EXPECT_EQ(dynamic_cast<const TypedState<Pinger>&>(*loaded.state).state.pings, 1);
  EXPECT_FALSE(stores_.timers->Find(pinger_, "elsewhere")) << "done";
  EXPECT_EQ(service_->stats().unroutable, 0u);
  EXPECT_EQ(service_->stats().fired, 1u);
}

TEST_P(TimerServiceTest, ANodeWithoutThePartitionsLeaseFiresNothing) {
  ASSERT_EQ(Send(CommandMessage::Of(Arm{"k", 0})).kind, CommandResult::Kind::kAccepted);
  runner_->CatchUp();
  TimerService other(stores_.log, stores_.timers, processor_, clock_, {.node = "n2"});
  EXPECT_EQ(service_->FireDue(), 1) << "n1 takes the leases";
  ASSERT_EQ(Send(CommandMessage::Of(Arm{"k2", 0})).kind, CommandResult::Kind::kAccepted);
  runner_->CatchUp();
  EXPECT_EQ(other.FireDue(), 0) << "n1 holds every lease";
  EXPECT_EQ(Pings(), 1);
}

TEST_P(TimerServiceTest, AStartedServiceFiresDueTimersConcurrentlyInTheBackground) {
  ASSERT_EQ(Send(CommandMessage::Of(Arm{"k", 0})).kind, CommandResult::Kind::kAccepted);
  runner_->CatchUp();
  TimerService started(stores_.log, stores_.timers, processor_, clock_,
                       {.node = "n1", .poll_interval = milliseconds(5)});
  started.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline && stores_.timers->Find(pinger_, "k")) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  started.Stop();
  EXPECT_FALSE(stores_.timers->Find(pinger_, "k"));
  EXPECT_EQ(Pings(), 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, TimerServiceTest, ::testing::ValuesIn(Backends()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace wow
