// How the `wow` tool prints times, streams, reservations and timers, as text and as JSON, and how
// it reads times given on the command line.
//
// Thread-safety: stateless functions; safe for concurrent use.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "wow/model.h"
#include "wow/reservation_store.h"
#include "wow/stream.h"
#include "wow/timer_store.h"

namespace wow::tool {

// "2024-05-01T10:00:00.123Z" (UTC); the bare number of milliseconds outside years 0 to 9999.
std::string FormatTime(EpochMillis millis);

// An ISO-8601 date and time: "YYYY-MM-DDTHH:MM:SS" with optional fractional seconds (down to
// the millisecond; finer digits are dropped) and an optional zone ("Z", "+HH:MM", "+HHMM",
// "-HH:MM", "-HHMM"; none means UTC). A space may stand for the "T". nullopt when malformed.
std::optional<EpochMillis> ParseIsoTime(std::string_view text);

// "now", milliseconds since the epoch, or an ISO-8601 time. nullopt when none of these.
std::optional<EpochMillis> ParseTimeArgument(std::string_view text, EpochMillis now);

// `text` safe to print on a terminal and read by people: each control character (C0, DEL, and C1
// as UTF-8) and each byte that is not UTF-8 written as \xNN (C1: \u0080 to \u009f), each
// invisible character (default-ignorable, a bidirectional control, a line or paragraph
// separator) as \uXXXX (\UXXXXXXXX beyond the BMP) and a backslash as \\, so no stored byte
// sends an escape sequence, reorders the line or hides; at most `max` bytes of `text` are shown,
// then "..." when it is longer.
std::string Printable(std::string_view text, std::size_t max = std::string_view::npos);

// A tenant for people: the tenant, or "(system)" for the system tenant.
std::string TenantLabel(std::string_view tenant_id);

// An entry (or a stream, when position is nullopt) as text: a header line
//   partition 1 sequence 2  brand acme/b-1 v2  2024-05-01T10:00:00.000Z  request r-2
// then one indented line per event, key fact and timer fact. Ends with a newline.
std::string EntryText(const Stream& stream, const std::optional<Position>& position);
// {"partition", "sequence", "stream": <the stream's JSON encoding>}; without the position keys
// when position is nullopt.
nlohmann::json EntryJson(const Stream& stream, const std::optional<Position>& position);

// "pending" or "confirmed".
std::string_view StateName(ReservationState state);
nlohmann::json ReservationJson(const Reservation& reservation);
// A reservation as "field  value" lines, for find.
std::string ReservationText(const Reservation& reservation, EpochMillis now);

nlohmann::json TimerJson(const Timer& timer);

// Rows as a table: columns padded to their widest cell (in terminal columns: a full-width or wide
// character takes two), two spaces apart; the columns whose index is in `right` aligned right.
// Each row ends with a newline; trailing blanks are trimmed.
std::string Table(const std::vector<std::vector<std::string>>& rows,
                  const std::set<std::size_t>& right = {});
// A timer as "field  value" lines, for find.
std::string TimerText(const Timer& timer);

}  // namespace wow::tool
