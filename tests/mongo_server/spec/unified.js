// Runs one test of a unified-format spec test file (createEntities, initialData, operations with
// expectResult / expectError, expectEvents, outcome) through the official Node.js driver, with
// the subset of the format that MongoDB's CRUD tests use; anything else is skipped by name.
"use strict";

const { MongoClient } = require("mongodb");
const { COLLECTION_OPERATIONS, DATABASE_OPERATIONS } = require("./operations");
const { match } = require("./match");
const { outsideVersions, readCollection } = require("./common");

// Command monitoring events no test expects (the spec's security-sensitive commands and the
// runner's own fail point commands).
const UNOBSERVED = new Set(["configureFailPoint", "hello", "isMaster", "ismaster", "saslStart", "saslContinue", "authenticate", "getnonce"]);
const TOPOLOGY = "replicaset";

// unmetRequirements(requirements, serverVersion): a skip reason when none of the
// runOnRequirements alternatives holds, else null.
function unmetRequirements(requirements, serverVersion) {
  if (!requirements || requirements.length === 0) return null;
  const reasons = requirements.map((r) => {
    const versions = outsideVersions(r, serverVersion);
    if (versions) return versions;
    if (r.topologies && !r.topologies.includes(TOPOLOGY)) return `needs a ${r.topologies.join(" or ")} topology; the test server is a ${TOPOLOGY}`;
    if (r.serverless === "require") return "needs a serverless deployment";
    if (r.auth === true) return "needs authentication, which the test server has none of";
    if (r.serverParameters) return "needs server parameters, which the test server has none of";
    if (r.csfle) return "needs client-side field level encryption";
    return null;
  });
  return reasons.includes(null) ? null : reasons.join("; ");
}

async function createEntities(env, definitions, entities, clients) {
  for (const definition of definitions ?? []) {
    const [kind, spec] = Object.entries(definition)[0];
    if (kind === "client") {
      const client = new MongoClient(env.uri, { monitorCommands: true, ...spec.uriOptions });
      const observed = new Set(spec.observeEvents ?? []);
      const ignored = new Set(spec.ignoreCommandMonitoringEvents ?? []);
      const events = [];
      client.on("commandStarted", (event) => {
        if (observed.has("commandStartedEvent") && !UNOBSERVED.has(event.commandName) && !ignored.has(event.commandName)) events.push(event);
      });
      await client.connect();
      clients.push(client);
      entities.set(spec.id, { kind, value: client, events });
    } else if (kind === "database") {
      entities.set(spec.id, { kind, value: entities.get(spec.client).value.db(spec.databaseName, spec.databaseOptions) });
    } else if (kind === "collection") {
      entities.set(spec.id, { kind, value: entities.get(spec.database).value.collection(spec.collectionName, spec.collectionOptions) });
    } else {
      throw { skip: `the runner has no ${kind} entities` };
    }
  }
}

async function loadInitialData(env, initialData) {
  for (const { databaseName, collectionName, documents } of initialData ?? []) {
    const db = env.client.db(databaseName);
    await DATABASE_OPERATIONS.dropCollection(db, { collection: collectionName });
    await db.createCollection(collectionName, { writeConcern: { w: "majority" } });
    if (documents.length > 0) await db.collection(collectionName).insertMany(documents, { writeConcern: { w: "majority" } });
  }
}

function checkError(expected, error) {
  if (!error) return "expected an error, the operation succeeded";
  if (expected.isClientError !== undefined && expected.isClientError !== !(error.errorResponse || error.code !== undefined)) {
    return `expected isClientError ${expected.isClientError}: ${error.message}`;
  }
  if (expected.errorCode !== undefined && error.code !== expected.errorCode) return `expected error code ${expected.errorCode}, got ${error.code} (${error.message})`;
  if (expected.errorCodeName !== undefined && error.codeName !== expected.errorCodeName) return `expected ${expected.errorCodeName}, got ${error.codeName}`;
  if (expected.errorContains !== undefined && !error.message.toLowerCase().includes(expected.errorContains.toLowerCase())) {
    return `expected an error containing "${expected.errorContains}", got "${error.message}"`;
  }
  for (const label of expected.errorLabelsContain ?? []) if (!error.hasErrorLabel?.(label)) return `expected error label ${label}`;
  for (const label of expected.errorLabelsOmit ?? []) if (error.hasErrorLabel?.(label)) return `unexpected error label ${label}`;
  if (expected.expectResult !== undefined) return match(expected.expectResult, error.result ?? {});
  return null;
}

async function runOperation(env, operation, entities, failPoints) {
  if (operation.object === "testRunner") {
    if (operation.name !== "failPoint") throw { skip: `the runner has no test runner operation ${operation.name}` };
    const { client, failPoint } = operation.arguments;
    const admin = entities.get(client).value.db("admin");
    await admin.command(failPoint);
    failPoints.push(() => admin.command({ configureFailPoint: failPoint.configureFailPoint, mode: "off" }));
    return null;
  }
  const entity = entities.get(operation.object);
  const table = entity.kind === "collection" ? COLLECTION_OPERATIONS : DATABASE_OPERATIONS;
  const perform = table[operation.name];
  if (!perform) throw { skip: `the runner has no ${entity.kind} operation ${operation.name}` };
  let result;
  let error = null;
  try {
    result = await perform(entity.value, operation.arguments ?? {});
  } catch (caught) {
    error = caught;
  }
  if (operation.expectError) {
    const problem = checkError(operation.expectError, error);
    return problem && `${operation.name}: ${problem}`;
  }
  if (error && !operation.ignoreResultAndError) return `${operation.name}: unexpected error: ${error.message}`;
  if (operation.expectResult !== undefined) {
    const problem = match(operation.expectResult, result);
    if (problem) return `${operation.name} result: ${problem}`;
  }
  if (operation.saveResultAsEntity) entities.set(operation.saveResultAsEntity, { kind: "result", value: result });
  return null;
}

function checkEvents(expectations, entities) {
  for (const { client, events: expected, eventType = "command", ignoreExtraEvents } of expectations ?? []) {
    if (eventType !== "command") throw { skip: `the runner observes no ${eventType} events` };
    const actual = entities.get(client).events;
    if (ignoreExtraEvents ? actual.length < expected.length : actual.length !== expected.length) {
      return `expected ${expected.length} command events, got ${actual.length}: ${actual.map((e) => e.commandName).join(", ")}`;
    }
    for (let i = 0; i < expected.length; i++) {
      const [type, want] = Object.entries(expected[i])[0];
      if (type !== "commandStartedEvent") throw { skip: `the runner observes no ${type}` };
      const got = actual[i];
      if (want.commandName !== undefined && want.commandName !== got.commandName) return `event ${i}: expected ${want.commandName}, got ${got.commandName}`;
      if (want.databaseName !== undefined && want.databaseName !== got.databaseName) return `event ${i}: expected database ${want.databaseName}, got ${got.databaseName}`;
      if (want.command) {
        const problem = match(want.command, got.command, `event ${i} command`);
        if (problem) return problem;
      }
    }
  }
  return null;
}

// runUnifiedTest(env, spec, test): null when the test passes, else a failure message. Throws
// {skip: reason} for a test it cannot run.
async function runUnifiedTest(env, spec, test) {
  const unmet = unmetRequirements(spec.runOnRequirements, env.serverVersion) ?? unmetRequirements(test.runOnRequirements, env.serverVersion);
  if (unmet) throw { skip: unmet };
  if (test.skipReason) throw { skip: test.skipReason };
  const entities = new Map();
  const clients = [];
  const failPoints = [];
  try {
    await createEntities(env, spec.createEntities, entities, clients);
    await loadInitialData(env, spec.initialData);
    for (const operation of test.operations) {
      const problem = await runOperation(env, operation, entities, failPoints);
      if (problem) return problem;
    }
    const events = checkEvents(test.expectEvents, entities);
    if (events) return events;
    for (const { databaseName, collectionName, documents } of test.outcome ?? []) {
      const actual = await readCollection(env.client.db(databaseName), collectionName);
      const problem = match(documents, actual, `outcome ${collectionName}`, false);
      if (problem) return problem;
    }
    return null;
  } finally {
    for (const off of failPoints) await off();
    for (const client of clients) await client.close();
  }
}

module.exports = { runUnifiedTest };
