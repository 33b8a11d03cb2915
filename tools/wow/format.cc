#include "format.h"

#include <fmt/format.h>
#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>

#include "wow/stream_json.h"

namespace wow::tool {

namespace {

using nlohmann::json;

constexpr EpochMillis kMillisPerDay = 86'400'000;

// Whether `c` shows nothing or changes how the text around it shows: default-ignorable (the
// zero-width space, the soft hyphen, the joiners), a bidirectional control, a line or paragraph
// separator.
bool Invisible(UChar32 c) {
  const int8_t type = u_charType(c);
  return u_hasBinaryProperty(c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT) ||
         u_hasBinaryProperty(c, UCHAR_BIDI_CONTROL) || type == U_LINE_SEPARATOR ||
         type == U_PARAGRAPH_SEPARATOR;
}

// Parses exactly `digits` decimal digits at text[at]; nullopt otherwise.
std::optional<int> Digits(std::string_view text, std::size_t at, std::size_t digits) {
  if (at + digits > text.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = at; i < at + digits; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

std::string KeyFactText(const KeyFact& fact) {
  return fmt::format("{} \"{}\"{}", Printable(fact.ns), Printable(fact.key),
                     fact.tenancy == ReservationTenancy::kSystem ? " (system tenancy)" : "");
}

std::string HoldsText(const std::set<std::string>& holds) {
  std::string text;
  for (const std::string& hold : holds) {
    if (!text.empty()) text += ", ";
    text += hold;
  }
  return text.empty() ? "-" : text;
}

// The terminal columns `text` takes: two for a wide or full-width character, none for a combining
// mark or an invisible one, one for the others (and for each byte that is not UTF-8).
std::size_t Columns(std::string_view text) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const auto length = static_cast<int32_t>(text.size());
  std::size_t columns = 0;
  for (int32_t i = 0; i < length;) {
    const int32_t start = i;
    UChar32 c;
    U8_NEXT(bytes, i, length, c);
    if (c < 0) {
      columns += static_cast<std::size_t>(i - start);
      continue;
    }
    const int8_t type = u_charType(c);
    if (type == U_NON_SPACING_MARK || type == U_ENCLOSING_MARK || Invisible(c)) continue;
    const auto width =
        static_cast<UEastAsianWidth>(u_getIntPropertyValue(c, UCHAR_EAST_ASIAN_WIDTH));
    columns += width == U_EA_WIDE || width == U_EA_FULLWIDTH ? 2 : 1;
  }
  return columns;
}

}  // namespace

std::string FormatTime(EpochMillis millis) {
  using namespace std::chrono;
  constexpr EpochMillis kYear0 = -62'167'219'200'000;      // 0000-01-01T00:00:00Z
  constexpr EpochMillis kYear10000 = 253'402'300'800'000;  // 10000-01-01T00:00:00Z
  if (millis < kYear0 || millis >= kYear10000) return std::to_string(millis);
  EpochMillis days = millis / kMillisPerDay;
  EpochMillis rest = millis % kMillisPerDay;
  if (rest < 0) {
    rest += kMillisPerDay;
    --days;
  }
  const year_month_day date{sys_days{std::chrono::days{days}}};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                     rest / 3'600'000, rest / 60'000 % 60, rest / 1000 % 60, rest % 1000);
}

std::optional<EpochMillis> ParseIsoTime(std::string_view text) {
  using namespace std::chrono;
  const auto year = Digits(text, 0, 4);
  const auto month = Digits(text, 5, 2);
  const auto day = Digits(text, 8, 2);
  const auto hour = Digits(text, 11, 2);
  const auto minute = Digits(text, 14, 2);
  const auto second = Digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || text[13] != ':' ||
      text[16] != ':' || *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  const year_month_day date{std::chrono::year{*year}, std::chrono::month(*month),
                            std::chrono::day(*day)};
  if (!date.ok()) return std::nullopt;
  std::size_t at = 19;
  EpochMillis fraction = 0;
  if (at < text.size() && text[at] == '.') {
    ++at;
    const std::size_t first = at;
    EpochMillis scale = 100;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      fraction += (text[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (at == first) return std::nullopt;
  }
  EpochMillis offset = 0;  // the zone's offset from UTC
  if (at < text.size()) {
    if (text[at] == 'Z' || text[at] == 'z') {
      ++at;
    } else if (text[at] == '+' || text[at] == '-') {
      const int sign = text[at] == '+' ? 1 : -1;
      const auto zone_hours = Digits(text, at + 1, 2);
      std::size_t minutes_at = at + 3;
      if (minutes_at < text.size() && text[minutes_at] == ':') ++minutes_at;
      const auto zone_minutes = Digits(text, minutes_at, 2);
      if (!zone_hours || !zone_minutes || *zone_hours > 23 || *zone_minutes > 59) {
        return std::nullopt;
      }
      offset = sign * (*zone_hours * 3'600'000LL + *zone_minutes * 60'000LL);
      at = minutes_at + 2;
    }
  }
  if (at != text.size()) return std::nullopt;
  const EpochMillis days = sys_days{date}.time_since_epoch().count();
  return days * kMillisPerDay + *hour * 3'600'000LL + *minute * 60'000LL + *second * 1000LL +
         fraction - offset;
}

std::optional<EpochMillis> ParseTimeArgument(std::string_view text, EpochMillis now) {
  if (text == "now") return now;
  EpochMillis millis = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), millis);
  if (error == std::errc() && end == text.data() + text.size() && !text.empty()) return millis;
  return ParseIsoTime(text);
}

std::string Printable(std::string_view text, std::size_t max) {
  const bool cut = text.size() > max;
  if (cut) text = text.substr(0, max);
  std::string out;
  out.reserve(text.size());
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  const auto length = static_cast<int32_t>(text.size());
  for (int32_t i = 0; i < length;) {
    const int32_t start = i;
    UChar32 c;
    U8_NEXT(bytes, i, length, c);
    if (c < 0) {
      for (int32_t k = start; k < i; ++k) out += fmt::format("\\x{:02x}", bytes[k]);  // not UTF-8
    } else if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c == '\\') {
      out += "\\\\";
    } else if ((c >= 0x80 && c <= 0x9F) || Invisible(c)) {
      out += c <= 0xFFFF ? fmt::format("\\u{:04x}", c) : fmt::format("\\U{:08x}", c);
    } else {
      out.append(text.substr(start, i - start));
    }
  }
  if (cut) out += "...";
  return out;
}

std::string TenantLabel(std::string_view tenant_id) {
  return tenant_id.empty() ? "(system)" : std::string(tenant_id);
}

std::string EntryText(const Stream& stream, const std::optional<Position>& position) {
  std::string text;
  if (position) {
    text += fmt::format("partition {} sequence {}  ", position->partition, position->sequence);
  }
  text += fmt::format("{} {}/{} v{}  {}  request {}\n", Printable(stream.ref.aggregate),
                      Printable(TenantLabel(stream.ref.tenant_id)), Printable(stream.ref.id),
                      stream.version, FormatTime(stream.time), Printable(stream.request_id));
  for (const EventRecord& event : stream.events) {
    text += fmt::format("  event {} {}\n", Printable(event.type), Printable(event.body));
  }
  for (const KeyFact& fact : stream.reserved) text += "  reserve " + KeyFactText(fact) + "\n";
  for (const KeyFact& fact : stream.released) text += "  release " + KeyFactText(fact) + "\n";
  for (const TimerFact& fact : stream.timers) {
    if (fact.kind == TimerFact::Kind::kCancel) {
      text += fmt::format("  cancel timer \"{}\"\n", Printable(fact.key));
    } else {
      text += fmt::format("  schedule timer \"{}\" at {}: {} {} to {}\n", Printable(fact.key),
                          FormatTime(fact.due_at), Printable(fact.command_type),
                          Printable(fact.body), Printable(ToString(fact.target)));
    }
  }
  return text;
}

json EntryJson(const Stream& stream, const std::optional<Position>& position) {
  json entry = json::object();
  if (position) {
    entry["partition"] = position->partition;
    entry["sequence"] = position->sequence;
  }
  entry["stream"] = stream;
  return entry;
}

std::string_view StateName(ReservationState state) {
  return state == ReservationState::kConfirmed ? "confirmed" : "pending";
}

json ReservationJson(const Reservation& reservation) {
  json j = {{"key", reservation.key},
            {"owner", reservation.owner},
            {"state", StateName(reservation.state)}};
  if (reservation.state == ReservationState::kConfirmed) {
    j["version"] = reservation.version;
  } else {
    j["holds"] = reservation.holds;
    j["expires_at"] = reservation.expires_at;
  }
  return j;
}

std::string ReservationText(const Reservation& reservation, EpochMillis now) {
  std::string text = fmt::format("key       {}\nowner     {}\nstate     {}\n",
                                 Printable(reservation.key), Printable(ToString(reservation.owner)),
                                 StateName(reservation.state));
  if (reservation.state == ReservationState::kConfirmed) {
    text += fmt::format("version   {}{}\n", reservation.version,
                        reservation.version == kUnversioned ? " (UNVERSIONED: imported)" : "");
  } else {
    text += fmt::format("holds     {}\nexpires   {} ({})\n", HoldsText(reservation.holds),
                        FormatTime(reservation.expires_at),
                        reservation.expires_at <= now ? "expired" : "live");
  }
  return text;
}

json TimerJson(const Timer& timer) {
  return json{{"owner", timer.owner},
              {"key", timer.key},
              {"partition", timer.partition},
              {"timer_id", timer.timer_id},
              {"version", timer.version},
              {"due_at", timer.due_at},
              {"target", timer.target},
              {"command_type", timer.command_type},
              {"body", timer.body},
              {"rule", timer.rule},
              {"state", TimerStateName(timer.state)},
              {"attempt", timer.attempt}};
}

std::string Table(const std::vector<std::vector<std::string>>& rows,
                  const std::set<std::size_t>& right) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], Columns(row[i]));
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (i > 0) line += "  ";
      const std::string pad(widths[i] - Columns(row[i]), ' ');
      line += right.contains(i) ? pad + row[i] : row[i] + pad;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    text += line + "\n";
  }
  return text;
}

std::string TimerText(const Timer& timer) {
  return fmt::format(
      "owner      {}\nkey        {}\npartition  {}\ntimer id   {}\nversion    {}\n"
      "due at     {}\nstate      {}\nattempt    {}\ntarget     {}\ncommand    {} {}\n"
      "rule       {} (max attempts {}, backoff {} ms up to {} ms)\n",
      Printable(ToString(timer.owner)), Printable(timer.key), timer.partition,
      Printable(timer.timer_id), timer.version, FormatTime(timer.due_at),
      TimerStateName(timer.state), timer.attempt, Printable(ToString(timer.target)),
      Printable(timer.command_type), Printable(timer.body), TimerRuleKindName(timer.rule.kind),
      timer.rule.max_attempts, timer.rule.backoff_ms, timer.rule.max_backoff_ms);
}

}  // namespace wow::tool
