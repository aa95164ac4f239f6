#include "call_watch.h"

#include <cstdio>

namespace gpucap::recorder {

std::vector<BlockedCall> CallWatch::Observe(uint64_t now_ns, std::span<const GpucapGateCall> calls) {
  for (auto& [tid, seen] : seen_) seen.present = false;
  std::vector<BlockedCall> blocked;
  for (const GpucapGateCall& call : calls) {
    auto [it, fresh] = seen_.try_emplace(call.os_tid);
    Seen& seen = it->second;
    if (fresh || seen.word != call.word) seen = {call.word, now_ns, false, true};
    seen.present = true;
    if (!seen.reported && now_ns - seen.since_ns >= bound_ns_) {
      seen.reported = true;
      blocked.push_back({call.os_tid, seen.since_ns});
    }
  }
  // A thread with no call in flight now: its next call is a new one.
  std::erase_if(seen_, [](const auto& entry) { return !entry.second.present; });
  return blocked;
}

std::string CallWatch::Trigger(uint64_t now_ns, const std::vector<BlockedCall>& blocked,
                               const std::function<std::string(uint32_t)>& thread_name) {
  std::string text = blocked.size() == 1 ? "hang: a CUDA call in flight for " : "hang: CUDA calls in flight for ";
  for (size_t i = 0; i < blocked.size(); ++i) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.1f s", (now_ns - blocked[i].since_ns) / 1e9);
    if (i) text += ", ";
    text += seconds;
    text += " on thread " + std::to_string(blocked[i].os_tid);
    std::string name = thread_name ? thread_name(blocked[i].os_tid) : "";
    if (!name.empty()) text += " (" + name + ")";
  }
  return text;
}

}  // namespace gpucap::recorder
