// Self-tests of the MongoDB test server (a test double): the query, update and aggregation
// semantics the stores rely on that MongoDB's CRUD spec tests do not cover, including where
// mingo differs from MongoDB and the server overrides it.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { withServer } = require("../raw_client");

async function aggregate(client, collection, pipeline) {
  const reply = await client.command("db", { aggregate: collection, pipeline, cursor: {} });
  assert.equal(reply.ok, 1, reply.errmsg);
  return reply.cursor.firstBatch;
}

test("$unionWith reads another collection, and a missing one as empty", () =>
  withServer(async (client) => {
    await client.command("db", { insert: "a", documents: [{ _id: 1 }] });
    await client.command("db", { insert: "b", documents: [{ _id: 2 }] });
    assert.deepEqual(await aggregate(client, "a", [{ $unionWith: "b" }]), [{ _id: 1 }, { _id: 2 }]);
    assert.deepEqual(await aggregate(client, "a", [{ $unionWith: { coll: "b", pipeline: [{ $project: { _id: 0, from: "b" } }] } }]), [{ _id: 1 }, { from: "b" }]);
    assert.deepEqual(await aggregate(client, "a", [{ $unionWith: "missing" }]), [{ _id: 1 }]);
  }));

test("$setUnion unites sets and is null with a null or missing argument", () =>
  withServer(async (client) => {
    await client.command("db", { insert: "a", documents: [{ _id: 1, s: [1, 2], n: null }] });
    const [doc] = await aggregate(client, "a", [
      { $project: { u: { $setUnion: ["$s", [2, 3]] }, withNull: { $setUnion: ["$s", "$n"] }, withMissing: { $setUnion: ["$s", "$nope"] } } },
    ]);
    assert.deepEqual([...doc.u].sort(), [1, 2, 3]);
    assert.equal(doc.withNull, null);
    assert.equal(doc.withMissing, null);
  }));

test("in expressions a missing field is not null; $max ignores it; $cond; $count of nothing emits nothing", () =>
  withServer(async (client) => {
    await client.command("db", { insert: "a", documents: [{ _id: 1, n: null, x: 3 }] });
    const [doc] = await aggregate(client, "a", [
      {
        $project: {
          missingEqNull: { $eq: ["$nope", null] },
          nullEqNull: { $eq: ["$n", null] },
          missingLteNull: { $lte: ["$nope", null] },
          missingGtNull: { $gt: ["$nope", null] },
          max: { $max: ["$nope", 5] },
          cond: { $cond: [{ $gt: ["$x", 2] }, "big", "small"] },
          condMissing: { $cond: { if: { $eq: ["$nope", null] }, then: "null", else: "missing" } },
        },
      },
    ]);
    assert.deepEqual(doc, { _id: 1, missingEqNull: false, nullEqNull: true, missingLteNull: true, missingGtNull: false, max: 5, cond: "big", condMissing: "missing" });
    assert.deepEqual(await aggregate(client, "a", [{ $match: { x: 99 } }, { $count: "n" }]), []);
    assert.deepEqual(await aggregate(client, "a", [{ $count: "n" }]), [{ n: 1 }]);
  }));

test("a query's equality with an embedded document respects key order", () =>
  withServer(async (client) => {
    await client.command("db", { insert: "a", documents: [{ _id: 1, e: { x: 1, y: 2 } }] });
    const count = async (filter) => (await client.command("db", { count: "a", query: filter })).n;
    assert.equal(await count({ e: { x: 1, y: 2 } }), 1);
    assert.equal(await count({ e: { y: 2, x: 1 } }), 0);
    assert.equal(await count({ e: { $ne: { y: 2, x: 1 } } }), 1);
  }));

test("$pull removes matching array elements", () =>
  withServer(async (client) => {
    await client.command("db", { insert: "a", documents: [{ _id: 1, tags: ["a", "b", "a"], items: [{ k: 1 }, { k: 2 }] }] });
    const reply = await client.command("db", { update: "a", updates: [{ q: { _id: 1 }, u: { $pull: { tags: "a", items: { k: 2 } } } }] });
    assert.equal(reply.nModified, 1);
    const [doc] = (await client.command("db", { find: "a", filter: {} })).cursor.firstBatch;
    assert.deepEqual(doc, { _id: 1, tags: ["b"], items: [{ k: 1 }] });
  }));

test("an upsert's new document comes from the filter's equalities (not $or) and $setOnInsert", () =>
  withServer(async (client) => {
    const update = { $set: { c: 1 }, $setOnInsert: { created: true } };
    const filter = { b: 3, "d.e": { $eq: 4 }, f: { $gt: 0 }, $or: [{ a: 1 }, { a: 2 }] };
    const reply = await client.command("db", { update: "a", updates: [{ q: filter, u: update, upsert: true }] });
    assert.equal(reply.n, 1);
    assert.equal(reply.nModified, 0);
    const id = reply.upserted[0]._id;
    const [doc] = (await client.command("db", { find: "a", filter: {} })).cursor.firstBatch;
    assert.deepEqual(doc, { _id: id, b: 3, d: { e: 4 }, c: 1, created: true });
    await client.command("db", { update: "a", updates: [{ q: { b: 3 }, u: { $set: { c: 2 }, $setOnInsert: { created: false } }, upsert: true }] });
    const [again] = (await client.command("db", { find: "a", filter: {} })).cursor.firstBatch;
    assert.equal(again.c, 2);
    assert.equal(again.created, true);
  }));

test("a pipeline upsert ($switch at the root of $replaceWith) inserts, then updates keeping _id", () =>
  withServer(async (client) => {
    const pipeline = [
      {
        $replaceWith: {
          $switch: {
            branches: [{ case: { $eq: [{ $type: "$v" }, "missing"] }, then: { k: "$k", v: 1 } }],
            default: { k: "$k", v: { $add: ["$v", 1] } },
          },
        },
      },
    ];
    const first = await client.command("db", { update: "a", updates: [{ q: { _id: "x", k: "key" }, u: pipeline, upsert: true }] });
    assert.equal(first.upserted[0]._id, "x");
    const second = await client.command("db", { update: "a", updates: [{ q: { _id: "x" }, u: pipeline, upsert: true }] });
    assert.equal(second.nModified, 1);
    const [doc] = (await client.command("db", { find: "a", filter: {} })).cursor.firstBatch;
    assert.deepEqual(doc, { _id: "x", k: "key", v: 2 });
  }));

test("_id is immutable: error 66 for an operator, a replacement or a pipeline that changes it", () =>
  withServer(async (client) => {
    await client.command("db", { insert: "a", documents: [{ _id: 1 }] });
    for (const u of [{ $set: { _id: 2 } }, { _id: 2, x: 1 }, [{ $replaceWith: { _id: 2 } }]]) {
      const reply = await client.command("db", { update: "a", updates: [{ q: { _id: 1 }, u }] });
      assert.equal(reply.writeErrors?.[0]?.code, 66, JSON.stringify(u));
    }
    const fam = await client.command("db", { findAndModify: "a", query: { _id: 1 }, update: { $set: { _id: 3 } } });
    assert.equal(fam.code, 66);
  }));

test("a partial unique index: E11000 with keyPattern and keyValue only among the documents it covers", () =>
  withServer(async (client) => {
    const created = await client.command("db", {
      createIndexes: "a",
      indexes: [{ key: { k: 1 }, name: "k_live", unique: true, partialFilterExpression: { live: true } }],
    });
    assert.equal(created.ok, 1);
    const insert = (doc) => client.command("db", { insert: "a", documents: [doc] });
    assert.equal((await insert({ _id: 1, k: "a", live: false })).n, 1);
    assert.equal((await insert({ _id: 2, k: "a", live: false })).n, 1);
    assert.equal((await insert({ _id: 3, k: "a", live: true })).n, 1);
    const duplicate = await insert({ _id: 4, k: "a", live: true });
    assert.equal(duplicate.n, 0);
    assert.equal(duplicate.writeErrors[0].code, 11000);
    assert.deepEqual(duplicate.writeErrors[0].keyPattern, { k: 1 });
    assert.deepEqual(duplicate.writeErrors[0].keyValue, { k: "a" });
    const moved = await client.command("db", { update: "a", updates: [{ q: { _id: 1 }, u: { $set: { live: true } } }] });
    assert.equal(moved.writeErrors[0].code, 11000);
    const fam = await client.command("db", { findAndModify: "a", query: { _id: 9 }, update: { $set: { k: "a", live: true } }, upsert: true });
    assert.equal(fam.ok, 0);
    assert.equal(fam.code, 11000);
    assert.deepEqual(fam.keyPattern, { k: 1 });
    assert.deepEqual(fam.keyValue, { k: "a" });
  }));

test("unordered inserts go on after a duplicate key, ordered ones stop", () =>
  withServer(async (client) => {
    const docs = [{ _id: 1 }, { _id: 1 }, { _id: 2 }];
    const ordered = await client.command("db", { insert: "o", documents: docs });
    assert.equal(ordered.n, 1);
    assert.equal(ordered.writeErrors[0].index, 1);
    const unordered = await client.command("db", { insert: "u", documents: docs, ordered: false });
    assert.equal(unordered.n, 2);
    assert.equal(unordered.writeErrors.length, 1);
  }));

test("a write's filter compares int64 values as numbers (update, delete)", () =>
  withServer(async (client) => {
    const { Long } = require("bson");
    await client.command("db", { insert: "c", documents: [{ _id: 1, at: Long.fromNumber(1700000000000) }, { _id: 2, at: null }] });
    const updated = await client.command("db", {
      update: "c",
      updates: [{ q: { at: { $lte: Long.fromNumber(1700000000005) } }, u: { $set: { seen: true } } }],
    });
    assert.equal(updated.n, 1);
    const deleted = await client.command("db", { delete: "c", deletes: [{ q: { at: { $lte: Long.fromNumber(1700000000000) } }, limit: 1 }] });
    assert.equal(deleted.n, 1);
    const left = await client.command("db", { find: "c", filter: {} });
    assert.deepEqual(left.cursor.firstBatch.map((d) => d._id), [2]);
  }));
