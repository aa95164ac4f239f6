#include "trigger_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gpucap::recorder {

bool TriggerFile::Present() const {
  struct stat st;
  return !path_.empty() && stat(path_.c_str(), &st) == 0;
}

std::string TriggerFile::Retire() const {
  std::string done = path_ + ".done";
  if (std::rename(path_.c_str(), done.c_str()) == 0) return "renamed to " + done;
  std::string why = std::strerror(errno);
  if (unlink(path_.c_str()) == 0) return "removed (rename failed: " + why + ")";
  return "left in place: " + why + " (" + std::strerror(errno) + ")";
}

}  // namespace gpucap::recorder
