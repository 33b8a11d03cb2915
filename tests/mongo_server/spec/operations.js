// The CRUD operations of MongoDB's spec tests, performed through the official Node.js driver.
// Both test formats name them alike; the legacy format's differences (bulk requests as {name,
// arguments}, options under `options`, returnDocument "After") are normalised here. Stateless.
"use strict";

function returnDocument(value) {
  return value === undefined ? undefined : String(value).toLowerCase();
}

// legacyRequest({name, arguments}): a bulkWrite request of the legacy format in the driver's shape.
function legacyRequest({ name, arguments: args }) {
  return { [name]: args };
}

function split(args, ...positional) {
  const rest = { ...args };
  const values = positional.map((name) => {
    const value = rest[name];
    delete rest[name];
    return value;
  });
  const { options, ...more } = rest;
  const merged = { ...more, ...options };
  if (merged.returnDocument !== undefined) merged.returnDocument = returnDocument(merged.returnDocument);
  return [...values, merged];
}

const COLLECTION_OPERATIONS = {
  aggregate: (c, a) => {
    const [pipeline, options] = split(a, "pipeline");
    return c.aggregate(pipeline, options).toArray();
  },
  find: (c, a) => {
    const [filter, options] = split(a, "filter");
    return c.find(filter ?? {}, options).toArray();
  },
  count: (c, a) => c.count(...split(a, "filter")),
  countDocuments: (c, a) => c.countDocuments(...split(a, "filter")),
  estimatedDocumentCount: (c, a) => c.estimatedDocumentCount(...split(a)),
  distinct: (c, a) => c.distinct(...split(a, "fieldName", "filter")),
  insertOne: (c, a) => c.insertOne(...split(a, "document")),
  insertMany: (c, a) => c.insertMany(...split(a, "documents")),
  updateOne: (c, a) => c.updateOne(...split(a, "filter", "update")),
  updateMany: (c, a) => c.updateMany(...split(a, "filter", "update")),
  replaceOne: (c, a) => c.replaceOne(...split(a, "filter", "replacement")),
  deleteOne: (c, a) => c.deleteOne(...split(a, "filter")),
  deleteMany: (c, a) => c.deleteMany(...split(a, "filter")),
  findOneAndUpdate: (c, a) => c.findOneAndUpdate(...split(a, "filter", "update")),
  findOneAndReplace: (c, a) => c.findOneAndReplace(...split(a, "filter", "replacement")),
  findOneAndDelete: (c, a) => c.findOneAndDelete(...split(a, "filter")),
  bulkWrite: (c, a) => {
    const [requests, options] = split(a, "requests");
    return c.bulkWrite(requests.map((r) => (r.name ? legacyRequest(r) : r)), options);
  },
};

const DATABASE_OPERATIONS = {
  createCollection: (d, a) => d.createCollection(...split(a, "collection")).then(() => undefined),
  dropCollection: async (d, a) => {
    try {
      await d.dropCollection(...split(a, "collection"));
    } catch (error) {
      // A driver ignores "ns not found" when dropping (the unified format's dropCollection).
      if (error.code !== 26) throw error;
    }
  },
  runCommand: (d, a) => d.command(a.command),
};

module.exports = { COLLECTION_OPERATIONS, DATABASE_OPERATIONS };
