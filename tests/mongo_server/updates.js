// Updates as the test server (a test double) applies them to one document: operator updates
// through mingo's updater (`$setOnInsert` by the server), replacements, and pipeline updates
// through mingo's aggregator on the one document (mingo's updater fails on a stage whose root is
// an operator such as `$switch`). The server's own rules: `_id` is immutable (error 66) and kept
// through a pipeline or a replacement that omits it; an upsert's new document starts from the
// filter's equality conditions (not from `$or` branches). Stateless.
"use strict";

const BSON = require("bson");
const { update: mingoUpdate } = require("mingo/updater");
const { ServerError } = require("./errors");
const { aggregate, options } = require("./mingo_context");
const { canonicalKey, isPlainObject, longPaths, restoreLongs, toPlain, withIdFirst } = require("./bson_values");

// kindOf(update): "pipeline", "operator" or "replacement"; throws 9 on a mix of operators and
// fields.
function kindOf(update) {
  if (Array.isArray(update)) return "pipeline";
  if (!isPlainObject(update)) throw new ServerError(9, "Update argument must be either an object or an array");
  const keys = Object.keys(update);
  const operators = keys.filter((k) => k.startsWith("$")).length;
  if (operators > 0 && operators < keys.length) {
    throw new ServerError(9, `Unknown modifier: ${keys.find((k) => !k.startsWith("$"))}. Expected a valid update modifier or pipeline-style update specified as an array`);
  }
  return operators > 0 ? "operator" : "replacement";
}

function setPath(doc, path, value) {
  const parts = path.split(".");
  let target = doc;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(target[part])) target[part] = {};
    target = target[part];
  }
  target[parts[parts.length - 1]] = value;
}

// upsertSeed(filter): the document an upsert starts from: the filter's equality conditions
// (`field: value`, `field: {$eq: value}`, inside a top-level `$and`), stored form.
function upsertSeed(filter) {
  const seed = {};
  const visit = (conditions) => {
    for (const [field, condition] of Object.entries(conditions ?? {})) {
      if (field === "$and") {
        condition.forEach(visit);
      } else if (!field.startsWith("$")) {
        const operators = isPlainObject(condition) && Object.keys(condition).some((k) => k.startsWith("$"));
        if (!operators) setPath(seed, field, condition);
        else if ("$eq" in condition) setPath(seed, field, condition.$eq);
      }
    }
  };
  visit(filter);
  return seed;
}

// The paths whose integers the result keeps as int64: the old document's, less those an
// operator replaced, plus those the update wrote as int64.
function operatorLongPaths(oldDoc, update) {
  const paths = longPaths(oldDoc);
  for (const [operator, fields] of Object.entries(update)) {
    for (const [path, value] of Object.entries(fields ?? {})) {
      if (["$set", "$setOnInsert", "$unset", "$rename"].includes(operator)) {
        for (const p of [...paths]) if (p === path || p.startsWith(`${path}.`)) paths.delete(p);
      }
      if (operator !== "$push" && operator !== "$addToSet") longPaths(value, path, paths);
    }
  }
  return paths;
}

function pipelineLongPaths(oldDoc, pipeline) {
  const paths = longPaths(oldDoc);
  for (const stage of pipeline) {
    const spec = stage.$set ?? stage.$addFields;
    if (spec) longPaths(spec, "", paths);
  }
  return paths;
}

function checkIdUnchanged(oldDoc, newDoc) {
  if ("_id" in oldDoc && canonicalKey(toPlain(newDoc._id)) !== canonicalKey(toPlain(oldDoc._id))) {
    throw new ServerError(66, "Performing an update on the path '_id' would modify the immutable field '_id'");
  }
}

// applyUpdate(oldDoc, update, {arrayFilters, filter, inserting, readCollection}): the new
// stored-form document after applying `update` to the stored-form `oldDoc` (not modified);
// `inserting` for an upsert's new document (applies `$setOnInsert`). Throws a ServerError (66
// when `_id` would change) or a mingo error for an invalid update.
function applyUpdate(oldDoc, update, { arrayFilters, filter, inserting = false, readCollection } = {}) {
  let newDoc;
  const kind = kindOf(update);
  if (kind === "replacement") {
    newDoc = "_id" in oldDoc ? { _id: oldDoc._id, ...update } : { ...update };
  } else if (kind === "operator") {
    const { $setOnInsert, ...rest } = update;
    const modifier = toPlain(inserting && $setOnInsert ? { ...rest, $set: { ...rest.$set, ...$setOnInsert } } : rest);
    const doc = toPlain(oldDoc);
    if (Object.keys(modifier).length > 0) {
      try {
        mingoUpdate(doc, modifier, toPlain(arrayFilters), inserting ? {} : toPlain(filter), { queryOptions: options(readCollection) });
      } catch (error) {
        if (/immutable field '_id'/.test(error.message)) throw new ServerError(66, error.message);
        throw error;
      }
    }
    newDoc = restoreLongs(doc, operatorLongPaths(oldDoc, update));
  } else {
    const [result, ...more] = aggregate([toPlain(oldDoc)], toPlain(update), readCollection);
    if (!result || more.length > 0) throw new ServerError(2, "an update pipeline must produce exactly one document");
    const withId = "_id" in result || !("_id" in oldDoc) ? result : { _id: toPlain(oldDoc._id), ...result };
    newDoc = restoreLongs(withId, pipelineLongPaths(oldDoc, update));
  }
  checkIdUnchanged(oldDoc, newDoc);
  return withIdFirst(newDoc);
}

// sameBytes(a, b): true when two stored-form documents serialize identically (nModified).
function sameBytes(a, b) {
  return BSON.serialize(a).equals(BSON.serialize(b));
}

module.exports = { applyUpdate, sameBytes, upsertSeed };
