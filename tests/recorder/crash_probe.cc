// Run by crash_test under GPUCAP_RING_MB: loads the recorder library as NVTX
// would, records a range, asks for a dump and waits until it is written
// (then the range is in the ring and in the crash handler's snapshot), and
// crashes the way argv[2] says:
//   segv (a null store), abort, bus and fpe (raised), ill (a trap
//   instruction); handler-before and handler-after: a null store with a
//   SIGSEGV handler of the program's own, installed before the recorder
//   starts (plain, as most programs do) or after it (one that hands on to
//   the handler it replaced, as Python's faulthandler does).
// The program's handler writes argv[4] (the marker): "dump present" or "no
// dump", whether argv[5] (where the crash dump will be) exists when it runs.
//   crash_probe <recorder lib> <mode> <barrier dump> [<marker> <crash dump>]
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "gpucap/gpucap.h"
#include "recorder_as_nvtx.h"

namespace {

const char* g_marker = nullptr;
const char* g_crash_dump = nullptr;
struct sigaction g_replaced {};

// Async-signal-safe: open, write, close, access.
void WriteMarker() {
  const char* what = access(g_crash_dump, F_OK) == 0 ? "dump present" : "no dump";
  int fd = open(g_marker, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  ssize_t ignored = write(fd, what, strlen(what));
  (void)ignored;
  close(fd);
}

// The program's own handler, installed before the recorder: marks, then
// dies of the signal (the store repeats on return).
void OwnHandler(int) {
  WriteMarker();
  signal(SIGSEGV, SIG_DFL);
}

// A handler installed after the recorder that hands on to the one it
// replaced, as faulthandler does.
void ChainingHandler(int sig) {
  WriteMarker();
  sigaction(sig, &g_replaced, nullptr);  // the store repeats on return, into the recorder's
}

// The crash itself, not a sanitizer's report of it. The pointer is opaque
// to the compiler, which would make a trap of a literal null or drop the
// store.
__attribute__((no_sanitize("null"), noinline)) void NullStore() {
  volatile int* volatile null = nullptr;
  *null = 1;
}

// The footer's magic at the file's end: the dump is complete.
bool Complete(const char* path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return false;
  char tail[8] = {};
  off_t size = lseek(fd, 0, SEEK_END);
  bool done = size >= 8 && pread(fd, tail, 8, size - 8) == 8 && std::memcmp(tail, "\x89GPCEND\n", 8) == 0;
  close(fd);
  return done;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return 2;
  std::string mode = argv[2];
  if (argc >= 6) {
    g_marker = argv[4];
    g_crash_dump = argv[5];
  }
  if (mode == "handler-before") {
    if (!g_marker) return 2;
    signal(SIGSEGV, OwnHandler);
  }
  void* lib = nullptr;
  if (int failed = gpucap::testing::StartRecorderAsNvtx(argv[1], "crash_probe", &lib)) return failed;
  if (mode == "handler-after") {
    if (!g_marker) return 2;
    struct sigaction sa {};
    sa.sa_handler = ChainingHandler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_replaced);
  }
  if (!gpucap_is_recording()) return 5;
  gpucap_range_push("before the crash");
  gpucap_range_pop();
  if (gpucap_dump("barrier") != 1) return 6;
  // Waits for the writer (the test's time limit bounds it), not a pace.
  while (!Complete(argv[3])) usleep(1000);

  if (mode == "segv" || mode == "handler-before" || mode == "handler-after") {
    NullStore();
  } else if (mode == "abort") {
    abort();
  } else if (mode == "bus") {
    raise(SIGBUS);
  } else if (mode == "fpe") {
    raise(SIGFPE);
  } else if (mode == "ill") {
    __builtin_trap();
  } else {
    return 2;
  }
  return 9;  // survived the crash
}
