// The data of the test server (a test double), in memory: databases, their collections (each
// document kept in stored form and plain form, in insertion order, with its indexes) and
// views. Nothing is persisted. Not thread-safe: one Node.js event loop owns it; a write is one
// synchronous call, so the unique indexes are checked at the moment of the write.
"use strict";

const crypto = require("node:crypto");
const { Binary } = require("bson");
const { ServerError } = require("./errors");
const { Index, sameKey, sameSpec } = require("./indexes");
const { aggregate } = require("./mingo_context");
const { canonicalKey, toPlain, withIdFirst } = require("./bson_values");

class Collection {
  constructor(database, name) {
    this.database = database;
    this.name = name;
    this.uuid = new Binary(crypto.randomBytes(16), Binary.SUBTYPE_UUID);
    this.records = new Map(); // canonical _id -> {doc (stored form), plain (plain form)}
    this.indexes = new Map([["_id_", new Index({ key: { _id: 1 }, name: "_id_" })]]);
  }

  get namespace() {
    return `${this.database.name}.${this.name}`;
  }

  // snapshot(): the records now in the collection, in insertion order.
  snapshot() {
    return [...this.records.values()];
  }

  // current(record): the record now stored under the same _id (undefined when deleted).
  current(record) {
    return this.records.get(record.key);
  }

  // insert(doc): stores a new stored-form document (which must have an _id); throws E11000 on
  // a unique index conflict, leaving the collection unchanged. Returns the record.
  insert(doc) {
    const record = makeRecord(withIdFirst(doc));
    for (const index of this.indexes.values()) index.check(record.plain, null, this.namespace);
    this.records.set(record.key, record);
    for (const index of this.indexes.values()) index.add(record.plain, record.key);
    return record;
  }

  // replace(record, doc): stores `doc` (same _id) in place of `record`'s document; throws E11000
  // on a unique index conflict, leaving the collection unchanged. Returns the new record.
  replace(record, doc) {
    const next = makeRecord(withIdFirst(doc));
    for (const index of this.indexes.values()) index.check(next.plain, record.key, this.namespace);
    for (const index of this.indexes.values()) index.remove(record.plain, record.key);
    this.records.set(next.key, next);
    for (const index of this.indexes.values()) index.add(next.plain, next.key);
    return next;
  }

  // remove(record): deletes the record's document.
  remove(record) {
    for (const index of this.indexes.values()) index.remove(record.plain, record.key);
    this.records.delete(record.key);
  }

  // createIndex(spec): adds an index; true when created, false when the same index exists.
  // Throws 85/86 on a conflicting index and E11000 when existing documents break a unique one.
  createIndex(spec) {
    const index = new Index(spec);
    const existing = this.indexes.get(index.name);
    if (existing) {
      if (sameSpec(existing.spec, index.spec)) return false;
      throw new ServerError(86, `An existing index has the same name as the requested index: ${index.name}`);
    }
    for (const other of this.indexes.values()) {
      if (sameKey(other.spec, index.spec)) {
        throw new ServerError(85, `Index already exists with a different name: ${other.name}`);
      }
    }
    for (const record of this.records.values()) {
      index.check(record.plain, record.key, this.namespace);
      index.add(record.plain, record.key);
    }
    this.indexes.set(index.name, index);
    return true;
  }
}

function makeRecord(doc) {
  const plain = toPlain(doc);
  return { doc, plain, key: canonicalKey(plain._id) };
}

class Database {
  constructor(name) {
    this.name = name;
    this.collections = new Map();
    this.views = new Map(); // name -> {viewOn, pipeline}
  }

  // collection(name, create): the collection, created when missing if `create`; throws 166
  // when the name is a view (views are read-only).
  collection(name, create = false) {
    if (this.views.has(name)) throw new ServerError(166, `Namespace ${this.name}.${name} is a view, not a collection`);
    let collection = this.collections.get(name);
    if (!collection && create) {
      collection = new Collection(this, name);
      this.collections.set(name, collection);
    }
    return collection;
  }

  // read(name): the plain documents of a collection or view (empty when neither exists), with,
  // for each, the stored document it came from when it is one (for a view: the one of the
  // same _id in the underlying collection). Returns {docs, storedOf(plainDoc)}.
  read(name, depth = 0) {
    const view = this.views.get(name);
    if (view) {
      if (depth > 20) throw new ServerError(2, `view ${name} is defined on itself`);
      const source = this.read(view.viewOn, depth + 1);
      const docs = aggregate(source.docs, view.pipeline, (other) => this.read(other).docs);
      return { docs, storedOf: source.storedOf };
    }
    const collection = this.collections.get(name);
    const records = collection ? collection.snapshot() : [];
    const byKey = new Map(records.map((r) => [r.key, r]));
    return {
      docs: records.map((r) => r.plain),
      storedOf: (doc) => (doc && "_id" in doc ? byKey.get(canonicalKey(doc._id))?.doc : undefined),
    };
  }

  // names(): every collection and view name.
  names() {
    return [...this.collections.keys(), ...this.views.keys()];
  }
}

class Storage {
  constructor() {
    this.databases = new Map();
  }

  // database(name): the database, created on first use (as MongoDB creates one implicitly).
  database(name) {
    let database = this.databases.get(name);
    if (!database) {
      database = new Database(name);
      this.databases.set(name, database);
    }
    return database;
  }

  // dropDatabase(name): forgets the database and everything in it.
  dropDatabase(name) {
    this.databases.delete(name);
  }
}

module.exports = { Storage };
