// The read commands of the test server (a test double): find, aggregate, count, getMore and
// killCursors over collections and views, with real cursors. Results leave with int64 restored
// from the stored documents they came from (see bson_values.js).
"use strict";

const { ServerError } = require("./errors");
const { aggregate: runPipeline, matcher, project, sortDocuments } = require("./mingo_context");
const { longPaths, restoreLongs, toNumber, toPlain } = require("./bson_values");

// restored(plainDoc, storedDoc): a plain-form result with the int64 types of the stored
// document it came from (when known).
function restored(plainDoc, storedDoc) {
  return restoreLongs(plainDoc, storedDoc ? longPaths(storedDoc) : undefined);
}

// present(storedDoc, projection): a stored document as a reply carries it, projected.
function present(storedDoc, projection) {
  if (!projection || Object.keys(projection).length === 0) return storedDoc;
  return restored(project(toPlain(storedDoc), toPlain(projection)), storedDoc);
}

function namespace(db, name) {
  return `${db.name}.${name}`;
}

async function find(ctx, db, command) {
  const name = command.find;
  const { docs, storedOf } = db.read(name);
  const matches = matcher(toPlain(command.filter));
  const sorted = sortDocuments(docs.filter(matches), toPlain(command.sort));
  const skip = toNumber(command.skip, 0);
  const limit = Math.abs(toNumber(command.limit, 0));
  const selected = sorted.slice(skip, limit ? skip + limit : undefined);
  const projection = toPlain(command.projection);
  const results = selected.map((doc) => restored(project(doc, projection), storedOf(doc)));
  const singleBatch = command.singleBatch === true || toNumber(command.limit, 0) < 0;
  const batchSize = command.batchSize === undefined ? undefined : toNumber(command.batchSize);
  return { cursor: ctx.cursors.start(namespace(db, name), results, batchSize, singleBatch) };
}

async function aggregate(ctx, db, command) {
  if (!command.cursor && !command.explain) throw new ServerError(9, "The 'cursor' option is required, except for aggregate with the explain argument");
  const pipeline = command.pipeline ?? [];
  for (const stage of pipeline) {
    const [operator] = Object.keys(stage);
    if (operator === "$out" || operator === "$merge") throw new ServerError(20, `${operator} is not supported by the test server (a test double)`);
  }
  const name = typeof command.aggregate === "string" ? command.aggregate : null;
  const { docs, storedOf } = name ? db.read(name) : { docs: [], storedOf: () => undefined };
  const results = runPipeline(docs, toPlain(pipeline), (other) => db.read(other).docs).map((doc) => restored(doc, storedOf(doc)));
  const batchSize = command.cursor?.batchSize === undefined ? undefined : toNumber(command.cursor.batchSize);
  return { cursor: ctx.cursors.start(namespace(db, name ?? "$cmd.aggregate"), results, batchSize) };
}

async function count(ctx, db, command) {
  const { docs } = db.read(command.count);
  const matched = docs.filter(matcher(toPlain(command.query)));
  const skip = toNumber(command.skip, 0);
  const limit = Math.abs(toNumber(command.limit, 0));
  const n = Math.max(0, Math.min(matched.length - skip, limit || Infinity));
  return { n };
}

async function getMore(ctx, db, command) {
  const batchSize = command.batchSize === undefined ? undefined : toNumber(command.batchSize);
  return { cursor: ctx.cursors.more(command.getMore, namespace(db, command.collection), batchSize) };
}

async function killCursors(ctx, db, command) {
  return ctx.cursors.kill(command.cursors ?? []);
}

module.exports = { aggregate, count, find, getMore, killCursors, present };
