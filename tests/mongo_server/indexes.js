// Indexes of the test server (a test double): their specifications as listIndexes reports them,
// and the enforcement of unique (and partial unique) indexes with MongoDB's E11000 error,
// `keyPattern` and `keyValue`. Indexes answer no queries (every read scans the collection).
// Not thread-safe: one Node.js event loop owns them.
"use strict";

const { ServerError } = require("./errors");
const { canonicalKey, restoreLongs } = require("./bson_values");
const { matcher } = require("./mingo_context");
const util = require("mingo/util");

// indexName(key): MongoDB's default index name for a key pattern ({a: 1, b: -1} -> "a_1_b_-1").
function indexName(key) {
  return Object.entries(key).map(([field, direction]) => `${field}_${direction}`).join("_");
}

// crossProduct of the per-field value lists: each combination is one index key.
function combinations(lists) {
  return lists.reduce((acc, values) => acc.flatMap((prefix) => values.map((v) => [...prefix, v])), [[]]);
}

class Index {
  // spec: {key, name, unique?, partialFilterExpression?, ...} as createIndexes received it.
  constructor(spec) {
    this.spec = { v: 2, key: spec.key, name: spec.name ?? indexName(spec.key) };
    for (const option of ["unique", "partialFilterExpression", "sparse", "expireAfterSeconds"]) {
      if (spec[option] !== undefined) this.spec[option] = spec[option];
    }
    this.fields = Object.keys(spec.key);
    this.unique = spec.unique === true || this.spec.name === "_id_";
    this.inIndex = spec.partialFilterExpression ? matcher(spec.partialFilterExpression) : () => true;
    this.owners = new Map(); // canonical key -> owning document's _id key (unique indexes only)
  }

  get name() {
    return this.spec.name;
  }

  // keysOf(plainDoc): the document's keys in this index, each {key, values}: none when a
  // partial filter excludes it; a missing field is null; an array field gives one key per
  // element (a multikey index).
  keysOf(plainDoc) {
    if (!this.inIndex(plainDoc)) return [];
    const perField = this.fields.map((field) => {
      const value = util.resolve(plainDoc, field);
      if (Array.isArray(value) && value.length > 0) return value;
      return [value ?? null];
    });
    const seen = new Map();
    for (const values of combinations(perField)) seen.set(canonicalKey(values), values);
    return [...seen].map(([key, values]) => ({ key, values }));
  }

  // check(plainDoc, idKey, namespace): throws E11000 when another document (not `idKey`) owns
  // one of the document's keys.
  check(plainDoc, idKey, namespace) {
    if (!this.unique) return;
    for (const { key, values } of this.keysOf(plainDoc)) {
      const owner = this.owners.get(key);
      if (owner !== undefined && owner !== idKey) throw this.duplicateKeyError(values, namespace);
    }
  }

  // add(plainDoc, idKey) / remove(plainDoc, idKey): record or forget the document's keys.
  add(plainDoc, idKey) {
    if (!this.unique) return;
    for (const { key } of this.keysOf(plainDoc)) this.owners.set(key, idKey);
  }

  remove(plainDoc, idKey) {
    if (!this.unique) return;
    for (const { key } of this.keysOf(plainDoc)) {
      if (this.owners.get(key) === idKey) this.owners.delete(key);
    }
  }

  // duplicateKeyError(values, namespace): MongoDB's E11000 for these key values.
  duplicateKeyError(values, namespace) {
    const keyValue = {};
    this.fields.forEach((field, i) => {
      keyValue[field] = restoreLongs(values[i]);
    });
    const shown = this.fields.map((field, i) => `${field}: ${JSON.stringify(values[i])}`).join(", ");
    return new ServerError(
      11000,
      `E11000 duplicate key error collection: ${namespace} index: ${this.name} dup key: { ${shown} }`,
      { keyPattern: this.spec.key, keyValue },
    );
  }
}

// sameKey(a, b): true when two index specifications index the same documents by the same key
// (key pattern and partial filter), which MongoDB allows once per collection.
function sameKey(a, b) {
  const keyOf = (s) => canonicalKey({ key: s.key, partial: s.partialFilterExpression ?? null });
  return keyOf(a) === keyOf(b);
}

// sameSpec(a, b): true when two index specifications are the same index (key and options).
function sameSpec(a, b) {
  return sameKey(a, b) && (a.unique === true) === (b.unique === true);
}

module.exports = { Index, sameKey, sameSpec };
