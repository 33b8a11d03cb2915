// The store sets a restart finds again, by the names the runtime suites give them: "sqlite" (a
// file) and "mongo" (a database of the MongoDB test server, a test double), as this build has them.
#pragma once

#include <string>
#include <vector>

namespace wow::testing_support {

inline std::vector<std::string> DurableBackends() {
  std::vector<std::string> backends;
#ifdef WOW_HAVE_SQLITE
  backends.push_back("sqlite");
#endif
#ifdef WOW_HAVE_MONGO
  backends.push_back("mongo");
#endif
  return backends;
}

}  // namespace wow::testing_support
