#!/usr/bin/env node
// A MongoDB TEST SERVER: a test double, not MongoDB. It speaks MongoDB's wire protocol as
// libmongoc 1.23 and the official Node.js driver use it, reports a one-node replica set, keeps
// its data in memory and takes its query, update and aggregation semantics from mingo (see
// README.md for what it implements and what it does not).
//
//   node tests/mongo_server/server.js --port PORT [--interleave SEED]
//     [--set-name NAME | --standalone | --mongos SHARDS]
//
// Binds 127.0.0.1 only; `--port 0` picks a free port. Prints one line when it listens
// ("mongo test server (test double) listening on 127.0.0.1:PORT"), one log line per command on
// stderr, and serves until SIGTERM or SIGINT. With `--interleave SEED` every write yields a
// seeded-random number of event-loop turns between finding its documents and changing them,
// so concurrent clients interleave as on a server with document-level concurrency.
"use strict";

const net = require("node:net");
const wire = require("./wire");
const { Storage } = require("./storage");
const { Cursors } = require("./cursors");
const { FailPoints } = require("./failpoints");
const { RetryableWrites } = require("./retryable");
const { execute } = require("./commands");

const MAX_MESSAGE_SIZE = 48000000;

// seededYield(seed): an async function awaiting 0 to 7 setImmediate turns, the count drawn from a
// PRNG (mulberry32) seeded with `seed`.
function seededYield(seed) {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return async () => {
    for (let turns = Math.floor(random() * 8); turns > 0; turns--) {
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
}

function summary(command) {
  const text = JSON.stringify(command, (key, value) => (typeof value === "bigint" ? value.toString() : value));
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}

// startServer({port, interleave, setName, mongos, log}): starts listening on 127.0.0.1 (setName null: a
// standalone server, which reports no replica set; mongos {shards}: a mongos); resolves to
// {address, port, close()} once it listens. `log(line)` receives one line per command.
function startServer({ port = 0, interleave = null, setName = "rs0", mongos = null, log = () => {} } = {}) {
  const state = {
    storage: new Storage(),
    cursors: new Cursors(),
    failPoints: new FailPoints(),
    commandCounts: new Map(), // command name -> how many were received, for wowCommandCounts
    retryable: new RetryableWrites(),
    yieldPoint: interleave === null ? async () => {} : seededYield(interleave),
    setName: mongos === null ? setName : null,
    mongos, // {shards}: answer as a mongos (sharding.js), or null
    address: null,
  };
  let connections = 0;
  const sockets = new Set();

  const server = net.createServer((socket) => {
    const ctx = { ...state, connectionId: ++connections };
    const reader = new wire.MessageReader(MAX_MESSAGE_SIZE);
    let queue = Promise.resolve();
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.on("data", (chunk) => {
      let messages;
      try {
        messages = reader.push(chunk);
      } catch (error) {
        log(`connection ${ctx.connectionId}: ${error.message}; closing`);
        socket.destroy();
        return;
      }
      for (const message of messages) {
        queue = queue.then(() => serve(ctx, socket, message, log));
      }
    });
  });

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const bound = server.address().port;
      state.address = `127.0.0.1:${bound}`;
      resolve({
        address: state.address,
        port: bound,
        close: () =>
          new Promise((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

// serve(ctx, socket, buffer, log): answers one message (none for moreToCome).
async function serve(ctx, socket, buffer, log) {
  if (socket.destroyed) return;
  let message;
  try {
    message = wire.decodeMessage(buffer);
  } catch (error) {
    log(`connection ${ctx.connectionId}: ${error.message}; closing`);
    socket.destroy();
    return;
  }
  const legacy = message.opCode === wire.OP_QUERY;
  const dbName = legacy ? message.collection.split(".")[0] : message.command.$db ?? "admin";
  const outcome = await execute(ctx, dbName, message.command);
  log(`conn${ctx.connectionId} ${dbName} ${summary(message.command)} -> ${outcome.close ? "closed by fail point" : outcome.reply.ok ? "ok" : `error ${outcome.reply.code}`}`);
  if (outcome.close) {
    socket.destroy();
    return;
  }
  if (message.moreToCome) return;
  const requestId = Math.floor(Math.random() * 0x7fffffff);
  socket.write(
    legacy
      ? wire.encodeReply(requestId, message.requestId, outcome.reply)
      : wire.encodeMsg(requestId, message.requestId, outcome.reply),
  );
}

function parseArguments(argv) {
  const options = { port: null, interleave: null, setName: "rs0", mongos: null };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    if (argv[i] === "--port") options.port = Number(value);
    else if (argv[i] === "--interleave") options.interleave = Number(value);
    else if (argv[i] === "--set-name") options.setName = value;
    else if (argv[i] === "--mongos") options.mongos = { shards: Number(value) };
    else if (argv[i] === "--standalone") {
      options.setName = null;
      continue;
    } else throw new Error(`unknown argument ${argv[i]}`);
    i++;
  }
  if (!Number.isInteger(options.port) || options.port < 0) throw new Error("--port PORT is required (0 picks a free port)");
  if (options.interleave !== null && !Number.isInteger(options.interleave)) throw new Error("--interleave takes an integer seed");
  if (options.mongos !== null && !(Number.isInteger(options.mongos.shards) && options.mongos.shards > 0)) throw new Error("--mongos takes a number of shards");
  return options;
}

async function main() {
  let options;
  try {
    options = parseArguments(process.argv.slice(2));
  } catch (error) {
    console.error(`${error.message}\nusage: node server.js --port PORT [--interleave SEED] [--set-name NAME | --standalone | --mongos SHARDS]`);
    process.exit(2);
  }
  const log = (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  const server = await startServer({ ...options, log });
  const mode = options.interleave === null ? "" : ` (interleaving, seed ${options.interleave})`;
  console.log(`mongo test server (test double) listening on ${server.address} ${options.mongos !== null ? `mongos of ${options.mongos.shards} shards` : options.setName === null ? "standalone" : `replicaSet=${options.setName}`}${mode}`);
  const stop = (signal) => {
    log(`${signal}: stopping`);
    server.close().then(() => process.exit(0));
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
}

if (require.main === module) main();

module.exports = { startServer };
