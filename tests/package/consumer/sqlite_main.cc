// The SQLite stores on a database in a fresh temporary directory: exits non-zero when a check
// fails. The checks run twice: on a new file, then (the file reopened) that its data is still there.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <wow/command_processor.h>
#include <wow/sqlite.h>

#include "brand.h"

int main() {
  std::string pattern = (std::filesystem::temp_directory_path() / "wow-consumer-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    std::cerr << "mkdtemp failed\n";
    return 1;
  }
  const std::filesystem::path dir = pattern;
  const std::string file = (dir / "consumer.db").string();
  auto clock = wow::SystemClock::Instance();
  int failures = 0;
  {
    auto db = wow::OpenSqliteDatabase(file);
    std::shared_ptr<wow::EventLog> log = wow::NewSqliteEventLog(db, consumer::kContext, clock);
    std::shared_ptr<wow::ReservationStore> keys = wow::NewSqliteReservationStore(db, clock);
    failures += consumer::CheckBrands(log, keys, clock);
  }
  {
    auto db = wow::OpenSqliteDatabase(file);
    std::shared_ptr<wow::EventLog> log = wow::NewSqliteEventLog(db, consumer::kContext, clock);
    if (log->Open() != 4) {
      std::cerr << "FAILED: the reopened log has 4 partitions\n";
      ++failures;
    }
    wow::CommandProcessor processor(log, wow::NewSqliteReservationStore(db, clock), clock);
    processor.Register(consumer::BrandType());
    wow::LoadedAggregate b1 = processor.Load({std::string(consumer::kContext), "brand", "acme", "b-1"});
    if (b1.version != 1 || b1.As<consumer::Brand>().name != "contoso") {
      std::cerr << "FAILED: b-1 is in the reopened file\n";
      ++failures;
    }
  }
  std::filesystem::remove_all(dir);
  std::cout << (failures == 0 ? "consumer_sqlite: ok\n" : "consumer_sqlite: FAILED\n");
  return failures == 0 ? 0 : 1;
}
