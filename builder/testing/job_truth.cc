#include "job_truth.h"

#include <charconv>

#include "job_clock.h"

namespace gpucap::builder::testing {
namespace {

// Names and strings here are ours (host names, file names, step names):
// nothing to escape.
std::string Quoted(const std::string& s) { return '"' + s + '"'; }

std::string Shortest(double v) {
  char text[32];
  auto end = std::to_chars(text, text + sizeof text, v).ptr;
  std::string s(text, end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string Ints(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

std::string StepName(int64_t number) { return "ProfilerStep#" + std::to_string(number); }

std::string JobTruthJson(const JobTruth& t) {
  const JobSpec& s = t.spec;
  std::string j = "{\n";
  j += "  \"world_size\": " + std::to_string(s.ranks) + ",\n";
  j += "  \"ranks_per_host\": " + std::to_string(s.ranks_per_host) + ",\n";
  j += "  \"seed\": " + std::to_string(s.seed) + ",\n";
  j += "  \"steps\": " + std::to_string(s.steps) + ",\n";
  j += "  \"first_step\": " + std::to_string(s.first_step) + ",\n";
  j += "  \"step_names\": [";
  for (uint32_t i = 0; i < s.steps; ++i) j += (i ? ", " : "") + Quoted(StepName(s.first_step + i));
  j += "],\n";
  j += "  \"collectives_per_step\": " + std::to_string(s.collectives_per_step) + ",\n";
  j += "  \"kernels_per_step\": " + std::to_string(s.kernels_per_step) + ",\n";
  j += "  \"slow_rank\": " + std::to_string(*s.slow_rank) + ",\n";
  j += "  \"slow_factor\": " + Shortest(s.slow_factor) + ",\n";
  j += "  \"straggling_step\": " + Quoted(StepName(*s.straggling_step)) + ",\n";
  j += "  \"straggling_rank\": " + std::to_string(*s.straggling_rank) + ",\n";
  j += "  \"stall_ns\": " + std::to_string(*s.stall_ns) + ",\n";
  j += "  \"end_jitter_ns\": " + std::to_string(s.end_jitter_ns) + ",\n";
  j += "  \"transfer_ns\": " + std::to_string(s.transfer_ns) + ",\n";
  j += "  \"hosts\": [\n";
  for (size_t i = 0; i < t.hosts.size(); ++i) {
    const HostTruth& h = t.hosts[i];
    j += "    {\"host\": " + Quoted(h.host) + ", \"offset_ns\": " + std::to_string(h.offset_ns) +
         ", \"drift_ppm\": " + DriftPpmText(h.drift_ppb) + "}" + (i + 1 < t.hosts.size() ? ",\n" : "\n");
  }
  j += "  ],\n";
  j += "  \"t0_realtime_ns\": " + std::to_string(s.t0_realtime_ns) + ",\n";
  j += "  \"collective_end_true_ns\": [\n";
  for (size_t i = 0; i < t.collective_end_true_ns.size(); ++i) {
    j += "    " + Ints(t.collective_end_true_ns[i]) + (i + 1 < t.collective_end_true_ns.size() ? ",\n" : "\n");
  }
  j += "  ],\n";
  j += "  \"ranks\": [\n";
  for (size_t i = 0; i < t.ranks.size(); ++i) {
    const RankTruth& r = t.ranks[i];
    j += "    {\"rank\": " + std::to_string(r.rank) + ", \"file\": " + Quoted(r.file) + ", \"host\": " + Quoted(r.host) +
         ", \"pid\": " + std::to_string(r.pid) + ", \"nccl_ns_per_step\": " + Ints(r.nccl_ns_per_step) +
         ", \"step_ns\": " + Ints(r.step_ns) + "}" + (i + 1 < t.ranks.size() ? ",\n" : "\n");
  }
  j += "  ]\n}\n";
  return j;
}

}  // namespace gpucap::builder::testing
