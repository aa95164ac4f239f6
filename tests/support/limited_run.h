// Runs a command in a child process under a memory and time budget and
// reports how it ended and its peak resident memory, so a test of hostile
// input fails (instead of taking the test runner down) when the input makes
// gpucap allocate gigabytes, crash or run away.
#ifndef GPUCAP_TESTS_SUPPORT_LIMITED_RUN_H_
#define GPUCAP_TESTS_SUPPORT_LIMITED_RUN_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace gpucap::testing {

// Sanitizers reserve terabytes of address space: an address-space limit
// cannot be set under them, only peak RSS measured.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kCanLimitAddressSpace = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
inline constexpr bool kCanLimitAddressSpace = false;
#else
inline constexpr bool kCanLimitAddressSpace = true;
#endif
#else
inline constexpr bool kCanLimitAddressSpace = true;
#endif

struct Limits {
  uint64_t memory_bytes = 0;  // address space (0: none)
  int seconds = 60;           // wall clock, then SIGKILL
  uint64_t file_bytes = 0;    // RLIMIT_FSIZE (0: none): a full disk
};

struct LimitedRun {
  int code = -1;          // exit status, or -1
  int signal = 0;         // the signal that ended it, or 0
  bool timed_out = false;
  uint64_t peak_rss_bytes = 0;
  std::string output;     // stdout and stderr
  bool ok() const { return code == 0; }
  // Ended by itself with an exit status (a refusal or success), not by a signal.
  bool exited() const { return code >= 0 && !timed_out; }
  std::string Describe() const {
    std::string s = timed_out ? "timed out" : signal ? "killed by signal " + std::to_string(signal)
                                                     : "exit " + std::to_string(code);
    return s + ", peak RSS " + std::to_string(peak_rss_bytes >> 20) + " MB; output:\n" + output;
  }
};

// Runs `child` (in a forked child; its return value is the exit status) under
// `limits`. `started` runs in the parent with the child's pid once it runs.
inline LimitedRun RunLimitedFn(const std::function<int()>& child, const Limits& limits,
                               const std::function<void(pid_t)>& started = {}) {
  int pipefd[2];
  LimitedRun r;
  if (pipe2(pipefd, O_CLOEXEC) != 0) return r;
  fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], 1);
    dup2(pipefd[1], 2);
    if (limits.memory_bytes != 0 && kCanLimitAddressSpace) {
      rlimit rl{limits.memory_bytes, limits.memory_bytes};
      setrlimit(RLIMIT_AS, &rl);
    }
    if (limits.file_bytes != 0) {
      signal(SIGXFSZ, SIG_IGN);  // writes fail with EFBIG, as on a full disk
      rlimit rl{limits.file_bytes, limits.file_bytes};
      setrlimit(RLIMIT_FSIZE, &rl);
    }
    _exit(child());
  }
  close(pipefd[1]);
  if (started) started(pid);
  fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limits.seconds);
  int status = 0;
  rusage ru{};
  for (;;) {
    char buf[4096];
    ssize_t n;
    while ((n = read(pipefd[0], buf, sizeof(buf))) > 0) {
      if (r.output.size() < (1 << 20)) r.output.append(buf, static_cast<size_t>(n));
    }
    pid_t w = wait4(pid, &status, WNOHANG, &ru);
    if (w == pid) break;
    if (std::chrono::steady_clock::now() > deadline && !r.timed_out) {
      r.timed_out = true;
      kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof(buf))) > 0) r.output.append(buf, static_cast<size_t>(n));
  close(pipefd[0]);
  r.peak_rss_bytes = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// The build tree's gpucap binary with `args`, under `limits`.
inline LimitedRun RunGpucapLimited(const std::vector<std::string>& args, const Limits& limits,
                                   const std::function<void(pid_t)>& started = {}) {
  std::string binary = std::string(GPUCAP_BINARY_DIR) + "/tools/gpucap";
  return RunLimitedFn(
      [&] {
        std::vector<char*> argv;
        argv.push_back(binary.data());
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(binary.c_str(), argv.data());
        return 127;
      },
      limits, started);
}

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_SUPPORT_LIMITED_RUN_H_
