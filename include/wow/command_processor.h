// CommandProcessor: the life of a command (DESIGN §4), on one node.
//
//  1. Load the aggregate: read its streams from the log and apply them.
//  2. Decide with a DecideScope bound to a fresh attempt id; Reserve asks the ReservationStore.
//  3. Rejected, no-op, or the decide function threw: abandon the attempt's holds; answer.
//  4. Events: append one stream at version + 1 with the events and the key and timer facts, only
//     while the attempt's keys are surely its own: where the append confirms them in its own
//     transaction (StoreSet::appends_confirm_keys: a SQLite log and reservation store on one
//     file) it checks them, and a key lost meanwhile is a version conflict; elsewhere an attempt
//     older than half reservation_ttl decides again instead of appending.
//     Appended: confirm each reserved key and release each released key at the stream's version
//     (skipped when the append did it). A confirmation that finds another owner is a key
//     incident (wow/incidents.h), never silent.
//     Version conflict: abandon the holds, reload, decide again (bounded, then Error(kAborted)).
//     Duplicate request id: abandon the holds; answer with the original stream's outcome.
//     Unknown outcome: abandon nothing; the pending keys expire, or the reservation subscription
//     confirms them from the log if the stream landed.
//
// The commands of one aggregate run one at a time on a node; different aggregates run in
// parallel (Process on the caller's threads, Submit on the processor's worker pool). A request id
// makes a command idempotent per aggregate type and tenant.
//
// Thread-safety: safe for concurrent use once every aggregate type is registered; Register is
// not safe concurrently with anything else.
#pragma once

#include <chrono>
#include <future>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wow/aggregate.h"
#include "wow/event_log.h"
#include "wow/reservation_store.h"
#include "wow/store_set.h"

namespace wow {

struct CommandResult {
  enum class Kind {
    kAccepted,   // the events were appended at `version`, `position`
    kRejected,   // the decide function refused: `code`, `message`
    kNoOp,       // nothing to change
    kDuplicate,  // the request id was used before: `target`, `version`, `position` and
                 // `events` are the original stream's
    kUnknown,    // the append's outcome is not known (`message`); retry with the same request id
  };
  Kind kind = Kind::kNoOp;
  // The aggregate the outcome is about: the command's target; for kDuplicate the original's (a
  // request id used before on another aggregate of the type and tenant names that one).
  AggregateRef target;
  Version version = 0;
  Position position;
  // kAccepted: the events appended. kDuplicate: the original stream's events, as the processor
  // read them (empty when the log could not give the original back, which a reader may retry).
  std::vector<EventRecord> events;
  std::string code;
  std::string message;
  std::string request_id;  // the request id the command ran under
};

// "accepted", "rejected", "noop", "duplicate", "unknown".
std::string_view KindName(CommandResult::Kind kind);
// Writes KindName(kind), so that GoogleTest's failure messages and logs show the name.
std::ostream& operator<<(std::ostream& out, CommandResult::Kind kind);

// An aggregate as loaded: its version (0 when it has no streams), whether it is deleted, its state.
struct LoadedAggregate {
  Version version = 0;
  bool deleted = false;
  std::unique_ptr<AggregateState> state;

  // The state as `State`. REQUIRES: the aggregate type's state is `State`.
  template <typename State>
  const State& As() const {
    return static_cast<const TypedState<State>&>(*state).state;
  }
};

struct CommandProcessorOptions {
  std::chrono::milliseconds reservation_ttl{30'000};  // how long a pending reservation lives
  int max_attempts = 8;  // decisions per command before a run of conflicts is Error(kAborted)
  int workers = 4;       // threads of Submit's pool
};

class CommandProcessor {
 public:
  // Processes commands against the stores of `stores`, timing decisions by its clock; confirms
  // the keys after an append unless the set's appends confirm them (appends_confirm_keys).
  explicit CommandProcessor(const StoreSet& stores, CommandProcessorOptions options = {});

  // Processes commands against `log` and `reservations`, timing decisions by `clock`; confirms
  // the keys after each append (harmless where the append did: the confirmation finds it done).
  CommandProcessor(std::shared_ptr<EventLog> log, std::shared_ptr<ReservationStore> reservations,
                   std::shared_ptr<const Clock> clock, CommandProcessorOptions options = {});
  ~CommandProcessor();  // waits for the commands Submit queued

  CommandProcessor(const CommandProcessor&) = delete;
  CommandProcessor& operator=(const CommandProcessor&) = delete;

  // Adds an aggregate type. Throws Error(kInvalidArgument) when one of that name is registered.
  void Register(std::shared_ptr<const AggregateBehavior> type);

  // Processes `command` for `target` on this thread and returns its outcome. An empty request id
  // gets a fresh one. Throws Error(kInvalidArgument) for an unregistered aggregate type, a target
  // of another context, or a command the type does not take (nothing is written); Error(kAborted)
  // after max_attempts version conflicts; whatever the decide function or a store throws, after
  // abandoning the attempt's holds when its events surely were not appended.
  CommandResult Process(const AggregateRef& target, const CommandMessage& command,
                        std::string request_id = {});
  // Process(target, CommandMessage::Of(command), request_id): `command` is a Message value.
  template <Message Command>
  CommandResult Process(const AggregateRef& target, const Command& command,
                        std::string request_id = {}) {
    return Process(target, CommandMessage::Of(command), std::move(request_id));
  }

  // Process on the worker pool; the future holds the outcome or the exception.
  std::future<CommandResult> Submit(AggregateRef target, CommandMessage command,
                                    std::string request_id = {});
  // Submit(target, CommandMessage::Of(command), request_id): `command` is a Message value.
  template <Message Command>
  std::future<CommandResult> Submit(AggregateRef target, const Command& command,
                                    std::string request_id = {}) {
    return Submit(std::move(target), CommandMessage::Of(command), std::move(request_id));
  }

  // Loads `target` from the log. Throws Error(kInvalidArgument) for an unregistered type.
  LoadedAggregate Load(const AggregateRef& target);

  EventLog& log() { return *log_; }
  // The bounded context the processor serves: its log's.
  const std::string& context() const { return log_->context(); }
  ReservationStore& reservations() { return *reservations_; }
  // The clock the processor decides and reserves by (and by which reservations expire).
  const Clock& clock() const;

 private:
  class Impl;
  std::shared_ptr<EventLog> log_;
  std::shared_ptr<ReservationStore> reservations_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wow
