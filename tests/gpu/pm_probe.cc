// pm_probe: does CUPTI PM sampling work on this machine through the
// recorder's PmSampler, and what do its samples look like?
//
// Runs device 0 through known phases (idle, FP32 FMA, tensor-core MMA, DRAM
// copy, idle) while sampling, polling from a second thread the way the
// recorder's control thread will, with CUPTI kernel activity tracing on as
// in a real recording (plus a resource-callback subscriber, as the
// recorder has). Then prints, each section saying what to look for:
//   - whether Start succeeded, or why not; chip, accepted and dropped metrics
//   - raw first/last sample timestamps next to cuptiGetTimestamp readings,
//     and kernel activity edges next to PM edges (is the clock mapping right?)
//   - sample count and the sampler's counters; min/mean/max per metric
//   - mean per metric per phase (do the metrics mean what we think?)
//   - whether activity records still arrive after PmSampler::Stop (Disable)
// Exits 0 whether or not PM sampling is permitted; 1 only if CUDA fails.
//
// Built as CUDA by tests/gpu/build.sh (nvcc -x cu) with the recorder's
// pm_*.cc. Run: LD_LIBRARY_PATH=/usr/local/cuda/lib64 build/gpu/pm_probe
//   [--interval-us N] [--poll-ms N] [--metrics LIST] [--no-activity]
//   [--list-metrics]
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <mma.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pm_sampler.h"

namespace {

using gpucap::recorder::PmSampler;
using gpucap::recorder::PmSamplerOptions;
using gpucap::recorder::PmSamplerStats;
namespace format = gpucap::format;

#define CK(x)                                                                               \
  do {                                                                                      \
    cudaError_t e_ = (x);                                                                   \
    if (e_ != cudaSuccess) {                                                                \
      std::printf("CUDA error at %s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

// ---- workloads ----

__global__ void fma_kernel(float* out, int iters) {
  float a = threadIdx.x * 1e-3f, b = a + 1.f, c = a + 2.f, d = a + 3.f;
  for (int i = 0; i < iters; ++i) {
    a = fmaf(a, 1.0001f, 0.9999f);
    b = fmaf(b, 1.0001f, 0.9999f);
    c = fmaf(c, 1.0001f, 0.9999f);
    d = fmaf(d, 1.0001f, 0.9999f);
  }
  if (a + b + c + d == 12345.f) out[0] = a;  // keeps the loop alive
}

__global__ void tensor_kernel(float* out, int iters) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(a, __float2half(0.001f));
  wmma::fill_fragment(b, __float2half(0.001f));
  wmma::fill_fragment(c, 0.f);
  for (int i = 0; i < iters; ++i) wmma::mma_sync(c, a, b, c);
  if (c.x[0] == 12345.f) out[0] = c.x[0];
}

__global__ void copy_kernel(const float4* in, float4* out, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    out[i] = in[i];
  }
}

__global__ void after_stop_kernel(float* out) {
  if (threadIdx.x == 0) out[0] += 1.f;
}

uint64_t CuptiNow() {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

// ---- kernel activity, to compare PM edges against ----

struct KernelRecord {
  std::string name;
  uint64_t start, end;
};
std::mutex g_kernels_mu;
std::vector<KernelRecord> g_kernels;

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 8 << 20;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::lock_guard<std::mutex> lock(g_kernels_mu);
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    auto* k = reinterpret_cast<CUpti_ActivityKernel10*>(record);
    g_kernels.push_back({k->name ? k->name : "?", k->start, k->end});
  }
  free(buffer);
}

// The recorder also subscribes to resource callbacks (graphs, contexts):
// the probe does the same, so PM sampling meets the same CUPTI state.
std::atomic<uint64_t> g_resource_callbacks{0};
void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {
  g_resource_callbacks.fetch_add(1, std::memory_order_relaxed);
}

// ---- what the sampler emits ----

struct Sink {
  std::mutex mu;
  std::map<uint32_t, format::CounterDef> defs;
  std::map<uint32_t, std::vector<format::CounterSample>> samples;  // by counter id

  void Take(std::vector<format::SmallMessage> batch) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& m : batch) {
      if (auto* d = std::get_if<format::CounterDef>(&m)) defs[d->id] = *d;
      if (auto* s = std::get_if<format::CounterSample>(&m)) samples[s->id].push_back(*s);
    }
  }
};

struct Phase {
  const char* name;
  const char* expect;
  uint64_t begin = 0, end = 0;  // CUPTI clock, host-side brackets
};

template <typename Launch>
void RunFor(double seconds, Launch launch) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    launch();
    CK(cudaDeviceSynchronize());
  }
}

void Sleep(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

double Us(int64_t ns) { return ns / 1e3; }

void PrintBaseMetrics(const char* filter) {
  std::vector<std::string> names;
  std::string why;
  if (!gpucap::recorder::ListPmBaseMetrics(0, &names, &why)) {
    std::printf("  (could not list base metrics: %s)\n", why.c_str());
    return;
  }
  std::printf("  PM sampling base metrics of this chip%s%s%s (%zu in all):\n", filter ? " matching '" : "",
              filter ? filter : "", filter ? "'" : "", names.size());
  for (const auto& n : names) {
    if (!filter || n.find(filter) != std::string::npos) std::printf("    %s\n", n.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t interval_us = 1000;
  int poll_ms = 200;
  bool activity = true;
  bool list_metrics = false;
  PmSamplerOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--interval-us" && i + 1 < argc) {
      interval_us = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--poll-ms" && i + 1 < argc) {
      poll_ms = std::atoi(argv[++i]);
    } else if (a == "--metrics" && i + 1 < argc) {
      options.metrics = gpucap::recorder::SplitPmMetricList(argv[++i]);
    } else if (a == "--no-activity") {
      activity = false;
    } else if (a == "--list-metrics") {
      list_metrics = true;
    } else {
      std::printf("usage: %s [--interval-us N] [--poll-ms N] [--metrics LIST] [--no-activity] [--list-metrics]\n",
                  argv[0]);
      return 2;
    }
  }
  options.interval_ns = interval_us * 1000;

  std::printf("== pm_probe: CUPTI PM sampling through gpucap's PmSampler ==\n");
  CK(cudaSetDevice(0));
  CK(cudaFree(nullptr));  // a context on device 0, as the recorder will have
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  cudaDriverGetVersion(&driver);
  uint32_t cupti_version = 0;
  cuptiGetVersion(&cupti_version);
  std::printf("device 0: %s, %d SMs; CUDA driver %d; CUPTI API version %u\n", prop.name,
              prop.multiProcessorCount, driver, cupti_version);
  if (list_metrics) {
    PrintBaseMetrics(nullptr);
    return 0;
  }

  if (activity) {
    cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
    CUptiResult r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    std::printf("kernel activity tracing: %s\n", r == CUPTI_SUCCESS ? "on" : "FAILED to enable");
    CUpti_SubscriberHandle subscriber = nullptr;
    r = cuptiSubscribe(&subscriber, OnCallback, nullptr);
    if (r == CUPTI_SUCCESS) r = cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE);
    std::printf("CUPTI subscriber with resource callbacks: %s\n", r == CUPTI_SUCCESS ? "on" : "FAILED");
  }

  // Work buffers before sampling starts, so the memory reading below shows
  // only what PM sampling takes.
  const size_t copy_elems = (size_t{512} << 20) / sizeof(float4);
  float4 *src = nullptr, *dst = nullptr;
  float* sink_buf = nullptr;
  CK(cudaMalloc(&src, copy_elems * sizeof(float4)));
  CK(cudaMalloc(&dst, copy_elems * sizeof(float4)));
  CK(cudaMemset(src, 0, copy_elems * sizeof(float4)));
  CK(cudaMalloc(&sink_buf, 64));
  CK(cudaDeviceSynchronize());

  size_t free_before = 0, free_after = 0, total = 0;
  cudaMemGetInfo(&free_before, &total);
  Sink sink;
  std::string why_not;
  const uint64_t cupti_before_start = CuptiNow();
  auto start_wall = std::chrono::steady_clock::now();
  std::unique_ptr<PmSampler> sampler = PmSampler::Start(
      0, options, [&](std::vector<format::SmallMessage> b) { sink.Take(std::move(b)); }, 1000, &why_not);
  double start_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_wall).count();
  cudaMemGetInfo(&free_after, &total);

  std::printf("\n-- Start --\n");
  if (!sampler) {
    std::printf("PM sampling: NOT AVAILABLE (Start took %.1f ms)\n  why: %s\n", start_ms, why_not.c_str());
    if (why_not.find("known to chip") != std::string::npos) {
      for (const char* f : {"dram", "tensor", "cycles_active"}) PrintBaseMetrics(f);
    }
    std::printf("\nRESULT: PM sampling cannot run here; see 'why' above. (exit 0 on purpose)\n");
    return 0;
  }
  std::printf("PM sampling: STARTED in %.1f ms on chip %s\n", start_ms, sampler->chip().c_str());
  std::printf("interval %llu ns, counter-data image %zu bytes for %u samples (%.1f bytes/sample)\n",
              static_cast<unsigned long long>(sampler->interval_ns()), sampler->counter_image_bytes(),
              sampler->max_samples_per_decode(),
              double(sampler->counter_image_bytes()) / sampler->max_samples_per_decode());
  std::printf("device memory taken by Start (hardware buffer %zu MiB asked): %.1f MiB\n",
              options.hw_buffer_bytes >> 20, (double(free_before) - double(free_after)) / (1 << 20));
  std::printf("metrics accepted:\n");
  for (size_t i = 0; i < sampler->metrics().size(); ++i) {
    std::printf("  [%u] %-20s unit '%s'  <- %s\n", 1000 + unsigned(i), sampler->metrics()[i].label.c_str(),
                sampler->units()[i].c_str(), sampler->metrics()[i].name.c_str());
  }
  if (sampler->dropped().empty()) std::printf("metrics dropped: none\n");
  for (const auto& d : sampler->dropped()) std::printf("metrics dropped: %s\n", d.c_str());
  // Listing needs the counter availability query, which may fail while a
  // session runs: done at the end.

  // The recorder's control thread, in miniature.
  std::atomic<bool> quit{false};
  std::thread poller([&] {
    while (!quit.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms));
      sampler->Poll();
    }
  });

  const int blocks = prop.multiProcessorCount * 8;
  std::vector<Phase> phases = {
      {"idle", "all ~0"},
      {"fma", "SM active ~100, tensor ~0"},
      {"idle", "all ~0"},
      {"tensor", "SM active ~100, tensor pipe clearly > 0"},
      {"idle", "all ~0"},
      {"dram", "DRAM throughput high (> 50), tensor ~0"},
      {"idle", "all ~0"},
  };
  for (Phase& p : phases) {
    p.begin = CuptiNow();
    std::string n = p.name;
    if (n == "idle") Sleep(0.3);
    if (n == "fma") RunFor(0.5, [&] { fma_kernel<<<blocks, 256>>>(sink_buf, 1 << 16); });
    if (n == "tensor") RunFor(0.5, [&] { tensor_kernel<<<blocks, 256>>>(sink_buf, 1 << 14); });
    if (n == "dram") RunFor(0.5, [&] { copy_kernel<<<blocks, 512>>>(src, dst, copy_elems); });
    CK(cudaGetLastError());
    p.end = CuptiNow();
  }
  quit.store(true);
  poller.join();
  const uint64_t cupti_before_stop = CuptiNow();
  sampler->Stop();
  const uint64_t cupti_after_stop = CuptiNow();

  // Does activity tracing survive cuptiPmSamplingDisable?
  after_stop_kernel<<<1, 32>>>(sink_buf);
  CK(cudaDeviceSynchronize());
  if (activity) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);

  PmSamplerStats st = sampler->stats();
  std::lock_guard<std::mutex> lock(sink.mu);

  std::printf("\n-- Clock (raw PM timestamps vs cuptiGetTimestamp) --\n");
  std::printf("cuptiGetTimestamp before Start call      %llu\n", static_cast<unsigned long long>(cupti_before_start));
  std::printf("cuptiGetTimestamp just before PmStart    %llu\n", static_cast<unsigned long long>(st.cupti_at_start_ns));
  std::printf("raw first sample start                   %llu  (%+.1f us from the reading before PmStart)\n",
              static_cast<unsigned long long>(st.first_raw_start_ns),
              Us(int64_t(st.first_raw_start_ns) - int64_t(st.cupti_at_start_ns)));
  std::printf("raw last sample end                      %llu  (%+.1f us from the reading before Stop)\n",
              static_cast<unsigned long long>(st.last_raw_end_ns),
              Us(int64_t(st.last_raw_end_ns) - int64_t(cupti_before_stop)));
  std::printf("cuptiGetTimestamp before / after Stop    %llu / %llu\n",
              static_cast<unsigned long long>(cupti_before_stop), static_cast<unsigned long long>(cupti_after_stop));
  double raw_span = double(st.last_raw_end_ns - st.first_raw_start_ns);
  double host_span = double(cupti_before_stop - st.cupti_at_start_ns);
  std::printf("raw span / CUPTI span                    %.6f (1.0 = same rate; raw is ns)\n",
              host_span > 0 ? raw_span / host_span : 0.0);
  std::printf("mapping chosen: %s\n", sampler->clock_description().c_str());
  std::printf("LOOK FOR: first start a little after PmStart, last end a little before Stop, ratio ~1.0,\n"
              "          mapping 'same clock'. Otherwise the conversion in pm_timeline.h needs work.\n");

  std::printf("\n-- Samples --\n");
  std::printf("kept %llu, empty %llu, invalid %llu, lost %llu, non-finite values %llu\n",
              (unsigned long long)st.samples, (unsigned long long)st.empty_samples,
              (unsigned long long)st.invalid_samples, (unsigned long long)st.lost_samples,
              (unsigned long long)st.non_finite_values);
  std::printf("decodes %llu in %llu polls + final; image full %llu; hw overflow flags %llu; partial at reset %llu\n",
              (unsigned long long)st.decodes, (unsigned long long)st.polls, (unsigned long long)st.image_full,
              (unsigned long long)st.hw_overflow_flags, (unsigned long long)st.partial_at_reset);
  std::printf("decode+evaluate time %.2f ms in all, %.2f us per kept sample\n", st.poll_ns / 1e6,
              st.samples ? st.poll_ns / 1e3 / st.samples : 0.0);
  double expected = double(cupti_before_stop - st.cupti_at_start_ns) / double(options.interval_ns);
  std::printf("expected about %.0f samples for the time sampled\n", expected);
  std::printf("sampler error: %s\n", sampler->error().empty() ? "none" : sampler->error().c_str());
  std::printf("LOOK FOR: kept ~ expected, lost/invalid/image full/overflow 0, partial at reset 0.\n");

  std::printf("\n-- Values per metric (all samples) --\n");
  for (auto& [id, def] : sink.defs) {
    auto& v = sink.samples[id];
    if (v.empty()) {
      std::printf("  %-20s no samples\n", def.name.c_str());
      continue;
    }
    double lo = v[0].value, hi = v[0].value, sum = 0;
    for (auto& s : v) {
      lo = std::min(lo, s.value);
      hi = std::max(hi, s.value);
      sum += s.value;
    }
    std::printf("  %-20s n=%zu min %.2f mean %.2f max %.2f %s\n", def.name.c_str(), v.size(), lo,
                sum / v.size(), hi, def.unit.c_str());
  }
  if (!sink.samples.empty()) {
    auto& first = sink.samples.begin()->second;
    for (size_t i = 0; i < std::min<size_t>(3, first.size()); ++i) {
      std::printf("  sample %zu of counter %u at %+.1f us after PmStart: %.2f\n", i, first[i].id,
                  Us(int64_t(first[i].timestamp_ns) - int64_t(st.cupti_at_start_ns)), first[i].value);
    }
  }

  std::printf("\n-- Mean per phase (samples starting inside the phase, edges trimmed by 20 ms) --\n");
  std::printf("  %-8s %8s", "phase", "ms");
  for (auto& [id, def] : sink.defs) std::printf(" %20s", def.name.c_str());
  std::printf("   expect\n");
  for (const Phase& p : phases) {
    uint64_t lo = p.begin + 20'000'000, hi = p.end > 20'000'000 ? p.end - 20'000'000 : 0;
    std::printf("  %-8s %8.1f", p.name, (p.end - p.begin) / 1e6);
    for (auto& [id, def] : sink.defs) {
      double sum = 0;
      int n = 0;
      for (auto& s : sink.samples[id]) {
        if (s.timestamp_ns >= lo && s.timestamp_ns < hi) {
          sum += s.value;
          ++n;
        }
      }
      if (n) {
        std::printf(" %13.2f (n=%3d)", sum / n, n);
      } else {
        std::printf(" %20s", "-");
      }
    }
    std::printf("   %s\n", p.expect);
  }

  if (activity) {
    std::printf("\n-- Kernel activity edges vs PM edges (same CUPTI clock if the mapping is right) --\n");
    const format::CounterDef* sm = nullptr;
    for (auto& [id, def] : sink.defs) {
      if (def.name == "SM active") sm = &def;
    }
    std::lock_guard<std::mutex> klock(g_kernels_mu);
    size_t after_stop = 0;
    for (auto& k : g_kernels) after_stop += k.name.find("after_stop_kernel") != std::string::npos;
    for (const Phase& p : phases) {
      std::string n = p.name;
      if (n == "idle") continue;
      uint64_t kb = UINT64_MAX, ke = 0;
      size_t count = 0;
      for (auto& k : g_kernels) {
        if (k.start >= p.begin && k.start < p.end) {
          kb = std::min(kb, k.start);
          ke = std::max(ke, k.end);
          ++count;
        }
      }
      std::printf("  %-7s %zu kernels from %+.1f to %+.1f ms after PmStart", p.name, count,
                  count ? (int64_t(kb) - int64_t(st.cupti_at_start_ns)) / 1e6 : 0.0,
                  count ? (int64_t(ke) - int64_t(st.cupti_at_start_ns)) / 1e6 : 0.0);
      if (!sm || !count) {
        std::printf("\n");
        continue;
      }
      // First and last sample above 50% SM active within 100 ms of the phase.
      const auto& v = sink.samples[sm->id];
      uint64_t rise = 0, fall = 0;
      for (size_t i = 0; i < v.size(); ++i) {
        if (v[i].timestamp_ns + 100'000'000 < p.begin || v[i].timestamp_ns > p.end + 100'000'000) continue;
        if (v[i].value < 50) continue;
        if (!rise) rise = v[i].timestamp_ns;
        fall = v[i].timestamp_ns + options.interval_ns;
      }
      if (rise) {
        std::printf("; SM active > 50%% from %+.1f us to %+.1f us of the kernels' first start / last end\n",
                    Us(int64_t(rise) - int64_t(kb)), Us(int64_t(fall) - int64_t(ke)));
      } else {
        std::printf("; no sample above 50%% SM active near this phase\n");
      }
    }
    std::printf("LOOK FOR: both offsets within about one interval (%.0f us). A constant large offset\n"
                "          means the PM and activity clocks differ by that much.\n",
                options.interval_ns / 1e3);
    std::printf("\n-- Activity tracing after PmSampler::Stop (cuptiPmSamplingDisable) --\n");
    std::printf("resource callbacks seen: %llu\n", (unsigned long long)g_resource_callbacks.load());
    std::printf("after_stop_kernel records: %zu (%s)\n", after_stop,
                after_stop ? "OK: Disable left activity tracing working"
                           : "MISSING: Disable may have torn down activity tracing; call Stop after the final flush");
  }

  if (!sampler->dropped().empty()) {
    std::printf("\n-- Some metrics were dropped: candidate names on this chip --\n");
    for (const char* f : {"dram", "tensor", "cycles_active"}) PrintBaseMetrics(f);
  }

  std::printf("\nRESULT: PM sampling ran: %llu samples of %zu metrics; sampler error: %s\n",
              (unsigned long long)st.samples, sampler->metrics().size(),
              sampler->error().empty() ? "none" : sampler->error().c_str());
  cudaFree(src);
  cudaFree(dst);
  cudaFree(sink_buf);
  return 0;
}
