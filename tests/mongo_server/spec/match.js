// Matching of actual values against the expected values of MongoDB's spec tests (the unified
// test format's rules): numbers equal across int32/int64/double; a root-level document (and each
// document of a root-level array) may have fields the expected one lacks, nested documents may
// not; the operators $$exists, $$type, $$unsetOrMatches and $$lte. Stateless.
"use strict";

// bsonType(value): the BSON type name of a value as the driver returned it.
function bsonType(value) {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "number") return Number.isInteger(value) && Math.abs(value) <= 2147483647 ? "int" : "double";
  if (typeof value === "string") return "string";
  if (typeof value === "boolean") return "bool";
  if (Array.isArray(value)) return "array";
  if (value instanceof Date) return "date";
  if (value instanceof RegExp) return "regex";
  const names = { Long: "long", Int32: "int", Double: "double", ObjectId: "objectId", Binary: "binData", Decimal128: "decimal", Timestamp: "timestamp" };
  return names[value._bsontype] ?? "object";
}

function isNumeric(value) {
  return typeof value === "number" || ["Long", "Int32", "Double", "Decimal128"].includes(value?._bsontype);
}

function isDocument(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !value._bsontype && !(value instanceof Date) && !(value instanceof RegExp);
}

function describe(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

// match(expected, actual, path, root): null when `actual` matches `expected`, else a message
// naming the path where they differ.
function match(expected, actual, path = "$", root = true) {
  if (isDocument(expected)) {
    const keys = Object.keys(expected);
    if (keys.length === 1 && keys[0].startsWith("$$")) return special(keys[0], expected[keys[0]], actual, path, root);
    if (!isDocument(actual)) {
      return `${path}: expected a document ${describe(expected)}, got ${describe(actual)}`;
    }
    for (const key of keys) {
      const want = expected[key];
      if (isDocument(want) && Object.keys(want)[0] === "$$exists") {
        if ((actual[key] !== undefined) !== want.$$exists) return `${path}.${key}: expected $$exists ${want.$$exists}`;
        continue;
      }
      if (isDocument(want) && Object.keys(want)[0] === "$$unsetOrMatches" && actual[key] === undefined) continue;
      if (actual[key] === undefined) return `${path}.${key}: missing (expected ${describe(want)})`;
      const problem = match(want, actual[key], `${path}.${key}`, false);
      if (problem) return problem;
    }
    if (!root) {
      const extra = Object.keys(actual).filter((k) => !(k in expected));
      if (extra.length > 0) return `${path}: unexpected fields ${extra.join(", ")} in ${describe(actual)}`;
    }
    return null;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${describe(actual)}`;
    if (actual.length !== expected.length) return `${path}: expected ${expected.length} elements, got ${actual.length}: ${describe(actual)}`;
    for (let i = 0; i < expected.length; i++) {
      const problem = match(expected[i], actual[i], `${path}[${i}]`, root);
      if (problem) return problem;
    }
    return null;
  }
  if (isNumeric(expected) && isNumeric(actual)) {
    return Number(expected) === Number(actual) ? null : `${path}: expected ${Number(expected)}, got ${Number(actual)}`;
  }
  if (expected !== null && typeof expected === "object" && expected._bsontype) {
    return actual?._bsontype === expected._bsontype && String(actual) === String(expected) ? null : `${path}: expected ${describe(expected)}, got ${describe(actual)}`;
  }
  if (expected instanceof Date) {
    return actual instanceof Date && actual.getTime() === expected.getTime() ? null : `${path}: expected ${expected.toISOString()}, got ${describe(actual)}`;
  }
  return expected === actual ? null : `${path}: expected ${describe(expected)}, got ${describe(actual)}`;
}

function special(operator, operand, actual, path, root) {
  switch (operator) {
    case "$$exists":
      return (actual !== undefined) === operand ? null : `${path}: expected $$exists ${operand}`;
    case "$$type": {
      const types = Array.isArray(operand) ? operand : [operand];
      const type = bsonType(actual);
      const ok = types.includes(type) || (type === "int" && types.includes("long")) || (type === "int" && types.includes("number"));
      return ok ? null : `${path}: expected type ${types.join("|")}, got ${type} (${describe(actual)})`;
    }
    case "$$unsetOrMatches":
      return actual === undefined ? null : match(operand, actual, path, root);
    case "$$lte":
      return isNumeric(actual) && Number(actual) <= Number(operand) ? null : `${path}: expected <= ${operand}, got ${describe(actual)}`;
    default:
      return `${path}: the runner has no special operator ${operator}`;
  }
}

module.exports = { match };
