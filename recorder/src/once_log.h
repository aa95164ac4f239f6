// The recorder's lines on stderr that say something is off (a CUPTI call
// refused, PM sampling unavailable): each distinct line once per process,
// so that a failure met on every context or every pause does not flood the
// program's own output. Any thread; never called from a signal handler.
#ifndef GPUCAP_RECORDER_ONCE_LOG_H_
#define GPUCAP_RECORDER_ONCE_LOG_H_

#include <mutex>
#include <string>
#include <unordered_set>

namespace gpucap::recorder {

class OnceLog {
 public:
  // Writes `line` and a newline to stderr unless the same line was written before.
  void Log(const std::string& line);

 private:
  std::mutex mu_;
  std::unordered_set<std::string> logged_;
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_ONCE_LOG_H_
