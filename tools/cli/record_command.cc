// gpucap record [options] -- CMD ARGS...: runs CMD with the recorder injected
// into every process of it that starts CUDA, forwards signals, and exits with
// CMD's status.
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>

#include "command.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace gpucap::tools {
namespace {

volatile sig_atomic_t g_child = 0;

// Signals a person or a scheduler sends to gpucap are meant for the program.
// Those the terminal sends reach the whole process group, the program
// included, and are not sent twice.
void Forward(int sig, siginfo_t* info, void*) {
  bool from_process = info && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
  if (g_child > 0 && (from_process || sig == SIGUSR1 || sig == SIGUSR2)) kill(g_child, sig);
}

std::string SelfDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

// Where the recorder library is: next to an installed gpucap (../lib), or in
// the build tree (../recorder).
std::string FindLibrary(const std::string& name, const std::string& override_path) {
  if (!override_path.empty()) return fs::absolute(override_path).string();
  std::string dir = SelfDir();
  for (const std::string& candidate :
       {dir + "/../lib/" + name, dir + "/../recorder/" + name, dir + "/" + name}) {
    std::error_code ec;
    if (fs::exists(candidate, ec)) return fs::canonical(candidate, ec).string();
  }
  return {};
}

int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// The recorder's settings, as flags (the recorder reads them as GPUCAP_*
// environment variables: SetRecorderEnvironment).
po::options_description RecordOptions() {
  po::options_description options("gpucap record options");
  options.add_options()
      ("output,o", po::value<std::string>()->default_value("gpucap-%h-%p.gpucap"),
       "capture file; %p pid, %r rank (RANK/LOCAL_RANK; pid<N> in a process without one), %h host, %t start time")
      ("kinds", po::value<std::string>(),
       "activity kinds, comma separated: kernel,memcpy,memcpy2,memset,runtime,driver,"
       "external_correlation,overhead,synchronization,cuda_event,memory2,memory_pool,marker; "
       "'default' = kernel,memcpy,memcpy2,memset,runtime,driver,external_correlation,overhead "
       "(synchronization and cuda_event cost ~30% on eager PyTorch: opt in with default,synchronization,cuda_event)")
      ("api", po::value<std::string>()->default_value("lean"),
       "runtime/driver calls recorded: lean (launches, copies, syncs, events, allocations), all, none")
      ("pool-mb", po::value<double>()->default_value(128), "activity buffer pool, MiB: the most memory tracing may hold")
      ("buffer-kb", po::value<double>()->default_value(4096), "one activity buffer, KiB")
      ("delay", po::value<double>(), "start recording after this many seconds (with --capture-range: look at ranges only after it)")
      ("duration", po::value<double>(), "stop recording after this many seconds of recording")
      ("max-mb", po::value<double>(), "stop cleanly when the capture reaches this size, MiB")
      ("ring-mb", po::value<double>(),
       "flight recorder: keep the last N MiB of the recording (compressed) in memory instead of writing it, "
       "and write it out only when asked: SIGUSR1, gpucap_dump(), --ring-dump-at-exit; each dump is a new "
       "capture, OUTPUT with .ring-1, .ring-2, ... before its extension")
      ("ring", po::value<double>(),
       "flight recorder: keep the last SECONDS of the recording (within --ring-mb, 256 MiB unless given)")
      ("ring-dump-at-exit", "flight recorder: also dump when the recording ends (exit, SIGTERM, --duration)")
      ("ring-flush-ms", po::value<double>(),
       "flight recorder: force CUPTI to hand over its buffers every MS while recording (default 500; 0: off), "
       "so that a crash dump lacks at most about that long of GPU activity")
      ("ring-hang", po::value<double>(),
       "flight recorder: dump when no step closed for SECONDS (once per hang; a step closing re-arms it); the "
       "steps: the --window-nvtx ranges (or an nvtx --capture-range's), else 'ProfilerStep#\\d+'")
      ("ring-hang-call", po::value<double>(),
       "flight recorder: dump when a thread has been inside one CUDA call for SECONDS (once per call); "
       "preloads gpucap's entry gate, which adds about 27 instructions to each CUDA call")
      ("ring-slow-step", po::value<double>(),
       "flight recorder: dump, a second after its end, a step that took more than K times the median of the "
       "last --ring-slow-window steps of its thread and name (digits aside)")
      ("ring-slow-window", po::value<unsigned>(), "steps in --ring-slow-step's median (default 20)")
      ("ring-dump-interval", po::value<double>(),
       "at most one --ring-slow-step dump per SECONDS (default 60); those left out are counted in the next")
      ("counters", po::value<std::string>(),
       "GPU counters, comma separated: nvml (power, clocks, temperature, utilization every 100 ms), pm (CUPTI PM sampling: SM active, DRAM throughput, tensor pipe active; adds ~0.75 s to the first CUDA call)")
      ("counter-ms", po::value<double>(), "NVML sampling interval, ms (default 100)")
      ("pm-metrics", po::value<std::string>(), "PM sampling metrics, comma separated (default: SM active, DRAM throughput, tensor pipe active)")
      ("pm-interval-us", po::value<double>(), "PM sampling interval, us (default 10000)")
      ("start-paused", "start paused; SIGUSR2 toggles recording")
      ("paused-graphs",
       "attach to CUPTI while paused too, so that CUDA graphs built before the first recording keep their "
       "topology; costs every CUDA call ~290 instructions (+3.6% of a kernel launch) while paused")
      ("pause-detach", po::value<std::string>()->implicit_value("on"),
       "on or off: at each pause after recording, finalize CUPTI while gpucap's entry gate holds every other "
       "thread out of CUDA, so that a paused program pays nothing for CUPTI (docs/recorder-detach.md). On by "
       "default with --capture-range, --sample, --trigger-file and --start-paused; off otherwise, where SIGUSR2 "
       "pauses then keep CUPTI attached. A detach holds the program's CUDA calls for ~2 ms (more while the GPU "
       "has work queued); off keeps CUPTI attached while paused")
      ("window-nvtx", po::value<std::string>(),
       "record a window mark for each NVTX range whose name matches this regex, e.g. 'ProfilerStep#\\d+'")
      ("cuda-graph-trace", po::value<std::string>()->default_value("node"),
       "CUDA graph launches: node (a record per node, the default) or graph (one record per graph launch, cheaper; no node "
       "records; only for a recording from the start: with ranges, sampling, a paused start or a delay, graphs are "
       "recorded per node)")
      ("capture-range", po::value<std::string>(),
       "record only inside these ranges, paused outside: nvtx:REGEX (NVTX ranges "
       "whose name matches; also their window marks) or cudaProfilerApi (cudaProfilerStart to cudaProfilerStop)")
      ("capture-range-end", po::value<std::string>(),
       "after a capture range: stop (stop recording; the default), repeat (wait for the next), repeat:N "
       "(stop after N); with --sample or --trigger-file the default is repeat")
      ("sample", po::value<unsigned>(),
       "record one capture range (or --window-nvtx range) in N, complete, e.g. 1 ProfilerStep in 100; "
       "the last of each N unless --sample-random")
      ("sample-random", po::value<std::string>()->implicit_value("auto"),
       "with --sample N: record one range chosen at random in each block of N (stratified), from SEED "
       "(--sample-random=SEED; drawn once for the whole job when not given, and kept in the capture's options)")
      ("trigger-file", po::value<std::string>(),
       "when this file appears, record the next --trigger-windows capture (or --window-nvtx) ranges, then "
       "rename it to PATH.done")
      ("trigger-windows", po::value<unsigned>(), "ranges one trigger file records (default 1)")
      ("api-records", po::value<std::string>(),
       "where the API calls' records come from: activity (CUPTI's RUNTIME/DRIVER activity records) or "
       "callback (written by gpucap from CUPTI's callbacks; the same capture; see bench/README.md)")
      ("latency-timestamps",
       "record when each kernel was queued and submitted (the trace's \"queued\" arg); costs ~5% per launch")
      ("no-graphs", "do not record CUDA graph topology")
      ("no-nvtx", "do not record NVTX ranges")
      ("recorder", po::value<std::string>(), "path of libgpucap_recorder.so (default: found next to gpucap)")
      ("quiet,q", "print nothing but errors");
  return options;
}

// Whether pauses after a recording detach CUPTI ("1"), keep it ("0"), or
// nothing is said (""). --pause-detach says; else a GPUCAP_PAUSE_DETACH
// already in the environment, read as the recorder reads its switches (0,
// false, off: no; empty: not said); else yes where the run is set up to
// pause after recording (ranges, sampling, a trigger file, a paused start
// toggled by SIGUSR2), where CUPTI kept attached would cost a pause what
// recording costs, but for PM sampling, which never detaches
// (CuptiSession::MakeDetach). A run recording from start to end keeps
// CUPTI's own price, without the entry gate on every CUDA call.
std::string PauseDetach(const po::variables_map& vm) {
  if (vm.count("pause-detach")) return vm["pause-detach"].as<std::string>() == "off" ? "0" : "1";
  if (const char* v = getenv("GPUCAP_PAUSE_DETACH"); v && *v) {
    std::string said = v;
    return said == "0" || said == "false" || said == "off" ? "0" : "1";
  }
  bool pauses = vm.count("capture-range") || vm.count("capture-range-end") || vm.count("sample") ||
                vm.count("trigger-file") || vm.count("start-paused");
  bool pm = vm.count("counters") && vm["counters"].as<std::string>().find("pm") != std::string::npos;
  return pauses && !pm ? "1" : "";
}

void SetRecorderEnvironment(const po::variables_map& vm, const std::string& lib, const std::string& api) {
  auto set = [](const char* name, const std::string& value) { setenv(name, value.c_str(), 1); };
  set("CUDA_INJECTION64_PATH", lib);
  if (!vm.count("no-nvtx")) set("NVTX_INJECTION64_PATH", lib);
  set("GPUCAP_OUTPUT", fs::absolute(vm["output"].as<std::string>()).string());
  set("GPUCAP_API", api);
  set("GPUCAP_POOL_MB", std::to_string(vm["pool-mb"].as<double>()));
  set("GPUCAP_BUFFER_KB", std::to_string(vm["buffer-kb"].as<double>()));
  set("GPUCAP_SESSION_START_NS", std::to_string(RealtimeNs()));
  if (vm.count("kinds")) set("GPUCAP_KINDS", vm["kinds"].as<std::string>());
  if (vm.count("delay")) set("GPUCAP_DELAY_S", std::to_string(vm["delay"].as<double>()));
  if (vm.count("duration")) set("GPUCAP_DURATION_S", std::to_string(vm["duration"].as<double>()));
  if (vm.count("max-mb")) set("GPUCAP_MAX_MB", std::to_string(vm["max-mb"].as<double>()));
  if (vm.count("ring-mb")) set("GPUCAP_RING_MB", std::to_string(vm["ring-mb"].as<double>()));
  if (vm.count("ring")) set("GPUCAP_RING_S", std::to_string(vm["ring"].as<double>()));
  if (vm.count("ring-dump-at-exit")) set("GPUCAP_RING_DUMP_AT_EXIT", "1");
  if (vm.count("ring-flush-ms")) set("GPUCAP_RING_FLUSH_MS", std::to_string(vm["ring-flush-ms"].as<double>()));
  if (vm.count("ring-hang")) set("GPUCAP_RING_HANG_S", std::to_string(vm["ring-hang"].as<double>()));
  if (vm.count("ring-hang-call")) set("GPUCAP_RING_HANG_CALL_S", std::to_string(vm["ring-hang-call"].as<double>()));
  if (vm.count("ring-slow-step")) set("GPUCAP_RING_SLOW_STEP", std::to_string(vm["ring-slow-step"].as<double>()));
  if (vm.count("ring-slow-window")) {
    set("GPUCAP_RING_SLOW_WINDOW", std::to_string(vm["ring-slow-window"].as<unsigned>()));
  }
  if (vm.count("ring-dump-interval")) {
    set("GPUCAP_RING_DUMP_INTERVAL_S", std::to_string(vm["ring-dump-interval"].as<double>()));
  }
  if (vm.count("start-paused")) set("GPUCAP_START_PAUSED", "1");
  if (vm.count("paused-graphs")) set("GPUCAP_PAUSED_GRAPHS", "1");
  std::string detach = PauseDetach(vm);
  if (!detach.empty()) set("GPUCAP_PAUSE_DETACH", detach);
  if (vm.count("counters")) set("GPUCAP_COUNTERS", vm["counters"].as<std::string>());
  if (vm.count("counter-ms")) set("GPUCAP_COUNTER_MS", std::to_string(vm["counter-ms"].as<double>()));
  if (vm.count("pm-metrics")) set("GPUCAP_PM_METRICS", vm["pm-metrics"].as<std::string>());
  if (vm.count("pm-interval-us")) set("GPUCAP_PM_INTERVAL_US", std::to_string(vm["pm-interval-us"].as<double>()));
  if (vm.count("window-nvtx")) set("GPUCAP_WINDOW_NVTX", vm["window-nvtx"].as<std::string>());
  if (vm["cuda-graph-trace"].as<std::string>() == "graph") set("GPUCAP_CUDA_GRAPH_TRACE", "graph");
  if (vm.count("capture-range")) set("GPUCAP_CAPTURE_RANGE", vm["capture-range"].as<std::string>());
  if (vm.count("capture-range-end")) set("GPUCAP_CAPTURE_RANGE_END", vm["capture-range-end"].as<std::string>());
  if (vm.count("sample")) set("GPUCAP_SAMPLE", std::to_string(vm["sample"].as<unsigned>()));
  if (vm.count("sample-random")) {
    // Drawn here, once: every process of the job (each rank) samples the
    // same ranges.
    std::string seed = vm["sample-random"].as<std::string>();
    if (seed == "auto") {
      std::random_device rd;
      seed = std::to_string((uint64_t{rd()} << 32) ^ rd());
    }
    set("GPUCAP_SAMPLE_SEED", seed);
  }
  if (vm.count("trigger-file")) set("GPUCAP_TRIGGER_FILE", fs::absolute(vm["trigger-file"].as<std::string>()).string());
  if (vm.count("trigger-windows")) set("GPUCAP_TRIGGER_WINDOWS", std::to_string(vm["trigger-windows"].as<unsigned>()));
  if (vm.count("latency-timestamps")) set("GPUCAP_LATENCY_TIMESTAMPS", "1");
  if (vm.count("api-records")) set("GPUCAP_API_RECORDS", vm["api-records"].as<std::string>());
  if (vm.count("no-graphs")) set("GPUCAP_GRAPHS", "0");
  if (vm.count("no-nvtx")) set("GPUCAP_NVTX", "0");
  if (vm.count("quiet")) set("GPUCAP_QUIET", "1");
  // The exec shim, and the entry gate (entry_gate.h) only where pauses
  // detach (--pause-detach on) or blocked calls are watched
  // (--ring-hang-call): the gate wraps every CUDA call.
  bool gate = detach == "1" || vm.count("ring-hang-call");
  std::string preload;
  for (const char* name : {"libgpucap_exec.so", "libgpucap_gate.so"}) {
    if (std::string(name) == "libgpucap_gate.so" && !gate) continue;
    std::string path = FindLibrary(name, "");
    if (!path.empty()) preload += (preload.empty() ? "" : ":") + path;
  }
  if (!preload.empty()) {
    const char* old = getenv("LD_PRELOAD");
    set("LD_PRELOAD", old && *old ? preload + ":" + old : preload);
  }
}

// The flight recorder's flags: a positive bound, and nothing that only
// makes sense of a file written as it goes.
std::string RingUsageError(const po::variables_map& vm) {
  bool ring = vm.count("ring-mb") || vm.count("ring");
  if (vm.count("ring-mb") && !(vm["ring-mb"].as<double>() > 0)) return "--ring-mb must be above 0";
  if (vm.count("ring") && !(vm["ring"].as<double>() > 0)) return "--ring must be above 0 seconds";
  if (vm.count("ring-dump-at-exit") && !ring) return "--ring-dump-at-exit needs --ring-mb or --ring";
  if (vm.count("ring-flush-ms") && !ring) return "--ring-flush-ms needs --ring-mb or --ring";
  if (vm.count("ring-flush-ms") && !(vm["ring-flush-ms"].as<double>() >= 0)) {
    return "--ring-flush-ms must be 0 (off) or more milliseconds";
  }
  if (ring && vm.count("max-mb")) return "--max-mb bounds a capture file; with --ring-mb the ring is the bound";
  for (const char* flag : {"ring-hang", "ring-hang-call", "ring-slow-step"}) {
    if (vm.count(flag) && !ring) return std::string("--") + flag + " needs --ring-mb or --ring";
    if (vm.count(flag) && !(vm[flag].as<double>() > 0)) return std::string("--") + flag + " must be above 0";
  }
  for (const char* flag : {"ring-slow-window", "ring-dump-interval"}) {
    if (vm.count(flag) && !vm.count("ring-slow-step")) return std::string("--") + flag + " needs --ring-slow-step";
  }
  if (vm.count("ring-slow-window") && vm["ring-slow-window"].as<unsigned>() == 0) {
    return "--ring-slow-window must be at least 1";
  }
  if (vm.count("ring-dump-interval") && !(vm["ring-dump-interval"].as<double>() >= 0)) {
    return "--ring-dump-interval must be 0 or more seconds";
  }
  return {};
}

// The capture-range flags that cannot work together; the recorder checks
// the values themselves again (it also reads them from the environment).
std::string CaptureRangeUsageError(const po::variables_map& vm) {
  bool ranges = vm.count("capture-range") || vm.count("window-nvtx");
  if (vm.count("capture-range")) {
    std::string v = vm["capture-range"].as<std::string>();
    if (v != "cudaProfilerApi" && (v.rfind("nvtx:", 0) != 0 || v.size() == 5)) {
      return "--capture-range must be nvtx:REGEX or cudaProfilerApi, not '" + v + "'";
    }
  }
  if (vm.count("capture-range-end")) {
    std::string v = vm["capture-range-end"].as<std::string>();
    bool n_ok = v.rfind("repeat:", 0) == 0 && v.size() > 7 && v.size() < 17 &&
                v.find_first_not_of("0123456789", 7) == std::string::npos && std::stoull(v.substr(7)) >= 1;
    if (v != "stop" && v != "repeat" && !n_ok) {
      return "--capture-range-end must be stop, repeat or repeat:N (N >= 1), not '" + v + "'";
    }
  }
  if (vm.count("sample-random")) {
    if (!vm.count("sample")) return "--sample-random needs --sample N";
    std::string v = vm["sample-random"].as<std::string>();
    if (v != "auto" && (v.empty() || v.size() > 20 || v.find_first_not_of("0123456789") != std::string::npos ||
                        (v.size() == 20 && v > "18446744073709551615"))) {
      return "--sample-random must be a seed from 0 to 2^64-1, not '" + v + "'";
    }
  }
  if (vm.count("pause-detach")) {
    std::string v = vm["pause-detach"].as<std::string>();
    if (v != "on" && v != "off") return "--pause-detach must be on or off, not '" + v + "'";
  }
  for (const char* flag : {"sample", "trigger-file", "capture-range-end"}) {
    if (vm.count(flag) && !ranges) return std::string("--") + flag + " needs --capture-range or --window-nvtx";
  }
  if (vm.count("sample") && vm["sample"].as<unsigned>() == 0) return "--sample must be at least 1";
  if (vm.count("trigger-windows") && !vm.count("trigger-file")) return "--trigger-windows needs --trigger-file";
  return "";
}

// Runs the program with the signals a user sends gpucap forwarded to it;
// returns its exit code (128 + signal when it was killed).
int RunProgram(std::vector<std::string>* args) {
  std::vector<std::string>& program = *args;
  struct sigaction sa {};
  sa.sa_sigaction = Forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaction(sig, &sa, nullptr);

  pid_t child = fork();
  if (child < 0) {
    std::cerr << "gpucap record: fork failed: " << std::strerror(errno) << "\n";
    return 1;
  }
  if (child == 0) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) signal(sig, SIG_DFL);
    std::vector<char*> argv;
    for (std::string& a : program) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::cerr << "gpucap record: cannot run " << program[0] << ": " << std::strerror(errno) << "\n";
    _exit(127);
  }
  g_child = child;
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      std::cerr << "gpucap record: waitpid failed: " << std::strerror(errno) << "\n";
      return 1;
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int RunRecord(const std::vector<std::string>& args) {
  // Everything after "--" (or the first positional) is the program.
  std::vector<std::string> own, program;
  bool rest = false;
  for (const std::string& a : args) {
    if (rest) {
      program.push_back(a);
    } else if (a == "--") {
      rest = true;
    } else {
      own.push_back(a);
    }
  }
  po::options_description options = RecordOptions();
  po::positional_options_description positional;
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(own, "usage: gpucap record [options] -- CMD [ARGS...]", options, positional, &vm,
                 &code)) {
    return code;
  }
  if (program.empty()) {
    std::cerr << "gpucap record: no program given (gpucap record [options] -- CMD [ARGS...])\n";
    return 2;
  }
  std::string lib = FindLibrary("libgpucap_recorder.so",
                                vm.count("recorder") ? vm["recorder"].as<std::string>() : "");
  if (lib.empty()) {
    std::cerr << "gpucap record: libgpucap_recorder.so not found next to " << SelfDir()
              << " (this gpucap was built without CUDA/CUPTI; pass --recorder PATH)\n";
    return 2;
  }
  std::string api = vm["api"].as<std::string>();
  if (api != "lean" && api != "all" && api != "none") {
    std::cerr << "gpucap record: --api must be lean, all or none, not '" << api << "'\n";
    return 2;
  }

  std::string graph_trace = vm["cuda-graph-trace"].as<std::string>();
  if (graph_trace != "node" && graph_trace != "graph") {
    std::cerr << "gpucap record: --cuda-graph-trace must be node or graph, not '" << graph_trace << "'\n";
    return 2;
  }

  if (vm.count("api-records")) {
    std::string source = vm["api-records"].as<std::string>();
    if (source != "activity" && source != "callback") {
      std::cerr << "gpucap record: --api-records must be activity or callback, not '" << source << "'\n";
      return 2;
    }
  }

  if (std::string bad = RingUsageError(vm); !bad.empty()) {
    std::cerr << "gpucap record: " << bad << "\n";
    return 2;
  }

  if (std::string bad = CaptureRangeUsageError(vm); !bad.empty()) {
    std::cerr << "gpucap record: " << bad << "\n";
    return 2;
  }

  SetRecorderEnvironment(vm, lib, api);
  return RunProgram(&program);
}

}  // namespace gpucap::tools
