// Stream: what one decision commits for one aggregate, at one version.
//
// A stream carries the decision's events, its request id, its reservation facts (keys reserved by
// the decision, to confirm at the stream's version; keys it released), its timer facts (timers to
// schedule or cancel), the time of the decision, and the transport: the runtime's own encoding of
// the whole stream, stored and given back unchanged. An Entry is a stream at its place in a
// partition of the log.
//
// Thread-safety: plain values; safe to share once built.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wow/model.h"

namespace wow {

// One event: its registered type name and its body as the JSON text of an object.
struct EventRecord {
  std::string type;
  std::string body;

  friend bool operator==(const EventRecord&, const EventRecord&) = default;
};

// A key fact: a key the stream reserved (confirmed at its version) or released.
struct KeyFact {
  std::string ns;
  std::string key;
  ReservationTenancy tenancy = ReservationTenancy::kTenant;

  friend bool operator==(const KeyFact&, const KeyFact&) = default;
};

// What a timer does when its command fails or its target refuses it.
//   kOnce ("once"):   fired at most once; a failure parks it on its target.
//   kRetry ("retry"): fired again after backoff_ms, doubled per attempt up to max_backoff_ms, at
//                     most max_attempts times; then parked.
struct TimerRule {
  enum class Kind { kOnce, kRetry };
  Kind kind = Kind::kOnce;
  int max_attempts = 1;
  std::int64_t backoff_ms = 1000;
  std::int64_t max_backoff_ms = 60'000;

  friend bool operator==(const TimerRule&, const TimerRule&) = default;
};

// "once" or "retry": the name of a rule's kind, as the codecs store it and the tool shows it.
std::string_view TimerRuleKindName(TimerRule::Kind kind);
// Writes TimerRuleKindName(kind), so that GoogleTest's failure messages and logs show the name.
std::ostream& operator<<(std::ostream& out, TimerRule::Kind kind);

// The kind named `name` ("once" or "retry"); nullopt when it names none.
std::optional<TimerRule::Kind> TimerRuleKindNamed(std::string_view name);

// A timer fact: schedule (or replace) the owner's timer `key`, or cancel it.
struct TimerFact {
  enum class Kind { kSchedule, kCancel };
  Kind kind = Kind::kSchedule;
  std::string key;
  // kSchedule only:
  std::string timer_id;  // a fresh id (NewId) fixed at decision time, so replays agree
  EpochMillis due_at = 0;
  AggregateRef target;       // the aggregate the command goes to
  std::string command_type;  // the command's registered type name
  std::string body;          // the command as JSON text
  TimerRule rule;

  friend bool operator==(const TimerFact&, const TimerFact&) = default;
};

struct Stream {
  AggregateRef ref;
  Version version = 0;     // 1, 2, 3, ... per aggregate
  std::string request_id;  // unique per aggregate type and tenant; makes a command idempotent
  std::vector<EventRecord> events;
  std::vector<KeyFact> reserved;  // confirm at `version` once appended
  std::vector<KeyFact> released;  // release at `version` once appended
  std::vector<TimerFact> timers;
  EpochMillis time = 0;
  std::string transport;  // opaque bytes; empty in results of EventLog::Read
  // The attempt that decided the stream: the hold of its reserved keys' pending reservations. Not
  // stored (empty in what a log returns). A log whose append confirms the keys in its own
  // transaction appends only while each reserved key is still this attempt's or confirmed by the
  // owner (a conflict otherwise); empty skips that check (a stream not made by a decision).
  std::string attempt;

  friend bool operator==(const Stream&, const Stream&) = default;
};

// A place in the log.
struct Position {
  int partition = 0;
  Sequence sequence = 0;

  friend auto operator<=>(const Position&, const Position&) = default;
  friend bool operator==(const Position&, const Position&) = default;
};

struct Entry {
  Position position;
  Stream stream;
};

// Why `stream` cannot be appended to a log of `context`, or nullopt when it can: a malformed ref,
// another context, a version below 1, no events, an event of no type or whose body is not the
// JSON text of an object,
// an empty or over-long (256 bytes) request id, a malformed key or timer fact.
std::optional<std::string> InvalidStreamReason(const Stream& stream, const std::string& context);

}  // namespace wow
