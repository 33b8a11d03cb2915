#!/usr/bin/env node
// Measures the fidelity of the MongoDB test server (a test double): runs MongoDB's CRUD spec
// tests (legacy crud/legacy/v1 and unified format JSON files, found under each PATH) through the
// official Node.js driver against a test server it starts in this process on a free loopback
// port (or against --uri URI). Prints one line per test (PASS, FAIL with the difference, SKIP
// with the reason) and, alone on the last line, `N passed, M failed, K skipped`; exits 1 on any
// failure. A PATH that does not exist is reported as skipped ("spec tests absent").
//
//   node tests/mongo_server/spec_runner.js ../shared/mongo-spec [--uri URI]
"use strict";

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { EJSON } = require("bson");
const { MongoClient } = require("mongodb");
const { startServer } = require("./server");
const { runLegacyTest } = require("./spec/legacy");
const { runUnifiedTest } = require("./spec/unified");

const SERVER_VERSION = "6.0.0";

function jsonFiles(root) {
  if (fs.statSync(root).isFile()) return root.endsWith(".json") ? [root] : [];
  return fs
    .readdirSync(root)
    .sort()
    .flatMap((name) => jsonFiles(path.join(root, name)));
}

function parseArguments(argv) {
  const paths = [];
  let uri = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--uri") uri = argv[++i];
    else paths.push(argv[i]);
  }
  if (paths.length === 0) {
    console.error("usage: node spec_runner.js PATH... [--uri URI]");
    process.exit(2);
  }
  return { paths, uri };
}

async function main() {
  const { paths, uri } = parseArguments(process.argv.slice(2));
  const files = [];
  for (const root of paths) {
    if (fs.existsSync(root)) files.push(...jsonFiles(root));
    else console.log(`spec tests absent: ${root} does not exist; its tests are skipped`);
  }
  const counts = { passed: 0, failed: 0, skipped: 0 };
  if (files.length === 0) {
    console.log(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
    return;
  }

  const logPath = path.join(os.tmpdir(), `mongo-test-server-spec-${process.pid}.log`);
  const logStream = fs.createWriteStream(logPath);
  const server = uri ? null : await startServer({ port: 0, log: (line) => logStream.write(`${line}\n`) });
  const serverUri = uri ?? `mongodb://${server.address}/?replicaSet=rs0`;
  const client = new MongoClient(serverUri);
  await client.connect();
  const env = { uri: serverUri, client, serverVersion: SERVER_VERSION };

  for (const file of files) {
    const spec = EJSON.parse(fs.readFileSync(file, "utf8"), { relaxed: true });
    if (!Array.isArray(spec.tests)) continue;
    const run = spec.schemaVersion ? runUnifiedTest : runLegacyTest;
    const relative = path.relative(paths.find((p) => file.startsWith(p)) ?? ".", file);
    for (const test of spec.tests) {
      const name = `${relative}: ${test.description}`;
      try {
        const problem = await run(env, spec, test);
        if (problem) {
          counts.failed += 1;
          console.log(`FAIL ${name}: ${problem}`);
        } else {
          counts.passed += 1;
          console.log(`PASS ${name}`);
        }
      } catch (error) {
        if (error?.skip) {
          counts.skipped += 1;
          console.log(`SKIP ${name}: ${error.skip}`);
        } else {
          counts.failed += 1;
          console.log(`FAIL ${name}: ${error?.stack ?? error}`);
        }
      }
    }
  }
  await client.close();
  if (server) await server.close();
  logStream.end();
  if (counts.failed > 0 && server) console.log(`the test server's log: ${logPath}`);
  else if (server) fs.rmSync(logPath, { force: true });
  console.log(`${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`);
  process.exitCode = counts.failed > 0 ? 1 : 0;
}

main().catch((error) => {
  console.error(error);
  console.log("0 passed, 1 failed");
  process.exit(1);
});
