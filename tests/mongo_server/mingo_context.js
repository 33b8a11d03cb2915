// The query, projection and aggregation semantics of the test server (a test double): mingo
// 7.2's operators, with the places where mingo differs from MongoDB overridden (see
// ../../../shared/MONGODB-NOTES.md or the README):
// - in aggregation expressions a missing field is not null: `$eq`, `$ne`, `$lt`, `$lte`, `$gt`,
//   `$gte` and `$cmp` order a missing value below null, as MongoDB's BSON order does;
// - `$max`/`$min` (expression and accumulator) ignore missing and null values;
// - `$setUnion` with a null or missing argument is null;
// - `$count` over no documents emits nothing;
// - `$unionWith` (and `$lookup`) of a missing collection read it as empty;
// - in queries, equality with an embedded document respects its key order.
// Every function here works on plain-form documents (see bson_values.js). Stateless.
"use strict";

const { Context, ProcessingMode } = require("mingo");
const { Aggregator } = require("mingo/aggregator");
const { Query } = require("mingo/query");
const { evalExpr } = require("mingo/core");
const util = require("mingo/util");
const accumulatorOperators = require("mingo/operators/accumulator");
const expressionOperators = require("mingo/operators/expression");
const pipelineOperators = require("mingo/operators/pipeline");
const projectionOperators = require("mingo/operators/projection");
const queryOperators = require("mingo/operators/query");
const windowOperators = require("mingo/operators/window");
const { Lazy } = require("mingo/lazy");
const { canonicalKey, isPlainObject } = require("./bson_values");

// compareWithMissing(a, b): MongoDB's order of two expression values where `undefined` (a
// missing field) sorts below every value, null included, and equals only itself.
function compareWithMissing(a, b) {
  if (a === undefined || b === undefined) {
    return a === undefined ? (b === undefined ? 0 : -1) : 1;
  }
  if (a === null || b === null) return a === null ? (b === null ? 0 : -1) : 1;
  return util.compare(a, b);
}

function comparison(name, test) {
  return (obj, expr, options) => {
    util.assert(Array.isArray(expr) && expr.length === 2, `${name} expects array(2)`);
    const [a, b] = evalExpr(obj, expr, options);
    if (a === undefined || b === undefined || a === null || b === null) return test(compareWithMissing(a, b));
    return expressionOperators[name](obj, expr, options);
  };
}

function extremeIgnoringNull(sign) {
  return (collection, expr, options) => {
    const values = accumulatorOperators.$push(collection, expr, options).filter((v) => !util.isNil(v));
    if (values.length === 0) return null;
    return values.reduce((best, v) => (sign * util.compare(v, best) > 0 ? v : best));
  };
}

function $setUnion(obj, expr, options) {
  const args = evalExpr(obj, expr, options);
  if (Array.isArray(expr) && args.some(util.isNil)) return null;
  return expressionOperators.$setUnion(obj, expr, options);
}

function $count(collection, expr, options) {
  const counted = pipelineOperators.$count(collection, expr, options).collect();
  return Lazy(counted[0][expr] === 0 ? [] : counted);
}

// Equality with an embedded document: mingo ignores key order, MongoDB does not.
function orderedEquality(negate) {
  return (selector, value, options) => {
    const mingoTest = queryOperators.$eq(selector, value, options);
    if (!isPlainObject(value)) return negate ? queryOperators.$ne(selector, value, options) : mingoTest;
    const wanted = canonicalKey(value);
    const test = (doc) => {
      if (!mingoTest(doc)) return false;
      const found = util.resolve(doc, selector, { unwrapArray: true });
      const candidates = Array.isArray(found) ? [found, ...found.flat()] : [found];
      return candidates.some((c) => isPlainObject(c) && canonicalKey(c) === wanted);
    };
    return negate ? (doc) => !test(doc) : test;
  };
}

const CONTEXT = Context.init({
  accumulator: {
    ...accumulatorOperators,
    $max: extremeIgnoringNull(1),
    $min: extremeIgnoringNull(-1),
  },
  expression: {
    ...expressionOperators,
    $eq: comparison("$eq", (c) => c === 0),
    $ne: comparison("$ne", (c) => c !== 0),
    $lt: comparison("$lt", (c) => c < 0),
    $lte: comparison("$lte", (c) => c <= 0),
    $gt: comparison("$gt", (c) => c > 0),
    $gte: comparison("$gte", (c) => c >= 0),
    $cmp: comparison("$cmp", (c) => c),
    $setUnion,
  },
  pipeline: { ...pipelineOperators, $count },
  projection: projectionOperators,
  query: { ...queryOperators, $eq: orderedEquality(false), $ne: orderedEquality(true) },
  window: windowOperators,
});

// options(readCollection): mingo options with the overridden context; `readCollection(name)`
// returns the plain documents of a collection of the current database (an empty array for a
// missing one), for `$unionWith` and `$lookup`.
function options(readCollection = () => []) {
  return {
    context: CONTEXT,
    idKey: "_id",
    processingMode: ProcessingMode.CLONE_INPUT,
    collectionResolver: readCollection,
  };
}

// matcher(filter): a function telling whether a plain document matches a query filter.
// Throws (a mingo error) on an unknown operator.
function matcher(filter) {
  const query = new Query(filter ?? {}, options());
  return (doc) => query.test(doc);
}

// aggregate(docs, pipeline, readCollection): the pipeline's output over plain documents (the
// inputs are not modified).
function aggregate(docs, pipeline, readCollection) {
  return new Aggregator(pipeline, options(readCollection)).run(docs);
}

// sortDocuments(docs, sort): the same documents (same objects) in MongoDB's order for `sort`.
function sortDocuments(docs, sort) {
  if (!sort || Object.keys(sort).length === 0) return docs;
  return new Aggregator([{ $sort: sort }], { ...options(), processingMode: ProcessingMode.CLONE_OFF }).run(docs);
}

// project(doc, projection): a find projection of one plain document (a copy).
function project(doc, projection) {
  if (!projection || Object.keys(projection).length === 0) return doc;
  return new Query({}, options()).find([doc], projection).all()[0];
}

module.exports = { aggregate, matcher, options, project, sortDocuments };
