// The simulated collection layer: MongoDB's log collections as the multi-node algorithm sees them
// (LogLayer), in memory, with the unique keys of seed 002, under a deterministic scheduler that
// interleaves the nodes at every call, and with injected faults: a write that lands but whose
// acknowledgement is lost, a write that never lands, a write that lands late.
//
// World holds the truth (what landed) and checks, at each landing and each delivery, the
// properties the log promises; a broken one is recorded as a violation with its virtual time.
//
// Thread-safety: used by the scheduler's actors, one at a time (see scheduler.h).
#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "scheduler.h"
#include "store/mongo/log/log_layer.h"

namespace wow::simulation {

using mongo_log::Block;
using mongo_log::Counter;
using mongo_log::LogDoc;
using mongo_log::WriteStatus;

struct Faults {
  double lost_ack = 0;    // a write applied, its acknowledgement lost
  double never = 0;       // a write not applied, reported unknown
  double late = 0;        // an insert applied later (up to late_ms), reported unknown
  double read_fails = 0;  // a read that fails
  std::int64_t late_ms = 6000;
};

class World {
 public:
  World(Scheduler& scheduler, int partitions) : scheduler_(scheduler), partitions_(partitions) {}

  // Records a violation unless `ok`.
  void Check(bool ok, const std::string& what) {
    if (!ok) Violation(what);
  }
  // What a tail delivered: checked against what landed; `tail` names the tail.
  void Delivered(int tail, const Entry& entry);
  // An append's acknowledged outcome, checked at the end.
  void Acknowledged(const Entry& entry) { acknowledged_.push_back(entry); }

  // The end: every landed stream was delivered to `tail`, and every acknowledged one.
  void CheckComplete(int tail);

  // The highest sequence of a landed stream in `partition`; 0 when none.
  Sequence HighestEntry(int partition) const;
  // The aggregate's last landed version and its sequence; {0, 0} when none.
  std::pair<Version, Sequence> Latest(const std::string& collection, const AggregateRef& ref) const;
  // The sequence `tail` has delivered up to in `partition`.
  Sequence Through(int tail, int partition) const;

  // What `partition` holds from `from` to `to`: its counter's blocks and each collection's
  // documents, one line each; for replaying a seed.
  std::string Describe(int partition, Sequence from, Sequence to) const;

  const std::vector<std::string>& violations() const { return violations_; }
  int partitions() const { return partitions_; }
  std::size_t landed() const { return landed_.size(); }

 private:
  friend class SimulatedCollections;
  struct Collection {
    std::map<std::pair<int, Sequence>, LogDoc> docs;  // by (partition, first sequence)
    std::map<std::tuple<std::string, std::string, Version>, Sequence> versions;
    std::map<std::pair<std::string, std::string>, Sequence> requests;
  };
  struct Landed {
    std::string collection;
    Stream stream;
  };

  WriteStatus Apply(const std::string& collection, const LogDoc& doc);
  void Violation(std::string what);

  Scheduler& scheduler_;
  const int partitions_;
  std::map<std::string, Collection> collections_;
  std::set<std::string> registry_;
  std::map<int, Counter> counters_;
  std::map<std::pair<int, Sequence>, Landed> landed_;
  std::map<int, std::map<int, Sequence>> through_;  // tail -> partition -> sequence
  std::map<int, std::map<std::string, Version>>
      delivered_versions_;  // tail -> aggregate -> version
  std::vector<Entry> acknowledged_;
  std::vector<std::string> violations_;
};

// One node's view of the world: the LogLayer it appends and tails through, with faults drawn
// from the scheduler's seed. Every call is a step of the scheduler.
class SimulatedCollections final : public mongo_log::LogLayer {
 public:
  SimulatedCollections(World& world, Scheduler& scheduler, Faults faults)
      : world_(world), scheduler_(scheduler), faults_(faults) {}

  Block ReserveBlock(int partition, const std::string& node, Sequence size) override;
  void MarkSealing(int partition, Sequence first) override;
  void RemoveBlock(int partition, Sequence first) override;
  Counter ReadCounter(int partition) override;
  std::vector<std::string> ReadRegistry() override;
  void Register(const std::string& collection) override;
  std::vector<WriteStatus> Insert(const std::string& collection, const std::vector<LogDoc>& docs,
                                  bool ordered) override;
  TailRead ReadTail(int partition, Sequence after, const std::vector<std::string>& collections,
                    int limit) override;
  std::optional<Sequence> FindVersion(const std::string& collection, const std::string& tenant_id,
                                      const std::string& id, Version version) override;
  std::optional<Entry> FindRequest(const std::string& collection, const std::string& tenant_id,
                                   const std::string& request_id) override;

 private:
  enum class Fate { kApplied, kLostAck, kNever, kLate };
  Fate Draw(bool can_be_late);
  void Read();  // a step; throws when the read fails
  template <typename Write>
  void Write(Write&& write);  // a step; applies `write` as its fate says

  World& world_;
  Scheduler& scheduler_;
  const Faults faults_;
};

}  // namespace wow::simulation
