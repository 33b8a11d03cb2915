// wow migrate-data keys: imports the older version's PrepareKey keys as confirmed reservations,
// from a mongoexport file or (--from) the collection itself.
//
// The main thread reads the export line by line (or the collection document by document),
// reports bad lines as it meets them, and hands the good ones over in batches; a few worker
// threads confirm a batch's keys concurrently, so the store commits them together (group commit)
// instead of one fsync per key. A batch holds each
// key once: a line whose key is already in the batch flushes it first, so the first line of a key
// is decided before any later one (the later ones are already held, or conflicts). Each batch's
// conflicts are reported in line order once it is done.
#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "format.h"
#ifdef WOW_HAVE_MONGO
#include "prepare_key_collection.h"
#endif
#include "prepare_key_export.h"
#include "progress.h"
#include "signals.h"
#include "tool.h"
#include "wow/error.h"
#include "wow/model.h"
#include "wow/reservation_store.h"

namespace wow::tool {

namespace {

using nlohmann::json;

constexpr std::size_t kBatch = 512;
// The longest line of an export read: a longer one is a bad line, skipped without being held.
constexpr std::size_t kMaxLineBytes = 1 << 20;
// The most bytes of a bad line a message quotes.
constexpr std::size_t kMaxQuotedBytes = 200;

enum class LineRead { kLine, kTooLong, kNul, kEnd };

// Reads the next line of `in` into `line` (without its '\n'), counting its bytes into `bytes`. A
// line over kMaxLineBytes is read to its end but not kept (kTooLong); a NUL byte, which no text
// export holds, stops the read at once (kNul: /dev/zero, a binary file).
LineRead ReadLine(std::istream& in, std::string& line, std::uintmax_t& bytes) {
  line.clear();
  std::streambuf& buffer = *in.rdbuf();
  bool too_long = false;
  for (;;) {
    const int c = buffer.sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      if (line.empty() && !too_long) return LineRead::kEnd;
      break;
    }
    ++bytes;
    if (c == '\n') break;
    if (c == 0) return LineRead::kNul;
    if (line.size() < kMaxLineBytes) {
      line += static_cast<char>(c);
    } else {
      too_long = true;
    }
  }
  return too_long ? LineRead::kTooLong : LineRead::kLine;
}
constexpr int kWorkers = 16;

struct KeysArgs {
  std::string file;
  std::string from;  // mongodb://HOST:PORT/DB/COLLECTION: the collection itself, not a file
  std::string ns;
  std::string aggregate;
  std::string tenant;
  std::string owner_tenant;
  bool owner_tenant_given = false;
  std::string owner_field = "id";
  bool dry_run = false;
};

struct Counts {
  long lines = 0;  // lines read, blank ones included
  long imported = 0;
  long already_held = 0;
  long expired = 0;
  long conflicts = 0;
  long bad = 0;
};

// A good line waiting to be confirmed, and what came of it.
struct Pending {
  long line = 0;
  std::string key;
  AggregateRef owner;
  enum class Outcome { kImported, kAlreadyHeld, kConflict, kBad } outcome = Outcome::kImported;
  std::optional<Reservation> holder;  // kConflict: who holds the key, when known
  std::string error;                  // kBad: why the store refused it
  std::exception_ptr failure;         // a failure of the store: stops the import
};

std::string HolderText(const Reservation& holder) {
  if (holder.state == ReservationState::kConfirmed) {
    return fmt::format("{} (confirmed at version {})", ToString(holder.owner), holder.version);
  }
  return fmt::format("{} (pending until {})", ToString(holder.owner),
                     FormatTime(holder.expires_at));
}

// Confirms one key at UNVERSIONED for its owner, or (dry run) says what that would do.
void Apply(ReservationStore& store, const ReservationScope& scope, bool dry_run, EpochMillis now,
           Pending& item) {
  try {
    std::optional<Reservation> found = store.Find(scope, item.key);
    const bool mine = found && found->owner == item.owner;
    if (mine && found->state == ReservationState::kConfirmed) {
      item.outcome = Pending::Outcome::kAlreadyHeld;
      return;
    }
    const bool others_live =
        found && !mine && (found->state == ReservationState::kConfirmed || found->expires_at > now);
    if (dry_run) {
      item.outcome = others_live ? Pending::Outcome::kConflict : Pending::Outcome::kImported;
      if (others_live) item.holder = std::move(found);
      return;
    }
    if (store.Confirm(scope, item.key, item.owner, kUnversioned)) {
      item.outcome = Pending::Outcome::kImported;
      return;
    }
    item.outcome = Pending::Outcome::kConflict;
    item.holder = store.Find(scope, item.key);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kInvalidArgument) {
      item.outcome = Pending::Outcome::kBad;
      item.error = e.what();
    } else {
      item.failure = std::current_exception();
    }
  } catch (...) {
    item.failure = std::current_exception();
  }
}

void ApplyBatch(ReservationStore& store, const ReservationScope& scope, bool dry_run,
                EpochMillis now, std::vector<Pending>& batch) {
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < batch.size(); i = next++) {
      Apply(store, scope, dry_run, now, batch[i]);
    }
  };
  const int workers = static_cast<int>(std::min<std::size_t>(kWorkers, batch.size()));
  std::vector<std::jthread> threads;
  for (int i = 1; i < workers; ++i) threads.emplace_back(work);
  work();
}

class Import {
 public:
  Import(const Globals& globals, const KeysArgs& args) : globals_(globals), args_(args) {}

  int Run() {
    owner_path_ = SplitOwnerPath(args_.owner_field);
    if (owner_path_.empty()) {
      throw Failure("--owner-field must be a dotted path such as id or owner.id, not \"" +
                        args_.owner_field + "\"",
                    kExitUsage);
    }
    if (args_.from.empty()) return RunOnFile();
#ifdef WOW_HAVE_MONGO
    return RunOnCollection();
#else
    throw Failure("this build of wow has no MongoDB backend (built with WOW_WITH_MONGO=OFF)",
                  kExitUsage);
#endif
  }

 private:
  // Opens the store set and the scope; the first step of either source.
  void Open() {
    session_ =
        std::make_unique<Session>(globals_, args_.dry_run ? Session::Access::kRead
                                                          : Session::Access::kWrite);
    store_ = session_->Reservations();  // the context must exist
    scope_ = ReservationScope{session_->Context(), args_.aggregate, args_.tenant, args_.ns};
    ValidateReservationKey(scope_, "-");  // the scope; any key will do
    now_ = SystemClock::Instance()->NowMillis();
    owner_tenant_ = args_.owner_tenant_given ? args_.owner_tenant : args_.tenant;
  }

  int RunOnFile() {
    source_ = args_.file;
    std::ifstream in(args_.file, std::ios::binary);
    if (!in) {
      throw Failure("cannot read the export file \"" + args_.file + "\": " + std::strerror(errno));
    }
    std::error_code size_error;
    const std::uintmax_t size = std::filesystem::file_size(args_.file, size_error);
    Open();
    ProgressBar progress(!globals_.json, size_error ? 0 : size);
    progress_ = &progress;
    std::uintmax_t bytes = 0;
    std::string line;
    for (LineRead read_line; (read_line = ReadLine(in, line, bytes)) != LineRead::kEnd;) {
      ++counts_.lines;
      if (read_line == LineRead::kNul) {
        throw Failure("\"" + args_.file + "\" holds a NUL byte at line " +
                      std::to_string(counts_.lines) +
                      ": not a JSON-lines export (mongoexport writes text)");
      }
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (read_line == LineRead::kLine && !seen_document_ &&
          line.find_first_not_of(" \t") != std::string::npos &&
          line[line.find_first_not_of(" \t")] == '[') {
        throw Failure("\"" + args_.file +
                      "\" holds a JSON array (mongoexport --jsonArray); export one document a "
                      "line instead (mongoexport without --jsonArray)");
      }
      const bool go_on = Take(read_line == LineRead::kTooLong, line);
      progress.Update(bytes, Status());
      if (!go_on) break;
    }
    if (in.bad()) {
      throw Failure("cannot read the export file \"" + args_.file + "\" after line " +
                    std::to_string(counts_.lines) + ": " + std::strerror(errno));
    }
    return Finish(bytes);
  }

#ifdef WOW_HAVE_MONGO
  int RunOnCollection() {
    const std::optional<CollectionUri> from = SplitCollectionUri(args_.from);
    if (!from) {
      throw Failure("--from must name a collection: mongodb://HOST:PORT/DATABASE/COLLECTION, not \"" +
                        Printable(MaskPassword(args_.from), kMaxQuotedBytes) + "\"",
                    kExitUsage);
    }
    source_ = MaskPassword(args_.from);
    unit_ = "document";
    const PrepareKeyCollection collection(*from);
    const std::uint64_t total = collection.Count();
    Open();
    ProgressBar progress(!globals_.json, total);
    progress_ = &progress;
    std::string line;
    collection.Scan([&](std::string_view document) {
      ++counts_.lines;
      const bool too_long = document.size() > kMaxLineBytes;
      line.assign(document.substr(0, too_long ? kMaxLineBytes : document.size()));
      const bool go_on = Take(too_long, line);
      progress.Update(static_cast<std::uintmax_t>(counts_.lines), Status());
      return go_on;
    });
    return Finish(static_cast<std::uintmax_t>(counts_.lines));
  }
#endif

  // Takes the next line (or document) of the source: a bad one is reported, a good one joins the
  // batch, which is flushed when full. False when a signal asks the import to stop.
  bool Take(bool too_long, const std::string& line) {
    if (too_long) {
      Bad(counts_.lines, "over " + std::to_string(kMaxLineBytes) + " bytes: " +
                             Printable(line, kMaxQuotedBytes));
      return true;
    }
    if (line.find_first_not_of(" \t") == std::string::npos) return true;
    seen_document_ = true;
    const ExportLine read = ParseExportLine(line, owner_path_);
    if (!read.record) {
      Bad(counts_.lines, read.error);
    } else if (read.record->ttl_at && *read.record->ttl_at < now_) {
      ++counts_.expired;
    } else {
      if (!batch_keys_.insert(read.record->key).second) {
        Flush();  // the key's earlier line first
        batch_keys_.insert(read.record->key);
      }
      Pending item;
      item.line = counts_.lines;
      item.key = read.record->key;
      item.owner =
          AggregateRef{scope_.context, scope_.aggregate, owner_tenant_, read.record->owner_id};
      batch_.push_back(std::move(item));
    }
    if (batch_.size() >= kBatch) {
      Flush();
      if (signals_.stop_requested()) {
        interrupted_ = true;
        return false;
      }
    }
    return true;
  }

  // Flushes the last batch (unless interrupted) and prints the summary; the exit code.
  int Finish(std::uintmax_t done) {
    if (!interrupted_) Flush();
    progress_->Update(done, Status(), true);
    progress_->Clear();
    progress_ = nullptr;
    PrintSummary(interrupted_);
    if (interrupted_) return kExitFailed;
    return counts_.bad > 0 || counts_.conflicts > 0 ? kExitProblems : kExitOk;
  }

  void Bad(long line, const std::string& why) {
    ++counts_.bad;
    Report(fmt::format("{} {}: bad {}, skipped: {}", unit_, line, unit_, why));
  }

  void Report(const std::string& message) {
    if (progress_) progress_->Clear();
    std::cerr << "wow: " << message << '\n';
  }

  std::string Status() const {
    return fmt::format("{} {}  imported {}  held {}  expired {}  conflicts {}  bad {}", unit_,
                       counts_.lines, counts_.imported, counts_.already_held, counts_.expired,
                       counts_.conflicts, counts_.bad);
  }

  void Flush() {
    ApplyBatch(*store_, scope_, args_.dry_run, now_, batch_);
    std::exception_ptr failure;
    for (const Pending& item : batch_) {
      if (item.failure) {
        if (!failure) failure = item.failure;
        continue;
      }
      switch (item.outcome) {
        case Pending::Outcome::kImported:
          ++counts_.imported;
          break;
        case Pending::Outcome::kAlreadyHeld:
          ++counts_.already_held;
          break;
        case Pending::Outcome::kBad:
          Bad(item.line, item.error);
          break;
        case Pending::Outcome::kConflict:
          ++counts_.conflicts;
          Report(fmt::format("{} {}: conflict: key \"{}\" is held by {}, not by {}; not imported",
                             unit_, item.line, Printable(item.key, kMaxQuotedBytes),
                             item.holder ? HolderText(*item.holder) : "another aggregate",
                             ToString(item.owner)));
          break;
      }
    }
    batch_.clear();
    batch_keys_.clear();
    if (failure) {
      // Says what was done before the failure; a second run resumes (the import is idempotent).
      PrintSummary(false);
      std::rethrow_exception(failure);
    }
  }

  void PrintSummary(bool interrupted) {
    if (progress_) progress_->Clear();
    if (globals_.json) {
      std::cout << json{{args_.from.empty() ? "file" : "from", source_},
                        {"context", scope_.context},
                        {"aggregate", scope_.aggregate},
                        {"tenant", scope_.tenant_id},
                        {"namespace", scope_.ns},
                        {"dry_run", args_.dry_run},
                        {"interrupted", interrupted},
                        {"lines", counts_.lines},
                        {"imported", counts_.imported},
                        {"already_held", counts_.already_held},
                        {"expired", counts_.expired},
                        {"conflicts", counts_.conflicts},
                        {"bad_lines", counts_.bad}}
                       .dump()
                << '\n';
    } else {
      std::cout << fmt::format(
          "{}{} into namespace {} of {}/{}, tenant {}{}:\n"
          "  {:<18} {}\n"
          "  {:<18} {}\n"
          "  already held       {}\n"
          "  expired, skipped   {}\n"
          "  conflicts          {}\n"
          "  {:<18} {}\n",
          args_.dry_run ? "Dry run (nothing written): keys of " : "Imported keys of ",
          Printable(source_), scope_.ns, scope_.context, scope_.aggregate,
          TenantLabel(scope_.tenant_id), interrupted ? " (interrupted; run again to finish)" : "",
          unit_ + "s read", counts_.lines, args_.dry_run ? "would import" : "imported",
          counts_.imported, counts_.already_held, counts_.expired, counts_.conflicts,
          "bad " + unit_ + "s", counts_.bad);
    }
    std::cout.flush();
  }

  const Globals& globals_;
  const KeysArgs& args_;
  const StopOnSignals signals_;
  std::vector<std::string> owner_path_;  // --owner-field, split
  std::string source_;                   // the file, or the collection's URI (password masked)
  std::string unit_ = "line";            // what the source is made of: "line" or "document"
  std::unique_ptr<Session> session_;
  std::unique_ptr<ReservationStore> store_;
  ReservationScope scope_;
  std::string owner_tenant_;
  EpochMillis now_ = 0;
  Counts counts_;
  bool seen_document_ = false;
  bool interrupted_ = false;
  std::vector<Pending> batch_;
  std::unordered_set<std::string> batch_keys_;  // the keys of the batch not yet flushed
  ProgressBar* progress_ = nullptr;
};

}  // namespace

void AddMigrateCommands(CLI::App& app, Globals& globals, Action& action) {
  auto* migrate = app.add_subcommand("migrate-data", "Import data of the older version");
  migrate->require_subcommand(1);

  auto* keys = migrate->add_subcommand(
      "keys",
      "Import the confirmed keys of a PrepareKey collection (a mongoexport JSON-lines file) as "
      "reservations confirmed at UNVERSIONED");
  auto args = std::make_shared<KeysArgs>();
  auto* file = keys->add_option("--file", args->file,
                                "The mongoexport file, one JSON document a line");
  auto* from = keys->add_option(
      "--from", args->from,
      "Instead of a file, the PrepareKey collection itself: mongodb://HOST:PORT/DB/COLLECTION");
  file->excludes(from);
  from->excludes(file);
  keys->add_option("--namespace", args->ns, "The namespace, such as eshop-catalog.brand-name")
      ->required();
  keys->add_option("--aggregate", args->aggregate, "The owners' aggregate type, such as brand")
      ->required();
  keys->add_option("--tenant", args->tenant,
                   "The tenant the keys are unique in; \"\" for the system tenant")
      ->required();
  keys->add_option("--owner-tenant", args->owner_tenant, "The owners' tenant (default: --tenant)");
  keys->add_option("--owner-field", args->owner_field,
                   "Where the owner id is in a document value, a dotted path (default: id); a "
                   "value that is a plain string is the owner id itself");
  keys->add_flag("--dry-run", args->dry_run,
                 "Read and check every line and report what an import would do; write nothing");
  keys->callback([&globals, &action, args, keys] {
    if (args->file.empty() == args->from.empty()) {
      throw CLI::ValidationError("--file or --from", "name the export file or the collection");
    }
    args->owner_tenant_given = keys->count("--owner-tenant") > 0;
    action = [&globals, args] { return Import(globals, *args).Run(); };
  });
}

}  // namespace wow::tool
