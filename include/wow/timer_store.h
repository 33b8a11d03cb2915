// TimerStore: the durable timers aggregates set, a view rebuilt from the log's timer facts.
//
// A timer belongs to its owner (an aggregate) under a key unique per owner, and lives in its
// owner's partition. It fires a command at its target when due. Writes are versioned by the
// owner's stream that made them, so replaying an old fact changes nothing: a put or cancel applies
// only when the stored timer's version is not later than the fact's.
//
// States: PENDING (waiting for due_at), FIRING (claimed by a timer service until due_at, the
// claim's expiry: a timer whose node died is due again by itself), PARKED (failed; waits for its
// target to change, see Parked).
//
// Bad input throws Error(kInvalidArgument) and changes nothing: an empty key, timer_id or
// command_type, a body that is not JSON, an owner that is malformed or of another context than the
// store's (the target may be of any context), a partition out of range or not the owner's, a
// version or parked_version below kUnversioned (or a parked_version on a timer not PARKED), a
// kPark's target_version below kUnversioned, an attempt below 0, a rule allowing no attempt, a
// limit <= 0. A Settle batch holding one bad change applies none. Failures of the backend throw Error.
//
// Thread-safety: implementations are safe for concurrent use.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "wow/model.h"
#include "wow/stream.h"

namespace wow {

enum class TimerState { kPending, kFiring, kParked };

// The subscription that keeps a context's timers from its log (NewTimerSubscription,
// wow/subscription.h). A store that drops timers it cannot read (a table or collection of another
// format) deletes this subscription's checkpoints of the context with them, so that the log's
// timer facts are applied again from the start.
inline constexpr std::string_view kTimerSubscriptionName = "wow.timers";

// "PENDING", "FIRING", "PARKED".
std::string_view TimerStateName(TimerState state);
// Writes TimerStateName(state), so that GoogleTest's failure messages and logs show the name.
std::ostream& operator<<(std::ostream& out, TimerState state);

struct Timer {
  AggregateRef owner;
  std::string key;  // unique per owner
  int partition = 0;  // the owner's partition
  std::string timer_id;
  Version version = kUnversioned;  // the owner's stream that set it
  EpochMillis due_at = 0;
  AggregateRef target;
  std::string command_type;
  std::string body;  // the command as JSON text
  TimerRule rule;
  TimerState state = TimerState::kPending;
  int attempt = 0;  // how many times it was fired
  // PARKED: the target's version that refused the command (0 when not known: a command no
  // processor could take, or an exception). Only a stream of the target later than it re-arms
  // the timer, so a late, older stream does not. 0 in the other states.
  Version parked_version = kUnversioned;

  friend bool operator==(const Timer&, const Timer&) = default;
};

// A change to a timer as it was loaded: it applies only while the stored timer still has the
// loaded timer's timer_id, version, state, attempt and due_at (optimistic concurrency).
struct TimerChange {
  enum class Kind {
    kClaim,  // state FIRING, due_at = new_due_at (the claim's expiry)
    kRetry,  // state PENDING, due_at = new_due_at, attempt + 1
    kPark,   // state PARKED, attempt + 1, parked_version = target_version
    kDone,   // deleted
    kRearm,  // a parked timer: state PENDING, due_at = new_due_at, parked_version = 0;
             // REQUIRES: loaded PARKED
  };
  Kind kind = Kind::kClaim;
  Timer loaded;
  EpochMillis new_due_at = 0;
  Version target_version = kUnversioned;  // kPark: the target's version that refused it
};

// The checks every backend makes before touching anything; each throws Error(kInvalidArgument).
// An owner must be a valid ref of the store's `context`; a key must not be empty.
void ValidateTimerOwner(const AggregateRef& owner, std::string_view context);
void ValidateTimerKey(const AggregateRef& owner, std::string_view key, std::string_view context);
// Every rule of the bad-input paragraph above, for a store of `context` with `partitions`.
void ValidateTimer(const Timer& timer, std::string_view context, int partitions);
// A Settle batch's checks, all made before any change applies: each change's loaded timer passes
// ValidateTimer, and a kRearm's was loaded PARKED.
void ValidateSettle(const std::vector<TimerChange>& changes, std::string_view context,
                    int partitions);

class TimerStore {
 public:
  virtual ~TimerStore() = default;

  // Inserts `timer`, or replaces the stored timer of the same owner and key whose version is
  // earlier, or equal with another timer_id. Returns true when the store holds `timer`'s fact
  // afterwards: a stored timer of the same version and timer_id is that fact applied before and
  // stays as it is (claimed, retried or parked since). Returns false, changing nothing, when the
  // stored one is later (an old fact replayed).
  //
  // Cancel, CancelAll and a kDone settle delete the timer and keep no trace, so facts must be
  // applied in log order (as the timer subscription does): an old put replayed after a later
  // cancel sets the timer again until the cancel is replayed too.
  virtual bool Put(const Timer& timer) = 0;

  // Deletes owner's timer `key` when its version is not later than `version`. Returns true when
  // it deleted one.
  virtual bool Cancel(const AggregateRef& owner, const std::string& key, Version version) = 0;

  // Deletes every timer of `owner` whose version is not later than `version`; returns how many.
  virtual int CancelAll(const AggregateRef& owner, Version version) = 0;

  // Owner's timer `key`; nullopt when there is none.
  virtual std::optional<Timer> Find(const AggregateRef& owner, const std::string& key) = 0;

  // Up to `limit` PENDING and FIRING timers of `partitions` with due_at <= until, ordered by
  // (due_at, timer_id).
  virtual std::vector<Timer> Due(const std::set<int>& partitions, EpochMillis until,
                                 int limit) = 0;

  // The PARKED timers whose target is `target`, ordered by (due_at, timer_id).
  virtual std::vector<Timer> Parked(const AggregateRef& target) = 0;

  // Applies each change whose timer is still as it was loaded; returns how many applied.
  virtual int Settle(const std::vector<TimerChange>& changes) = 0;
};

// The reference implementation: every timer in memory, gone with the process. Thread-safe.
// `partitions` is the partition count of the context's log, for checking Timer::partition.
std::unique_ptr<TimerStore> NewMemoryTimerStore(std::string_view context, int partitions);

}  // namespace wow
