// The launching thread's price per CUDA call: empty kernels launched eagerly
// ("launch"), and the same with the small runtime calls PyTorch makes around
// each launch ("mix": cudaGetDevice, cudaGetLastError, cudaStreamGetCaptureInfo),
// each in BLOCKS blocks of PER launches; medians of wall and thread CPU time
// per launch. Prints
//   RESULT launch_us=... launch_cpu_us=... launch_cal=... mix_us=... mix_cpu_us=... mix_cal=... calib_us=...
//
// What makes one process comparable with another (bench/README.md, "A
// measurement that resolves a point"):
//   PIN_CPU=N    after the warm-up the launching thread runs on CPU N alone
//                and every other thread of the process (CUDA's, the
//                recorder's) on the rest of the process's CPUs.
//   CALIB=1      before every block a fixed piece of CPU work (a pointer
//                chase over an L2-sized table) is timed on the same thread;
//                *_cal is the median over blocks of (us per launch) / (us per
//                calibration unit): how fast this core ran cancels.
//   TOGGLE=signal  SIGUSR2 between blocks (gpucap's pause/resume toggle), so
//                recording and paused blocks alternate in one process;
//                TOGGLE=label flips the label only (the method's own noise).
//                Adds on_*/off_* medians and their ratio per metric.
//   TOGGLE_EVERY=k the state flips every k blocks (default 1), so many short
//                blocks can share one switch (the recorder needs ~150 ms).
//   TOGGLE_ORDER=abba  segments of k blocks go on, off, off, on, ... so a
//                drift inside the process cancels (default: on, off, on, ...).
//
// Short blocks and low quantiles: the vCPU's speed only ever drops below its
// best (another tenant on the core, a lower clock), so the fast blocks of a
// process say more about the code than the median does: *_p10_us, *_p25_us
// and *_min_us are those quantiles of the blocks' us per launch (and
// *_onoff_p10 their ratio in-process). Every block's us per launch is also
// printed as a `BLOCKS launch|mix on|off v...` line for other statistics.
//
// Every block also reads the launching thread's counters (thread_counters.h:
// instructions retired, cycles, context switches; what the machine gives)
// and the process's CPU time (every thread: the recorder's writer too), and
// prints their medians per launch: *_inst, *_cyc, *_csw (per block),
// *_pcpu_us.
//
//   MARK=callgrind  under valgrind's callgrind (instr.sh): instrumentation
//                starts after the warm-up, and every block's launches are a
//                region of their own (callgrind_mark.h), labelled
//                "block <launch|mix> <on|off> <b>", so instructions retired
//                per launch can be read without a PMU.
//
// Build: nvcc -O2 -arch=sm_90 launch_loop.cu thread_counters.c callgrind_mark.c
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "callgrind_mark.h"
#include "thread_counters.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

__global__ void k_empty(float* p) {
  if (p && threadIdx.x == 1234567) p[0] = 1;
}

#define CK(x)                                                                 \
  do {                                                                        \
    cudaError_t e = (x);                                                      \
    if (e != cudaSuccess) {                                                   \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                 \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

static double Now(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The q-quantile (0: the minimum), interpolated.
static double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * (v.size() - 1);
  size_t i = static_cast<size_t>(pos);
  return i + 1 < v.size() ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[i];
}

// The launching thread alone on `cpu`, every other thread on the rest.
static void Pin(int cpu) {
  cpu_set_t all, one, rest;
  sched_getaffinity(0, sizeof(all), &all);
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  rest = all;
  CPU_CLR(cpu, &rest);
  pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  if (sched_setaffinity(self, sizeof(one), &one) != 0) perror("pin launching thread");
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      pid_t tid = atoi(e->d_name);
      if (tid > 0 && tid != self && CPU_COUNT(&rest) > 0) sched_setaffinity(tid, sizeof(rest), &rest);
    }
    closedir(d);
  }
}

// us per unit of a fixed dependent walk over 256 KiB (L2-resident).
static double Calibrate(int units) {
  static std::vector<uint32_t> table;
  const uint32_t n = 1u << 16;
  if (table.empty()) {
    table.resize(n);
    uint64_t x = 88172645463325252ull;
    for (uint32_t i = 0; i < n; ++i) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      table[i] = static_cast<uint32_t>(x) & (n - 1);
    }
  }
  double t0 = Now(CLOCK_THREAD_CPUTIME_ID);
  uint32_t j = 0;
  uint64_t acc = 0;
  for (int u = 0; u < units; ++u) {
    for (int i = 0; i < 1024; ++i) {
      j = table[j] ^ (acc & 7);
      acc += j * 2654435761u;
    }
  }
  static volatile uint64_t sink;
  sink = acc;
  return (Now(CLOCK_THREAD_CPUTIME_ID) - t0) / units;
}

struct Series {
  std::vector<double> wall, cpu, cal, inst, cyc, csw, pcpu;
};

int main() {
  int blocks = getenv("BLOCKS") ? atoi(getenv("BLOCKS")) : 15;
  int per = getenv("PER") ? atoi(getenv("PER")) : 4000;
  int pin = getenv("PIN_CPU") && *getenv("PIN_CPU") ? atoi(getenv("PIN_CPU")) : -1;
  bool calib = getenv("CALIB") && atoi(getenv("CALIB"));
  int calib_units = getenv("CALIB_UNITS") ? atoi(getenv("CALIB_UNITS")) : 2000;
  std::string toggle = getenv("TOGGLE") ? getenv("TOGGLE") : "";
  int toggle_every = getenv("TOGGLE_EVERY") ? std::max(1, atoi(getenv("TOGGLE_EVERY"))) : 1;
  bool abba = getenv("TOGGLE_ORDER") && std::string(getenv("TOGGLE_ORDER")) == "abba";
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  float* d;
  CK(cudaMalloc(&d, 1 << 20));
  for (int i = 0; i < 2000; i++) k_empty<<<1, 32, 0, s>>>(d);
  CK(cudaStreamSynchronize(s));
  if (pin >= 0) Pin(pin);
  if (calib) Calibrate(calib_units);  // the table, paged in
  const bool mark = cg_mark_from_environment("launch_loop");
  tc_open();  // after the pinning: the counters follow the thread anyway
  for (int i = 0; i < TC_N; ++i) fprintf(stderr, "counter %s: %s\n", tc_name(i), tc_status(i));
  long long k0[TC_N], k1[TC_N];
  bool on = true;  // a recorder that is not started paused records
  Series all[2], state[2][2];  // [mix], [mix][on]
  std::vector<double> calibs;
  for (int mix = 0; mix < 2; ++mix) {
    for (int b = 0; b < blocks; ++b) {
      int seg = (mix * blocks + b) / toggle_every;
      bool want = abba ? (seg % 4 == 0 || seg % 4 == 3) : seg % 2 == 0;
      if (!toggle.empty() && want != on) {
        if (toggle == "signal") raise(SIGUSR2);
        on = want;
        usleep(150000);  // the recorder's control loop acts within ~50 ms
      }
      double c = calib ? Calibrate(calib_units) : 0;
      if (calib) calibs.push_back(c);
      CK(cudaStreamSynchronize(s));
      tc_read(k0);
      // The same window for all three clocks: process CPU minus thread CPU
      // is the other threads' (the recorder's) CPU time.
      double p0 = Now(CLOCK_PROCESS_CPUTIME_ID), w0 = Now(CLOCK_MONOTONIC), c0 = Now(CLOCK_THREAD_CPUTIME_ID);
      if (mark) cg_mark_dump("between blocks");
      for (int i = 0; i < per; i++) {
        if (mix) {
          int dev;
          cudaStreamCaptureStatus st;
          cudaGetDevice(&dev);
          cudaGetLastError();
          cudaStreamGetCaptureInfo(s, &st);
        }
        k_empty<<<1, 32, 0, s>>>(d);
      }
      if (mark) {
        char label[64];
        snprintf(label, sizeof(label), "block %s %s %d", mix ? "mix" : "launch", on ? "on" : "off", b);
        cg_mark_dump(label);
      }
      tc_read(k1);  // before the wait: its spinning depends on how far the GPU lags
      CK(cudaStreamSynchronize(s));
      double w = (Now(CLOCK_MONOTONIC) - w0) / per, cp = (Now(CLOCK_THREAD_CPUTIME_ID) - c0) / per;
      double pc = (Now(CLOCK_PROCESS_CPUTIME_ID) - p0) / per;  // includes tc_read(k1): ~1 us a block
      for (Series* x : {&all[mix], &state[mix][on]}) {
        x->wall.push_back(w);
        x->cpu.push_back(cp);
        if (calib) x->cal.push_back(w / c);
        x->pcpu.push_back(pc);
        if (k0[TC_INSTRUCTIONS] >= 0 && k1[TC_INSTRUCTIONS] >= 0)
          x->inst.push_back(double(k1[TC_INSTRUCTIONS] - k0[TC_INSTRUCTIONS]) / per);
        if (k0[TC_CYCLES] >= 0 && k1[TC_CYCLES] >= 0) x->cyc.push_back(double(k1[TC_CYCLES] - k0[TC_CYCLES]) / per);
        if (k0[TC_CONTEXT_SWITCHES] >= 0) x->csw.push_back(double(k1[TC_CONTEXT_SWITCHES] - k0[TC_CONTEXT_SWITCHES]));
      }
    }
  }
  std::string line = "RESULT";
  char buf[256];
  const char* names[2] = {"launch", "mix"};
  for (int mix = 0; mix < 2; ++mix) {
    snprintf(buf, sizeof(buf), " %s_us=%.4f %s_cpu_us=%.4f", names[mix], Median(all[mix].wall), names[mix],
             Median(all[mix].cpu));
    line += buf;
    if (calib) {
      snprintf(buf, sizeof(buf), " %s_cal=%.4f", names[mix], Median(all[mix].cal));
      line += buf;
    }
    snprintf(buf, sizeof(buf), " %s_pcpu_us=%.4f %s_p10_us=%.4f %s_p25_us=%.4f %s_min_us=%.4f", names[mix],
             Median(all[mix].pcpu), names[mix], Quantile(all[mix].wall, 0.1), names[mix],
             Quantile(all[mix].wall, 0.25), names[mix], Quantile(all[mix].wall, 0));
    line += buf;
    if (!all[mix].inst.empty()) {
      snprintf(buf, sizeof(buf), " %s_inst=%.2f", names[mix], Median(all[mix].inst));
      line += buf;
    }
    if (!all[mix].cyc.empty()) {
      snprintf(buf, sizeof(buf), " %s_cyc=%.2f", names[mix], Median(all[mix].cyc));
      line += buf;
    }
    if (!all[mix].csw.empty()) {
      snprintf(buf, sizeof(buf), " %s_csw=%.1f", names[mix], Median(all[mix].csw));
      line += buf;
    }
    if (!toggle.empty()) {
      const Series &a = state[mix][1], &p = state[mix][0];
      snprintf(buf, sizeof(buf), " %s_on_us=%.4f %s_off_us=%.4f %s_onoff=%.4f %s_onoff_cpu=%.4f", names[mix],
               Median(a.wall), names[mix], Median(p.wall), names[mix], Median(a.wall) / Median(p.wall),
               names[mix], Median(a.cpu) / Median(p.cpu));
      line += buf;
      snprintf(buf, sizeof(buf), " %s_onoff_p10=%.4f %s_onoff_p25=%.4f", names[mix],
               Quantile(a.wall, 0.1) / Quantile(p.wall, 0.1), names[mix], Quantile(a.wall, 0.25) / Quantile(p.wall, 0.25));
      line += buf;
      if (calib) {
        snprintf(buf, sizeof(buf), " %s_onoff_cal=%.4f", names[mix], Median(a.cal) / Median(p.cal));
        line += buf;
      }
      if (!a.inst.empty() && !p.inst.empty()) {
        snprintf(buf, sizeof(buf), " %s_onoff_inst=%.4f", names[mix], Median(a.inst) / Median(p.inst));
        line += buf;
      }
    }
  }
  if (calib) {
    snprintf(buf, sizeof(buf), " calib_us=%.4f", Median(calibs));
    line += buf;
  }
  for (int mix = 0; mix < 2; ++mix) {
    for (int st = 1; st >= 0; --st) {
      if (state[mix][st].wall.empty()) continue;
      printf("BLOCKS %s %s", names[mix], st ? "on" : "off");
      for (double w : state[mix][st].wall) printf(" %.4f", w);
      printf("\n");
    }
  }
  printf("%s\n", line.c_str());
  return 0;
}
