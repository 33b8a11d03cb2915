// The ReservationStore on MongoDB (seed 000): the commands of reservation_commands.h, sent through
// the deployment's executor. Reserve and Confirm are one conditional upsert each; their unique-key
// error (another owner's reservation, or a concurrent insert that won) is settled by reading the
// key: held by another owner, the answer is false; otherwise the upsert runs again and now matches.
#include <thread>

#include "store/mongo/deployment.h"
#include "store/mongo/reservation_commands.h"
#include "wow/error.h"

namespace wow {
namespace {

using mongo::MongoFailure;

// How often a Reserve or Confirm that met a unique-key error reads and tries again before it
// gives up with kAborted: each try follows a write by another node, so only a key that changes
// hands continuously exhausts them.
constexpr int kMaxUpsertTries = 16;

class MongoReservationStore final : public ReservationStore {
 public:
  MongoReservationStore(std::shared_ptr<MongoDeployment> deployment,
                        std::shared_ptr<const Clock> clock)
      : deployment_(std::move(deployment)), clock_(std::move(clock)) {
    Require(deployment_ != nullptr, "a MongoDB reservation store needs a deployment");
    Require(clock_ != nullptr, "a reservation store needs a clock");
  }

  bool Reserve(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold, std::chrono::milliseconds ttl) override {
    ValidateReserve(scope, key, owner, hold, ttl);
    return Upsert(scope, key, owner, "reserving", [&](EpochMillis now) {
      return mongo::ReserveCommand(scope, key, owner, hold, ttl, now);
    });
  }

  bool Confirm(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ValidateConfirm(scope, key, owner, version);
    return Upsert(scope, key, owner, "confirming", [&](EpochMillis now) {
      return mongo::ConfirmCommand(scope, key, owner, version, now);
    });
  }

  bool Release(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               Version version) override {
    ValidateRelease(scope, key, owner, version);
    mongo::DeleteCommand command =
        mongo::ReleaseCommand(scope, key, owner, version, clock_->NowMillis());
    Ensure(scope);
    return executor().Delete(command, What("releasing", scope, key)).deleted == 1;
  }

  bool Abandon(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
               const std::string& hold) override {
    ValidateAbandon(scope, key, owner, hold);
    mongo::UpdateCommand pull = mongo::AbandonPullCommand(scope, key, owner, hold);
    mongo::DeleteCommand remove = mongo::AbandonDeleteCommand(scope, key, owner);
    Ensure(scope);
    const std::string what = What("abandoning", scope, key);
    if (executor().Update(pull, what).matched == 0) return false;
    executor().Delete(remove, what);
    return true;
  }

  std::optional<Reservation> Find(const ReservationScope& scope, const std::string& key) override {
    ValidateReservationKey(scope, key);
    mongo::FindCommand command = mongo::FindReservationCommand(scope, key);
    Ensure(scope);
    std::vector<mongo::Bson> found = executor().Find(command, What("reading", scope, key));
    if (found.empty()) return std::nullopt;
    return mongo::ParseReservation(scope, *found.front());
  }

  std::vector<Reservation> List(const ReservationScope& scope, const std::string& after_key,
                                int limit) override {
    ValidateReservationKey(scope, after_key.empty() ? "-" : after_key);
    Require(limit > 0, [&] { return "list limit must be positive, got " + std::to_string(limit); });
    mongo::FindCommand command = mongo::ListReservationsCommand(scope, after_key, limit);
    Ensure(scope);
    std::vector<Reservation> page;
    for (const mongo::Bson& doc :
         executor().Find(command, "listing " + mongo::ReservationCollection(scope))) {
      page.push_back(mongo::ParseReservation(scope, *doc));
    }
    return page;
  }

 private:
  const mongo::Executor& executor() const { return deployment_->executor(); }

  static std::string What(std::string_view verb, const ReservationScope& scope,
                          const std::string& key) {
    return std::string(verb) + " key \"" + key.substr(0, 100) + "\" of namespace \"" +
           scope.ns.substr(0, 100) + "\" in " + mongo::ReservationCollection(scope);
  }

  void Ensure(const ReservationScope& scope) {
    deployment_->collections().Ensure({mongo::ReservationCollection(scope), "reservation",
                                       scope.context, scope.aggregate, mongo::kReservationFormat,
                                       mongo::ReservationShardKey()});
  }

  // Sends the conditional upsert `build(now)` makes until it applies (true), or a read of the key
  // after a unique-key error finds another owner holding it (false).
  template <typename Build>
  bool Upsert(const ReservationScope& scope, const std::string& key, const AggregateRef& owner,
              std::string_view verb, Build build) {
    mongo::UpdateCommand command = build(clock_->NowMillis());  // bad text refused before I/O
    Ensure(scope);
    const std::string what = What(verb, scope, key);
    for (int attempt = 0; attempt < kMaxUpsertTries; ++attempt) {
      if (attempt > 0) command = build(clock_->NowMillis());
      const mongo::WriteOutcome outcome = executor().Update(command, what);
      if (!outcome.duplicate) return true;
      if (outcome.duplicate->key_pattern.find("\"_id\"") == std::string::npos) {
        throw Error(ErrorCode::kInternal, "MongoDB: " + what +
                                              " met a unique index other than the _id's (" +
                                              outcome.duplicate->key_pattern +
                                              "): the collection has an index this "
                                              "layout does not make; drop it");
      }
      const std::optional<Reservation> held = Find(scope, key);
      if (held && !(held->owner == owner) && !IsExpiredPending(*held, clock_->NowMillis())) {
        return false;
      }
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(attempt));
    }
    throw Error(ErrorCode::kAborted, "MongoDB: " + what + " met a unique-key error " +
                                         std::to_string(kMaxUpsertTries) +
                                         " times while the key kept changing hands; retry later");
  }

  const std::shared_ptr<MongoDeployment> deployment_;
  const std::shared_ptr<const Clock> clock_;
};

}  // namespace

std::unique_ptr<ReservationStore> NewMongoReservationStore(
    std::shared_ptr<MongoDeployment> deployment, std::shared_ptr<const Clock> clock) {
  return std::make_unique<MongoReservationStore>(std::move(deployment), std::move(clock));
}

}  // namespace wow
