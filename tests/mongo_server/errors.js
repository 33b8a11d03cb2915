// Server errors of the test server (a test double): an exception a command handler throws to
// answer `ok: 0` with MongoDB's code and code name.
"use strict";

const CODE_NAMES = {
  2: "BadValue",
  8: "UnknownError",
  9: "FailedToParse",
  14: "TypeMismatch",
  20: "IllegalOperation",
  26: "NamespaceNotFound",
  43: "CursorNotFound",
  48: "NamespaceExists",
  59: "CommandNotFound",
  66: "ImmutableField",
  67: "CannotCreateIndex",
  72: "InvalidOptions",
  85: "IndexOptionsConflict",
  86: "IndexKeySpecsConflict",
  100: "UnsatisfiableWriteConcern",
  166: "CommandNotSupportedOnView",
  225: "TransactionTooOld",
  11000: "DuplicateKey",
};

// Codes after which a retryable write may be retried: the server labels such an error
// RetryableWriteError (the retryable writes specification's list).
const RETRYABLE_WRITE_CODES = new Set([6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436, 63, 150, 13388, 234, 133]);

class ServerError extends Error {
  // code: MongoDB's error code; extra: more fields of the error reply (keyPattern, keyValue, ...).
  constructor(code, message, extra = {}) {
    super(message);
    this.code = code;
    this.extra = extra;
  }
}

// codeName(code): MongoDB's name of an error code ("UnknownError" for codes not listed here).
function codeName(code) {
  return CODE_NAMES[code] ?? "UnknownError";
}

// errorCode(error): a ServerError's code; 2 (BadValue) for mingo's rejection of a query, update
// or pipeline; 8 (UnknownError) for anything else.
function errorCode(error) {
  if (error instanceof ServerError) return error.code;
  return error?.constructor?.name === "MingoError" ? 2 : 8;
}

// errorReply(error): the `ok: 0` reply for any exception, with its message.
function errorReply(error) {
  const code = errorCode(error);
  return {
    ok: 0,
    errmsg: String(error?.message ?? error),
    code,
    codeName: codeName(code),
    ...(error instanceof ServerError ? error.extra : {}),
  };
}

module.exports = { RETRYABLE_WRITE_CODES, ServerError, codeName, errorReply };
