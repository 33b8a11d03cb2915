// Self-tests of the MongoDB test server (a test double): in the interleaving mode two
// concurrent upserts of one free key race as on a server with document-level concurrency (one
// inserts, the other gets E11000 from the unique index checked at the write), while without it
// the second always finds the first's document.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { RawClient, withServer } = require("../raw_client");

const TRIALS = 30;

// Two clients upsert the same key at once with a filter that is not a plain equality on the
// unique index (so MongoDB would not retry the duplicate by itself). Returns, per trial, how many
// of the two got E11000, after checking that each trial left exactly one document.
async function race(client, server) {
  await client.command("db", { createIndexes: "r", indexes: [{ key: { key: 1 }, name: "key_1", unique: true }] });
  const other = await RawClient.connect(server.port);
  const duplicates = [];
  try {
    for (let trial = 0; trial < TRIALS; trial++) {
      const upsert = (c) =>
        c.command("db", { update: "r", updates: [{ q: { key: `k${trial}`, n: { $gte: 0 } }, u: { $inc: { n: 1 } }, upsert: true }] });
      const replies = await Promise.all([upsert(client), upsert(other)]);
      const failed = replies.filter((r) => r.writeErrors?.[0]?.code === 11000);
      assert.ok(replies.every((r) => r.ok === 1));
      assert.equal((await client.command("db", { count: "r", query: { key: `k${trial}` } })).n, 1);
      if (failed.length === 1) {
        assert.deepEqual(failed[0].writeErrors[0].keyValue, { key: `k${trial}` });
        const winner = replies.find((r) => !r.writeErrors);
        assert.equal(winner.upserted.length, 1);
      }
      duplicates.push(failed.length);
    }
  } finally {
    other.close();
  }
  return duplicates;
}

test("interleaving mode: concurrent upserts of one free key race to a real E11000", () =>
  withServer(
    async (client, server) => {
      const duplicates = await race(client, server);
      assert.ok(duplicates.every((d) => d <= 1));
      assert.ok(duplicates.some((d) => d === 1), `no race in ${TRIALS} trials: ${duplicates}`);
    },
    { interleave: 42 },
  ));

test("without interleaving the same upserts never race", () =>
  withServer(async (client, server) => {
    const duplicates = await race(client, server);
    assert.ok(duplicates.every((d) => d === 0), `unexpected E11000: ${duplicates}`);
  }));

test("interleaving mode: an upsert whose filter is the unique key's equality retries as an update", () =>
  withServer(
    async (client, server) => {
      await client.command("db", { createIndexes: "e", indexes: [{ key: { key: 1 }, name: "key_1", unique: true }] });
      const other = await RawClient.connect(server.port);
      try {
        for (let trial = 0; trial < 10; trial++) {
          const upsert = (c) => c.command("db", { update: "e", updates: [{ q: { key: `k${trial}` }, u: { $inc: { n: 1 } }, upsert: true }] });
          const replies = await Promise.all([upsert(client), upsert(other)]);
          assert.ok(replies.every((r) => !r.writeErrors), JSON.stringify(replies));
          const [doc] = (await client.command("db", { find: "e", filter: { key: `k${trial}` } })).cursor.firstBatch;
          assert.equal(doc.n, 2);
        }
      } finally {
        other.close();
      }
    },
    { interleave: 7 },
  ));
