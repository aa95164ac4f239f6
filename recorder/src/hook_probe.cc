#include "hook_probe.h"

#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "driver_wrap.h"

namespace gpucap::gate {
namespace {

using Fn = uintptr_t (*)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);
constexpr int kSlots = 16;
Fn g_next[kSlots];
std::atomic<uint64_t> g_seq{0};

// 32 bytes at `p` as hex, or "-" where it is not readable (process_vm_readv
// fails instead of faulting).
void Peek(uintptr_t p, char* out, size_t n) {
  unsigned char bytes[32];
  iovec local{bytes, sizeof bytes}, remote{reinterpret_cast<void*>(p), sizeof bytes};
  if (p < 4096 || process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof bytes)) {
    std::snprintf(out, n, "-");
    return;
  }
  size_t k = 0;
  for (unsigned char b : bytes) k += std::snprintf(out + k, n - k, "%02x", b);
}

void Log(int slot, const char* when, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t e, uintptr_t f,
         uintptr_t r) {
  char pa[80], pb[80], line[512];
  Peek(a, pa, sizeof pa);
  Peek(b, pb, sizeof pb);
  int len = std::snprintf(line, sizeof line,
                          "HOOK %llu slot=%d %s tid=%ld a=%lx b=%lx c=%lx d=%lx e=%lx f=%lx r=%lx *a=%s *b=%s\n",
                          static_cast<unsigned long long>(g_seq.fetch_add(1)), slot, when,
                          static_cast<long>(syscall(SYS_gettid)), a, b, c, d, e, f, r, pa, pb);
  if (len > 0) (void)!write(2, line, static_cast<size_t>(len) < sizeof line ? len : sizeof line - 1);
}

template <int I>
uintptr_t Probe(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d, uintptr_t e, uintptr_t f) {
  Log(I, "in ", a, b, c, d, e, f, 0);
  uintptr_t r = g_next[I](a, b, c, d, e, f);
  Log(I, "out", a, b, c, d, e, f, r);
  return r;
}

template <int... I>
constexpr Fn ProbeOf(int i, std::integer_sequence<int, I...>) {
  Fn all[] = {&Probe<I>...};
  return all[i];
}

}  // namespace

bool HookProbeOn() {
  static const bool on = [] {
    const char* v = std::getenv("GPUCAP_GATE_HOOK_PROBE");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

void InstallHookProbes(uintptr_t* copy, uint64_t bytes) {
  size_t words = bytes / 8;
  for (size_t i = 1; i < words && i < kSlots; ++i) {
    if (!IsStub(reinterpret_cast<const void*>(copy[i]))) continue;  // a data word
    g_next[i] = reinterpret_cast<Fn>(copy[i]);
    copy[i] = reinterpret_cast<uintptr_t>(ProbeOf(static_cast<int>(i), std::make_integer_sequence<int, kSlots>{}));
  }
  char line[96];
  int len = std::snprintf(line, sizeof line, "HOOK table of %llu bytes probed\n", static_cast<unsigned long long>(bytes));
  (void)!write(2, line, len);
}

}  // namespace gpucap::gate
