// Retryable writes of the test server (a test double): the answer to a write that carried
// (`lsid`, `txnNumber`) is kept per session, and a retry with the same number gets that answer
// without running again, as MongoDB's session catalog does; an older number is error 225. Only
// the latest transaction number of each session is kept. Not thread-safe: one Node.js event loop
// owns it.
"use strict";

const { ServerError } = require("./errors");
const { toNumber } = require("./bson_values");

const RETRYABLE_COMMANDS = new Set(["insert", "update", "delete", "findAndModify"]);

class RetryableWrites {
  constructor() {
    this.sessions = new Map(); // lsid key -> {txnNumber, reply}
  }

  // keyOf(commandName, command): the session's key and txnNumber when the command is a
  // retryable write (a write command with lsid and txnNumber), else null.
  keyOf(commandName, command) {
    if (!RETRYABLE_COMMANDS.has(commandName) || command.txnNumber === undefined || !command.lsid) return null;
    const id = command.lsid.id;
    const session = id?.buffer ? Buffer.from(id.buffer).toString("hex") : JSON.stringify(id);
    return { session, txnNumber: toNumber(command.txnNumber) };
  }

  // previous(key): the reply of the write already executed with this key, undefined when none;
  // throws 225 when the session has gone on to a later transaction number.
  previous(key) {
    const entry = this.sessions.get(key.session);
    if (!entry) return undefined;
    if (key.txnNumber < entry.txnNumber) {
      throw new ServerError(225, `Retryable write with txnNumber ${key.txnNumber} is prohibited on session because a newer retryable write with txnNumber ${entry.txnNumber} has already started on this session`);
    }
    return key.txnNumber === entry.txnNumber ? entry.reply : undefined;
  }

  // record(key, reply): keeps the answer of an executed write.
  record(key, reply) {
    this.sessions.set(key.session, { txnNumber: key.txnNumber, reply });
  }
}

module.exports = { RetryableWrites };
