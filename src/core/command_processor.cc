#include "wow/command_processor.h"

#include <spdlog/spdlog.h>

#include <array>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <ostream>
#include <thread>

#include "core/background_thread.h"
#include "core/key_facts.h"
#include "wow/stream_json.h"

namespace wow {

std::string_view KindName(CommandResult::Kind kind) {
  switch (kind) {
    case CommandResult::Kind::kAccepted:
      return "accepted";
    case CommandResult::Kind::kRejected:
      return "rejected";
    case CommandResult::Kind::kNoOp:
      return "noop";
    case CommandResult::Kind::kDuplicate:
      return "duplicate";
    case CommandResult::Kind::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, CommandResult::Kind kind) {
  return out << KindName(kind);
}

namespace {

// The built-in commands' decisions; nullopt when the command is not built in and the aggregate
// may decide it.
std::optional<Decision> DecideBuiltIn(const LoadedAggregate& loaded, const CommandMessage& command,
                                      const AggregateRef& target) {
  const bool is_delete = command.type == DeleteAggregate::kType;
  const bool is_restore = command.type == RestoreAggregate::kType;
  if ((is_delete || is_restore) && loaded.version == 0) {
    return Decision::Reject(std::string(rejections::kAggregateNotFound),
                            ToString(target) + " does not exist");
  }
  if (is_delete) {
    if (loaded.deleted)
      return Decision::Reject(std::string(rejections::kAggregateDeleted),
                              ToString(target) + " is deleted");
    return Decision::Events(AggregateDeleted{});
  }
  if (is_restore) {
    if (!loaded.deleted)
      return Decision::Reject(std::string(rejections::kAggregateNotDeleted),
                              ToString(target) + " is not deleted");
    return Decision::Events(AggregateRestored{});
  }
  if (loaded.deleted)
    return Decision::Reject(std::string(rejections::kAggregateDeleted),
                            ToString(target) + " is deleted");
  return std::nullopt;
}

// Abandons the holds of an attempt whose events surely were not appended. A failure here only
// delays the key (its pending reservation expires), so it is reported, not thrown.
void AbandonHolds(ReservationStore& reservations, const DecideScope& scope) {
  for (const KeyFact& fact : scope.reserved()) {
    try {
      reservations.Abandon(DecideScope::ScopeOf(scope.self(), fact.ns, fact.tenancy), fact.key,
                           scope.self(), scope.attempt());
    } catch (const std::exception& e) {
      spdlog::warn("abandoning key {} of {} failed; it expires instead: {}", fact.key,
                   ToString(scope.self()), e.what());
    }
  }
}

}  // namespace

class CommandProcessor::Impl {
 public:
  Impl(CommandProcessor& outer, std::shared_ptr<const Clock> clock, CommandProcessorOptions options,
       bool appends_confirm_keys)
      : outer_(outer),
        clock_(std::move(clock)),
        options_(options),
        confirm_after_append_(!appends_confirm_keys) {
    Require(clock_ != nullptr, "a command processor needs a clock");
    Require(options_.max_attempts >= 1, "max_attempts must be at least 1");
    Require(options_.workers >= 1, "workers must be at least 1");
    Require(options_.reservation_ttl.count() > 0, "reservation_ttl must be positive");
    for (int i = 0; i < options_.workers; ++i) {
      workers_.push_back(core::StartBackgroundThread([this](std::stop_token stop) { Work(stop); }));
    }
  }

  ~Impl() {
    {
      std::lock_guard lock(queue_mutex_);
      stopping_ = true;
    }
    queue_changed_.notify_all();
    workers_.clear();  // joins; the workers drain the queue first
  }

  void Register(std::shared_ptr<const AggregateBehavior> type) {
    Require(type != nullptr, "cannot register a null aggregate type");
    const std::string name = type->name();
    Require(types_.emplace(name, std::move(type)).second,
            [&] { return "aggregate type " + name + " is registered already"; });
  }

  const AggregateBehavior& TypeOf(const AggregateRef& target) const {
    ValidateRef(target);
    Require(target.context == outer_.log_->context(), [&] {
      return ToString(target) + " is not of this processor's context " + outer_.log_->context();
    });
    auto it = types_.find(target.aggregate);
    Require(it != types_.end(),
            [&] { return "aggregate type " + target.aggregate + " is not registered"; });
    return *it->second;
  }

  LoadedAggregate Load(const AggregateBehavior& type, const AggregateRef& target) const {
    LoadedAggregate loaded{0, false, type.NewState()};
    for (const Stream& stream : outer_.log_->Read(target, 1, kAnyVersion)) {
      for (const EventRecord& event : stream.events) {
        if (event.type == AggregateDeleted::kType) {
          loaded.deleted = true;
        } else if (event.type == AggregateRestored::kType) {
          loaded.deleted = false;
        } else {
          type.Apply(*loaded.state, event);
        }
      }
      loaded.version = stream.version;
    }
    return loaded;
  }

  CommandResult Process(const AggregateRef& target, const CommandMessage& command,
                        std::string request_id) {
    const AggregateBehavior& type = TypeOf(target);
    const bool built_in =
        command.type == DeleteAggregate::kType || command.type == RestoreAggregate::kType;
    Require(built_in || type.Handles(command.type), [&] {
      return "aggregate type " + type.name() + " takes no command of type \"" + command.type + "\"";
    });
    // A request id made here is new: no stream can have it, so its lookup is skipped.
    const bool fresh = request_id.empty();
    if (fresh) request_id = NewId();
    Require(request_id.size() <= 256, "request id is over 256 bytes");

    std::lock_guard aggregate_lock(StripeOf(target));
    EventLog& log = *outer_.log_;
    ReservationStore& reservations = *outer_.reservations_;
    if (!fresh) {
      if (auto original = log.FindByRequestId(target.aggregate, target.tenant_id, request_id)) {
        return Duplicate(*original, request_id);
      }
    }
    for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
      const LoadedAggregate loaded = Load(type, target);
      const EpochMillis decided_from = clock_->NowMillis();
      DecideScope scope(target, NewId(), reservations, *clock_, options_.reservation_ttl,
                        &type.tenancies());
      std::optional<Decision> decision;
      try {
        decision = DecideBuiltIn(loaded, command, target);
        if (!decision) decision = type.Decide(*loaded.state, command, scope);
      } catch (...) {
        AbandonHolds(reservations, scope);
        throw;
      }
      if (decision->kind() != Decision::Kind::kEvents) {
        AbandonHolds(reservations, scope);
        CommandResult result;
        result.kind = decision->kind() == Decision::Kind::kRejected ? CommandResult::Kind::kRejected
                                                                    : CommandResult::Kind::kNoOp;
        result.target = target;
        result.version = loaded.version;
        result.code = decision->code();
        result.message = decision->message();
        result.request_id = request_id;
        return result;
      }
      // Where the append does not check the keys in its own transaction, an attempt appends only
      // while its reservations are surely its own: one older than half their time to live
      // decides again (a process paused past the whole time to live can still lose a key; the
      // incident is then reported when the key is confirmed).
      if (confirm_after_append_ && !scope.reserved().empty() &&
          clock_->NowMillis() - decided_from >= options_.reservation_ttl.count() / 2) {
        AbandonHolds(reservations, scope);
        spdlog::warn(
            "an attempt on {} took over half its reservations' time to live ({} ms); "
            "deciding again",
            ToString(target), options_.reservation_ttl.count() / 2);
        continue;
      }
      Stream stream{target,
                    loaded.version + 1,
                    request_id,
                    decision->events(),
                    scope.reserved(),
                    scope.released(),
                    scope.timers(),
                    clock_->NowMillis(),
                    {},
                    scope.attempt()};
      stream.transport = EncodeTransport(stream);
      // An exception from Append leaves the outcome open: the holds stay, to expire or to be
      // confirmed from the log.
      const AppendResult appended = log.Append(stream);
      switch (appended.kind()) {
        case AppendResult::Kind::kAppended:
          if (confirm_after_append_) Confirm(reservations, log, stream);
          return Accepted(stream, appended.position());
        case AppendResult::Kind::kConflict:
          AbandonHolds(reservations, scope);
          continue;
        case AppendResult::Kind::kDuplicate:
          AbandonHolds(reservations, scope);
          return DuplicateAt(log, target, appended.position(), appended.original_version(),
                             request_id);
        case AppendResult::Kind::kRefused:
          AbandonHolds(reservations, scope);
          throw Error(ErrorCode::kInvalidArgument,
                      "the log refused the decision's stream: " + appended.reason());
        case AppendResult::Kind::kUnknown: {
          CommandResult result;
          result.kind = CommandResult::Kind::kUnknown;
          result.target = target;
          result.message = appended.reason();
          result.request_id = request_id;
          return result;
        }
      }
    }
    throw Error(ErrorCode::kAborted,
                "command " + command.type + " on " + ToString(target) + " was decided " +
                    std::to_string(options_.max_attempts) +
                    " times without an append: version conflicts (another node is changing this "
                    "aggregate) or decisions slower than half the reservation time to live; "
                    "retry later");
  }

  const Clock& clock() const { return *clock_; }

  std::future<CommandResult> Submit(AggregateRef target, CommandMessage command,
                                    std::string request_id) {
    auto task = std::make_shared<std::packaged_task<CommandResult()>>(
        [this, target = std::move(target), command = std::move(command),
         request_id = std::move(request_id)]() mutable {
          return Process(target, command, std::move(request_id));
        });
    std::future<CommandResult> future = task->get_future();
    {
      std::lock_guard lock(queue_mutex_);
      Require(!stopping_, "the command processor is stopping");
      queue_.emplace_back([task] { (*task)(); });
    }
    queue_changed_.notify_one();
    return future;
  }

 private:
  static CommandResult Accepted(const Stream& stream, Position position) {
    CommandResult result;
    result.kind = CommandResult::Kind::kAccepted;
    result.target = stream.ref;
    result.version = stream.version;
    result.position = position;
    result.events = stream.events;
    result.request_id = stream.request_id;
    return result;
  }

  // The outcome of a request whose original is `original`, as read from the log.
  static CommandResult Duplicate(const Entry& original, const std::string& request_id) {
    CommandResult result;
    result.kind = CommandResult::Kind::kDuplicate;
    result.target = original.stream.ref;
    result.version = original.stream.version;
    result.position = original.position;
    result.events = original.stream.events;
    result.request_id = request_id;
    return result;
  }

  // The outcome of a request whose original the append found at `position`: the original is
  // read there once (it landed between the lookup and the append, in another process). When the
  // read fails or finds nothing, the result has no events and names `target`.
  static CommandResult DuplicateAt(EventLog& log, const AggregateRef& target, Position position,
                                   Version version, const std::string& request_id) {
    try {
      const std::vector<Entry> read = log.ReadAfter(position.partition, position.sequence - 1, 1);
      if (!read.empty() && read.front().position == position) {
        return Duplicate(read.front(), request_id);
      }
    } catch (const std::exception& e) {
      spdlog::warn("cannot read the original of request {} on {}: {}", request_id, ToString(target),
                   e.what());
    }
    CommandResult result;
    result.kind = CommandResult::Kind::kDuplicate;
    result.target = target;
    result.version = version;
    result.position = position;
    result.request_id = request_id;
    return result;
  }

  // The eager confirmation after an append. A failure here loses nothing: the reservation
  // subscription applies the same facts from the log. A key another owner holds is reported as an
  // incident by ApplyKeyFacts.
  static void Confirm(ReservationStore& reservations, EventLog& log, const Stream& stream) {
    try {
      core::ApplyKeyFacts(reservations, log, stream, core::KeyFactsOrigin::kJustAppended);
    } catch (const std::exception& e) {
      spdlog::warn(
          "confirming the keys of {} at version {} failed; the reservation "
          "subscription will apply them from the log: {}",
          ToString(stream.ref), stream.version, e.what());
    }
  }

  std::mutex& StripeOf(const AggregateRef& target) {
    const size_t hash = std::hash<std::string>{}(target.aggregate) * 31 +
                        std::hash<std::string>{}(target.tenant_id) * 17 +
                        std::hash<std::string>{}(target.id);
    return stripes_[hash % stripes_.size()];
  }

  void Work(const std::stop_token&) {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock lock(queue_mutex_);
        queue_changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job();
    }
  }

  CommandProcessor& outer_;
  const std::shared_ptr<const Clock> clock_;
  const CommandProcessorOptions options_;
  // False when the log's appends confirm the keys themselves (StoreSet::appends_confirm_keys).
  const bool confirm_after_append_;
  std::map<std::string, std::shared_ptr<const AggregateBehavior>, std::less<>> types_;
  std::array<std::mutex, 1024> stripes_;
  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::jthread> workers_;
};

CommandProcessor::CommandProcessor(std::shared_ptr<EventLog> log,
                                   std::shared_ptr<ReservationStore> reservations,
                                   std::shared_ptr<const Clock> clock,
                                   CommandProcessorOptions options)
    : log_(std::move(log)), reservations_(std::move(reservations)) {
  Require(log_ != nullptr && reservations_ != nullptr, "a command processor needs its stores");
  impl_ = std::make_unique<Impl>(*this, std::move(clock), options, false);
}

CommandProcessor::CommandProcessor(const StoreSet& stores, CommandProcessorOptions options)
    : log_(stores.log()), reservations_(stores.reservations()) {
  impl_ = std::make_unique<Impl>(*this, stores.clock(), options, stores.appends_confirm_keys());
}

CommandProcessor::~CommandProcessor() = default;

const Clock& CommandProcessor::clock() const { return impl_->clock(); }

void CommandProcessor::Register(std::shared_ptr<const AggregateBehavior> type) {
  impl_->Register(std::move(type));
}

CommandResult CommandProcessor::Process(const AggregateRef& target, const CommandMessage& command,
                                        std::string request_id) {
  return impl_->Process(target, command, std::move(request_id));
}

std::future<CommandResult> CommandProcessor::Submit(AggregateRef target, CommandMessage command,
                                                    std::string request_id) {
  return impl_->Submit(std::move(target), std::move(command), std::move(request_id));
}

LoadedAggregate CommandProcessor::Load(const AggregateRef& target) {
  return impl_->Load(impl_->TypeOf(target), target);
}

}  // namespace wow
