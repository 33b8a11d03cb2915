// Command dispatch of the test server (a test double): finds a command's handler (MongoDB's
// error 59 for an unknown one), applies the failCommand fail point, answers a retried
// retryable write with its first answer, runs the handler and turns any exception into an
// error reply (ok: 0, errmsg, code, codeName), never a crash. readConcern and writeConcern are
// accepted (a one-node set: majority is local; a numeric w above 1 gets writeConcernError 100).
"use strict";

const admin = require("./admin");
const reads = require("./reads");
const sharding = require("./sharding");
const writes = require("./writes");
const { RETRYABLE_WRITE_CODES, ServerError, codeName, errorReply } = require("./errors");
const { toNumber } = require("./bson_values");

const HANDLERS = {
  ...admin.handlers,
  ...sharding.handlers,
  find: reads.find,
  aggregate: reads.aggregate,
  count: reads.count,
  getMore: reads.getMore,
  killCursors: reads.killCursors,
  insert: writes.insert,
  update: writes.update,
  delete: writes.delete,
  findAndModify: writes.findAndModify,
};

const WRITE_COMMANDS = new Set(["insert", "update", "delete", "findAndModify", "create", "drop", "dropDatabase", "createIndexes"]);

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function retryableLabels(isRetryableWrite, code) {
  return isRetryableWrite && RETRYABLE_WRITE_CODES.has(code) ? { errorLabels: ["RetryableWriteError"] } : {};
}

// failedByFailPoint(data, isRetryableWrite): the error reply the fail point's errorCode asks for.
function failedByFailPoint(data, isRetryableWrite) {
  const code = toNumber(data.errorCode);
  return {
    ok: 0,
    errmsg: "Failing command via 'failCommand' failpoint",
    code,
    codeName: codeName(code),
    ...(data.errorLabels ? { errorLabels: data.errorLabels } : retryableLabels(isRetryableWrite, code)),
  };
}

function unsatisfiableWriteConcern(commandName, command) {
  const w = command.writeConcern?.w;
  if (!WRITE_COMMANDS.has(commandName) || typeof w !== "number" || w <= 1) return null;
  return { code: 100, codeName: "UnsatisfiableWriteConcern", errmsg: "Not enough data-bearing nodes" };
}

async function run(ctx, dbName, commandName, command) {
  const handler = Object.hasOwn(HANDLERS, commandName) ? HANDLERS[commandName] : null;
  if (!handler) throw new ServerError(59, `no such command: '${commandName}'`);
  if (command.startTransaction || command.autocommit === false) {
    throw new ServerError(20, "transactions are not supported by the test server (a test double)");
  }
  return { ok: 1, ...(await handler(ctx, ctx.storage.database(dbName), command)) };
}

// execute(ctx, dbName, command): the outcome of one command: {reply} or {close: true} (the fail
// point closes the connection). `ctx` holds the server's state (storage, cursors, failPoints,
// retryable, yieldPoint, setName, address, connectionId).
async function execute(ctx, dbName, command) {
  const commandName = Object.keys(command)[0];
  ctx.commandCounts.set(commandName, (ctx.commandCounts.get(commandName) ?? 0) + 1);
  try {
    const retryKey = ctx.retryable.keyOf(commandName, command);
    const failure = commandName === "configureFailPoint" ? null : ctx.failPoints.trigger(commandName);
    if (failure?.blockConnection) await sleep(toNumber(failure.blockTimeMS, 0));
    if (failure?.closeConnection) return { close: true };
    if (failure?.errorCode !== undefined) return { reply: failedByFailPoint(failure, retryKey !== null) };

    const previous = retryKey && ctx.retryable.previous(retryKey);
    const reply = previous ?? (await run(ctx, dbName, commandName, command));
    if (retryKey && !previous && reply.ok === 1) ctx.retryable.record(retryKey, reply);
    if (failure?.closeConnectionAfterReply) return { close: true };

    const writeConcernError = failure?.writeConcernError ?? unsatisfiableWriteConcern(commandName, command);
    if (!writeConcernError) return { reply };
    const code = toNumber(writeConcernError.code);
    const labels = failure?.errorLabels ? { errorLabels: failure.errorLabels } : retryableLabels(retryKey !== null, code);
    return { reply: { ...reply, writeConcernError, ...labels } };
  } catch (error) {
    return { reply: errorReply(error) };
  }
}

module.exports = { execute };
