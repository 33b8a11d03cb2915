// The handshake and the administrative commands of the test server (a test double): hello
// (isMaster) reporting a one-node replica set, ping, buildInfo, endSessions, getLastError,
// configureFailPoint, create (collections and views), drop, dropDatabase, createIndexes,
// listIndexes, listCollections and listDatabases.
"use strict";

const { ObjectId } = require("bson");
const { ServerError } = require("./errors");
const { matcher } = require("./mingo_context");
const { toPlain } = require("./bson_values");

const MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024;
const MAX_MESSAGE_SIZE = 48000000;
const ELECTION_ID = new ObjectId("7fffffff0000000000000001");

// hello(ctx, legacy): the handshake reply: a one-node replica set's primary (a standalone server
// when ctx.setName is null: no replica-set fields), wire versions 6 to 17 (MongoDB 6.0), no
// topologyVersion (so drivers poll instead of streaming), no compression.
function hello(ctx, legacy) {
  const replicaSet = ctx.mongos ? { msg: "isdbgrid" } : ctx.setName === null ? {} : {
    setName: ctx.setName,
    setVersion: 1,
    electionId: ELECTION_ID,
    hosts: [ctx.address],
    me: ctx.address,
    primary: ctx.address,
  };
  return {
    helloOk: true,
    [legacy ? "ismaster" : "isWritablePrimary"]: true,
    secondary: false,
    ...replicaSet,
    maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
    maxMessageSizeBytes: MAX_MESSAGE_SIZE,
    maxWriteBatchSize: 100000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId: ctx.connectionId,
    minWireVersion: 6,
    maxWireVersion: 17,
    readOnly: false,
  };
}

function collectionInfo(db, name) {
  const view = db.views.get(name);
  if (view) {
    return { name, type: "view", options: { viewOn: view.viewOn, pipeline: view.pipeline }, info: { readOnly: true } };
  }
  return {
    name,
    type: "collection",
    options: {},
    info: { readOnly: false, uuid: db.collections.get(name).uuid },
    idIndex: { v: 2, key: { _id: 1 }, name: "_id_" },
  };
}

function existingCollection(db, name) {
  const collection = db.collection(name, false);
  if (!collection) throw new ServerError(26, "ns not found");
  return collection;
}

const handlers = {
  hello: async (ctx) => hello(ctx, false),
  isMaster: async (ctx) => hello(ctx, true),
  ismaster: async (ctx) => hello(ctx, true),
  ping: async () => ({}),
  buildInfo: async () => ({
    version: "6.0.0",
    versionArray: [6, 0, 0, 0],
    gitVersion: "test-double",
    bits: 64,
    maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
  }),
  endSessions: async () => ({}),
  getLastError: async () => ({ err: null, n: 0 }),
  configureFailPoint: async (ctx, db, command) => ctx.failPoints.configure(command),
  // The double's own, not MongoDB's: how many commands of each name the server received (this
  // one included), then, with `reset: true`, counting from zero again. For round-trip counts.
  wowCommandCounts: async (ctx, db, command) => {
    const counts = Object.fromEntries(ctx.commandCounts);
    if (command.reset) ctx.commandCounts.clear();
    return { counts };
  },

  create: async (ctx, db, command) => {
    const name = command.create;
    if (db.collections.has(name) || db.views.has(name)) throw new ServerError(48, `Collection ${db.name}.${name} already exists.`);
    if (command.viewOn !== undefined) {
      db.views.set(name, { viewOn: command.viewOn, pipeline: command.pipeline ?? [] });
    } else {
      db.collection(name, true);
    }
    return {};
  },

  drop: async (ctx, db, command) => {
    const name = command.drop;
    if (db.views.delete(name)) return { ns: `${db.name}.${name}` };
    const collection = existingCollection(db, name);
    db.collections.delete(name);
    return { nIndexesWas: collection.indexes.size, ns: collection.namespace };
  },

  dropDatabase: async (ctx, db) => {
    ctx.storage.dropDatabase(db.name);
    return { dropped: db.name };
  },

  createIndexes: async (ctx, db, command) => {
    const created = !db.collections.has(command.createIndexes);
    const collection = db.collection(command.createIndexes, true);
    const before = collection.indexes.size;
    for (const spec of command.indexes ?? []) {
      if (!spec.key || Object.keys(spec.key).length === 0) throw new ServerError(67, "Index specification must have a non-empty 'key'");
      collection.createIndex(spec);
    }
    const after = collection.indexes.size;
    return {
      createdCollectionAutomatically: created,
      numIndexesBefore: before,
      numIndexesAfter: after,
      ...(after === before ? { note: "all indexes already exist" } : {}),
    };
  },

  listIndexes: async (ctx, db, command) => {
    const collection = existingCollection(db, command.listIndexes);
    const specs = [...collection.indexes.values()].map((index) => index.spec);
    return { cursor: ctx.cursors.start(`${collection.namespace}.$cmd.listIndexes`, specs, undefined) };
  },

  listCollections: async (ctx, db, command) => {
    const matches = matcher(toPlain(command.filter));
    const infos = db.names().map((name) => collectionInfo(db, name)).filter((info) => matches(toPlain(info)));
    const docs = command.nameOnly ? infos.map(({ name, type }) => ({ name, type })) : infos;
    return { cursor: ctx.cursors.start(`${db.name}.$cmd.listCollections`, docs, undefined) };
  },

  listDatabases: async (ctx) => {
    const databases = [...ctx.storage.databases.values()].map((d) => ({ name: d.name, sizeOnDisk: 0, empty: d.names().length === 0 }));
    return { databases, totalSize: 0 };
  },
};

module.exports = { handlers };
