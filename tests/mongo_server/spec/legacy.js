// Runs a legacy-format CRUD spec test file (crud/legacy/v1: `data`, then `tests[]` each with one
// `operation` and its `outcome`) through the official Node.js driver.
"use strict";

const { COLLECTION_OPERATIONS } = require("./operations");
const { match } = require("./match");
const { outsideVersions, readCollection } = require("./common");

const DATABASE = "crud-legacy-tests";
const COLLECTION = "coll";

async function reset(db, name, documents) {
  await db.collection(name).drop().catch((error) => {
    if (error.code !== 26) throw error;
  });
  if (documents && documents.length > 0) await db.collection(name).insertMany(documents);
}

// runLegacyTest(env, spec, test): null when the test passes, else a failure message. Throws
// {skip: reason} for a test it cannot run.
async function runLegacyTest(env, spec, test) {
  const versions = outsideVersions(spec, env.serverVersion);
  if (versions) throw { skip: versions };
  const operation = COLLECTION_OPERATIONS[test.operation.name];
  if (!operation) throw { skip: `the runner has no operation ${test.operation.name}` };
  if (test.operation.arguments?.collation) throw { skip: "a collation: no store uses one and the test server has none" };

  const db = env.client.db(DATABASE);
  await reset(db, COLLECTION, spec.data);
  const outcomeName = test.outcome.collection?.name;
  if (outcomeName && outcomeName !== COLLECTION) await reset(db, outcomeName, []);

  let result;
  let error = null;
  try {
    result = await operation(db.collection(COLLECTION), test.operation.arguments ?? {});
  } catch (caught) {
    error = caught;
  }
  const outcome = test.outcome;
  if (outcome.error) {
    if (!error) return "expected an error, the operation succeeded";
    if (outcome.result) {
      const problem = match(outcome.result, error.result ?? {});
      if (problem) return `error result: ${problem}`;
    }
  } else {
    if (error) return `unexpected error: ${error.message}`;
    if ("result" in outcome) {
      const problem = match(outcome.result, result ?? null);
      if (problem) return `result: ${problem}`;
    }
  }
  if (outcome.collection) {
    const actual = await readCollection(db, outcomeName ?? COLLECTION);
    const problem = match(outcome.collection.data, actual, "collection", false);
    if (problem) return `collection: ${problem}`;
  }
  return null;
}

module.exports = { runLegacyTest };
