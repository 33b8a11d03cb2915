// The mongos mode of the test server (a test double), `--mongos SHARDS`: hello answers as a mongos
// (msg "isdbgrid", no replica set), and four of a mongos's admin commands keep the chunks of the
// sharded collections in config.chunks, one document a chunk {_id, ns, min, shard}, as a mongos
// before 5.0 lists them: shardCollection (one chunk from MinKey, on shard0), split (at `middle`),
// listShards (shard0 ... shard{N-1}) and moveChunk (the chunk holding `find`, to `to`). Nothing is
// routed or moved: every shard is this one server. Off mongos mode, each is error 59, as on a
// replica set. Not thread-safe: one Node.js event loop owns it.
"use strict";

const { MinKey } = require("bson");
const { ServerError } = require("./errors");
const { toPlain } = require("./bson_values");

// The one field of a shard key or of a split or find document, with its value.
function onlyField(doc, what) {
  const fields = Object.keys(doc ?? {});
  if (fields.length !== 1) throw new ServerError(2, `${what} must have exactly one field in the test server`);
  return [fields[0], toPlain(doc[fields[0]])];
}

function requireMongos(ctx, name) {
  if (!ctx.mongos) throw new ServerError(59, `no such command: '${name}'`);
}

function chunksOf(ctx, ns) {
  const chunks = ctx.storage.database("config").collection("chunks", true);
  return { chunks, mine: chunks.snapshot().filter((r) => r.plain.ns === ns) };
}

// The chunk of `mine` (sorted by min) holding `value` of the shard key's field.
function holding(mine, field, value) {
  const sorted = [...mine].sort((a, b) => minOf(a, field) - minOf(b, field));
  let found = null;
  for (const record of sorted) if (minOf(record, field) <= value) found = record;
  return found;
}

function minOf(record, field) {
  const min = record.plain.min[field];
  return min instanceof MinKey || min?._bsontype === "MinKey" ? -Infinity : min;
}

const handlers = {
  shardCollection: async (ctx, db, command) => {
    requireMongos(ctx, "shardCollection");
    if (db.name !== "admin") throw new ServerError(13, "shardCollection may only be run against the admin database.");
    const ns = command.shardCollection;
    const [field] = onlyField(command.key, "the shard key");
    const { chunks, mine } = chunksOf(ctx, ns);
    if (mine.length > 0) throw new ServerError(23, `sharding already enabled for collection ${ns}`);
    chunks.insert({ _id: `${ns}-${field}_MinKey`, ns, min: { [field]: new MinKey() }, shard: "shard0" });
    return { collectionsharded: ns };
  },
  split: async (ctx, db, command) => {
    requireMongos(ctx, "split");
    const ns = command.split;
    const [field, value] = onlyField(command.middle, "middle");
    const { chunks, mine } = chunksOf(ctx, ns);
    if (mine.length === 0) throw new ServerError(118, `${ns} is not sharded`);
    if (!(field in mine[0].plain.min)) throw new ServerError(2, `middle is not of the shard key of ${ns}`);
    const inside = holding(mine, field, value);
    if (minOf(inside, field) === value) throw new ServerError(2, `a chunk of ${ns} already starts at ${value}`);
    chunks.insert({ _id: `${ns}-${field}_${value}`, ns, min: { [field]: value }, shard: inside.plain.shard });
    return {};
  },
  listShards: async (ctx, db) => {
    requireMongos(ctx, "listShards");
    if (db.name !== "admin") throw new ServerError(13, "listShards may only be run against the admin database.");
    return { shards: Array.from({ length: ctx.mongos.shards }, (_, i) => ({ _id: `shard${i}`, host: ctx.address, state: 1 })) };
  },
  moveChunk: async (ctx, db, command) => {
    requireMongos(ctx, "moveChunk");
    const ns = command.moveChunk;
    const [field, value] = onlyField(command.find, "find");
    const to = command.to;
    if (!/^shard\d+$/.test(to) || Number(to.slice(5)) >= ctx.mongos.shards) throw new ServerError(70, `Shard ${to} not found`);
    const { chunks, mine } = chunksOf(ctx, ns);
    if (mine.length === 0) throw new ServerError(118, `${ns} is not sharded`);
    const record = holding(mine, field, value);
    chunks.replace(record, { ...record.doc, shard: to });
    return { millis: 0 };
  },
};

module.exports = { handlers };
