// The entry gate's price per driver call, counted on the CPU: calls a no-op
// function N times, directly or through its gate stub (driver_wrap.h), so
// that under valgrind (bench/gate/call_cost.sh) the difference in
// instructions over N is what the stub adds to one call.
//
//   gate_call_cost direct|stub|full N
//
// full: through the stub with the gate word forced to "no membarrier", so
// that every call takes the trampoline's full path (EntryGate::Enter).
// Prints the mode, N, whether the gate runs the asymmetric (membarrier)
// protocol (without it every call takes the stub's full path), and a
// checksum of the calls' results.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "driver_wrap.h"
#include "entry_gate.h"

extern "C" __attribute__((noinline)) int gpucap_bench_nop(int a) {
  asm volatile("");
  return a;
}

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "direct") != 0 && std::strcmp(argv[1], "stub") != 0 &&
                    std::strcmp(argv[1], "full") != 0)) {
    std::fprintf(stderr, "usage: gate_call_cost direct|stub|full N\n");
    return 2;
  }
  long n = std::atol(argv[2]);
  using Fn = int (*)(int);
  auto* bare = &gpucap_bench_nop;
  // Every mode makes the stub and registers with the gate, so that only the
  // loop differs between them.
  auto stub = reinterpret_cast<Fn>(gpucap::gate::Wrap(reinterpret_cast<void*>(bare)));
  auto& gate = gpucap::gate::EntryGate::Process();
  long sum = stub(1);
  Fn volatile fn = std::strcmp(argv[1], "direct") == 0 ? bare : stub;
  if (std::strcmp(argv[1], "full") == 0) {
#ifdef GPUCAP_GATE_SYMMETRIC
    gpucap_gate_state.fetch_or(GPUCAP_GATE_SYMMETRIC);
#else  // built against a gate from before the fast path (call_cost.sh's BEFORE): all of it is the full path
    std::fprintf(stderr, "gate_call_cost: this gate has no fast path; 'stub' is its full path\n");
    return 2;
#endif
  }
  for (long i = 0; i < n; ++i) sum += fn(static_cast<int>(i & 1023));
  std::printf("%s n=%ld asymmetric=%d stub=%d sum=%ld\n", argv[1], n, gate.asymmetric() ? 1 : 0,
              gpucap::gate::IsStub(reinterpret_cast<void*>(stub)) ? 1 : 0, sum);
  return 0;
}
