// The recorder's price per NVTX range on the calling thread, without a GPU:
// NVTX's dynamic injection (NVTX_INJECTION64_PATH naming
// libgpucap_recorder.so) with no CUDA call at all, so the count runs on any
// machine with the recorder's libraries (CUDA's stub libcuda.so.1 will do).
//
// Cases, each a range opened and closed PER times a block, interleaved
// block by block so that every case pays its share of the batches handed to
// the writer:
//   push8, push256     nvtxRangePushA / nvtxRangePop, one constant name of
//                      8 or 256 bytes
//   ex64               nvtxRangePushEx with category, colour and a 64-byte
//                      ASCII message / nvtxRangePop
//   torch8, torch256   emit_nvtx's pattern: the name is formatted again into
//                      the same buffer before every push (a new sequence
//                      number at its head each time: same pointer, new
//                      text), 8 or 256 bytes
//   reg                a registered string (nvtxDomainRegisterStringA) in a
//                      domain: nvtxDomainRangePushEx / nvtxDomainRangePop
//   start8, start256   nvtxRangeStartA / nvtxRangeEnd
// Every STEP_EVERY ranges (default 100) the case opens and closes a range
// named "ProfilerStep#k" around them, as PyTorch's profiler steps do, so a
// --window-nvtx or --capture-range over ProfilerStep#\d+ has windows to make.
//
// Without MARK, each block is timed (CLOCK_MONOTONIC and the thread's CPU
// time) and the program prints, per case, the median over blocks:
//   TIME case=push8 ns_per_range=... cpu_ns_per_range=...
// and one RESULT line with every case's wall ns per range.
//   MARK=callgrind  under valgrind's callgrind (instr.sh OUT nvtx ...):
//                   instrumentation starts after the warm-up and each block
//                   is a region "block <case> nvtx <b>" (callgrind_mark.h).
//   BLOCKS (default 5), PER (default 2000), WARMUP (default 2000 per case).
//
// Build: g++ -O2 -std=c++20 -I/usr/local/cuda/include nvtx_ranges.cc callgrind_mark.c -ldl
#include <nvtx3/nvToolsExt.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "callgrind_mark.h"

namespace {

double NowNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// A name of exactly `bytes` characters (the NUL not counted).
std::string NameOf(size_t bytes, const char* stem) {
  std::string s = stem;
  while (s.size() < bytes) s += s.size() % 7 ? 'x' : '_';
  s.resize(bytes);
  return s;
}

struct Case {
  const char* name;
  void (*run)(int per);
};

std::string g_name8, g_name256, g_name64;
char g_torch[320];
nvtxDomainHandle_t g_domain;
nvtxStringHandle_t g_registered;
uint64_t g_seq = 0;
int g_step_every = 100;
uint64_t g_step = 0;

// emit_nvtx formats "aten::op, seq = N, ..." into a fresh std::string before
// each push; its buffer is often the same heap block as the previous one's.
const char* TorchName(size_t bytes) {
  // The sequence number first, so that 8 bytes of it still differ.
  int n = snprintf(g_torch, sizeof(g_torch), "%07llu, aten::linear, sizes = [[32, 128], [128, 128]]",
                   static_cast<unsigned long long>(g_seq++ % 10000000));
  size_t at = std::min(static_cast<size_t>(n), bytes);
  while (at < bytes) g_torch[at++] = 'y';
  g_torch[bytes] = '\0';
  return g_torch;
}

// Runs `body` per times, inside "ProfilerStep#k" ranges every g_step_every.
template <typename F>
void Stepped(int per, F body) {
  char step[32];
  for (int i = 0; i < per; ++i) {
    if (g_step_every > 0 && i % g_step_every == 0) {
      if (i) nvtxRangePop();
      snprintf(step, sizeof(step), "ProfilerStep#%llu", static_cast<unsigned long long>(g_step++));
      nvtxRangePushA(step);
    }
    body();
  }
  if (g_step_every > 0 && per > 0) nvtxRangePop();
}

void Push8(int per) {
  Stepped(per, [] {
    nvtxRangePushA(g_name8.c_str());
    nvtxRangePop();
  });
}
void Push256(int per) {
  Stepped(per, [] {
    nvtxRangePushA(g_name256.c_str());
    nvtxRangePop();
  });
}
void Ex64(int per) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = 3;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xff00ff00;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = g_name64.c_str();
  Stepped(per, [&a] {
    nvtxRangePushEx(&a);
    nvtxRangePop();
  });
}
void Torch8(int per) {
  Stepped(per, [] {
    nvtxRangePushA(TorchName(8));
    nvtxRangePop();
  });
}
void Torch256(int per) {
  Stepped(per, [] {
    nvtxRangePushA(TorchName(256));
    nvtxRangePop();
  });
}
void Registered(int per) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = g_registered;
  Stepped(per, [&a] {
    nvtxDomainRangePushEx(g_domain, &a);
    nvtxDomainRangePop(g_domain);
  });
}
void Start8(int per) {
  Stepped(per, [] { nvtxRangeEnd(nvtxRangeStartA(g_name8.c_str())); });
}
void Start256(int per) {
  Stepped(per, [] { nvtxRangeEnd(nvtxRangeStartA(g_name256.c_str())); });
}

const Case kCases[] = {
    {"push8", Push8},   {"push256", Push256}, {"ex64", Ex64},     {"torch8", Torch8},
    {"torch256", Torch256}, {"reg", Registered}, {"start8", Start8}, {"start256", Start256},
};

}  // namespace

int main() {
  int blocks = getenv("BLOCKS") ? atoi(getenv("BLOCKS")) : 5;
  int per = getenv("PER") ? atoi(getenv("PER")) : 2000;
  int warmup = getenv("WARMUP") ? atoi(getenv("WARMUP")) : 2000;
  if (getenv("STEP_EVERY")) g_step_every = atoi(getenv("STEP_EVERY"));
  const char* only = getenv("CASES");  // comma-separated subset; default: all
  g_name8 = NameOf(8, "fwd_");
  g_name64 = NameOf(64, "Linear_forward_");
  g_name256 = NameOf(256, "aten::scaled_dot_product_attention_");
  g_domain = nvtxDomainCreateA("bench");
  g_registered = nvtxDomainRegisterStringA(g_domain, NameOf(64, "registered_").c_str());
  std::vector<const Case*> cases;
  for (const Case& c : kCases) {
    if (!only || *only == '\0') {
      cases.push_back(&c);
      continue;
    }
    std::string list = std::string(",") + only + ",";
    if (list.find(std::string(",") + c.name + ",") != std::string::npos) cases.push_back(&c);
  }
  for (const Case* c : cases) c->run(warmup);
  const bool mark = cg_mark_from_environment("nvtx_ranges");
  std::vector<std::vector<double>> wall(cases.size()), cpu(cases.size());
  for (int b = 0; b < blocks; ++b) {
    for (size_t k = 0; k < cases.size(); ++k) {
      // The step ranges around the case's are counted with it: a range per
      // g_step_every, less than 1% of them.
      if (mark) cg_mark_dump("between blocks");
      double w0 = NowNs(CLOCK_MONOTONIC), c0 = NowNs(CLOCK_THREAD_CPUTIME_ID);
      cases[k]->run(per);
      double c1 = NowNs(CLOCK_THREAD_CPUTIME_ID), w1 = NowNs(CLOCK_MONOTONIC);
      if (mark) {
        char label[64];
        snprintf(label, sizeof(label), "block %s nvtx %d", cases[k]->name, b);
        cg_mark_dump(label);
      }
      wall[k].push_back((w1 - w0) / per);
      cpu[k].push_back((c1 - c0) / per);
    }
  }
  std::string result = "RESULT";
  for (size_t k = 0; k < cases.size(); ++k) {
    printf("TIME case=%s ns_per_range=%.1f cpu_ns_per_range=%.1f min_ns_per_range=%.1f\n", cases[k]->name,
           Median(wall[k]), Median(cpu[k]), *std::min_element(wall[k].begin(), wall[k].end()));
    char item[64];
    snprintf(item, sizeof(item), " %s=%.1f", cases[k]->name, Median(wall[k]));
    result += item;
  }
  printf("%s\n", result.c_str());
  return 0;
}
