// The write commands of the test server (a test double): insert, update, delete and
// findAndModify, with MongoDB's replies (per-statement writeErrors, ordered or not, upserted
// ids, lastErrorObject). A write finds its documents, then awaits `ctx.yieldPoint()` (a no-op,
// or a seeded number of event-loop turns in the interleaving mode), then re-reads each
// document and changes it only if it still matches, so that concurrent clients interleave as on
// a server with document-level concurrency; unique indexes are checked at the write itself.
"use strict";

const { ObjectId } = require("bson");
const { ServerError, errorReply } = require("./errors");
const { matcher, sortDocuments } = require("./mingo_context");
const { applyUpdate, sameBytes, upsertSeed } = require("./updates");
const { isPlainObject, toNumber, toPlain } = require("./bson_values");
const { present } = require("./reads");

// A write conflict (the documents found changed before the write) is retried this many times.
const MAX_ATTEMPTS = 10;

function writeError(index, error) {
  const { code, errmsg, codeName: _name, ok: _ok, ...extra } = errorReply(error);
  return { index, code, errmsg, ...extra };
}

// runStatements(statements, ordered, run): runs each statement (`run(statement, i)`), collecting
// per-statement errors; an ordered batch stops at the first. Returns {writeErrors}.
async function runStatements(statements, ordered, run) {
  const writeErrors = [];
  for (let i = 0; i < statements.length; i++) {
    try {
      await run(statements[i], i);
    } catch (error) {
      writeErrors.push(writeError(i, error));
      if (ordered) break;
    }
  }
  return writeErrors.length > 0 ? { writeErrors } : {};
}

function withId(doc) {
  return "_id" in doc ? doc : { _id: new ObjectId(), ...doc };
}

// find(collection, filter, {sort, limit}): the records matching `filter` now, in sort order.
function find(collection, filter, { sort, limit } = {}) {
  if (!collection) return [];
  const matches = matcher(toPlain(filter));
  const records = collection.snapshot().filter((r) => matches(r.plain));
  const byPlain = new Map(records.map((r) => [r.plain, r]));
  const sorted = sortDocuments(records.map((r) => r.plain), toPlain(sort)).map((p) => byPlain.get(p));
  return limit ? sorted.slice(0, limit) : sorted;
}

// The upsert's insert retries as an update when it lost a race on a unique index whose fields
// are exactly the filter's equality fields (MongoDB does the same).
function retriesOnDuplicate(filter, error) {
  if (!(error instanceof ServerError) || error.code !== 11000) return false;
  const fields = Object.keys(error.extra.keyPattern ?? {});
  const filterFields = Object.keys(filter ?? {});
  return (
    fields.length === filterFields.length &&
    fields.every((f) => f in filter && !(isPlainObject(filter[f]) && Object.keys(filter[f]).some((k) => k.startsWith("$"))))
  );
}

// modify(ctx, db, name, spec): the shared core of update and findAndModify for one statement:
// finds the documents (`spec.multi` or one, in `spec.sort` order), yields, then updates or
// removes each still matching, or upserts. Returns {n, nModified, upsertedId, before, after}
// (before/after: the stored documents of the last one touched).
async function modify(ctx, db, name, spec) {
  const { filter, update, remove = false, upsert = false, multi = false, sort, arrayFilters } = spec;
  const matches = matcher(toPlain(filter));
  const readCollection = (other) => db.read(other).docs;
  for (let attempt = 1; ; attempt++) {
    const collection = db.collection(name, false);
    const found = find(collection, filter, { sort, limit: multi ? 0 : 1 });
    await ctx.yieldPoint();
    if (found.length === 0) {
      if (!upsert) return { n: 0, nModified: 0 };
      const seed = upsertSeed(filter);
      const doc = withId(applyUpdate(seed, update, { arrayFilters, inserting: true, readCollection }));
      try {
        db.collection(name, true).insert(doc);
      } catch (error) {
        if (attempt < 2 && retriesOnDuplicate(filter, error)) continue;
        throw error;
      }
      return { n: 1, nModified: 0, upsertedId: doc._id, before: null, after: doc };
    }
    const result = { n: 0, nModified: 0 };
    for (const record of found) {
      const current = collection.current(record);
      if (!current || !matches(current.plain)) continue;
      result.n += 1;
      result.before = current.doc;
      if (remove) {
        collection.remove(current);
        continue;
      }
      const doc = applyUpdate(current.doc, update, { arrayFilters, filter, readCollection });
      result.after = doc;
      if (!sameBytes(current.doc, doc)) {
        collection.replace(current, doc);
        result.nModified += 1;
      }
    }
    if (result.n > 0 || multi || attempt >= MAX_ATTEMPTS) return result;
  }
}

async function insert(ctx, db, command) {
  let n = 0;
  const errors = await runStatements(command.documents ?? [], command.ordered !== false, async (doc) => {
    await ctx.yieldPoint();
    db.collection(command.insert, true).insert(withId(doc));
    n += 1;
  });
  return { n, ...errors };
}

async function update(ctx, db, command) {
  let n = 0;
  let nModified = 0;
  const upserted = [];
  const errors = await runStatements(command.updates ?? [], command.ordered !== false, async (statement, index) => {
    const result = await modify(ctx, db, command.update, {
      filter: statement.q,
      update: statement.u,
      upsert: statement.upsert === true,
      multi: statement.multi === true,
      arrayFilters: statement.arrayFilters,
    });
    n += result.n;
    nModified += result.nModified;
    if (result.upsertedId !== undefined) upserted.push({ index, _id: result.upsertedId });
  });
  return { n, nModified, ...(upserted.length > 0 ? { upserted } : {}), ...errors };
}

async function remove(ctx, db, command) {
  let n = 0;
  const errors = await runStatements(command.deletes ?? [], command.ordered !== false, async (statement) => {
    const limit = toNumber(statement.limit, 0);
    if (limit !== 0 && limit !== 1) throw new ServerError(9, "The limit field in delete objects must be 0 or 1");
    const result = await modify(ctx, db, command.delete, { filter: statement.q, remove: true, multi: limit === 0 });
    n += result.n;
  });
  return { n, ...errors };
}

async function findAndModify(ctx, db, command) {
  if (!command.remove && command.update === undefined) throw new ServerError(9, "Either an update or remove=true must be specified");
  if (command.remove && (command.upsert || command.new)) throw new ServerError(9, "Cannot specify both an update and remove=true");
  const result = await modify(ctx, db, command.findAndModify, {
    filter: command.query ?? {},
    update: command.update,
    remove: command.remove === true,
    upsert: command.upsert === true,
    sort: command.sort,
    arrayFilters: command.arrayFilters,
  });
  const lastErrorObject = { n: result.n };
  if (!command.remove) lastErrorObject.updatedExisting = result.n > 0 && result.upsertedId === undefined;
  if (result.upsertedId !== undefined) lastErrorObject.upserted = result.upsertedId;
  const chosen = command.new && !command.remove ? result.after : result.before;
  return { lastErrorObject, value: chosen ? present(chosen, command.fields) : null };
}

module.exports = { delete: remove, findAndModify, insert, update };
