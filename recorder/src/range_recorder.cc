#include "range_recorder.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdio>

namespace gpucap::recorder {

RangeRecorder::RangeRecorder(RangeLog* ranges, EventLog* events, FirstSeen* seen, const std::string& window_nvtx,
                             StepLog* steps, const std::string& default_steps)
    : ranges_(ranges), events_(events), seen_(seen), steps_(steps) {
  if (!window_nvtx.empty()) {
    std::string why;
    window_names_ = RangeMatcher::Make(window_nvtx, &why);
    if (!window_names_) {
      fprintf(stderr, "gpucap: GPUCAP_WINDOW_NVTX '%s' is not a valid regex (%s); ignored\n",
              window_nvtx.c_str(), why.c_str());
    }
  }
  if (steps_ && !window_names_) {
    std::string why;
    default_steps_ = RangeMatcher::Make(default_steps, &why);
  }
  names_ = window_names_ ? window_names_.get() : default_steps_.get();
}

void RangeRecorder::Add(const RangeFields& f, std::string_view name, const std::vector<format::ExtPayload>* ext,
                        RangeLog::WriterCache* cache) {
  RangeLog::Writer* w = cache ? ranges_->Mine(cache) : ranges_->Mine();
  if (!w->announced) AnnounceThread(w, f.os_tid ? f.os_tid : w->os_tid);
  if (names_) AddWindowMarks(w, f, name);
  ranges_->AddRange(w, f, name, ext);
}

void RangeRecorder::AnnounceThread(RangeLog::Writer* w, uint32_t os_tid) {
  // Name the thread now, from itself: short-lived threads are gone by the
  // time the control thread could read /proc.
  w->announced = true;
  if (seen_->ClaimThread(os_tid)) {
    char name[64] = {};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    format::ThreadInfo t{static_cast<uint32_t>(getpid()), os_tid, os_tid, name};
    events_->Add(std::move(t));
  }
}

void RangeRecorder::AddWindowMarks(RangeLog::Writer* w, const RangeFields& f, std::string_view name) {
  // Window marks from ranges whose names match --window-nvtx. A push's mark
  // id is kept per thread until the pop of the same domain: NVTX nests
  // push/pop per thread and domain, and NCCL's ranges interleave with the
  // application's on one thread.
  auto& open_pushes = w->open_windows;  // (domain, window id or 0, | kStepBit for a step)
  auto matches = [&] { return w->window_names.Matches(*names_, name); };
  switch (f.kind) {
    case format::RangeKind::kPush: {
      uint64_t entry = 0;
      if (matches()) {
        if (window_names_) {
          entry = NextWindowId();
          ranges_->AddMark(w, format::WindowMarkKind::kOpen, f.timestamp_ns, f.os_tid, entry, name);
        }
        if (steps_) {
          if (!w->steps) w->steps = steps_->Register(f.os_tid ? f.os_tid : w->os_tid);
          w->steps->Open(f.domain, f.timestamp_ns, name);
          entry |= kStepBit;
        }
      }
      open_pushes.emplace_back(f.domain, entry);
      break;
    }
    case format::RangeKind::kPop:
      for (size_t i = open_pushes.size(); i-- > 0;) {
        if (open_pushes[i].first != f.domain) continue;
        uint64_t entry = open_pushes[i].second;
        open_pushes.erase(open_pushes.begin() + static_cast<std::ptrdiff_t>(i));
        if (uint64_t id = entry & ~kStepBit) {
          ranges_->AddMark(w, format::WindowMarkKind::kClose, f.timestamp_ns, f.os_tid, id, "");
        }
        if (entry & kStepBit) w->steps->Close(f.domain, f.timestamp_ns);
        break;
      }
      break;
    case format::RangeKind::kStart:
      if (window_names_ && matches()) {
        {
          std::lock_guard<std::mutex> lock(started_windows_mu_);
          started_windows_.insert(f.id);
        }
        started_window_count_.fetch_add(1, std::memory_order_release);
        ranges_->AddMark(w, format::WindowMarkKind::kOpen, f.timestamp_ns, f.os_tid, f.id | kStartedWindowBit, name);
      }
      break;
    case format::RangeKind::kEnd: {
      // Any thread may end a started range; only ends of window ranges
      // (rare) take the lock.
      if (started_window_count_.load(std::memory_order_acquire) == 0) break;
      bool was_window;
      {
        std::lock_guard<std::mutex> lock(started_windows_mu_);
        was_window = started_windows_.erase(f.id) > 0;
      }
      if (was_window) {
        started_window_count_.fetch_sub(1, std::memory_order_release);
        ranges_->AddMark(w, format::WindowMarkKind::kClose, f.timestamp_ns, f.os_tid, f.id | kStartedWindowBit, "");
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace gpucap::recorder
