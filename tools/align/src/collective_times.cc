// Each capture's collective kernel ends, by stream (clock_alignment.h).
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "gpucap/builder/decode.h"
#include "gpucap/builder/tables.h"
#include "gpucap/tools/align/clock_alignment.h"

namespace gpucap::tools {
namespace {

struct Collective {
  uint64_t start;
  uint64_t end;  // CUPTI ns
  uint32_t name;  // capture string
};

}  // namespace

CollectiveTimes ReadCollectiveTimes(const builder::CaptureIndex& capture) {
  CollectiveTimes out;
  const auto& session = capture.capture().session;
  out.rank = session ? session->rank : -1;
  out.host = session && !session->host.empty() ? session->host : capture.path();

  // (device, context, stream) -> its collectives, 24 bytes each: a whole
  // capture's collectives are held until their order is known.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::vector<Collective>> streams;
  builder::ActivityTables tables;
  builder::DecodeStats stats;
  std::vector<uint64_t> scratch;
  std::unordered_map<uint32_t, bool> is_nccl;  // by capture string
  for (size_t chunk = 0; chunk < capture.capture().chunks.size(); ++chunk) {
    tables.kernels.clear();
    capture.decoder().DecodeChunk(chunk, builder::kKernels, &tables, &stats, &scratch);
    const builder::KernelTable& k = tables.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
      if (k.name[i] == builder::kNoString || k.end[i] < k.start[i]) continue;
      auto [it, added] = is_nccl.try_emplace(k.name[i], false);
      if (added) it->second = capture.KernelName(k.name[i]).starts_with("nccl");
      if (!it->second) continue;
      streams[{k.device[i], k.context[i], k.stream[i]}].push_back({k.start[i], k.end[i], k.name[i]});
    }
  }
  std::vector<std::vector<Collective>> ordered;
  for (auto& [key, v] : streams) {
    // Chunks hold records in the order CUPTI delivered them, not by start.
    std::stable_sort(v.begin(), v.end(), [](const Collective& a, const Collective& b) { return a.start < b.start; });
    ordered.push_back(std::move(v));
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.front().start < b.front().start; });
  std::unordered_map<uint32_t, uint32_t> name_of;  // capture string -> names
  for (const auto& v : ordered) {
    uint64_t stride = 1;
    while (v.size() / stride > kKeptPerStream) stride *= 2;
    auto& s = out.streams.emplace_back();
    for (uint64_t k = 0; k < v.size(); k += stride) {
      auto [it, added] = name_of.try_emplace(v[k].name, static_cast<uint32_t>(out.names.size()));
      if (added) out.names.emplace_back(capture.KernelName(v[k].name));
      s.push_back({k, it->second, capture.clock().ToRealtime(v[k].end)});
    }
  }
  return out;
}

}  // namespace gpucap::tools
