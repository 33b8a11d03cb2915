// Self-tests of the MongoDB test server (a test double): the wire protocol, the handshake,
// unknown commands, errors inside handlers, cursors and int64 round trips.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const BSON = require("bson");
const { Long } = BSON;
const { withServer } = require("../raw_client");
const wire = require("../wire");

test("the OP_QUERY isMaster handshake reports a one-node replica set without topologyVersion", () =>
  withServer(async (client, server) => {
    const { opCode, document } = await client.legacyCommand("admin", { isMaster: 1, helloOk: true });
    assert.equal(opCode, wire.OP_REPLY);
    assert.equal(document.ok, 1);
    assert.equal(document.ismaster, true);
    assert.equal(document.secondary, false);
    assert.equal(document.setName, "rs0");
    assert.deepEqual(document.hosts, [server.address]);
    assert.equal(document.me, server.address);
    assert.equal(document.minWireVersion, 6);
    assert.equal(document.maxWireVersion, 17);
    assert.ok(document.logicalSessionTimeoutMinutes > 0);
    assert.ok(document.maxBsonObjectSize > 0 && document.maxMessageSizeBytes > 0 && document.maxWriteBatchSize > 0);
    assert.equal(document.topologyVersion, undefined);
    assert.equal(document.compression, undefined);
  }));

test("hello over OP_MSG answers isWritablePrimary; ping, buildInfo, endSessions and getLastError answer", () =>
  withServer(async (client) => {
    const hello = await client.command("admin", { hello: 1 });
    assert.equal(hello.isWritablePrimary, true);
    assert.equal(hello.setName, "rs0");
    assert.equal((await client.command("admin", { ping: 1 })).ok, 1);
    assert.equal((await client.command("admin", { buildInfo: 1 })).version, "6.0.0");
    assert.equal((await client.command("admin", { endSessions: [] })).ok, 1);
    assert.equal((await client.command("db", { getLastError: 1 })).ok, 1);
  }));

test("an unknown command is error 59 CommandNotFound and the server goes on", () =>
  withServer(async (client) => {
    const reply = await client.command("db", { frobnicate: 1 });
    assert.equal(reply.ok, 0);
    assert.equal(reply.code, 59);
    assert.equal(reply.codeName, "CommandNotFound");
    assert.equal((await client.command("db", { ping: 1 })).ok, 1);
  }));

test("an exception inside a handler becomes an error reply, not a crash", () =>
  withServer(async (client) => {
    const reply = await client.command("db", { find: "c", filter: { $frobnicate: 1 } });
    assert.equal(reply.ok, 0);
    assert.equal(typeof reply.errmsg, "string");
    assert.equal(typeof reply.code, "number");
    assert.equal((await client.command("db", { ping: 1 })).ok, 1);
  }));

test("insert takes its documents from an OP_MSG document sequence", () =>
  withServer(async (client) => {
    const reply = await client.command("db", { insert: "c" }, [["documents", [{ _id: 1 }, { _id: 2 }]]]);
    assert.equal(reply.n, 2);
    const found = await client.command("db", { find: "c", filter: {} });
    assert.deepEqual(found.cursor.firstBatch, [{ _id: 1 }, { _id: 2 }]);
  }));

test("a moreToCome (unacknowledged) write gets no reply but is applied", () =>
  withServer(async (client) => {
    client.unacknowledged("db", { insert: "c", documents: [{ _id: 7 }], writeConcern: { w: 0 } });
    const found = await client.command("db", { find: "c", filter: { _id: 7 } });
    assert.deepEqual(found.cursor.firstBatch, [{ _id: 7 }]);
  }));

test("find cursors: batchSize, getMore to exhaustion, then CursorNotFound; killCursors", () =>
  withServer(async (client) => {
    await client.command("db", { insert: "c", documents: [1, 2, 3, 4, 5].map((i) => ({ _id: i })) });
    const first = await client.command("db", { find: "c", filter: {}, sort: { _id: -1 }, batchSize: 2 });
    assert.deepEqual(first.cursor.firstBatch.map((d) => d._id), [5, 4]);
    const id = first.cursor.id;
    assert.notEqual(Number(id), 0);
    const second = await client.command("db", { getMore: id, collection: "c", batchSize: 2 });
    assert.deepEqual(second.cursor.nextBatch.map((d) => d._id), [3, 2]);
    const third = await client.command("db", { getMore: id, collection: "c", batchSize: 2 });
    assert.deepEqual(third.cursor.nextBatch.map((d) => d._id), [1]);
    assert.equal(Number(third.cursor.id), 0);
    assert.equal((await client.command("db", { getMore: id, collection: "c" })).code, 43);

    const other = await client.command("db", { aggregate: "c", pipeline: [], cursor: { batchSize: 1 } });
    const killed = await client.command("db", { killCursors: "c", cursors: [other.cursor.id] });
    assert.deepEqual(killed.cursorsKilled.map(Number), [Number(other.cursor.id)]);
    assert.equal((await client.command("db", { getMore: other.cursor.id, collection: "c" })).code, 43);
  }));

test("find: skip, limit, projection and singleBatch", () =>
  withServer(async (client) => {
    await client.command("db", { insert: "c", documents: [1, 2, 3, 4].map((i) => ({ _id: i, x: i * 11, y: 0 })) });
    const reply = await client.command("db", { find: "c", filter: { x: { $gt: 11 } }, sort: { x: 1 }, skip: 1, limit: 2, projection: { x: 1, _id: 0 } });
    assert.deepEqual(reply.cursor.firstBatch, [{ x: 33 }, { x: 44 }]);
    const single = await client.command("db", { find: "c", filter: {}, batchSize: 1, singleBatch: true });
    assert.equal(single.cursor.firstBatch.length, 1);
    assert.equal(Number(single.cursor.id), 0);
  }));

test("int64 stays int64 through insert, find, $inc, $set, findAndModify and aggregate; int32 stays int32", () =>
  withServer(async (client) => {
    await client.command("db", { insert: "c", documents: [{ _id: 1, v: Long.fromNumber(5), big: Long.fromString("1099511627776"), i: 5 }] });
    await client.command("db", { update: "c", updates: [{ q: { _id: 1 }, u: { $inc: { v: 1 }, $set: { w: Long.fromNumber(7) } } }] });
    const [doc] = (await client.command("db", { find: "c", filter: { v: 6 } })).cursor.firstBatch;
    assert.equal(doc.v._bsontype, "Long");
    assert.equal(doc.v.toNumber(), 6);
    assert.equal(doc.w._bsontype, "Long");
    assert.equal(doc.big.toString(), "1099511627776");
    assert.equal(typeof doc.i, "number");
    const modified = await client.command("db", { findAndModify: "c", query: { _id: 1 }, update: { $inc: { v: Long.fromNumber(1) } }, new: true });
    assert.equal(modified.value.v._bsontype, "Long");
    assert.equal(modified.value.v.toNumber(), 7);
    const [aggregated] = (await client.command("db", { aggregate: "c", pipeline: [{ $match: { i: 5 } }], cursor: {} })).cursor.firstBatch;
    assert.equal(aggregated.v._bsontype, "Long");
  }));

test("a date beyond JavaScript's range (Long.MAX_VALUE ms) stays exact through insert, find, sort and a comparison", () =>
  withServer(async (client) => {
    const forever = new wire.WideDate(Number(9223372036854775807n));
    await client.command("db", { insert: "c", documents: [
      { _id: "forever", ttlAt: forever }, { _id: "soon", ttlAt: new Date(2000) }] });
    const found = (await client.command("db", { find: "c", filter: { ttlAt: { $gt: new Date(1000) } }, sort: { ttlAt: -1 } })).cursor.firstBatch;
    assert.deepEqual(found.map((d) => d._id), ["forever", "soon"]);
    assert.ok(found[0].ttlAt instanceof Date);
    // Encoded again, the date is the int64 9223372036854775807, not 0 (1970).
    const bytes = BSON.serialize({ d: found[0].ttlAt });
    assert.equal(bytes[4], 0x09);
    assert.equal(bytes.readBigInt64LE(7), 9223372036854775807n);
    const none = (await client.command("db", { find: "c", filter: { ttlAt: { $lt: new Date(1000) } } })).cursor.firstBatch;
    assert.deepEqual(none, []);
  }));

test("listCollections, listIndexes, create, drop and dropDatabase", () =>
  withServer(async (client) => {
    assert.equal((await client.command("db", { create: "a" })).ok, 1);
    assert.equal((await client.command("db", { create: "a" })).code, 48);
    await client.command("db", { createIndexes: "a", indexes: [{ key: { k: 1 }, name: "k_1", unique: true }] });
    const indexes = (await client.command("db", { listIndexes: "a", cursor: {} })).cursor.firstBatch;
    assert.deepEqual(indexes.map((i) => i.name), ["_id_", "k_1"]);
    assert.equal(indexes[1].unique, true);
    const names = (await client.command("db", { listCollections: 1, nameOnly: true })).cursor.firstBatch.map((c) => c.name);
    assert.deepEqual(names, ["a"]);
    assert.equal((await client.command("db", { drop: "a" })).ok, 1);
    assert.equal((await client.command("db", { drop: "a" })).code, 26);
    await client.command("db", { insert: "b", documents: [{ _id: 1 }] });
    assert.equal((await client.command("db", { dropDatabase: 1 })).ok, 1);
    assert.equal((await client.command("db", { count: "b" })).n, 0);
  }));

test("as a mongos: hello says isdbgrid; shardCollection, split, listShards and moveChunk keep config.chunks", () =>
  withServer(async (client) => {
    const hello = await client.command("admin", { hello: 1 });
    assert.equal(hello.msg, "isdbgrid");
    assert.equal(hello.setName, undefined);
    await client.command("admin", { shardCollection: "db.t", key: { partition: 1 } });
    for (const partition of [1, 2, 3]) await client.command("admin", { split: "db.t", middle: { partition } });
    const shards = (await client.command("admin", { listShards: 1 })).shards.map((s) => s._id);
    assert.deepEqual(shards, ["shard0", "shard1"]);
    await client.command("admin", { moveChunk: "db.t", find: { partition: 3 }, to: "shard1" });
    await client.command("admin", { moveChunk: "db.t", find: { partition: 1 }, to: "shard1" });
    const chunks = (await client.command("config", { find: "chunks", filter: { ns: "db.t" } })).cursor.firstBatch;
    const byMin = Object.fromEntries(chunks.map((c) => [String(c.min.partition?._bsontype === "MinKey" ? "min" : c.min.partition), c.shard]));
    assert.deepEqual(byMin, { min: "shard0", 1: "shard1", 2: "shard0", 3: "shard1" });
    const again = await client.command("admin", { split: "db.t", middle: { partition: 2 } });
    assert.equal(again.ok, 0);
    const unknown = await client.command("admin", { moveChunk: "db.t", find: { partition: 0 }, to: "shard7" });
    assert.equal(unknown.code, 70);
  }, { mongos: { shards: 2 } }));

test("off mongos mode, the sharding commands are unknown, as on a replica set", () =>
  withServer(async (client) => {
    assert.equal((await client.command("admin", { shardCollection: "db.t", key: { partition: 1 } })).code, 59);
  }));
