// The `failCommand` fail point of the test server (a test double), as MongoDB's
// configureFailPoint sets it: for the commands named in `failCommands`, answer `errorCode`
// (with `errorLabels`, or RetryableWriteError for a retryable write failing with a retryable
// code), close the connection (`closeConnection`), or run the command and add
// `writeConcernError`; mode `alwaysOn`, `off`, `{times: n}`, `{skip: n}` or
// `{activationProbability: p}` (each matching command fails with probability p, drawn from a
// generator seeded with 1 when the mode is set, so a run replays). One field of the
// double's own, not MongoDB's: `closeConnectionAfterReply: true` runs the command, then closes the
// connection without answering (a lost acknowledgement: the write landed, the client cannot
// know). Not thread-safe: one Node.js event loop owns it.
"use strict";

const { ServerError } = require("./errors");
const { toNumber } = require("./bson_values");

// A small deterministic generator (mulberry32): uniform numbers in [0, 1) from `seed`.
function seeded(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class FailPoints {
  constructor() {
    this.failCommand = null; // {data, times (Infinity when always on), skip, probability}
  }

  // configure(command): applies a configureFailPoint command; returns its reply fields.
  configure(command) {
    if (command.configureFailPoint !== "failCommand") {
      throw new ServerError(2, `the test server has no fail point ${command.configureFailPoint}`);
    }
    const mode = command.mode;
    if (mode === "off") {
      this.failCommand = null;
    } else if (mode === "alwaysOn") {
      this.failCommand = { data: command.data ?? {}, times: Infinity, skip: 0 };
    } else if (mode && mode.activationProbability !== undefined) {
      const probability = Number(toNumber(mode.activationProbability));
      if (!(probability >= 0 && probability <= 1)) {
        throw new ServerError(2, "activationProbability must be between 0 and 1");
      }
      this.failCommand = { data: command.data ?? {}, times: Infinity, skip: 0, probability, random: seeded(1) };
    } else if (mode && (mode.times !== undefined || mode.skip !== undefined)) {
      this.failCommand = {
        data: command.data ?? {},
        times: mode.times !== undefined ? toNumber(mode.times) : Infinity,
        skip: toNumber(mode.skip, 0),
      };
    } else {
      throw new ServerError(2, `unsupported fail point mode ${JSON.stringify(mode)}`);
    }
    return { count: 0 };
  }

  // trigger(commandName): the fail point's data when it fires for this command (consuming one
  // of its `times`, or one of its `skip`s first), else null.
  trigger(commandName) {
    const point = this.failCommand;
    if (!point || !(point.data.failCommands ?? []).includes(commandName)) return null;
    if (point.skip > 0) {
      point.skip -= 1;
      return null;
    }
    if (point.probability !== undefined && point.random() >= point.probability) return null;
    point.times -= 1;
    if (point.times <= 0) this.failCommand = null;
    return point.data;
  }
}

module.exports = { FailPoints };
