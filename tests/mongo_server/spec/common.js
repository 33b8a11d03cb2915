// Helpers shared by the two spec test formats' runners. Stateless.
"use strict";

// compareVersions(a, b): <0, 0 or >0 as version string a ("4.2.99") is below, equal to or above b.
function compareVersions(a, b) {
  const pa = String(a).split(".").map(Number);
  const pb = String(b).split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

// outsideVersions({minServerVersion, maxServerVersion}, serverVersion): a skip reason when the
// server's version is outside the range, else null.
function outsideVersions(requirement, serverVersion) {
  if (requirement.minServerVersion && compareVersions(serverVersion, requirement.minServerVersion) < 0) {
    return `needs server ${requirement.minServerVersion}+; the test server reports ${serverVersion}`;
  }
  if (requirement.maxServerVersion && compareVersions(serverVersion, requirement.maxServerVersion) > 0) {
    return `for servers up to ${requirement.maxServerVersion}; the test server reports ${serverVersion}`;
  }
  return null;
}

// readCollection(db, name): the collection's documents in _id order.
function readCollection(db, name) {
  return db.collection(name).find({}, { sort: { _id: 1 } }).toArray();
}

module.exports = { outsideVersions, readCollection };
