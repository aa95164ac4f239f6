#include "driver_wrap.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "driver_wrap_abi.h"
#include "entry_gate.h"

namespace gpucap::gate {

constexpr uint32_t kMaxDepth = GPUCAP_GATE_MAX_DEPTH;

// The caller return addresses of a thread's wrapped calls in flight,
// innermost last (the trampoline's fast path pushes and pops them itself).
struct Frames {
  uint32_t n;
  const void* ret[kMaxDepth];
};
static_assert(offsetof(Frames, n) == GPUCAP_GATE_FRAMES_N && sizeof(Frames::n) == 4 &&
              offsetof(Frames, ret) == GPUCAP_GATE_FRAMES_RET);

namespace {
std::atomic<uint64_t> g_unwrapped{0};
thread_local uint64_t t_full_path __attribute__((tls_model("initial-exec")));
}  // namespace
}  // namespace gpucap::gate

extern "C" {

// Named for the trampoline's assembly; initial-exec, as the gate's slot.
__attribute__((visibility("hidden"))) thread_local gpucap::gate::Frames gpucap_gate_frames
    __attribute__((tls_model("initial-exec")));

// The trampoline's full path (not taken by its fast path).
// 1: entered (the caller's return address is kept); 0: too deep, the stub
// calls fn unwrapped.
__attribute__((visibility("hidden"))) uintptr_t gpucap_gate_enter(const void* ret) {
  using namespace gpucap::gate;
  Frames& f = gpucap_gate_frames;
  ++t_full_path;
  uint32_t n = f.n;
  if (n == kMaxDepth) {
    g_unwrapped.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  // The count grows before the frame is written (and shrinks after it is
  // read, below): a signal handler's wrapped call in between keeps it.
  f.n = n + 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  f.ret[n] = ret;
  EntryGate::Process().Enter(ret);
  return 1;
}

__attribute__((visibility("hidden"))) const void* gpucap_gate_leave() {
  using namespace gpucap::gate;
  EntryGate::Process().Leave();
  Frames& f = gpucap_gate_frames;
  const void* ret = f.ret[f.n - 1];
  std::atomic_signal_fence(std::memory_order_seq_cst);
  --f.n;
  return ret;
}

void gpucap_gate_trampoline();

}  // extern "C"

namespace gpucap::gate {
namespace {

constexpr size_t kStubBytes = 32;

// One region: written through `rw`, run through `rx`.
struct Region {
  uint8_t* rw = nullptr;
  uint8_t* rx = nullptr;
  size_t size = 0, used = 0;
};

struct Stubs {
  std::mutex mu;
  std::unordered_map<void*, void*> by_target;
  std::unordered_map<const void*, void*> target_of;
  Region region;
  uint64_t made = 0;
};

Stubs& Table() {
  static Stubs* s = new Stubs();
  return *s;
}

bool NewRegion(Region* r) {
  size_t size = 64 * 1024;
  int fd = memfd_create("gpucap-gate-stubs", MFD_CLOEXEC);
  if (fd >= 0 && ftruncate(fd, static_cast<off_t>(size)) == 0) {
    void* rw = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    void* rx = mmap(nullptr, size, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
    close(fd);
    if (rw != MAP_FAILED && rx != MAP_FAILED) {
      *r = {static_cast<uint8_t*>(rw), static_cast<uint8_t*>(rx), size, 0};
      return true;
    }
    if (rw != MAP_FAILED) munmap(rw, size);
    if (rx != MAP_FAILED) munmap(rx, size);
    return false;
  }
  if (fd >= 0) close(fd);
  return false;
}

}  // namespace

#if defined(__x86_64__) && defined(__linux__)
bool WrapSupported() { return true; }

void* Wrap(void* fn) {
  if (!fn) return nullptr;
  Stubs& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  if (t.target_of.count(fn)) return fn;  // already a stub
  auto it = t.by_target.find(fn);
  if (it != t.by_target.end()) return it->second;
  if (t.region.used + kStubBytes > t.region.size && !NewRegion(&t.region)) return fn;
  uint8_t code[kStubBytes];
  std::memset(code, 0xcc, sizeof code);  // int3 padding
  auto target = reinterpret_cast<uint64_t>(fn);
  auto tramp = reinterpret_cast<uint64_t>(&gpucap_gate_trampoline);
  code[0] = 0x49, code[1] = 0xbb;  // movabs r11, fn
  std::memcpy(code + 2, &target, 8);
  code[10] = 0xff, code[11] = 0x25;  // jmp *2(%rip): to the address at 18,
  code[12] = 2, code[13] = code[14] = code[15] = 0;
  std::memcpy(code + 18, &tramp, 8);  // after two int3 that stop the decoder's straight-line speculation
  std::memcpy(t.region.rw + t.region.used, code, kStubBytes);
  void* stub = t.region.rx + t.region.used;
  t.region.used += kStubBytes;
  // The executable view sees the bytes: same physical page; x86 keeps
  // instruction fetch coherent with stores.
  t.by_target.emplace(fn, stub);
  t.target_of.emplace(stub, fn);
  ++t.made;
  return stub;
}
#else
bool WrapSupported() { return false; }
void* Wrap(void* fn) { return fn; }
#endif

bool IsStub(const void* p) { return StubTarget(p) != nullptr; }

void* StubTarget(const void* p) {
  Stubs& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.target_of.find(p);
  return it == t.target_of.end() ? nullptr : it->second;
}

uint64_t stubs_made() {
  Stubs& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.made;
}

uint64_t unwrapped_calls() { return g_unwrapped.load(std::memory_order_relaxed); }

uint64_t full_path_calls() { return t_full_path; }

}  // namespace gpucap::gate
