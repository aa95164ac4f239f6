// NVTX ranges into the capture (the recorder's part of nvtx_hooks.cc):
// naming a thread from itself on its first range, and the window marks
// derived from ranges whose names match --window-nvtx.
#include <pthread.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "recorder.h"

namespace gpucap::recorder {

bool Recorder::WindowName(const std::string& name) const {
  return window_names_ && window_names_->Matches(name);
}

void Recorder::AddRange(format::RangeEvent e) {
  if (!accepting()) return;
  thread_local bool announced = false;
  if (!announced) {
    // Name the thread now, from itself: short-lived threads are gone by the
    // time the control thread could read /proc.
    announced = true;
    bool first;
    {
      std::lock_guard<std::mutex> lock(seen_mu_);
      first = threads_seen_.insert(e.os_tid).second;
    }
    if (first) {
      char name[64] = {};
      pthread_getname_np(pthread_self(), name, sizeof(name));
      format::ThreadInfo t{static_cast<uint32_t>(getpid()), e.os_tid, e.os_tid, name};
      events_->Add(std::move(t));
    }
  }
  if (window_names_) AddWindowMarks(e);
  events_->Add(std::move(e));
}

void Recorder::AddWindowMarks(const format::RangeEvent& e) {
  // Window marks from ranges whose names match --window-nvtx. A push's mark
  // id is kept per thread until the pop of the same domain: NVTX nests
  // push/pop per thread and domain, and NCCL's ranges interleave with the
  // application's on one thread.
  struct Open {
    uint64_t domain;
    uint64_t id;  // 0: the push opened no window
  };
  thread_local std::vector<Open> open_pushes;
  auto mark = [&](format::WindowMarkKind kind, uint64_t id, const std::string& label) {
    format::WindowMark m;
    m.kind = kind;
    m.timestamp_ns = e.timestamp_ns;
    m.os_tid = e.os_tid;
    m.id = id;
    m.label = label;
    events_->Add(std::move(m));
  };
  switch (e.kind) {
    case format::RangeKind::kPush: {
      uint64_t id = WindowName(e.name) ? NextWindowId() : 0;
      open_pushes.push_back({e.domain, id});
      if (id) mark(format::WindowMarkKind::kOpen, id, e.name);
      break;
    }
    case format::RangeKind::kPop:
      for (size_t i = open_pushes.size(); i-- > 0;) {
        if (open_pushes[i].domain != e.domain) continue;
        uint64_t id = open_pushes[i].id;
        open_pushes.erase(open_pushes.begin() + static_cast<std::ptrdiff_t>(i));
        if (id) mark(format::WindowMarkKind::kClose, id, "");
        break;
      }
      break;
    case format::RangeKind::kStart:
      if (WindowName(e.name)) {
        {
          std::lock_guard<std::mutex> lock(started_windows_mu_);
          started_windows_.insert(e.id);
        }
        started_window_count_.fetch_add(1, std::memory_order_release);
        mark(format::WindowMarkKind::kOpen, e.id | kStartedWindowBit, e.name);
      }
      break;
    case format::RangeKind::kEnd: {
      // Any thread may end a started range; only ends of window ranges
      // (rare) take the lock.
      if (started_window_count_.load(std::memory_order_acquire) == 0) break;
      bool was_window;
      {
        std::lock_guard<std::mutex> lock(started_windows_mu_);
        was_window = started_windows_.erase(e.id) > 0;
      }
      if (was_window) {
        started_window_count_.fetch_sub(1, std::memory_order_release);
        mark(format::WindowMarkKind::kClose, e.id | kStartedWindowBit, "");
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace gpucap::recorder
