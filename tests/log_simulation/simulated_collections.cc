#include "simulated_collections.h"

#include <limits>

#include "wow/error.h"

namespace wow::simulation {
namespace {

std::string Where(int partition, Sequence s) {
  return std::to_string(partition) + "/" + std::to_string(s);
}

std::string AggregateOf(const Stream& stream) {
  return stream.ref.aggregate + "/" + stream.ref.tenant_id + "/" + stream.ref.id;
}

[[noreturn]] void Unknown(const char* what) {
  throw Error(ErrorCode::kUnavailable, std::string("simulated: ") + what);
}

}  // namespace

void World::Violation(std::string what) {
  violations_.push_back("at " + std::to_string(scheduler_.Now()) + ": " + std::move(what));
}

WriteStatus World::Apply(const std::string& name, const LogDoc& doc) {
  Collection& collection = collections_[name];
  const auto position = std::make_pair(doc.partition, doc.sequence);
  if (collection.docs.contains(position)) return WriteStatus::kPositionTaken;
  if (doc.entry()) {
    const Stream& s = doc.stream;
    const auto version = std::make_tuple(s.ref.tenant_id, s.ref.id, s.version);
    const auto request = std::make_pair(s.ref.tenant_id, s.request_id);
    if (collection.versions.contains(version)) return WriteStatus::kVersionTaken;
    if (collection.requests.contains(request)) return WriteStatus::kRequestTaken;
    // A stream lands ahead of every tail, never where an own placeholder is (its allocator
    // writes a sequence in one collection), nor where a seal is complete (its block closed).
    const bool sealed = counters_[doc.partition].BlockOf(doc.sequence) == nullptr;
    for (const auto& [other_name, other] : collections_) {
      for (const auto& [at, held] : other.docs) {
        if (at.first != doc.partition || held.entry()) continue;
        if (held.sequence != doc.sequence) continue;
        if (held.kind == LogDoc::Kind::kOwnPlaceholder || sealed) {
          Violation("a stream landed at " + Where(doc.partition, doc.sequence) + " in " + name +
                    ", a position a placeholder holds in " + other_name);
        }
      }
    }
    for (const auto& [tail, through] : through_) {
      if (auto it = through.find(doc.partition);
          it != through.end() && it->second >= doc.sequence) {
        Violation("a stream landed at " + Where(doc.partition, doc.sequence) + " behind tail " +
                  std::to_string(tail) + ", which delivered up to " + std::to_string(it->second));
      }
    }
    collection.versions[version] = doc.sequence;
    collection.requests[request] = doc.sequence;
    landed_[position] = {name, s};
  } else if (doc.kind == LogDoc::Kind::kOwnPlaceholder) {
    if (auto it = landed_.find(position); it != landed_.end()) {
      Violation("an own placeholder in " + name + " holds the sequence of the stream landed at " +
                Where(doc.partition, doc.sequence) + " in " + it->second.collection);
    }
  }
  collection.docs.emplace(position, doc);
  return WriteStatus::kWritten;
}

void World::Delivered(int tail, const Entry& entry) {
  const int p = entry.position.partition;
  const Sequence s = entry.position.sequence;
  Sequence& through = through_[tail][p];
  if (s <= through) {
    Violation("tail " + std::to_string(tail) + " delivered " + Where(p, s) + " after " +
              Where(p, through));
    return;
  }
  for (auto it = landed_.upper_bound({p, through});
       it != landed_.end() && it->first.first == p && it->first.second < s; ++it) {
    Violation("tail " + std::to_string(tail) + " stepped over the stream landed at " +
              Where(p, it->first.second) + " to deliver " + Where(p, s));
  }
  through = s;
  auto landed = landed_.find({p, s});
  if (landed == landed_.end() || landed->second.stream.request_id != entry.stream.request_id ||
      landed->second.stream.ref != entry.stream.ref) {
    Violation("tail " + std::to_string(tail) + " delivered at " + Where(p, s) +
              " a stream that did not land there");
    return;
  }
  Version& last = delivered_versions_[tail][AggregateOf(entry.stream)];
  if (entry.stream.version != last + 1) {
    Violation("tail " + std::to_string(tail) + " delivered " + AggregateOf(entry.stream) +
              " version " + std::to_string(entry.stream.version) + " after version " +
              std::to_string(last));
  }
  last = entry.stream.version;
}

void World::CheckComplete(int tail) {
  for (const auto& [at, landed] : landed_) {
    if (Through(tail, at.first) < at.second) {
      Violation("the stream landed at " + Where(at.first, at.second) + " in " + landed.collection +
                " was never delivered to tail " + std::to_string(tail));
    }
  }
  for (const Entry& ack : acknowledged_) {
    auto it = landed_.find({ack.position.partition, ack.position.sequence});
    if (it == landed_.end() || it->second.stream.request_id != ack.stream.request_id) {
      Violation("the append acknowledged at " +
                Where(ack.position.partition, ack.position.sequence) + " is not there");
    }
  }
}

std::string World::Describe(int partition, Sequence from, Sequence to) const {
  std::string out;
  if (auto c = counters_.find(partition); c != counters_.end()) {
    out += "  counter: next " + std::to_string(c->second.next) + ", open blocks";
    for (const Block& b : c->second.blocks) {
      out += " [" + std::to_string(b.first) + ".." + std::to_string(b.last) + " " + b.node +
             (b.sealing ? " sealing" : "") + "]";
    }
    out += "\n";
  }
  for (const auto& [name, collection] : collections_) {
    out += "  " + name + (registry_.contains(name) ? "" : " (unregistered)") + ":";
    for (const auto& [at, doc] : collection.docs) {
      if (at.first != partition || doc.sequence < from || doc.sequence > to) continue;
      out += " " + std::to_string(doc.sequence);
      out += doc.entry() ? "=" + doc.stream.ref.id + "v" + std::to_string(doc.stream.version)
             : doc.kind == LogDoc::Kind::kOwnPlaceholder ? "(own)"
                                                         : "(seal)";
    }
    out += "\n";
  }
  return out;
}

Sequence World::HighestEntry(int partition) const {
  auto it = landed_.lower_bound({partition + 1, 0});
  if (it == landed_.begin()) return 0;
  --it;
  return it->first.first == partition ? it->first.second : 0;
}

std::pair<Version, Sequence> World::Latest(const std::string& collection,
                                           const AggregateRef& ref) const {
  auto c = collections_.find(collection);
  if (c == collections_.end()) return {0, 0};
  const auto& versions = c->second.versions;
  auto it = versions.upper_bound(
      std::make_tuple(ref.tenant_id, ref.id, std::numeric_limits<Version>::max()));
  if (it == versions.begin()) return {0, 0};
  --it;
  if (std::get<0>(it->first) != ref.tenant_id || std::get<1>(it->first) != ref.id) return {0, 0};
  return {std::get<2>(it->first), it->second};
}

Sequence World::Through(int tail, int partition) const {
  auto t = through_.find(tail);
  if (t == through_.end()) return 0;
  auto p = t->second.find(partition);
  return p == t->second.end() ? 0 : p->second;
}

SimulatedCollections::Fate SimulatedCollections::Draw(bool can_be_late) {
  const double r = std::uniform_real_distribution<double>(0, 1)(scheduler_.Random());
  if (r < faults_.lost_ack) return Fate::kLostAck;
  if (r < faults_.lost_ack + faults_.never) return Fate::kNever;
  if (can_be_late && r < faults_.lost_ack + faults_.never + faults_.late) return Fate::kLate;
  return Fate::kApplied;
}

void SimulatedCollections::Read() {
  scheduler_.Yield();
  if (scheduler_.Chance(faults_.read_fails)) Unknown("a read failed");
}

template <typename Apply>
void SimulatedCollections::Write(Apply&& apply) {
  scheduler_.Yield();
  switch (Draw(/*can_be_late=*/false)) {
    case Fate::kApplied:
      apply();
      return;
    case Fate::kLostAck:
      apply();
      Unknown("a write applied, its acknowledgement lost");
    case Fate::kNever:
    case Fate::kLate:
      Unknown("a write never applied");
  }
}

Block SimulatedCollections::ReserveBlock(int partition, const std::string& node, Sequence size) {
  Block block;
  Write([&] {
    Counter& counter = world_.counters_[partition];
    block = {node, counter.next, counter.next + size - 1, false};
    counter.next += size;
    counter.blocks.push_back(block);
  });
  return block;
}

void SimulatedCollections::MarkSealing(int partition, Sequence first) {
  Write([&] {
    for (Block& block : world_.counters_[partition].blocks) {
      if (block.first == first) block.sealing = true;
    }
  });
}

void SimulatedCollections::RemoveBlock(int partition, Sequence first) {
  Write([&] {
    std::erase_if(world_.counters_[partition].blocks,
                  [&](const Block& block) { return block.first == first; });
  });
}

Counter SimulatedCollections::ReadCounter(int partition) {
  Read();
  return world_.counters_[partition];
}

std::vector<std::string> SimulatedCollections::ReadRegistry() {
  Read();
  return {world_.registry_.begin(), world_.registry_.end()};
}

void SimulatedCollections::Register(const std::string& collection) {
  Write([&] {
    world_.collections_[collection];
    world_.registry_.insert(collection);
  });
}

std::vector<WriteStatus> SimulatedCollections::Insert(const std::string& collection,
                                                      const std::vector<LogDoc>& docs,
                                                      bool ordered) {
  auto apply = [this, collection, docs, ordered] {
    std::vector<WriteStatus> statuses(docs.size(), WriteStatus::kNotAttempted);
    for (std::size_t i = 0; i < docs.size(); ++i) {
      statuses[i] = world_.Apply(collection, docs[i]);
      if (ordered && statuses[i] != WriteStatus::kWritten) break;
    }
    return statuses;
  };
  scheduler_.Yield();
  switch (Draw(/*can_be_late=*/true)) {
    case Fate::kApplied:
      return apply();
    case Fate::kLostAck:
      apply();
      Unknown("an insert applied, its acknowledgement lost");
    case Fate::kNever:
      Unknown("an insert never applied");
    case Fate::kLate:
      scheduler_.At(scheduler_.Now() + scheduler_.Uniform(1, faults_.late_ms),
                    [apply] { apply(); });
      Unknown("an insert timed out; it lands later");
  }
  return {};
}

mongo_log::LogLayer::TailRead SimulatedCollections::ReadTail(
    int partition, Sequence after, const std::vector<std::string>& collections, int limit) {
  Read();
  TailRead read{world_.counters_[partition], {}};
  for (const std::string& name : collections) {
    scheduler_.Yield();  // one aggregation, but not one snapshot: others act between its stages
    std::vector<LogDoc> docs;
    const auto& held = world_.collections_[name].docs;
    for (auto it = held.lower_bound({partition, after + 1});
         it != held.end() && it->first.first == partition && static_cast<int>(docs.size()) < limit;
         ++it) {
      docs.push_back(it->second);
    }
    read.docs.push_back(std::move(docs));
  }
  return read;
}

std::optional<Sequence> SimulatedCollections::FindVersion(const std::string& collection,
                                                          const std::string& tenant_id,
                                                          const std::string& id, Version version) {
  Read();
  const auto& versions = world_.collections_[collection].versions;
  auto it = versions.find(std::make_tuple(tenant_id, id, version));
  if (it == versions.end()) return std::nullopt;
  return it->second;
}

std::optional<Entry> SimulatedCollections::FindRequest(const std::string& collection,
                                                       const std::string& tenant_id,
                                                       const std::string& request_id) {
  Read();
  const auto& c = world_.collections_[collection];
  auto it = c.requests.find({tenant_id, request_id});
  if (it == c.requests.end()) return std::nullopt;
  for (const auto& [at, doc] : c.docs) {
    if (doc.entry() && doc.sequence == it->second && doc.stream.ref.tenant_id == tenant_id &&
        doc.stream.request_id == request_id) {
      return Entry{{at.first, at.second}, doc.stream};
    }
  }
  return std::nullopt;
}

}  // namespace wow::simulation
