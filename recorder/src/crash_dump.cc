#include "crash_dump.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <initializer_list>

#include "config.h"

namespace gpucap::recorder {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr size_t kPathMax = 4096;
// How long a crashing thread waits for the writer to end a snapshot's
// publication (microseconds of work; longer only if the writer is stopped).
constexpr int kWaitMs = 2000;

const char* SignalName(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    default: return "signal";
  }
}

// Set once at install, read by the handler only.
struct CrashState {
  std::shared_ptr<format::RingCrashSlot> slot;
  pid_t pid = 0;
  bool quiet = false;
  char prefix[kPathMax] = {};  // "<out>.ring-"
  char suffix[256] = {};       // ".gpucap"
  struct sigaction previous[NSIG] = {};
  char path[kPathMax + 256 + 24] = {};  // the handler's, made once
};

std::atomic<CrashState*> g_state{nullptr};
std::atomic<bool> g_dumped{false};

// --- async-signal-safe helpers ---

size_t Append(char* out, size_t at, size_t cap, const char* s) {
  while (*s && at + 1 < cap) out[at++] = *s++;
  out[at] = '\0';
  return at;
}

size_t AppendNumber(char* out, size_t at, size_t cap, uint64_t n) {
  char digits[24];
  int d = 0;
  do {
    digits[d++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n);
  while (d && at + 1 < cap) out[at++] = digits[--d];
  out[at] = '\0';
  return at;
}

// One line on stderr, written piece by piece (no buffer on the stack).
void Say(std::initializer_list<const char*> pieces) {
  for (const char* p : pieces) {
    ssize_t ignored = write(STDERR_FILENO, p, std::strlen(p));
    (void)ignored;
  }
  ssize_t ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
}

int64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// Creates the next free dump name; its fd, or -1 (errno kept).
int CreateDump(CrashState* st) {
  for (uint64_t n = 1; n <= 100000; ++n) {
    size_t at = Append(st->path, 0, sizeof(st->path), st->prefix);
    at = AppendNumber(st->path, at, sizeof(st->path), n);
    Append(st->path, at, sizeof(st->path), st->suffix);
    int fd = open(st->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

void DumpRing(CrashState* st, int sig) {
  if (getpid() != st->pid) return;  // a forked child: the ring is the parent's
  char trigger[32];
  Append(trigger, Append(trigger, 0, sizeof(trigger), "crash: "), sizeof(trigger), SignalName(sig));
  format::RingSnapshot* snapshot = st->slot->BeginRead(static_cast<int>(syscall(SYS_gettid)), kWaitMs);
  const char* kWho = "gpucap: flight recorder: ";
  if (!snapshot) {
    Say({kWho, trigger, ": no dump (no ring: nothing recorded yet or the recording closed; or the writer was in the way)"});
  } else if (int fd = CreateDump(st); fd < 0) {
    Say({kWho, trigger, ": no dump (cannot create a file next to the output)"});
  } else {
    bool ok = snapshot->WriteTo(fd, trigger, RealtimeNs());
    ok = close(fd) == 0 && ok;
    if (!ok) {
      Say({kWho, trigger, ": the dump was cut short (a write failed): ", st->path});
    } else if (!st->quiet) {
      Say({kWho, trigger, ": wrote ", st->path});
    }
  }
  st->slot->EndRead();
}

// What would have happened without gpucap.
void HandOn(CrashState* st, int sig, siginfo_t* info, void* context) {
  const struct sigaction& old = st->previous[sig];
  bool siginfo = (old.sa_flags & SA_SIGINFO) != 0;
  void (*plain)(int) = old.sa_handler;
  if (plain == SIG_DFL || plain == SIG_IGN || (siginfo && old.sa_sigaction == nullptr)) {
    // The program's disposition back; while this handler runs the signal
    // is blocked, so the raised one is delivered as the handler returns, to
    // the default action. An ignored fault repeats and the kernel forces it.
    sigaction(sig, &old, nullptr);
    if (plain == SIG_DFL) raise(sig);
    return;
  }
  if (old.sa_flags & SA_RESETHAND) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
  }
  sigset_t saved;
  pthread_sigmask(SIG_BLOCK, &old.sa_mask, &saved);
  if (siginfo) {
    old.sa_sigaction(sig, info, context);
  } else {
    plain(sig);
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
}

void OnCrash(int sig, siginfo_t* info, void* context) {
  int saved_errno = errno;
  CrashState* st = g_state.load(std::memory_order_acquire);
  if (!st) return;
  if (!g_dumped.exchange(true)) DumpRing(st, sig);
  errno = saved_errno;
  HandOn(st, sig, info, context);
}

}  // namespace

bool InstallCrashDump(std::shared_ptr<format::RingCrashSlot> slot, const std::string& output_path, bool quiet) {
  if (!slot || g_state.load()) return false;
  auto [before, after] = RingDumpPathParts(output_path);
  if (before.size() >= kPathMax || after.size() >= sizeof(CrashState::suffix)) return false;
  auto* st = new CrashState;  // kept for the life of the process: a handler may run at any time
  st->slot = std::move(slot);
  st->pid = getpid();
  st->quiet = quiet;
  std::memcpy(st->prefix, before.c_str(), before.size() + 1);
  std::memcpy(st->suffix, after.c_str(), after.size() + 1);
  for (int sig : kSignals) sigaction(sig, nullptr, &st->previous[sig]);
  g_state.store(st, std::memory_order_release);
  for (int sig : kSignals) {
    struct sigaction sa {};
    sa.sa_sigaction = OnCrash;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(sig, &sa, nullptr);
  }
  return true;
}

}  // namespace gpucap::recorder
