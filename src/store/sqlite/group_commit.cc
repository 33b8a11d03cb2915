#include "store/sqlite/group_commit.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "wow/error.h"

namespace wow::sqlite {

GroupCommit::GroupCommit(Connection& writer, int max_group_commit, bool syncer_syncs,
                         std::string path, std::string wal_path)
    : writer_(writer),
      max_group_commit_(max_group_commit),
      syncer_syncs_(syncer_syncs),
      syncer_(mutex_, std::move(path), std::move(wal_path)) {
  // The writer commits without syncing when the syncer syncs.
  if (syncer_syncs_) {
    writer_.Execute("PRAGMA synchronous = NORMAL");
    syncer_.Start();
  }
}

namespace {

std::uint64_t MicrosOf(std::chrono::steady_clock::duration elapsed) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
}

}  // namespace

// How many batches one leader commits at least before it hands the writer on.
constexpr int kLeaderRounds = 4;

void GroupCommit::Write(const std::function<void(Connection&)>& work, int weight, WriteSync sync) {
  WriteRequest request;
  request.work = &work;
  request.weight = std::max(weight, 1);
  request.sync = sync;
  bool lead = false;
  {
    std::lock_guard lock(mutex_);
    if (syncer_.failure()) std::rethrow_exception(syncer_.failure());
    queue_.push_back(&request);
    lead = !leading_;
    leading_ = true;
  }
  // Woken as the leader (not done), or done by the leader or the syncer. The leader's own work is
  // in its first batch.
  if (!lead) request.wake.Wait();
  if (!request.done && !Lead(request)) request.wake.Wait();
  if (request.error) std::rethrow_exception(request.error);
}

bool GroupCommit::Lead(WriteRequest& own) {
  std::vector<WriteRequest*> woken;  // done: posted as soon as the lock is released
  auto post_woken = [&woken] {
    for (WriteRequest* request : woken) request->wake.Post();
    woken.clear();
  };
  bool own_to_syncer = false;  // then the syncer posts it: own is gone once it did
  std::unique_lock lock(mutex_);
  // The leader commits the queue's front, up to max_group_commit appends, in one transaction,
  // then the next front, while works keep arriving: at least kLeaderRounds batches, and for as
  // long as its own work waits for the syncer anyway. Handing the writer to another thread costs
  // a wake-up on the critical path.
  for (int round = 0; !queue_.empty() && (round < kLeaderRounds || (own_to_syncer && !own.done));
       ++round) {
    std::vector<WriteRequest*> batch;
    int total = 0;
    for (WriteRequest* queued : queue_) {
      if (!batch.empty() && total + queued->weight > max_group_commit_) break;
      batch.push_back(queued);
      total += queued->weight;
    }
    const std::exception_ptr refused = syncer_.failure();
    lock.unlock();
    post_woken();  // the previous batch's, while this one runs
    bool committed = false;
    const auto began = std::chrono::steady_clock::now();
    if (refused) {
      for (WriteRequest* request : batch) request->error = refused;
    } else {
      committed = RunBatch(batch);
    }
    const auto ran = std::chrono::steady_clock::now() - began;
    lock.lock();
    writing_micros_ += MicrosOf(ran);
    bool durable = false;
    for (size_t i = 0; i < batch.size(); ++i) {
      WriteRequest* finished = queue_.front();
      queue_.pop_front();
      if (committed && syncer_syncs_ && finished->sync == WriteSync::kDurable && !finished->error) {
        syncer_.Hand(finished);  // the syncer wakes it
        durable = true;
        own_to_syncer = own_to_syncer || finished == &own;
        continue;
      }
      finished->done = true;
      if (finished != &own) woken.push_back(finished);
    }
    if (committed) {
      ++transactions_;
      works_ += batch.size();
      if (durable) syncer_.CountTransaction();
    }
    // The syncer starts on the batch while the leader commits the next; a last batch the leader
    // may sync itself (below).
    if (durable && !queue_.empty()) syncer_.Wake();
    if (after_each_batch_) {
      lock.unlock();
      after_each_batch_();
      lock.lock();
    }
  }
  // A lone writer syncs its own batches: waking the syncer and waiting for it would put two thread
  // switches on its path, and no commit waits for the writer meanwhile. Not when the syncer synced
  // `own` already: it posts own's wake, perhaps not yet, and Write must wait for that post. Were
  // Write to return instead, the late post would land on the wake of the thread's next Write,
  // which would then lead beside the real leader: two threads on one connection.
  if (own_to_syncer && !own.done && queue_.empty() && syncer_.MaySyncHere()) {
    syncer_.SyncCommitted(lock, &own, &woken);
    own_to_syncer = false;
  } else {
    syncer_.WakeIfUnsynced();
  }
  // The queue's front leads next (leading_ stays set for it); else no one leads.
  if (queue_.empty()) {
    leading_ = false;
  } else {
    woken.push_back(queue_.front());
  }
  lock.unlock();
  post_woken();
  return !own_to_syncer;
}

namespace {

// Failures after which SQLite may have rolled the whole transaction back.
bool EndsTransaction(const SqliteFailure& failure) {
  switch (failure.primary_code()) {
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
    case SQLITE_MISMATCH:
      return false;
    default:
      return true;
  }
}

}  // namespace

bool GroupCommit::RunBatch(const std::vector<WriteRequest*>& batch) {
  Connection& w = writer_;
  try {
    Transaction tx(w, Transaction::Kind::kWrite);
    if (batch.size() == 1) {
      (*batch.front()->work)(w);
    } else {
      for (WriteRequest* request : batch) {
        Savepoint savepoint(w);
        try {
          (*request->work)(w);
          savepoint.Release();
        } catch (const SqliteFailure& failure) {
          if (EndsTransaction(failure) || !w.InTransaction()) throw;
          request->error = std::current_exception();
        } catch (...) {
          if (!w.InTransaction()) throw;
          request->error = std::current_exception();  // the savepoint undoes its writes
        }
      }
    }
    tx.Commit();
    return true;
  } catch (const SqliteFailure& failure) {
    for (WriteRequest* request : batch) request->error = std::make_exception_ptr(failure);
  } catch (const Error& error) {
    for (WriteRequest* request : batch) request->error = std::make_exception_ptr(error);
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    for (WriteRequest* request : batch) request->error = error;
  }
  return false;
}

SqliteWriteStats GroupCommit::stats() const {
  std::lock_guard lock(mutex_);
  SqliteWriteStats stats;
  stats.transactions = transactions_;
  stats.works = works_;
  stats.writing_micros = writing_micros_;
  syncer_.AddStats(stats);
  return stats;
}

}  // namespace wow::sqlite
