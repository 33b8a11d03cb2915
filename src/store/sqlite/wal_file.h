// WalFile (private): the write-ahead log's file, opened to sync it. The syncer (wal_syncer.h) and
// the readers' syncs (reader_sync.h) each open a descriptor of their own.
//
// Thread-safety: a WalFile needs external synchronisation (each owner syncs one thread at a
// time); the functions are safe on any thread.
#pragma once

#include <string>

namespace wow::sqlite {

// A descriptor of the write-ahead log, closed when destroyed; -1 until opened.
struct WalFile {
  WalFile() = default;
  ~WalFile();
  WalFile(const WalFile&) = delete;
  WalFile& operator=(const WalFile&) = delete;

  int fd = -1;
};

// Opens the write-ahead log at `wal_path` to sync it, and syncs its directory, for the log may be
// new and its directory entry must be on disk too. Returns the descriptor. Returns -1 with
// `*failed` empty when the log does not exist and `missing_ok`; returns -1 with errno set and
// `*failed` naming the step that failed ("opening the write-ahead log ... to sync it", "syncing
// the directory ...") on every other failure.
int OpenWalToSync(const std::string& wal_path, bool missing_ok, std::string* failed);

// fdatasync of `fd`, retried when interrupted. Returns 0, or -1 with errno set.
int DataSync(int fd);

}  // namespace wow::sqlite
