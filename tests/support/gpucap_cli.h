// Runs the build tree's gpucap binary as a user would, for the tests of the
// CLI: exit status and everything it printed.
#ifndef GPUCAP_TESTS_SUPPORT_GPUCAP_CLI_H_
#define GPUCAP_TESTS_SUPPORT_GPUCAP_CLI_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace gpucap::testing {

struct CliRun {
  int code;            // exit status; -1 when killed by a signal
  std::string output;  // stdout and stderr
};

// `gpucap ARGS` through the shell; GPUCAP_BINARY_DIR is the build tree.
inline CliRun Gpucap(const std::string& args) {
  std::string command = std::string(GPUCAP_BINARY_DIR) + "/tools/gpucap " + args + " 2>&1";
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_SUPPORT_GPUCAP_CLI_H_
