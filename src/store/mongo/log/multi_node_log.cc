#include "store/mongo/log/multi_node_log.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "wow/error.h"

namespace wow::mongo_log {
namespace {

// Rounds of an append whose positions other nodes sealed before it gives the stream up as
// unknown; each round takes a fresh block, which another node seals only after a stall grace.
constexpr int kMaxAppendRounds = 16;
// Reads of one ReadAfter: on past a run of placeholders, again after the registry grew or a stall
// was resolved.
constexpr int kMaxReadPasses = 8;
// Documents each collection's read takes beyond what ReadAfter may deliver.
constexpr int kReadSlack = 16;
// Aggregates whose last sequence the log remembers before it forgets them all.
constexpr std::size_t kMaxRemembered = 100'000;

std::string AggregateKey(const std::string& collection, const AggregateRef& ref) {
  std::string key = collection;
  key += '\0';
  key += ref.tenant_id;
  key += '\0';
  key += ref.id;
  return key;
}

}  // namespace

AppendResult MultiNodeLog::DuplicateOf(const std::string& collection, const Stream& stream) {
  try {
    if (auto original = layer_.FindRequest(collection, stream.ref.tenant_id, stream.request_id)) {
      return AppendResult::Duplicate(original->position, original->stream.version);
    }
    return AppendResult::Unknown("the request id is taken, but no entry of it was found");
  } catch (const Error& e) {
    return AppendResult::Unknown(
        std::string("the request id is taken; reading its entry failed: ") + e.what());
  }
}

AppendResult MultiNodeLog::ConflictOrDuplicate(const std::string& collection,
                                               const Stream& stream) {
  // A used request id is reported before a taken version: the command was already decided.
  try {
    if (auto original = layer_.FindRequest(collection, stream.ref.tenant_id, stream.request_id)) {
      return AppendResult::Duplicate(original->position, original->stream.version);
    }
  } catch (const Error&) {
    // A conflict is safe to answer: the caller loads the aggregate again and meets the request.
  }
  return AppendResult::Conflict();
}

LogDoc LogDoc::Entry(int partition, Sequence sequence, Stream stream) {
  return {Kind::kEntry, partition, sequence, std::move(stream)};
}

LogDoc LogDoc::Own(int partition, Sequence sequence) {
  return {Kind::kOwnPlaceholder, partition, sequence, {}};
}

LogDoc LogDoc::Seal(int partition, Sequence sequence) {
  return {Kind::kSealPlaceholder, partition, sequence, {}};
}

const Block* Counter::BlockOf(Sequence s) const {
  for (const Block& block : blocks) {
    if (block.Holds(s)) return &block;
  }
  return nullptr;
}

MultiNodeLog::MultiNodeLog(LogLayer& layer, std::shared_ptr<const Clock> clock,
                           MultiNodeLogOptions options)
    : layer_(layer), clock_(std::move(clock)), options_(std::move(options)) {
  Require(!options_.node.empty(), "a log node needs a name");
  Require(options_.block_size >= 1, "a sequence block holds at least one sequence");
}

std::vector<std::string> MultiNodeLog::KnownCollections() const {
  std::lock_guard lock(mu_);
  return known_;
}

void MultiNodeLog::Remember(const std::string& collection, const AggregateRef& ref, Version version,
                            Sequence sequence) {
  std::lock_guard lock(mu_);
  if (last_seen_.size() >= kMaxRemembered) last_seen_.clear();
  auto& seen = last_seen_[AggregateKey(collection, ref)];
  if (version > seen.first) seen = {version, sequence};
}

void MultiNodeLog::AddBlock(int partition, const Block& block, const std::string& collection) {
  std::lock_guard lock(mu_);
  auto& blocks = partitions_[partition].blocks;
  OwnBlock own{block.first, block.last, block.first, 0, collection};
  blocks.insert(
      std::upper_bound(blocks.begin(), blocks.end(), own,
                       [](const OwnBlock& a, const OwnBlock& b) { return a.first < b.first; }),
      own);
}

Sequence MultiNodeLog::AllocateLocked(int partition, Sequence floor, const std::string& collection,
                                      std::vector<Pending>& give_up) {
  for (OwnBlock& block : partitions_[partition].blocks) {
    if (block.next > block.last) continue;
    if (block.next <= floor) {
      // The aggregate's previous stream is past this block's next sequence: the sequences up to
      // it are given up, so its streams stay in version order.
      GiveUpLocked(partition, block, std::min(floor, block.last), collection, give_up);
      if (block.next > block.last) continue;
    }
    ++block.outstanding;
    return block.next++;
  }
  return 0;
}

void MultiNodeLog::GiveUpLocked(int partition, OwnBlock& block, Sequence to,
                                const std::string& collection, std::vector<Pending>& give_up) {
  for (; block.next <= to; ++block.next) {
    give_up.push_back({collection, LogDoc::Own(partition, block.next)});
    ++block.outstanding;
  }
}

void MultiNodeLog::SettleLocked(int partition, Sequence s, std::vector<Sequence>& removable) {
  auto& blocks = partitions_[partition].blocks;
  for (auto it = blocks.begin(); it != blocks.end(); ++it) {
    if (it->first > s || s > it->last) continue;
    if (--it->outstanding == 0 && it->next > it->last) {
      removable.push_back(it->first);
      blocks.erase(it);
    }
    return;
  }
}

void MultiNodeLog::DropBlockOf(int partition, Sequence s) {
  std::lock_guard lock(mu_);
  auto& state = partitions_[partition];
  for (auto it = state.blocks.begin(); it != state.blocks.end(); ++it) {
    if (it->first <= s && s <= it->last) {
      state.dropped.insert(it->first);
      state.blocks.erase(it);
      return;
    }
  }
}

void MultiNodeLog::RemoveBlocks(int partition, const std::vector<Sequence>& firsts) {
  // Best effort: a block left on the counter is sealed by the first tail it stalls, which finds
  // a document at each of its sequences already.
  for (Sequence first : firsts) {
    try {
      layer_.RemoveBlock(partition, first);
    } catch (const Error&) {
    }
  }
}

void MultiNodeLog::EnsureRegistered(const std::string& collection) {
  {
    std::lock_guard lock(mu_);
    if (registered_.contains(collection)) return;
  }
  layer_.Register(collection);
  // A node may have sealed one of this node's blocks before the registration, reading a registry
  // without it: such a block is given up, as its sealer missed this collection.
  std::vector<int> held;
  {
    std::lock_guard lock(mu_);
    for (const auto& [partition, state] : partitions_) {
      if (!state.blocks.empty()) held.push_back(partition);
    }
  }
  for (int partition : held) {
    const Counter counter = layer_.ReadCounter(partition);
    std::lock_guard lock(mu_);
    auto& state = partitions_[partition];
    std::erase_if(state.blocks, [&](const OwnBlock& own) {
      for (const Block& open : counter.blocks) {
        if (open.first == own.first && open.node == options_.node && !open.sealing) return false;
      }
      state.dropped.insert(own.first);
      return true;
    });
  }
  std::lock_guard lock(mu_);
  registered_.insert(collection);
  if (!std::binary_search(known_.begin(), known_.end(), collection)) {
    known_.insert(std::lower_bound(known_.begin(), known_.end(), collection), collection);
  }
}

void MultiNodeLog::WritePlaceholders(std::vector<Pending> placeholders) {
  std::map<std::string, std::vector<LogDoc>> by_collection;
  for (auto& p : placeholders) by_collection[p.collection].push_back(std::move(p.doc));
  for (auto& [collection, docs] : by_collection) {
    std::vector<WriteStatus> statuses;
    try {
      statuses = layer_.Insert(collection, docs, /*ordered=*/false);
    } catch (const Error&) {
      // Not known to be in: written again as soon as this log can, by its next append or read.
      std::lock_guard lock(mu_);
      for (auto& doc : docs) pending_.push_back({collection, std::move(doc)});
      continue;
    }
    std::map<int, std::vector<Sequence>> removable;
    {
      std::lock_guard lock(mu_);
      for (std::size_t i = 0; i < docs.size(); ++i) {
        // Written, or the position holds a document already (the stream that landed, a seal).
        if (statuses[i] == WriteStatus::kWritten || statuses[i] == WriteStatus::kPositionTaken) {
          SettleLocked(docs[i].partition, docs[i].sequence, removable[docs[i].partition]);
        } else {
          pending_.push_back({collection, std::move(docs[i])});
        }
      }
    }
    for (const auto& [partition, firsts] : removable) RemoveBlocks(partition, firsts);
  }
}

void MultiNodeLog::RetryPending() {
  std::vector<Pending> pending;
  {
    std::lock_guard lock(mu_);
    pending.swap(pending_);
  }
  if (!pending.empty()) WritePlaceholders(std::move(pending));
}

std::vector<AppendResult> MultiNodeLog::Append(const std::vector<Placed>& streams) {
  const std::size_t n = streams.size();
  std::vector<std::optional<AppendResult>> results(n);
  std::vector<Sequence> floor(n, 0);
  std::vector<std::ptrdiff_t> previous(n, -1);  // the same aggregate's previous stream here
  RetryPending();

  // Where each stream's aggregate was: its previous stream in this group, or in the log.
  std::map<std::string, std::size_t> last_in_group;
  for (std::size_t i = 0; i < n; ++i) {
    const Stream& stream = *streams[i].stream;
    const std::string key = AggregateKey(streams[i].collection, stream.ref);
    if (auto it = last_in_group.find(key); it != last_in_group.end()) {
      previous[i] = static_cast<std::ptrdiff_t>(it->second);
      it->second = i;
      continue;
    }
    last_in_group[key] = i;
    std::optional<std::pair<Version, Sequence>> seen;
    {
      std::lock_guard lock(mu_);
      if (auto it = last_seen_.find(key); it != last_seen_.end()) seen = it->second;
    }
    if (seen && seen->first >= stream.version) {
      results[i] = ConflictOrDuplicate(streams[i].collection, stream);
    } else if (stream.version == 1) {
      floor[i] = 0;
    } else if (seen && seen->first == stream.version - 1) {
      floor[i] = seen->second;
    } else if (auto at = layer_.FindVersion(streams[i].collection, stream.ref.tenant_id,
                                            stream.ref.id, stream.version - 1)) {
      floor[i] = *at;
      Remember(streams[i].collection, stream.ref, stream.version - 1, *at);
    } else {
      // Its previous version is not in the log.
      results[i] = ConflictOrDuplicate(streams[i].collection, stream);
    }
  }
  // A collection is registered before its first entry, and only for a stream that may be one.
  for (std::size_t i = 0; i < n; ++i) {
    if (!results[i]) EnsureRegistered(streams[i].collection);
  }

  std::vector<Sequence> at(n, 0);
  std::vector<Pending> placeholders;
  for (int round = 0; round < kMaxAppendRounds; ++round) {
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < n; ++i) {
      if (results[i]) continue;
      if (previous[i] >= 0) {
        const auto& before = results[static_cast<std::size_t>(previous[i])];
        if (before && !before->appended()) {
          results[i] = AppendResult::Conflict();  // decided on a stream that failed
          continue;
        }
      }
      todo.push_back(i);
    }
    if (todo.empty()) break;

    // Blocks enough for this round, then a sequence per stream in group order, each after its
    // aggregate's previous stream.
    std::map<int, Sequence> need;
    for (std::size_t i : todo) {
      ++need[streams[i].partition];
      at[i] = 0;
    }
    bool reserve_failed = false;
    for (std::size_t i : todo) {
      const int partition = streams[i].partition;
      const Sequence after =
          previous[i] >= 0 ? at[static_cast<std::size_t>(previous[i])] : floor[i];
      for (;;) {
        {
          std::lock_guard lock(mu_);
          at[i] = AllocateLocked(partition, after, streams[i].collection, placeholders);
        }
        if (at[i] != 0) break;
        Block block;
        try {
          block = layer_.ReserveBlock(partition, options_.node,
                                      std::max(options_.block_size, need[partition]));
        } catch (const Error&) {
          // The sequences allocated this round are given up; a block the reservation may have
          // taken is sealed by the first tail it stalls.
          for (std::size_t j : todo) {
            if (at[j] == 0) continue;
            placeholders.push_back(
                {streams[j].collection, LogDoc::Own(streams[j].partition, at[j])});
          }
          WritePlaceholders(std::move(placeholders));
          if (round == 0) throw;  // nothing is in the log: the caller may retry the call
          placeholders.clear();
          for (std::size_t j : todo) {
            results[j] =
                AppendResult::Unknown("reserving sequences failed after a sealed position");
          }
          reserve_failed = true;
          break;
        }
        AddBlock(partition, block, streams[i].collection);
      }
      if (reserve_failed) break;
      --need[partition];
    }
    if (reserve_failed) break;

    // One ordered insert per collection, each stream's document in group order.
    std::map<std::string, std::vector<std::size_t>> by_collection;
    for (std::size_t i : todo) by_collection[streams[i].collection].push_back(i);
    std::map<int, std::vector<Sequence>> removable;
    for (const auto& [collection, members] : by_collection) {
      std::vector<LogDoc> docs;
      docs.reserve(members.size());
      for (std::size_t i : members) {
        docs.push_back(LogDoc::Entry(streams[i].partition, at[i], *streams[i].stream));
        docs.back().stream.attempt.clear();
      }
      std::vector<WriteStatus> statuses;
      try {
        statuses = layer_.Insert(collection, docs, /*ordered=*/true);
      } catch (const Error& e) {
        // Any of them may be in, now or later: each is unknown, and its sequence gets an own
        // placeholder, which a stream that landed keeps out.
        for (std::size_t i : members) {
          results[i] = AppendResult::Unknown(e.what());
          placeholders.push_back({collection, LogDoc::Own(streams[i].partition, at[i])});
        }
        continue;
      }
      for (std::size_t k = 0; k < members.size(); ++k) {
        const std::size_t i = members[k];
        const Stream& stream = *streams[i].stream;
        const int partition = streams[i].partition;
        switch (statuses[k]) {
          case WriteStatus::kWritten: {
            results[i] = AppendResult::Appended({partition, at[i]});
            Remember(collection, stream.ref, stream.version, at[i]);
            std::lock_guard lock(mu_);
            SettleLocked(partition, at[i], removable[partition]);
            break;
          }
          case WriteStatus::kPositionTaken:
            DropBlockOf(partition, at[i]);  // sealed by another node: a new sequence next round
            break;
          case WriteStatus::kNotAttempted:
            placeholders.push_back({collection, LogDoc::Own(partition, at[i])});
            break;
          case WriteStatus::kVersionTaken:
          case WriteStatus::kRequestTaken:
          case WriteStatus::kRefused: {
            if (statuses[k] == WriteStatus::kVersionTaken) {
              results[i] = ConflictOrDuplicate(collection, stream);
            } else if (statuses[k] == WriteStatus::kRefused) {
              results[i] = AppendResult::Refused("the store refused the stream's document");
            } else {
              results[i] = DuplicateOf(collection, stream);
            }
            placeholders.push_back({collection, LogDoc::Own(partition, at[i])});
            break;
          }
        }
      }
    }
    for (const auto& [partition, firsts] : removable) RemoveBlocks(partition, firsts);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!results[i]) {
      results[i] = AppendResult::Unknown("other nodes sealed the stream's positions repeatedly");
    }
  }
  WritePlaceholders(std::move(placeholders));

  std::vector<AppendResult> out;
  out.reserve(n);
  for (auto& result : results) out.push_back(std::move(*result));
  return out;
}

std::vector<std::string> MultiNodeLog::RefreshRegistry() {
  std::vector<std::string> fresh = layer_.ReadRegistry();
  std::lock_guard lock(mu_);
  for (const std::string& mine : registered_) {
    if (!std::binary_search(fresh.begin(), fresh.end(), mine)) {
      fresh.insert(std::lower_bound(fresh.begin(), fresh.end(), mine), mine);
    }
  }
  known_ = fresh;
  registry_read_ = true;
  return fresh;
}

void MultiNodeLog::ResolveOwn(int partition, const Block& block, Sequence missing) {
  std::vector<Pending> give_up;
  bool known_here = false;
  {
    std::lock_guard lock(mu_);
    auto& state = partitions_[partition];
    for (OwnBlock& own : state.blocks) {
      if (own.first != block.first) continue;
      known_here = true;
      if (missing >= own.next) GiveUpLocked(partition, own, own.last, own.collection, give_up);
    }
  }
  if (!known_here) {
    // A block this log never learnt of (its reservation's acknowledgement was lost) or gave up
    // as sealed: nothing of this log writes there any more, and sealing it is always safe.
    Seal(partition, block);
    return;
  }
  // Its unused remainder closed; an allocated sequence is written, or its placeholder retried.
  WritePlaceholders(std::move(give_up));
  RetryPending();
}

void MultiNodeLog::Seal(int partition, const Block& block) {
  layer_.MarkSealing(partition, block.first);
  std::vector<std::string> collections =
      options_.defects.stall_keeps_registry ? KnownCollections() : RefreshRegistry();
  if (options_.defects.seal_skips_a_collection && collections.size() > 1) collections.pop_back();
  std::vector<LogDoc> docs;
  for (Sequence s = block.first; s <= block.last; ++s) docs.push_back(LogDoc::Seal(partition, s));
  for (const std::string& collection : collections) {
    layer_.Insert(collection, docs, /*ordered=*/false);  // a taken position is what it seals
  }
  layer_.RemoveBlock(partition, block.first);
  std::lock_guard lock(mu_);
  partitions_[partition].dropped.erase(block.first);
}

std::vector<Entry> MultiNodeLog::ReadAfter(int partition, Sequence after, int limit) {
  Require(limit > 0, "limit must be at least 1");
  RetryPending();
  bool first_look;
  {
    std::lock_guard lock(mu_);
    first_look = !registry_read_;
  }
  std::vector<std::string> collections = first_look ? RefreshRegistry() : KnownCollections();
  bool registry_fresh = first_look;
  std::vector<Entry> out;
  // Every sequence up to `cursor` is final and passed: delivered, or a placeholder stepped over.
  Sequence cursor = after;
  // Each read takes a few documents more than it may deliver, for the placeholders among them.
  const int read_limit = limit + kReadSlack;

  for (int pass = 0; pass < kMaxReadPasses && static_cast<int>(out.size()) < limit; ++pass) {
    LogLayer::TailRead read = layer_.ReadTail(partition, cursor, collections, read_limit);
    // The view is complete only up to the last document of a collection that returned them all.
    Sequence horizon = std::numeric_limits<Sequence>::max();
    std::map<Sequence, std::vector<const LogDoc*>> at;
    for (const auto& docs : read.docs) {
      if (static_cast<int>(docs.size()) >= read_limit) {
        horizon = std::min(horizon, docs.back().sequence);
      }
      for (const LogDoc& doc : docs) at[doc.sequence].push_back(&doc);
    }

    enum class Next { kDone, kReadOn, kReadAgain } next = Next::kDone;
    Sequence s = cursor + 1;
    for (;;) {
      if (static_cast<int>(out.size()) >= limit) break;
      if (s > horizon) {
        next = Next::kReadOn;
        break;
      }
      const LogDoc* entry = nullptr;
      const LogDoc* own = nullptr;
      const LogDoc* seal = nullptr;
      if (auto it = at.find(s); it != at.end()) {
        for (const LogDoc* doc : it->second) {
          if (doc->entry())
            entry = doc;
          else if (doc->kind == LogDoc::Kind::kOwnPlaceholder)
            own = doc;
          else
            seal = doc;
        }
      }
      const bool placeholder_wins =
          options_.defects.placeholder_overwrites_entry && (own != nullptr || seal != nullptr);
      if (entry != nullptr && !placeholder_wins) {
        out.push_back({{partition, s}, entry->stream});
        cursor = s++;
        continue;
      }
      if (own != nullptr) {
        cursor = s++;
        continue;
      }
      const Block* open = read.counter.BlockOf(s);
      if (seal != nullptr && open == nullptr) {
        // Sealed in every collection its sealer knew; one registered since may hold the stream.
        if (!registry_fresh && !options_.defects.stall_keeps_registry) {
          registry_fresh = true;
          if (auto fresh = RefreshRegistry(); fresh != collections) {
            collections = std::move(fresh);
            next = Next::kReadAgain;
            break;
          }
        }
        cursor = s++;
        continue;
      }
      if (seal == nullptr && s >= read.counter.next) break;  // no block has it: the end
      if (options_.defects.tail_steps_over_missing) {
        cursor = s++;
        continue;
      }

      // Missing (or a seal in progress): wait for it, then resolve it.
      const EpochMillis now = clock_->NowMillis();
      {
        std::lock_guard lock(mu_);
        Stall& stall = partitions_[partition].stall;
        if (stall.sequence != s) stall = {s, now};
        if (now - stall.since < options_.stall_grace.count()) break;
        stall.since = now;  // the next resolution of the same sequence waits a grace again
      }
      if (!options_.defects.stall_keeps_registry) {
        registry_fresh = true;
        if (auto fresh = RefreshRegistry(); fresh != collections) {
          collections = std::move(fresh);
          next = Next::kReadAgain;
          break;
        }
      }
      if (open == nullptr) break;  // its block has left the counter: its documents will show
      if (open->node == options_.node) {
        ResolveOwn(partition, *open, s);
      } else {
        Seal(partition, *open);
      }
      if (!options_.defects.stall_keeps_registry) collections = KnownCollections();
      next = Next::kReadAgain;
      break;
    }
    if (next == Next::kDone) break;
  }
  return out;
}

void MultiNodeLog::Close() {
  RetryPending();
  std::vector<Pending> give_up;
  {
    std::lock_guard lock(mu_);
    for (auto& [partition, state] : partitions_) {
      for (OwnBlock& own : state.blocks) {
        GiveUpLocked(partition, own, own.last, own.collection, give_up);
      }
    }
  }
  WritePlaceholders(std::move(give_up));
  std::lock_guard lock(mu_);
  if (!pending_.empty()) {
    throw Error(ErrorCode::kUnavailable,
                "closing the log: placeholders of this node could not be written; another "
                "node's tail seals its blocks after the stall grace");
  }
}

}  // namespace wow::mongo_log
