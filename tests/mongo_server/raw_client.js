// A raw wire-protocol client for the self-tests of the MongoDB test server (a test double): sends
// OP_MSG (optionally with document sequences or moreToCome) and OP_QUERY commands exactly as
// given, with no driver in between (no implicit sessions, retries or checks). One outstanding
// request at a time per connection. Also withServer, which runs a test body against a fresh
// server.
"use strict";

const net = require("node:net");
const wire = require("./wire");
const { startServer } = require("./server");

class RawClient {
  // RawClient.connect(port): a connected client.
  static connect(port) {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, "127.0.0.1", () => resolve(new RawClient(socket)));
      socket.once("error", reject);
    });
  }

  constructor(socket) {
    this.socket = socket;
    this.reader = new wire.MessageReader(64 * 1024 * 1024);
    this.nextRequestId = 1;
    this.waiting = null; // {resolve, reject}
    this.closed = false;
    socket.on("data", (chunk) => {
      for (const message of this.reader.push(chunk)) this.settle((w) => w.resolve(wire.decodeMessage(message)));
    });
    socket.on("close", () => {
      this.closed = true;
      this.settle((w) => w.reject(new Error("connection closed")));
    });
    socket.on("error", () => {});
  }

  settle(action) {
    const waiting = this.waiting;
    this.waiting = null;
    if (waiting) action(waiting);
  }

  send(buffer) {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(buffer);
    });
  }

  // command(db, doc, sequences): the reply document of an OP_MSG command (each [identifier,
  // documents] of `sequences` sent as a kind 1 section); rejects when the server closes or the
  // reply answers another request.
  async command(db, doc, sequences = []) {
    const requestId = this.nextRequestId++;
    const reply = await this.send(wire.encodeMsg(requestId, 0, { ...doc, $db: db }, 0, sequences));
    if (reply.responseTo !== requestId) throw new Error(`reply to request ${reply.responseTo}, expected ${requestId}`);
    return reply.command;
  }

  // unacknowledged(db, doc): sends an OP_MSG with moreToCome (the server must not answer).
  unacknowledged(db, doc) {
    this.socket.write(wire.encodeMsg(this.nextRequestId++, 0, { ...doc, $db: db }, wire.FLAG_MORE_TO_COME));
  }

  // legacyCommand(db, doc): the OP_REPLY document of an OP_QUERY command on db.$cmd.
  async legacyCommand(db, doc) {
    const reply = await this.send(wire.encodeQuery(this.nextRequestId++, `${db}.$cmd`, doc));
    return { opCode: reply.opCode, document: reply.documents[0] };
  }

  close() {
    this.socket.destroy();
  }
}

// withServer(body, options): starts a test server in this process (startServer options), runs
// `body(client, server)` with a RawClient connected to it, then stops both.
async function withServer(body, options = {}) {
  const server = await startServer({ port: 0, ...options });
  const client = await RawClient.connect(server.port);
  try {
    await body(client, server);
  } finally {
    client.close();
    await server.close();
  }
}

module.exports = { RawClient, withServer };
