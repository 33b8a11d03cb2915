// The ReadModelStore contract (wow/read_model.h): every rule has a test named after it, on every
// backend that keeps read models.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <latch>
#include <thread>
#include <vector>

#include "contract/backends.h"
#include "wow/error.h"

namespace wow::contract {
namespace {

constexpr const char* kSubscription = "projection.brands";

ReadModelRow Row(std::string id, Version version, std::string index_key = "",
                 std::string tenant = "t1", std::string table = "brands") {
  return {std::move(table), std::move(tenant),    std::move(id),
          version,          std::move(index_key), R"({"v":)" + std::to_string(version) + "}"};
}

std::vector<std::string> Ids(const std::vector<ReadModelRow>& page) {
  std::vector<std::string> ids;
  for (const ReadModelRow& row : page) ids.push_back(row.id);
  return ids;
}

void ExpectInvalidArgument(const std::function<void()>& call, const std::string& what) {
  try {
    call();
    ADD_FAILURE() << what << ": expected Error(INVALID_ARGUMENT), nothing was thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << what << ": " << e.what();
  }
}

// Applies `rows` as the entry at `sequence` of partition 0; what each Put returned.
std::vector<bool> PutAll(ReadModelStore& store, Sequence sequence,
                         const std::vector<ReadModelRow>& rows) {
  std::vector<bool> stored;
  store.Apply(kSubscription, {0, sequence}, [&](ReadModelWriter& w) {
    for (const ReadModelRow& row : rows) stored.push_back(w.Put(row));
  });
  return stored;
}

TEST_P(ReadModelStoreContract, APutStoresANewRowAndFindReadsItBackWhole) {
  const ReadModelRow row{"brands", "t1", "b1", 3, "contoso", R"({"name":"Contoso","n":12.50})"};
  EXPECT_EQ(PutAll(*rows_, 1, {row}), std::vector<bool>{true});
  EXPECT_EQ(rows_->Find("brands", "t1", "b1"), row);
  EXPECT_EQ(rows_->Find("brands", "t1", "b2"), std::nullopt);
  EXPECT_EQ(rows_->Find("brands", "t2", "b1"), std::nullopt) << "another tenant";
  EXPECT_EQ(rows_->Find("categories", "t1", "b1"), std::nullopt) << "another table";
}

TEST_P(ReadModelStoreContract, OnlyALaterVersionReplacesARow) {
  PutAll(*rows_, 1, {Row("b1", 2, "beta")});
  EXPECT_EQ(PutAll(*rows_, 2, {Row("b1", 2, "again"), Row("b1", 1, "older")}),
            (std::vector<bool>{false, false}));
  EXPECT_EQ(rows_->Find("brands", "t1", "b1")->index_key, "beta");
  EXPECT_EQ(PutAll(*rows_, 3, {Row("b1", 5, "later")}), std::vector<bool>{true});
  EXPECT_EQ(rows_->Find("brands", "t1", "b1")->version, 5);
}

TEST_P(ReadModelStoreContract, AWritersFindSeesItsOwnPutsAndThenTheCommittedRows) {
  PutAll(*rows_, 1, {Row("b1", 1, "alpha")});
  rows_->Apply(kSubscription, {0, 2}, [](ReadModelWriter& w) {
    EXPECT_EQ(w.Find("brands", "t1", "b1")->index_key, "alpha") << "committed";
    EXPECT_TRUE(w.Put(Row("b1", 2, "beta")));
    EXPECT_EQ(w.Find("brands", "t1", "b1")->index_key, "beta") << "this entry's own put";
    EXPECT_FALSE(w.Put(Row("b1", 2, "gamma"))) << "its own version again";
    EXPECT_TRUE(w.Put(Row("b2", 1)));
    EXPECT_TRUE(w.Find("brands", "t1", "b2").has_value());
  });
  EXPECT_EQ(rows_->Find("brands", "t1", "b1")->index_key, "beta");
  EXPECT_TRUE(rows_->Find("brands", "t1", "b2").has_value());
}

TEST_P(ReadModelStoreContract, AnApplyWhoseWorkThrowsKeepsNoneOfItsPuts) {
  PutAll(*rows_, 1, {Row("b1", 1, "alpha")});
  EXPECT_THROW(rows_->Apply(kSubscription, {0, 2},
                            [](ReadModelWriter& w) {
                              w.Put(Row("b1", 2, "beta"));
                              w.Put(Row("b2", 1));
                              throw Error(ErrorCode::kUnavailable, "injected");
                            }),
               Error);
  EXPECT_EQ(rows_->Find("brands", "t1", "b1")->index_key, "alpha");
  EXPECT_FALSE(rows_->Find("brands", "t1", "b2").has_value());
}

TEST_P(ReadModelStoreContract, ATransactionalStoreSkipsAnEntryAtOrBelowItsCheckpointAndCommitsIt) {
  EXPECT_TRUE(rows_->Apply(kSubscription, {1, 4}, [](ReadModelWriter& w) { w.Put(Row("b1", 1)); }));
  int called = 0;
  const bool applied = rows_->Apply(kSubscription, {1, 4}, [&](ReadModelWriter& w) {
    ++called;
    w.Put(Row("b2", 1));
  });
  if (rows_->transactional()) {
    EXPECT_EQ(log_->Checkpoint(1, kSubscription), 4) << "committed with the rows";
    EXPECT_FALSE(applied);
    EXPECT_EQ(called, 0);
    EXPECT_FALSE(rows_->Find("brands", "t1", "b2").has_value());
    EXPECT_EQ(log_->Checkpoint(0, kSubscription), 0) << "another partition's is its own";
  } else {
    EXPECT_EQ(log_->Checkpoint(1, kSubscription), 0) << "the runner commits it, not Apply";
    EXPECT_TRUE(applied) << "at least once: the entry again";
    EXPECT_EQ(called, 1);
    EXPECT_TRUE(rows_->Find("brands", "t1", "b2").has_value());
  }
}

TEST_P(ReadModelStoreContract, AListPagesATenantsRowsOfOneTableByIdInByteOrder) {
  PutAll(*rows_, 1,
         {Row("b3", 1), Row("b1", 1), Row("B0", 1), Row("b2", 1), Row("b\xc3\xa9", 1),
          Row("b0", 1, "", "t2"), Row("b0", 1, "", "t1", "categories")});
  EXPECT_EQ(Ids(rows_->List({"brands", "t1", "", "", 3})),
            (std::vector<std::string>{"B0", "b1", "b2"}));
  EXPECT_EQ(Ids(rows_->List({"brands", "t1", "b2", "", 3})),
            (std::vector<std::string>{"b3", "b\xc3\xa9"}));
  EXPECT_EQ(Ids(rows_->List({"brands", "t1", "b\xc3\xa9", "", 3})), std::vector<std::string>{});
  EXPECT_EQ(Ids(rows_->List({"brands", "t2", "", "", 10})), std::vector<std::string>{"b0"});
  EXPECT_EQ(Ids(rows_->List({"categories", "t1", "", "", 10})), std::vector<std::string>{"b0"});
  EXPECT_TRUE(rows_->List({"brands", "t3", "", "", 10}).empty());
  EXPECT_EQ(rows_->List({"brands", "t1", "", "", 1}).front(), Row("B0", 1)) << "whole rows";
}

TEST_P(ReadModelStoreContract, APrefixSelectsTheRowsWhoseIndexKeyStartsWithItAndNoOthers) {
  // Keys around each prefix's bounds: the prefix itself, a longer key, the keys just past it.
  PutAll(*rows_, 1,
         {Row("r1", 1, "al"), Row("r2", 1, "alpha"), Row("r3", 1, "am"), Row("r4", 1, "ak"),
          Row("r5", 1, "a"), Row("r6", 1, "\xc3\xa9t\xc3\xa9"), Row("r7", 1, "\xc3\xaa"),
          Row("r8", 1, "z\xe2\x82\xac"), Row("r9", 1, "z\xe2\x82\xad"), Row("ra", 1, "")});
  auto with = [&](const std::string& prefix) {
    return Ids(rows_->List({"brands", "t1", "", prefix, 100}));
  };
  EXPECT_EQ(with("al"), (std::vector<std::string>{"r1", "r2"}));
  EXPECT_EQ(with("a"), (std::vector<std::string>{"r1", "r2", "r3", "r4", "r5"}));
  EXPECT_EQ(with("alphabet"), std::vector<std::string>{});
  EXPECT_EQ(with("\xc3\xa9"), std::vector<std::string>{"r6"}) << "a two-byte code point";
  EXPECT_EQ(with("z\xe2\x82\xac"), std::vector<std::string>{"r8"}) << "a three-byte code point";
  EXPECT_EQ(with("").size(), 10u) << "no prefix: every row";
  EXPECT_EQ(Ids(rows_->List({"brands", "t1", "r1", "al", 100})), std::vector<std::string>{"r2"});
}

TEST_P(ReadModelStoreContract, BadArgumentsAreRefusedAndChangeNothing) {
  PutAll(*rows_, 1, {Row("b1", 1, "alpha")});
  const std::vector<std::pair<std::string, ReadModelRow>> bad = {
      {"a table that is not a type name", Row("b1", 2, "", "t1", "no tables")},
      {"an empty id", Row("", 2)},
      {"a body that is not JSON", {"brands", "t1", "b1", 2, "", "{"}},
  };
  for (const auto& [what, row] : bad) {
    ExpectInvalidArgument(
        [&] {
          rows_->Apply(kSubscription, {0, 2}, [&](ReadModelWriter& w) {
            w.Put(Row("b2", 1));
            w.Put(row);
          });
        },
        what);
  }
  EXPECT_EQ(rows_->Find("brands", "t1", "b1")->version, 1);
  EXPECT_FALSE(rows_->Find("brands", "t1", "b2").has_value()) << "the entry's other puts";
  ExpectInvalidArgument([&] { rows_->List({"brands", "t1", "", "", 0}); }, "a limit of 0");
  ExpectInvalidArgument(
      [&] {
        rows_->List({"brands", "t1", "", "", kMaxReadModelPage + 1});
      },
      "a limit over the page");
  ExpectInvalidArgument([&] { rows_->List({"", "t1", "", "", 10}); }, "no table");
  EXPECT_THROW(rows_->Apply("", {0, 2}, [](ReadModelWriter&) {}), Error) << "no subscription";
}

TEST_P(ReadModelStoreContract,
       ADropDeletesTheTablesRowsAndTheSubscriptionsCheckpointsOrRefusesWhole) {
  PutAll(*rows_, 1,
         {Row("b1", 1), Row("b2", 1, "", "t2"), Row("c1", 1, "", "t1", "categories"),
          Row("k1", 1, "", "t1", "keep")});
  log_->CommitCheckpoint(0, kSubscription, 7);
  log_->CommitCheckpoint(1, kSubscription, 3);
  log_->CommitCheckpoint(1, "projection.other", 5);
  std::int64_t dropped = -1;
  try {
    dropped = rows_->Drop(kSubscription, {"brands", "categories"});
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kFailedPrecondition) << e.what();
    EXPECT_FALSE(rows_->transactional()) << "a transactional store can always drop";
    EXPECT_TRUE(rows_->Find("brands", "t1", "b1").has_value()) << "nothing deleted";
    EXPECT_EQ(log_->Checkpoint(0, kSubscription), 7);
    return;
  }
  EXPECT_EQ(dropped, 3);
  EXPECT_TRUE(rows_->List({"brands", "t1", "", "", 10}).empty());
  EXPECT_TRUE(rows_->List({"brands", "t2", "", "", 10}).empty());
  EXPECT_TRUE(rows_->List({"categories", "t1", "", "", 10}).empty());
  EXPECT_TRUE(rows_->Find("keep", "t1", "k1").has_value()) << "a table not named";
  EXPECT_EQ(log_->Checkpoint(0, kSubscription), 0);
  EXPECT_EQ(log_->Checkpoint(1, kSubscription), 0);
  EXPECT_EQ(log_->Checkpoint(1, "projection.other"), 5) << "another subscription's";
  EXPECT_EQ(PutAll(*rows_, 8, {Row("b1", 1)}), std::vector<bool>{true}) << "the rows start again";
}

TEST_P(ReadModelStoreContract, ConcurrentAppliesOfOneRowLeaveTheLatestVersion) {
  // Two nodes applying one aggregate's entries at once (a lease lost and taken over): each put
  // races the other's insert and update, and the latest version ends stored whatever the order.
  constexpr int kRows = 6;
  constexpr Version kVersions = 8;
  std::latch start(2);
  std::atomic<int> failures{0};
  auto node = [&](bool downwards) {
    start.arrive_and_wait();
    for (Version step = 1; step <= kVersions; ++step) {
      const Version v = downwards ? kVersions + 1 - step : step;
      try {
        rows_->Apply(kSubscription, {0, v}, [&](ReadModelWriter& w) {
          for (int r = 0; r < kRows; ++r) w.Put(Row("b" + std::to_string(r), v));
        });
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    }
  };
  std::thread up(node, false);
  std::thread down(node, true);
  up.join();
  down.join();
  ASSERT_EQ(failures.load(), 0);
  const std::vector<ReadModelRow> page = rows_->List({"brands", "t1", "", "", 100});
  ASSERT_EQ(page.size(), static_cast<std::size_t>(kRows)) << "one row each: no twin inserted";
  for (const ReadModelRow& row : page) EXPECT_EQ(row, Row(row.id, kVersions));
}

}  // namespace
}  // namespace wow::contract
