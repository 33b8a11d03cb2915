// Cursors of the test server (a test double): a find's or an aggregate's results are computed
// whole when the command runs (a snapshot) and handed out in batches by getMore, until
// exhausted or killed. Not thread-safe: one Node.js event loop owns them.
"use strict";

const BSON = require("bson");
const { Long } = require("bson");
const { ServerError } = require("./errors");

const DEFAULT_FIRST_BATCH = 101;
const MAX_BATCH_BYTES = 16 * 1024 * 1024;

class Cursors {
  constructor() {
    this.open = new Map(); // id as a string -> {id, namespace, docs, next}
    this.nextId = 1000 + Math.floor(Math.random() * 1000000);
  }

  // take(cursor, batchSize): the next batch (at most batchSize documents, all remaining when 0
  // or absent, and at most about 16 MB), closing the cursor when it is exhausted.
  take(cursor, batchSize) {
    const batch = [];
    let bytes = 0;
    while (cursor.next < cursor.docs.length && (!batchSize || batch.length < batchSize)) {
      const doc = cursor.docs[cursor.next];
      bytes += BSON.calculateObjectSize(doc);
      if (batch.length > 0 && bytes > MAX_BATCH_BYTES) break;
      batch.push(doc);
      cursor.next += 1;
    }
    if (cursor.next >= cursor.docs.length) this.open.delete(cursor.id.toString());
    return batch;
  }

  // start(namespace, docs, batchSize, singleBatch): the `cursor` field of a find or aggregate
  // reply: the first batch (batchSize documents, default 101; none for 0) and the id of the rest
  // (0 when none is left or singleBatch).
  start(namespace, docs, batchSize, singleBatch = false) {
    const cursor = { id: Long.fromNumber(this.nextId++), namespace, docs, next: 0 };
    this.open.set(cursor.id.toString(), cursor);
    const firstBatch = batchSize === 0 ? [] : this.take(cursor, batchSize ?? DEFAULT_FIRST_BATCH);
    if (singleBatch) this.open.delete(cursor.id.toString());
    const alive = this.open.has(cursor.id.toString());
    return { firstBatch, id: alive ? cursor.id : Long.ZERO, ns: namespace };
  }

  // more(id, namespace, batchSize): the `cursor` field of a getMore reply; throws 43 for an
  // unknown, exhausted or killed cursor, or one of another namespace.
  more(id, namespace, batchSize) {
    const cursor = this.open.get(id.toString());
    if (!cursor || cursor.namespace !== namespace) throw new ServerError(43, `cursor id ${id} not found`);
    const nextBatch = this.take(cursor, batchSize);
    const alive = this.open.has(cursor.id.toString());
    return { nextBatch, id: alive ? cursor.id : Long.ZERO, ns: namespace };
  }

  // kill(ids): the killCursors reply's lists for these ids.
  kill(ids) {
    const killed = [];
    const notFound = [];
    for (const id of ids) (this.open.delete(id.toString()) ? killed : notFound).push(id);
    return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [] };
  }
}

module.exports = { Cursors };
