#include "once_log.h"

#include <cstdio>

namespace gpucap::recorder {

void OnceLog::Log(const std::string& line) {
  std::lock_guard<std::mutex> lock(mu_);
  if (logged_.insert(line).second) fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace gpucap::recorder
