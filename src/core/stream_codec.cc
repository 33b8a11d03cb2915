#include "core/stream_codec.h"

#include <cstdint>
#include <limits>

#include "wow/error.h"

namespace wow::core {
namespace {

// The first byte of the facts encoding; an encoding that changes takes the next.
constexpr unsigned char kFactsEncoding = 1;
// The smallest encodings of a list's items, so a count can be checked against the bytes left.
constexpr size_t kMinEventBytes = 8;      // two empty strings
constexpr size_t kMinKeyFactBytes = 9;    // two empty strings and the tenancy
constexpr size_t kMinTimerFactBytes = 5;  // the kind and an empty key

// Appends the little-endian binary encodings (stream_codec.h) to `out`.
class ByteWriter {
 public:
  explicit ByteWriter(std::string& out) : out_(out) {}

  void Byte(unsigned char value) { out_.push_back(static_cast<char>(value)); }
  // A size or count as u32; throws Error(kInvalidArgument) when it does not fit.
  void Size(size_t size) {
    if (size > std::numeric_limits<std::uint32_t>::max()) {
      throw Error(ErrorCode::kInvalidArgument, "a string or list over 4 GiB cannot be stored");
    }
    Little(size, 4);
  }
  void Int(std::int64_t value) { Little(static_cast<std::uint64_t>(value), 8); }
  // [u32 size][bytes]
  void String(std::string_view value) {
    Size(value.size());
    out_.append(value);
  }

 private:
  void Little(std::uint64_t value, int bytes) {
    char buffer[8];
    for (int i = 0; i < bytes; ++i) buffer[i] = static_cast<char>(value >> (8 * i));
    out_.append(buffer, static_cast<size_t>(bytes));
  }
  std::string& out_;
};

// Reads what ByteWriter wrote. Every read throws Error(kDataLoss), naming the column (`what`),
// when the bytes end too early or are not what the writer writes.
class ByteReader {
 public:
  ByteReader(std::string_view bytes, const char* what) : bytes_(bytes), what_(what) {}

  unsigned char Byte() {
    Need(1);
    const auto value = static_cast<unsigned char>(bytes_.front());
    bytes_.remove_prefix(1);
    return value;
  }
  std::uint32_t Size() { return static_cast<std::uint32_t>(Little(4)); }
  // A list's count, checked against the bytes left for items of at least `min_item_bytes` each,
  // so that reserving it is safe.
  std::uint32_t Count(size_t min_item_bytes) {
    const std::uint32_t count = Size();
    Need(count * min_item_bytes);
    return count;
  }
  std::int64_t Int() { return static_cast<std::int64_t>(Little(8)); }
  std::string String() {
    const std::uint32_t size = Size();
    Need(size);
    std::string value(bytes_.substr(0, size));
    bytes_.remove_prefix(size);
    return value;
  }
  // Throws unless every byte was read.
  void End() const {
    if (!bytes_.empty()) Damaged("have trailing bytes");
  }
  [[noreturn]] void Damaged(const std::string& why) const {
    throw Error(ErrorCode::kDataLoss, "stored " + std::string(what_) + " " + why +
                                          ": they are not what was written; the store is damaged");
  }

 private:
  void Need(size_t size) const {
    if (bytes_.size() < size) Damaged("are truncated");
  }
  std::uint64_t Little(int bytes) {
    Need(static_cast<size_t>(bytes));
    const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data());
    std::uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) value |= std::uint64_t{p[i]} << (8 * i);
    bytes_.remove_prefix(static_cast<size_t>(bytes));
    return value;
  }

  std::string_view bytes_;
  const char* what_;
};

// ---- facts, in the layout codec.h gives

void PutKeyFacts(ByteWriter& out, const std::vector<KeyFact>& facts) {
  out.Size(facts.size());
  for (const KeyFact& fact : facts) {
    out.String(fact.ns);
    out.String(fact.key);
    out.Byte(fact.tenancy == ReservationTenancy::kSystem ? 1 : 0);
  }
}

std::vector<KeyFact> ReadKeyFacts(ByteReader& in) {
  std::vector<KeyFact> facts(in.Count(kMinKeyFactBytes));
  for (KeyFact& fact : facts) {
    fact.ns = in.String();
    fact.key = in.String();
    switch (const unsigned char tenancy = in.Byte()) {
      case 0:
        fact.tenancy = ReservationTenancy::kTenant;
        break;
      case 1:
        fact.tenancy = ReservationTenancy::kSystem;
        break;
      default:
        in.Damaged("hold an unknown key tenancy " + std::to_string(tenancy));
    }
  }
  return facts;
}

void PutTimerFact(ByteWriter& out, const TimerFact& fact) {
  out.Byte(fact.kind == TimerFact::Kind::kCancel ? 1 : 0);
  out.String(fact.key);
  if (fact.kind == TimerFact::Kind::kCancel) return;
  out.String(fact.timer_id);
  out.Int(fact.due_at);
  out.String(fact.target.context);
  out.String(fact.target.aggregate);
  out.String(fact.target.tenant_id);
  out.String(fact.target.id);
  out.String(fact.command_type);
  out.String(fact.body);
  out.String(TimerRuleKindName(fact.rule.kind));
  out.Int(fact.rule.max_attempts);
  out.Int(fact.rule.backoff_ms);
  out.Int(fact.rule.max_backoff_ms);
}

TimerFact ReadTimerFact(ByteReader& in) {
  TimerFact fact;
  const unsigned char kind = in.Byte();
  if (kind > 1) in.Damaged("hold an unknown timer fact kind " + std::to_string(kind));
  fact.kind = kind == 1 ? TimerFact::Kind::kCancel : TimerFact::Kind::kSchedule;
  fact.key = in.String();
  if (fact.kind == TimerFact::Kind::kCancel) return fact;
  fact.timer_id = in.String();
  fact.due_at = in.Int();
  fact.target.context = in.String();
  fact.target.aggregate = in.String();
  fact.target.tenant_id = in.String();
  fact.target.id = in.String();
  fact.command_type = in.String();
  fact.body = in.String();
  const std::string type = in.String();
  const std::optional<TimerRule::Kind> rule_kind = TimerRuleKindNamed(type);
  if (!rule_kind) in.Damaged("hold an unknown timer rule type \"" + type + "\"");
  fact.rule.kind = *rule_kind;
  const std::int64_t max_attempts = in.Int();
  if (max_attempts < std::numeric_limits<int>::min() ||
      max_attempts > std::numeric_limits<int>::max()) {
    in.Damaged("hold a timer rule of " + std::to_string(max_attempts) + " attempts");
  }
  fact.rule.max_attempts = static_cast<int>(max_attempts);
  fact.rule.backoff_ms = in.Int();
  fact.rule.max_backoff_ms = in.Int();
  return fact;
}

// The smallest encoding of a stream: the encoding byte, six empty strings, three i64, an empty
// event list and the facts flag.
constexpr size_t kMinStreamBytes = 1 + 6 * 4 + 3 * 8 + 4 + 1;

void PutEvents(ByteWriter& out, const std::vector<EventRecord>& events) {
  out.Size(events.size());
  for (const EventRecord& event : events) {
    out.String(event.type);
    out.String(event.body);
  }
}

std::vector<EventRecord> ReadEvents(ByteReader& in) {
  std::vector<EventRecord> events(in.Count(kMinEventBytes));
  for (EventRecord& event : events) {
    event.type = in.String();
    event.body = in.String();
  }
  return events;
}

void PutFacts(ByteWriter& out, const Stream& stream) {
  out.Byte(kFactsEncoding);
  PutKeyFacts(out, stream.reserved);
  PutKeyFacts(out, stream.released);
  out.Size(stream.timers.size());
  for (const TimerFact& fact : stream.timers) PutTimerFact(out, fact);
}

void ReadFacts(ByteReader& in, Stream& stream) {
  if (const unsigned char encoding = in.Byte(); encoding != kFactsEncoding) {
    in.Damaged("are in an unknown encoding " + std::to_string(encoding));
  }
  stream.reserved = ReadKeyFacts(in);
  stream.released = ReadKeyFacts(in);
  const std::uint32_t timers = in.Count(kMinTimerFactBytes);
  stream.timers.clear();
  stream.timers.reserve(timers);
  for (std::uint32_t i = 0; i < timers; ++i) stream.timers.push_back(ReadTimerFact(in));
}

bool HasFacts(const Stream& stream) {
  return !stream.reserved.empty() || !stream.released.empty() || !stream.timers.empty();
}

}  // namespace

std::string EncodeEvents(const std::vector<EventRecord>& events) {
  size_t size = 4;
  for (const EventRecord& event : events) size += 8 + event.type.size() + event.body.size();
  std::string bytes;
  bytes.reserve(size);
  ByteWriter out(bytes);
  PutEvents(out, events);
  return bytes;
}

std::vector<EventRecord> DecodeEvents(std::string_view bytes) {
  ByteReader in(bytes, "events");
  std::vector<EventRecord> events = ReadEvents(in);
  in.End();
  return events;
}

std::optional<std::string> EncodeFacts(const Stream& stream) {
  if (!HasFacts(stream)) return std::nullopt;
  std::string bytes;
  ByteWriter out(bytes);
  PutFacts(out, stream);
  return bytes;
}

void DecodeFacts(std::string_view bytes, Stream& stream) {
  if (bytes.empty()) {
    stream.reserved.clear();
    stream.released.clear();
    stream.timers.clear();
    return;
  }
  ByteReader in(bytes, "facts");
  ReadFacts(in, stream);
  in.End();
}

std::string EncodeStream(const Stream& stream) {
  size_t size = kMinStreamBytes + stream.ref.context.size() + stream.ref.aggregate.size() +
                stream.ref.tenant_id.size() + stream.ref.id.size() + stream.request_id.size();
  for (const EventRecord& event : stream.events) size += 8 + event.type.size() + event.body.size();
  std::string bytes;
  bytes.reserve(size + 64);
  ByteWriter out(bytes);
  out.Byte(static_cast<unsigned char>(kStreamEncoding));
  out.String(stream.ref.context);
  out.String(stream.ref.aggregate);
  out.String(stream.ref.tenant_id);
  out.String(stream.ref.id);
  out.Int(stream.version);
  out.String(stream.request_id);
  out.Int(stream.time);
  PutEvents(out, stream.events);
  out.Byte(HasFacts(stream) ? 1 : 0);
  if (HasFacts(stream)) PutFacts(out, stream);
  return bytes;
}

Stream DecodeStream(std::string_view bytes) {
  ByteReader in(bytes, "stream bytes");
  if (const unsigned char encoding = in.Byte();
      encoding != static_cast<unsigned char>(kStreamEncoding)) {
    in.Damaged("are in an unknown encoding " + std::to_string(encoding));
  }
  Stream stream;
  stream.ref.context = in.String();
  stream.ref.aggregate = in.String();
  stream.ref.tenant_id = in.String();
  stream.ref.id = in.String();
  stream.version = in.Int();
  stream.request_id = in.String();
  stream.time = in.Int();
  stream.events = ReadEvents(in);
  switch (const unsigned char facts = in.Byte()) {
    case 0:
      break;
    case 1:
      ReadFacts(in, stream);
      break;
    default:
      in.Damaged("hold an unknown facts flag " + std::to_string(facts));
  }
  in.End();
  return stream;
}

}  // namespace wow::core
