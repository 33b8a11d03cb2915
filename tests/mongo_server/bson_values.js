// BSON values as the test server (a test double) holds them.
//
// Documents are stored as the wire decoded them with int64 kept as bson Long ("stored form").
// mingo cannot compare or compute with Long, so it sees a "plain form" in which every Long is a
// JS number (exact below 2^53). On the way out, int64 is restored from the stored types: a
// number at a path where the stored document (or the update that wrote it) had an int64 becomes
// an int64 again; an integer outside the int32 range with no such type is an int64 too (MongoDB
// would have it as int64 or double; the stores only write int64 there).
"use strict";

const { Long } = require("bson");

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

// isLong(value): true for a bson Long (and not a Timestamp, which subclasses Long).
function isLong(value) {
  return value !== null && typeof value === "object" && value._bsontype === "Long";
}

// isPlainObject(value): true for a document (not an array, Date, RegExp or bson value object).
function isPlainObject(value) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// toPlain(value): a deep copy of a stored-form value with every Long replaced by a number.
// Other bson values (ObjectId, Binary, Decimal128, Timestamp, Date) are shared, not copied.
function toPlain(value) {
  if (isLong(value)) return value.toNumber();
  if (Array.isArray(value)) return value.map(toPlain);
  if (isPlainObject(value)) {
    const out = {};
    for (const key of Object.keys(value)) out[key] = toPlain(value[key]);
    return out;
  }
  return value;
}

// longPaths(value, prefix, into): adds to the Set `into` the dotted path of every Long inside
// `value` (array elements by index), each under `prefix`; returns `into`.
function longPaths(value, prefix = "", into = new Set()) {
  if (isLong(value)) {
    into.add(prefix);
  } else if (Array.isArray(value) || isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      longPaths(value[key], prefix === "" ? key : `${prefix}.${key}`, into);
    }
  }
  return into;
}

// restoreLongs(value, paths, prefix): a deep copy of a plain-form value in which an integer
// becomes a Long when its path is in the Set `paths` or it lies outside the int32 range.
function restoreLongs(value, paths = new Set(), prefix = "") {
  if (typeof value === "number") {
    if (Number.isInteger(value) && (paths.has(prefix) || value < INT32_MIN || value > INT32_MAX)) {
      return Long.fromNumber(value);
    }
    return value;
  }
  if (Array.isArray(value)) {
    return value.map((item, i) => restoreLongs(item, paths, prefix === "" ? `${i}` : `${prefix}.${i}`));
  }
  if (isPlainObject(value)) {
    const out = {};
    for (const key of Object.keys(value)) {
      out[key] = restoreLongs(value[key], paths, prefix === "" ? key : `${prefix}.${key}`);
    }
    return out;
  }
  return value;
}

// canonicalKey(value): a string equal for two plain-form values exactly when MongoDB's index
// key comparison finds them equal (numbers of any type by value, documents in key order).
function canonicalKey(value) {
  if (value === undefined || value === null) return "null";
  if (typeof value === "number") return `n:${Object.is(value, -0) ? 0 : value}`;
  if (typeof value === "string") return `s:${JSON.stringify(value)}`;
  if (typeof value === "boolean") return `b:${value}`;
  if (value instanceof Date) return `d:${value.getTime()}`;
  if (value instanceof RegExp) return `r:${value.source}/${value.flags}`;
  if (Array.isArray(value)) return `[${value.map(canonicalKey).join(",")}]`;
  if (isPlainObject(value)) {
    return `{${Object.keys(value).map((k) => `${JSON.stringify(k)}:${canonicalKey(value[k])}`).join(",")}}`;
  }
  switch (value._bsontype) {
    case "ObjectId":
      return `o:${value.toHexString()}`;
    case "Binary":
      return `x:${value.sub_type}:${Buffer.from(value.buffer).toString("base64")}`;
    case "Decimal128":
      return `n:${Number(value.toString())}`;
    case "Timestamp":
      return `t:${value.toString()}`;
    default:
      return `${value._bsontype}:${String(value)}`;
  }
}

// withIdFirst(doc): the document with its `_id` as the first field, as MongoDB stores it.
function withIdFirst(doc) {
  if (!("_id" in doc) || Object.keys(doc)[0] === "_id") return doc;
  const { _id, ...rest } = doc;
  return { _id, ...rest };
}

// toNumber(value, fallback): a command argument (number, Long, Int32, Double) as a JS number,
// or `fallback` when absent.
function toNumber(value, fallback) {
  if (value === undefined || value === null) return fallback;
  return isLong(value) ? value.toNumber() : Number(value);
}

module.exports = {
  canonicalKey,
  isLong,
  isPlainObject,
  longPaths,
  restoreLongs,
  toNumber,
  toPlain,
  withIdFirst,
};
