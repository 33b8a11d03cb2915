// MongoDB's wire protocol as the test server (a test double) speaks it: OP_QUERY (the legacy
// handshake), its OP_REPLY, and OP_MSG with body (kind 0) and document sequence (kind 1)
// sections, the moreToCome flag and an optional checksum (skipped, not verified). No
// compression. Pure functions over Buffers: shared by the server and the self-tests' raw client.
"use strict";

const BSON = require("bson");

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;
const FLAG_CHECKSUM_PRESENT = 1;
const FLAG_MORE_TO_COME = 2;
const DECODE_OPTIONS = { promoteLongs: false };

// MessageReader: splits a byte stream into whole messages. push(chunk) returns the complete
// messages (each a Buffer including its header) received so far. Not thread-safe (one per
// connection).
class MessageReader {
  constructor(maxMessageSize) {
    this.maxMessageSize = maxMessageSize;
    this.buffered = Buffer.alloc(0);
  }

  push(chunk) {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const messages = [];
    while (this.buffered.length >= 4) {
      const length = this.buffered.readInt32LE(0);
      if (length < 16 || length > this.maxMessageSize) throw new Error(`invalid message length ${length}`);
      if (this.buffered.length < length) break;
      messages.push(this.buffered.subarray(0, length));
      this.buffered = this.buffered.subarray(length);
    }
    return messages;
  }
}

function readCString(buffer, offset) {
  const end = buffer.indexOf(0, offset);
  if (end < 0) throw new Error("unterminated cstring");
  return { value: buffer.toString("utf8", offset, end), next: end + 1 };
}

// A BSON date outside JavaScript's Date range (±8.64e15 ms), such as the Long.MAX_VALUE that
// marks a key held forever: js-bson decodes it as an Invalid Date, which it encodes as 0 (1970).
// A WideDate keeps the milliseconds instead; getTime() gives them as a number, which js-bson
// encodes back exactly for ±2^63 - 1 (Long.fromNumber clamps to them) and within 2^53, and which
// mingo compares and sorts by. It prints as the number of milliseconds.
class WideDate extends Date {
  constructor(millis) {
    super(NaN);
    this.millis = millis;
  }
  getTime() {
    return this.millis;
  }
  valueOf() {
    return this.millis;
  }
  toISOString() {
    return String(this.millis);
  }
}

const MAX_DATE_MILLIS = 8.64e15;

// The paths (arrays of keys) and milliseconds of the dates of the BSON document at `buffer`
// [start, end) that js-bson cannot decode; code with scope is not looked into.
function wideDates(buffer, start, path, found) {
  const end = start + buffer.readInt32LE(start);
  let at = start + 4;
  while (at < end - 1) {
    const type = buffer[at];
    const nameEnd = buffer.indexOf(0, at + 1);
    const key = buffer.toString("utf8", at + 1, nameEnd);
    at = nameEnd + 1;
    switch (type) {
      case 0x01: case 0x11: case 0x12: at += 8; break;
      case 0x09: {
        const millis = buffer.readBigInt64LE(at);
        if (millis > BigInt(MAX_DATE_MILLIS) || millis < -BigInt(MAX_DATE_MILLIS)) {
          found.push({ path: [...path, key], millis: Number(millis) });
        }
        at += 8;
        break;
      }
      case 0x02: case 0x0d: case 0x0e: at += 4 + buffer.readInt32LE(at); break;
      case 0x03: case 0x04:
        wideDates(buffer, at, [...path, key], found);
        at += buffer.readInt32LE(at);
        break;
      case 0x05: at += 5 + buffer.readInt32LE(at); break;
      case 0x06: case 0x0a: case 0x7f: case 0xff: break;
      case 0x07: at += 12; break;
      case 0x08: at += 1; break;
      case 0x0b: at = buffer.indexOf(0, buffer.indexOf(0, at) + 1) + 1; break;
      case 0x0c: at += 4 + buffer.readInt32LE(at) + 12; break;
      case 0x0f: at += buffer.readInt32LE(at); break;
      case 0x10: at += 4; break;
      case 0x13: at += 16; break;
      default: return found;  // js-bson refuses the document anyway
    }
  }
  return found;
}

function readDocument(buffer, offset) {
  const size = buffer.readInt32LE(offset);
  const value = BSON.deserialize(buffer.subarray(offset, offset + size), DECODE_OPTIONS);
  for (const { path, millis } of wideDates(buffer, offset, [], [])) {
    let parent = value;
    for (const key of path.slice(0, -1)) parent = parent[key];
    parent[path[path.length - 1]] = new WideDate(millis);
  }
  return { value, next: offset + size };
}

// decodeMessage(buffer): one message as {requestId, responseTo, opCode, ...}:
// - OP_QUERY: {collection, command} (the query document, `$query`-wrapped or not);
// - OP_MSG: {flags, moreToCome, command} where each kind 1 section's documents are added to
//   the command under the section's identifier;
// - OP_REPLY: {documents}.
// Throws on any other opcode or a malformed message.
function decodeMessage(buffer) {
  const header = {
    requestId: buffer.readInt32LE(4),
    responseTo: buffer.readInt32LE(8),
    opCode: buffer.readInt32LE(12),
  };
  if (header.opCode === OP_QUERY) {
    const collection = readCString(buffer, 20);
    let { value: command } = readDocument(buffer, collection.next + 8);
    if (command.$query) command = command.$query;
    return { ...header, collection: collection.value, command };
  }
  if (header.opCode === OP_REPLY) {
    const count = buffer.readInt32LE(32);
    const documents = [];
    let offset = 36;
    for (let i = 0; i < count; i++) {
      const doc = readDocument(buffer, offset);
      documents.push(doc.value);
      offset = doc.next;
    }
    return { ...header, documents };
  }
  if (header.opCode === OP_MSG) {
    const flags = buffer.readUInt32LE(16);
    const end = buffer.length - (flags & FLAG_CHECKSUM_PRESENT ? 4 : 0);
    let command = null;
    const sequences = [];
    let offset = 20;
    while (offset < end) {
      const kind = buffer.readUInt8(offset);
      offset += 1;
      if (kind === 0) {
        const doc = readDocument(buffer, offset);
        command = doc.value;
        offset = doc.next;
      } else if (kind === 1) {
        const sectionEnd = offset + buffer.readInt32LE(offset);
        const identifier = readCString(buffer, offset + 4);
        const documents = [];
        for (let next = identifier.next; next < sectionEnd; ) {
          const doc = readDocument(buffer, next);
          documents.push(doc.value);
          next = doc.next;
        }
        sequences.push([identifier.value, documents]);
        offset = sectionEnd;
      } else {
        throw new Error(`unknown OP_MSG section kind ${kind}`);
      }
    }
    if (command === null) throw new Error("OP_MSG without a body section");
    for (const [identifier, documents] of sequences) command[identifier] = documents;
    return { ...header, flags, moreToCome: (flags & FLAG_MORE_TO_COME) !== 0, command };
  }
  throw new Error(`unsupported opcode ${header.opCode}`);
}

function header(length, requestId, responseTo, opCode) {
  const buffer = Buffer.alloc(16);
  buffer.writeInt32LE(length, 0);
  buffer.writeInt32LE(requestId, 4);
  buffer.writeInt32LE(responseTo, 8);
  buffer.writeInt32LE(opCode, 12);
  return buffer;
}

// encodeMsg(requestId, responseTo, document, flags, sequences): an OP_MSG with the document as
// its body and each [identifier, documents] of `sequences` as a kind 1 section.
function encodeMsg(requestId, responseTo, document, flags = 0, sequences = []) {
  const parts = [Buffer.alloc(4), Buffer.from([0]), BSON.serialize(document, { ignoreUndefined: true })];
  parts[0].writeUInt32LE(flags, 0);
  for (const [identifier, documents] of sequences) {
    const body = Buffer.concat([Buffer.from(`${identifier}\0`), ...documents.map((d) => BSON.serialize(d))]);
    const size = Buffer.alloc(4);
    size.writeInt32LE(body.length + 4, 0);
    parts.push(Buffer.from([1]), size, body);
  }
  const payload = Buffer.concat(parts);
  return Buffer.concat([header(16 + payload.length, requestId, responseTo, OP_MSG), payload]);
}

// encodeReply(requestId, responseTo, document): an OP_REPLY carrying one document.
function encodeReply(requestId, responseTo, document) {
  const fields = Buffer.alloc(20);
  fields.writeInt32LE(0, 0); // responseFlags
  fields.writeBigInt64LE(0n, 4); // cursorID
  fields.writeInt32LE(0, 12); // startingFrom
  fields.writeInt32LE(1, 16); // numberReturned
  const body = BSON.serialize(document, { ignoreUndefined: true });
  return Buffer.concat([header(36 + body.length, requestId, responseTo, OP_REPLY), fields, body]);
}

// encodeQuery(requestId, collection, document): an OP_QUERY of one command (numberToReturn -1).
function encodeQuery(requestId, collection, document) {
  const name = Buffer.from(`${collection}\0`);
  const fields = Buffer.alloc(8);
  fields.writeInt32LE(0, 0); // numberToSkip
  fields.writeInt32LE(-1, 4); // numberToReturn
  const flags = Buffer.alloc(4);
  const body = BSON.serialize(document);
  const length = 16 + 4 + name.length + 8 + body.length;
  return Buffer.concat([header(length, requestId, 0, OP_QUERY), flags, name, fields, body]);
}

module.exports = {
  FLAG_MORE_TO_COME,
  MessageReader,
  OP_QUERY,
  OP_REPLY,
  WideDate,
  decodeMessage,
  encodeMsg,
  encodeQuery,
  encodeReply,
};
