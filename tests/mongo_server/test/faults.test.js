// Self-tests of the MongoDB test server (a test double): the failCommand fail point and the
// deduplication of retryable writes.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { Binary, Long } = require("bson");
const { RawClient, withServer } = require("../raw_client");

const failPoint = (client, mode, data) => client.command("admin", { configureFailPoint: "failCommand", mode, data });
const insert = (client, id, extra = {}) => client.command("db", { insert: "c", documents: [{ _id: id }], ...extra });
const count = async (client) => (await client.command("db", { count: "c" })).n;

test("failCommand errorCode with {times: 2} fails two commands, then the fail point is off", () =>
  withServer(async (client) => {
    await failPoint(client, { times: 2 }, { failCommands: ["insert"], errorCode: 8, errorLabels: ["Custom"] });
    for (const id of [1, 2]) {
      const reply = await insert(client, id);
      assert.equal(reply.ok, 0);
      assert.equal(reply.code, 8);
      assert.deepEqual(reply.errorLabels, ["Custom"]);
    }
    assert.equal((await insert(client, 3)).ok, 1);
    assert.equal((await client.command("db", { find: "c", filter: {} })).ok, 1);
    assert.equal(await count(client), 1);
  }));

test("failCommand {skip: 1} lets the first command through and fails the next ones; mode off stops it", () =>
  withServer(async (client) => {
    await failPoint(client, { skip: 1 }, { failCommands: ["insert"], errorCode: 11600 });
    assert.equal((await insert(client, 1)).ok, 1);
    assert.equal((await insert(client, 2)).code, 11600);
    assert.equal((await insert(client, 3)).code, 11600);
    await client.command("admin", { configureFailPoint: "failCommand", mode: "off" });
    assert.equal((await insert(client, 4)).ok, 1);
    assert.equal(await count(client), 2);
  }));

test("failCommand {activationProbability: p} fails about p of the commands, the same ones each time it is set", () =>
  withServer(async (client) => {
    const run = async (first) => {
      await failPoint(client, { activationProbability: 0.25 }, { failCommands: ["insert"], errorCode: 11600 });
      const failed = [];
      for (let i = 0; i < 200; i += 1) {
        if ((await insert(client, first + i)).code === 11600) failed.push(i);
      }
      return failed;
    };
    const once = await run(0);
    assert.ok(once.length > 25 && once.length < 75, `${once.length} of 200 failed`);
    assert.deepEqual(await run(1000), once);
    await assert.rejects(failPoint(client, { activationProbability: 2 }, { failCommands: ["insert"] }).then((r) => {
      if (r.ok === 0) throw new Error(r.errmsg);
    }));
  }));

test("failCommand alwaysOn on a retryable write with a retryable code adds RetryableWriteError", () =>
  withServer(async (client) => {
    await failPoint(client, "alwaysOn", { failCommands: ["insert"], errorCode: 91 });
    const lsid = { id: new Binary(Buffer.alloc(16, 1), Binary.SUBTYPE_UUID) };
    const reply = await insert(client, 1, { lsid, txnNumber: Long.fromNumber(1) });
    assert.equal(reply.code, 91);
    assert.deepEqual(reply.errorLabels, ["RetryableWriteError"]);
    assert.equal((await insert(client, 2)).errorLabels, undefined);
  }));

test("failCommand closeConnection closes the connection without running the command", () =>
  withServer(async (client, server) => {
    await failPoint(client, { times: 1 }, { failCommands: ["insert"], closeConnection: true });
    await assert.rejects(insert(client, 1), /connection closed/);
    const other = await RawClient.connect(server.port);
    try {
      assert.equal(await count(other), 0);
      assert.equal((await insert(other, 2)).ok, 1);
    } finally {
      other.close();
    }
  }));

test("failCommand writeConcernError runs the command and reports the write concern error", () =>
  withServer(async (client) => {
    await failPoint(client, { times: 1 }, { failCommands: ["insert"], writeConcernError: { code: 91, errmsg: "Replication is being shut down" } });
    const reply = await insert(client, 1);
    assert.equal(reply.ok, 1);
    assert.equal(reply.n, 1);
    assert.equal(reply.writeConcernError.code, 91);
    assert.equal(await count(client), 1);
  }));

test("a retried write (same lsid and txnNumber) gets the first answer without running again", () =>
  withServer(async (client) => {
    const lsid = { id: new Binary(Buffer.alloc(16, 7), Binary.SUBTYPE_UUID) };
    const update = (txnNumber) =>
      client.command("db", { update: "c", updates: [{ q: { _id: 1 }, u: { $inc: { n: 1 } }, upsert: true }], lsid, txnNumber: Long.fromNumber(txnNumber) });
    const first = await update(1);
    assert.equal(first.upserted.length, 1);
    const retry = await update(1);
    assert.deepEqual(retry, first);
    const [doc] = (await client.command("db", { find: "c", filter: {} })).cursor.firstBatch;
    assert.equal(doc.n, 1);
    assert.equal((await update(2)).nModified, 1);
    assert.equal((await update(1)).code, 225);
    const other = await client.command("db", { insert: "c", documents: [{ _id: 1 }], lsid: { id: new Binary(Buffer.alloc(16, 8), Binary.SUBTYPE_UUID) }, txnNumber: Long.fromNumber(1) });
    assert.equal(other.writeErrors[0].code, 11000);
  }));

test("failCommand closeConnectionAfterReply (the double's own) runs the command, then closes unanswered", () =>
  withServer(async (client, server) => {
    await failPoint(client, { times: 1 }, { failCommands: ["insert"], closeConnectionAfterReply: true });
    await assert.rejects(insert(client, 1), /connection closed/);
    const other = await RawClient.connect(server.port);
    try {
      assert.equal(await count(other), 1);
    } finally {
      other.close();
    }
  }));

test("--standalone: hello reports no replica set", () =>
  withServer(async (client) => {
    const reply = await client.command("admin", { hello: 1 });
    assert.equal(reply.ok, 1);
    assert.equal(reply.setName, undefined);
    assert.equal(reply.hosts, undefined);
    assert.equal(reply.isWritablePrimary, true);
  }, { setName: null }));
