#include "entry_gate.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <new>
#include <thread>

namespace gpucap::gate {
namespace {

long Tid() { return static_cast<long>(syscall(SYS_gettid)); }

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t SinceNs(std::chrono::steady_clock::time_point t0) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
}

pthread_key_t g_slot_key;

}  // namespace

thread_local EntryGate::Slot* EntryGate::t_slot = nullptr;

}  // namespace gpucap::gate

std::atomic<uint32_t> gpucap_gate_state{0};

namespace gpucap::gate {

EntryGate& EntryGate::Process() {
  // Never destroyed: driver calls made by other libraries' destructors at
  // exit still pass through it.
  static EntryGate* gate = new EntryGate();
  return *gate;
}

EntryGate::EntryGate() {
  pthread_key_create(&g_slot_key, &EntryGate::Unregister);
#if !defined(__SANITIZE_THREAD__)
  // Asymmetric: the call path pays a compiler barrier, the closer a
  // membarrier that orders every running thread of the process. ThreadSanitizer
  // does not model membarrier, so under it the symmetric path runs.
  asymmetric_ = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#endif
  // Before any thread has a slot, so before any stub can take its fast path.
  if (!asymmetric_) gpucap_gate_state.fetch_or(GPUCAP_GATE_SYMMETRIC, std::memory_order_seq_cst);
  pthread_atfork(nullptr, nullptr, [] { Process().AfterForkInChild(); });
}

EntryGate::Slot* EntryGate::Register() {
  while (registry_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  Slot* found = nullptr;
  for (Chunk* c = &head_; !found; c = c->next.load(std::memory_order_acquire)) {
    for (Slot& s : c->slots) {
      if (!s.in_use.load(std::memory_order_relaxed)) {
        found = &s;
        break;
      }
    }
    if (!found && !c->next.load(std::memory_order_relaxed)) c->next.store(new Chunk(), std::memory_order_release);
  }
  found->depth.store(0, std::memory_order_relaxed);
  found->os_tid.store(static_cast<uint32_t>(Tid()), std::memory_order_relaxed);
  found->in_use.store(true, std::memory_order_release);
  registry_.clear(std::memory_order_release);
  t_slot = found;
  pthread_setspecific(g_slot_key, found);
  return found;
}

void EntryGate::Unregister(void* slot) {
  // Thread exit. A driver call in a later TLS destructor registers again.
  auto* s = static_cast<Slot*>(slot);
  s->depth.store(0, std::memory_order_release);
  s->in_use.store(false, std::memory_order_release);
  t_slot = nullptr;
}

bool EntryGate::Exempt(const void* caller) const {
  auto pc = reinterpret_cast<uintptr_t>(caller);
  int n = exempt_count_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (pc >= exempt_[i][0].load(std::memory_order_relaxed) && pc < exempt_[i][1].load(std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

void EntryGate::AddExemptRange(const void* begin, const void* end) {
  int i = exempt_count_.load(std::memory_order_relaxed);
  if (i >= kExempt) return;
  exempt_[i][0].store(reinterpret_cast<uintptr_t>(begin), std::memory_order_relaxed);
  exempt_[i][1].store(reinterpret_cast<uintptr_t>(end), std::memory_order_relaxed);
  exempt_count_.store(i + 1, std::memory_order_release);
}

void EntryGate::WaitWhileClosed(Slot* s, const void* caller) {
  // The gate word was read relaxed on the fast path: what the closer wrote
  // before closing (first_held_at_ns_'s reset) is seen from here on.
  std::atomic_thread_fence(std::memory_order_acquire);
  for (;;) {
    if (owner_.load(std::memory_order_acquire) == Tid() || (caller && Exempt(caller))) return;
    // The arrival before the count, so that whoever sees the count sees
    // the arrival.
    int64_t none = 0;
    first_held_at_ns_.compare_exchange_strong(none, NowNs(), std::memory_order_release);
    // Not in flight while held: the closer must not wait for us.
    held_.fetch_add(1, std::memory_order_release);
    // Depth 0 while held, 1 after, the entry count kept.
    uint32_t entries = s->depth.load(std::memory_order_relaxed) & ~uint32_t{GPUCAP_GATE_DEPTH_MASK};
    s->depth.store(entries, std::memory_order_seq_cst);
    for (uint32_t v; (v = gpucap_gate_state.load(std::memory_order_acquire)) & GPUCAP_GATE_CLOSED;) {
      gpucap_gate_state.wait(v, std::memory_order_acquire);
    }
    s->depth.store(entries | 1, std::memory_order_seq_cst);
    if (!(gpucap_gate_state.load(std::memory_order_seq_cst) & GPUCAP_GATE_CLOSED)) return;
  }
}

void EntryGate::Barrier() const {
  if (asymmetric_) {
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

uint32_t EntryGate::InFlightOthers() const {
  uint32_t n = 0;
  for (const Chunk* c = &head_; c; c = c->next.load(std::memory_order_acquire)) {
    for (const Slot& s : c->slots) {
      if (&s != t_slot && (s.depth.load(std::memory_order_seq_cst) & GPUCAP_GATE_DEPTH_MASK) != 0) ++n;
    }
  }
  return n;
}

size_t EntryGate::CallsInFlight(CallInFlight* out, size_t max) const {
  size_t n = 0;
  for (const Chunk* c = &head_; c; c = c->next.load(std::memory_order_acquire)) {
    for (const Slot& s : c->slots) {
      if (&s == t_slot || !s.in_use.load(std::memory_order_acquire)) continue;
      uint32_t tid = s.os_tid.load(std::memory_order_relaxed);
      uint32_t word = s.depth.load(std::memory_order_relaxed);
      if ((word & GPUCAP_GATE_DEPTH_MASK) == 0) continue;
      if (n < max) out[n] = {tid, word};
      ++n;
    }
  }
  return n;
}

CloseResult EntryGate::Close(std::chrono::nanoseconds bound) {
  while (closing_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  auto t0 = std::chrono::steady_clock::now();
  closed_at_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(t0.time_since_epoch()).count();
  first_held_at_ns_.store(0, std::memory_order_relaxed);
  owner_.store(Tid(), std::memory_order_release);
  gpucap_gate_state.fetch_or(GPUCAP_GATE_CLOSED, std::memory_order_seq_cst);
  // From here every thread either shows its depth to the scan below or sees
  // the gate closed at its next outermost entry (in Enter() or in a stub's
  // fast path, which then goes to Enter()).
  Barrier();
  CloseResult r;
  for (int spins = 0;; ++spins) {
    r.in_flight = InFlightOthers();
    r.waited_ns = SinceNs(t0);
    if (r.in_flight == 0) {
      r.closed = true;
      return r;  // closing_ stays set until Open()
    }
    if (r.waited_ns >= static_cast<uint64_t>(bound.count())) break;
    if (spins < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  Open();
  return r;
}

uint64_t EntryGate::Open() {
  // The arrival read before the clock: a call held in between counts from
  // no later than now. A late arrival of an earlier closing counts from
  // this closing at most.
  int64_t first = first_held_at_ns_.load(std::memory_order_acquire);
  int64_t now = NowNs();
  int64_t since = std::max(first, closed_at_ns_);
  uint64_t stall = first && now > since ? static_cast<uint64_t>(now - since) : 0;
  owner_.store(0, std::memory_order_release);
  gpucap_gate_state.fetch_and(~uint32_t{GPUCAP_GATE_CLOSED}, std::memory_order_seq_cst);
  gpucap_gate_state.notify_all();
  closing_.clear(std::memory_order_release);
  return stall;
}

void EntryGate::AfterForkInChild() {
  // Only the forking thread exists now: every other slot is free, and the
  // gate is open whoever had closed it in the parent.
  for (Chunk* c = &head_; c; c = c->next.load(std::memory_order_relaxed)) {
    for (Slot& s : c->slots) {
      if (&s == t_slot) {
        s.os_tid.store(static_cast<uint32_t>(Tid()), std::memory_order_relaxed);
        continue;
      }
      s.depth.store(0, std::memory_order_relaxed);
      s.in_use.store(false, std::memory_order_relaxed);
    }
  }
  owner_.store(0, std::memory_order_relaxed);
  closing_.clear();
  registry_.clear();
  held_.store(0, std::memory_order_relaxed);
  if (asymmetric_) {
    // Registration is per process (mm): the child registers again.
    asymmetric_ = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  }
  gpucap_gate_state.store(asymmetric_ ? 0 : GPUCAP_GATE_SYMMETRIC, std::memory_order_relaxed);
}

}  // namespace gpucap::gate
