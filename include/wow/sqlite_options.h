// SqliteOptions: how a SQLite database file is opened (wow/sqlite.h). Apart from the backend so
// that a store set's options (wow/store_set.h) name it in every build, with SQLite or without.
//
// Thread-safety: a plain value.
#pragma once

#include <chrono>

namespace wow {

struct SqliteOptions {
  // How hard a commit waits for the disk (SQLite's PRAGMA synchronous, in WAL mode):
  //   kFull   every append is on disk when it returns: nothing acknowledged is lost, even when the
  //           machine loses power. The default. Syncs run in a thread of the database's own, one
  //           for all the commits made while the previous sync ran (docs/SQLITE.md).
  //   kNormal a commit survives a crash of the process, but the last commits before a power loss
  //           or an operating-system crash may be lost (the file stays consistent). Much faster.
  //   kOff    no syncing at all: a power loss may lose commits and, rarely, corrupt the file.
  //           For tests and throw-away data only.
  enum class Synchronous { kOff, kNormal, kFull };
  Synchronous synchronous = Synchronous::kFull;
  // How long a write waits for another process's lock on the file before it fails with
  // Error(kUnavailable). REQUIRES: >= 0.
  std::chrono::milliseconds busy_timeout{5000};
  // The most appends (streams) one transaction batches when threads append concurrently; an
  // AppendAll is never split, however many streams it holds. REQUIRES: >= 1.
  int max_group_commit = 256;
  // Opens the file read-only (SQLITE_OPEN_READONLY), for tools that only look: nothing is ever
  // written to it, so a file the process may only read opens, and a write-ahead log left by a
  // crashed writer stays as it is for the next writer to recover. Every write (an append, a
  // reservation, a timer, a lease, a checkpoint, Create) throws Error(kFailedPrecondition). A
  // file that needs a writer first is refused with Error(kFailedPrecondition): a missing file, one
  // without a Wow format record, one of format 3 or 4 (a writable open migrates it). SQLite needs
  // the file's -wal and -shm files to exist or be creatable by the process; when it creates them,
  // they stay after it closes (a read-only connection cannot fold the log into the file and delete
  // them; the next writer does).
  bool read_only = false;
};

}  // namespace wow
