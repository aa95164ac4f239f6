// A probe program in a process of its own, recording through the real
// libgpucap_recorder.so loaded as CUDA loads an injection (the fake driver
// stub on its library path), as the flight recorder's end-to-end tests need:
// its dumps come from that process's own recorder, signal handlers and exit.
//
// The test target defines GPUCAP_ASAN_RUNTIME, GPUCAP_RECORDER_LIB and
// GPUCAP_DRIVER_STUB_DIR (tests/recorder/CMakeLists.txt).
#ifndef GPUCAP_TESTS_RECORDER_RECORDER_CHILD_H_
#define GPUCAP_TESTS_RECORDER_RECORDER_CHILD_H_

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

namespace gpucap::recorder::testing_child {

struct ChildSetup {
  std::string output;                                      // GPUCAP_OUTPUT
  std::vector<std::pair<std::string, std::string>> env;    // more variables, set after the common ones
  std::vector<std::string> unset;                          // variables the child must not inherit
  std::vector<std::string> args;                           // after the probe's first argument, the recorder's path
  void (*before_exec)() = nullptr;                         // in the child, last thing before exec
};

// Runs `probe` under the recorder and waits for it: its wait status.
inline int RunUnderRecorder(const char* probe, const ChildSetup& setup) {
  pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    if (*GPUCAP_ASAN_RUNTIME) setenv("LD_PRELOAD", GPUCAP_ASAN_RUNTIME, 1);
    setenv("GPUCAP_OUTPUT", setup.output.c_str(), 1);
    setenv("GPUCAP_QUIET", "1", 1);
    setenv("CUDA_INJECTION64_PATH", GPUCAP_RECORDER_LIB, 1);
    setenv("LD_LIBRARY_PATH", GPUCAP_DRIVER_STUB_DIR, 1);
    for (const auto& [name, value] : setup.env) setenv(name.c_str(), value.c_str(), 1);
    for (const std::string& name : setup.unset) unsetenv(name.c_str());
    if (setup.before_exec) setup.before_exec();
    std::vector<const char*> argv = {probe, GPUCAP_RECORDER_LIB};
    for (const std::string& a : setup.args) argv.push_back(a.c_str());
    argv.push_back(nullptr);
    execv(probe, const_cast<char**>(argv.data()));
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

}  // namespace gpucap::recorder::testing_child

#endif  // GPUCAP_TESTS_RECORDER_RECORDER_CHILD_H_
