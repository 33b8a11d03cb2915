#include "store/sqlite/wal_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

namespace wow::sqlite {

WalFile::~WalFile() {
  if (fd >= 0) ::close(fd);
}

int OpenWalToSync(const std::string& wal_path, bool missing_ok, std::string* failed) {
  failed->clear();
  const std::filesystem::path wal = wal_path;
  const int fd = ::open(wal.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int saved = errno;
    if (missing_ok && saved == ENOENT) return -1;
    *failed = "opening the write-ahead log " + wal.string() + " to sync it";
    errno = saved;
    return -1;
  }
  const std::string directory = wal.parent_path().empty() ? "." : wal.parent_path().string();
  const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const int synced = dir < 0 ? -1 : ::fsync(dir);
  const int saved = errno;
  if (dir >= 0) ::close(dir);
  if (synced != 0) {
    ::close(fd);
    *failed = "syncing the directory " + directory;
    errno = saved;
    return -1;
  }
  return fd;
}

int DataSync(int fd) {
  int rc;
  do {
    rc = ::fdatasync(fd);
  } while (rc != 0 && errno == EINTR);
  return rc;
}

}  // namespace wow::sqlite
