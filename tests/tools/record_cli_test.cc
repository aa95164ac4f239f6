// gpucap record as a user runs it, without a GPU: the program it starts dumps
// its environment, so each flag is checked by the variable the recorder
// reads (recorder/src/config.cc), and its exit status comes back as
// gpucap's. No CUDA means no capture: what is tested is the launcher.
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <filesystem>
#include <tuple>
#include <fstream>
#include <map>
#include <string>

#include "../support/gpucap_cli.h"
#include "../support/temp_dir.h"

namespace gpucap::testing {
namespace {

using Env = std::map<std::string, std::string>;

int64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

class Record : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    // gpucap preloads its exec shim (ASan-built here) into the uninstrumented
    // `sh`, whose first library is then not ASan's runtime: let it load late.
    const char* asan = getenv("ASAN_OPTIONS");
    std::string options = std::string(asan ? asan : "") + ":verify_asan_link_order=0";
    setenv("ASAN_OPTIONS", options.c_str(), 1);
#endif
    // Any file stands for the recorder: without CUDA nothing loads it.
    lib_ = dir_.File("libfake_recorder.so");
    WriteFile(lib_, "not a library");
    env_file_ = dir_.File("env.txt");
  }

  // `gpucap record FLAGS -- sh -c 'env > env.txt; exit CODE'`, from the
  // temporary directory.
  CliRun Run(const std::string& flags, int exit_code = 0) {
    return Gpucap("record --recorder " + lib_ + " " + flags + " -- sh -c 'cd " + dir_.File("") + " && env > " +
                  env_file_ + "; exit " + std::to_string(exit_code) + "'");
  }

  // `gpucap record FLAGS` refuses them (exit 2, saying `why`) before the
  // program runs.
  void ExpectRefused(const std::string& flags, const std::string& why) {
    std::filesystem::remove(env_file_);
    CliRun refused = Run(flags);
    EXPECT_EQ(refused.code, 2) << flags << ": " << refused.output;
    EXPECT_NE(refused.output.find(why), std::string::npos) << flags << ": " << refused.output;
    EXPECT_FALSE(std::filesystem::exists(env_file_)) << flags << ": the program ran";
  }

  Env ReadEnv() {
    Env env;
    std::ifstream in(env_file_);
    for (std::string line; std::getline(in, line);) {
      size_t eq = line.find('=');
      if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return env;
  }

  TempDir dir_;
  std::string lib_, env_file_;
};

TEST_F(Record, TheFlightRecordersFlagsReachTheRecorderAndBadOnesAreRefused) {
  CliRun r = Run("-o " + dir_.File("job.gpucap") + " --ring-mb 64 --ring 30 --ring-dump-at-exit -q");
  ASSERT_EQ(r.code, 0) << r.output;
  Env env = ReadEnv();
  ASSERT_FALSE(env.empty()) << "the program did not run";
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_RING_MB"]), 64);
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_RING_S"]), 30);
  EXPECT_EQ(env["GPUCAP_RING_DUMP_AT_EXIT"], "1");

  for (const char* bad : {"--ring-mb 0", "--ring -1", "--ring-dump-at-exit", "--ring-mb 8 --max-mb 10"}) {
    ExpectRefused(bad, "--ring");
  }
}

TEST_F(Record, TheRingsFlushPeriodReachesTheRecorderAndNeedsARing) {
  CliRun r = Run("--ring-mb 8 --ring-flush-ms 250 -q");
  ASSERT_EQ(r.code, 0) << r.output;
  Env env = ReadEnv();
  ASSERT_FALSE(env.empty()) << "the program did not run";
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_RING_FLUSH_MS"]), 250);
  std::filesystem::remove(env_file_);
  ASSERT_EQ(Run("--ring 30 --ring-flush-ms 0 -q").code, 0) << "0 turns it off";
  EXPECT_DOUBLE_EQ(std::stod(ReadEnv()["GPUCAP_RING_FLUSH_MS"]), 0);
  std::filesystem::remove(env_file_);
  ASSERT_EQ(Run("--ring-mb 8 -q").code, 0);
  EXPECT_EQ(ReadEnv().count("GPUCAP_RING_FLUSH_MS"), 0u) << "unset: the recorder's default";

  const std::pair<const char*, const char*> refusals[] = {
      {"--ring-flush-ms 250", "--ring-flush-ms needs --ring-mb or --ring"},
      {"--ring-mb 8 --ring-flush-ms -1", "--ring-flush-ms must be 0 (off) or more milliseconds"},
  };
  for (const auto& [bad, why] : refusals) ExpectRefused(bad, why);
}

TEST_F(Record, TheStepTriggersFlagsReachTheRecorderAndNeedARing) {
  CliRun r = Run("--ring-mb 8 --ring-hang 30 --ring-slow-step 4 --ring-slow-window 50 --ring-dump-interval 120 -q");
  ASSERT_EQ(r.code, 0) << r.output;
  Env env = ReadEnv();
  ASSERT_FALSE(env.empty()) << "the program did not run";
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_RING_HANG_S"]), 30);
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_RING_SLOW_STEP"]), 4);
  EXPECT_EQ(env["GPUCAP_RING_SLOW_WINDOW"], "50");
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_RING_DUMP_INTERVAL_S"]), 120);

  const std::pair<const char*, const char*> refusals[] = {
      {"--ring-hang 30", "--ring-hang needs --ring-mb or --ring"},
      {"--ring-slow-step 4", "--ring-slow-step needs --ring-mb or --ring"},
      {"--ring 10 --ring-hang 0", "--ring-hang must be above 0"},
      {"--ring 10 --ring-slow-step -1", "--ring-slow-step must be above 0"},
      {"--ring 10 --ring-slow-window 5", "--ring-slow-window needs --ring-slow-step"},
      {"--ring 10 --ring-hang 5 --ring-dump-interval 5", "--ring-dump-interval needs --ring-slow-step"},
      {"--ring 10 --ring-slow-step 3 --ring-slow-window 0", "--ring-slow-window must be at least 1"},
      {"--ring 10 --ring-slow-step 3 --ring-dump-interval -2", "--ring-dump-interval must be 0 or more seconds"},
  };
  for (const auto& [bad, why] : refusals) ExpectRefused(bad, why);
}

TEST_F(Record, TheBlockedCallTriggerReachesTheRecorderWithTheEntryGateAndNeedsARing) {
  CliRun r = Run("--ring-mb 8 --ring-hang-call 20 -q");
  ASSERT_EQ(r.code, 0) << r.output;
  Env env = ReadEnv();
  ASSERT_FALSE(env.empty()) << "the program did not run";
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_RING_HANG_CALL_S"]), 20);
#if defined(GPUCAP_HAVE_GATE)
  EXPECT_NE(env["LD_PRELOAD"].find("libgpucap_gate.so"), std::string::npos) << env["LD_PRELOAD"];
#endif
  std::filesystem::remove(env_file_);
  ASSERT_EQ(Run("--ring-mb 8 --ring-hang 20 -q").code, 0);
  EXPECT_EQ(ReadEnv()["LD_PRELOAD"].find("libgpucap_gate.so"), std::string::npos) << "no gate for step hangs";

  const std::pair<const char*, const char*> refusals[] = {
      {"--ring-hang-call 20", "--ring-hang-call needs --ring-mb or --ring"},
      {"--ring 10 --ring-hang-call 0", "--ring-hang-call must be above 0"},
  };
  for (const auto& [bad, why] : refusals) ExpectRefused(bad, why);
}

TEST_F(Record, EveryFlagReachesTheRecordersEnvironment) {
  std::string out = dir_.File("run-%p.gpucap");
  CliRun r = Run("-o " + out +
                 " --kinds kernel,memcpy,synchronization --api all --pool-mb 16 --buffer-kb 512"
                 " --delay 1.5 --duration 2 --max-mb 10 --start-paused --counters nvml,pm --counter-ms 50"
                 " --pm-metrics sm__a,dram__b --pm-interval-us 500 --window-nvtx 'Step#\\d+' --no-graphs --no-nvtx --cuda-graph-trace graph --api-records callback"
                 " --paused-graphs --pause-detach -q");
  ASSERT_EQ(r.code, 0) << r.output;
  Env env = ReadEnv();
  ASSERT_FALSE(env.empty()) << "the program did not run";
  EXPECT_EQ(env["CUDA_INJECTION64_PATH"], std::filesystem::canonical(lib_).string());
  EXPECT_EQ(env.count("NVTX_INJECTION64_PATH"), 0u) << "--no-nvtx injects no NVTX hook";
  EXPECT_EQ(env["GPUCAP_OUTPUT"], out) << "%p is the recorder's to expand";
  EXPECT_EQ(env["GPUCAP_KINDS"], "kernel,memcpy,synchronization");
  EXPECT_EQ(env["GPUCAP_API"], "all");
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_POOL_MB"]), 16);
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_BUFFER_KB"]), 512);
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_DELAY_S"]), 1.5);
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_DURATION_S"]), 2);
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_MAX_MB"]), 10);
  EXPECT_EQ(env["GPUCAP_START_PAUSED"], "1");
  EXPECT_EQ(env["GPUCAP_COUNTERS"], "nvml,pm");
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_COUNTER_MS"]), 50);
  EXPECT_EQ(env["GPUCAP_PM_METRICS"], "sm__a,dram__b");
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_PM_INTERVAL_US"]), 500);
  EXPECT_EQ(env["GPUCAP_WINDOW_NVTX"], "Step#\\d+");
  EXPECT_EQ(env["GPUCAP_GRAPHS"], "0");
  EXPECT_EQ(env["GPUCAP_NVTX"], "0");
  EXPECT_EQ(env["GPUCAP_QUIET"], "1");
  EXPECT_EQ(env["GPUCAP_CUDA_GRAPH_TRACE"], "graph");
  EXPECT_EQ(env["GPUCAP_API_RECORDS"], "callback");
  EXPECT_EQ(env["GPUCAP_PAUSED_GRAPHS"], "1");
  EXPECT_EQ(env["GPUCAP_PAUSE_DETACH"], "1");
}

TEST_F(Record, DefaultsWithoutFlags) {
  int64_t before = RealtimeNs();
  CliRun r = Run("");
  int64_t after = RealtimeNs();
  ASSERT_EQ(r.code, 0) << r.output;
  Env env = ReadEnv();
  ASSERT_FALSE(env.empty()) << "the program did not run";
  EXPECT_EQ(env["NVTX_INJECTION64_PATH"], env["CUDA_INJECTION64_PATH"]) << "NVTX ranges are recorded by default";
  EXPECT_EQ(env["GPUCAP_API"], "lean");
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_POOL_MB"]), 128);
  EXPECT_DOUBLE_EQ(std::stod(env["GPUCAP_BUFFER_KB"]), 4096);
  // The default output, made absolute against where gpucap ran.
  std::filesystem::path output = env["GPUCAP_OUTPUT"];
  EXPECT_TRUE(output.is_absolute()) << output;
  EXPECT_EQ(output.filename(), "gpucap-%h-%p.gpucap");
  // The session's start: the wall clock when gpucap started the program.
  int64_t start = std::stoll(env["GPUCAP_SESSION_START_NS"]);
  EXPECT_GE(start, before);
  EXPECT_LE(start, after);
  for (const char* unset : {"GPUCAP_KINDS", "GPUCAP_DELAY_S", "GPUCAP_DURATION_S", "GPUCAP_MAX_MB",
                            "GPUCAP_START_PAUSED", "GPUCAP_COUNTERS", "GPUCAP_COUNTER_MS", "GPUCAP_PM_METRICS",
                            "GPUCAP_PM_INTERVAL_US", "GPUCAP_WINDOW_NVTX", "GPUCAP_GRAPHS", "GPUCAP_NVTX",
                            "GPUCAP_QUIET", "GPUCAP_CUDA_GRAPH_TRACE", "GPUCAP_API_RECORDS", "GPUCAP_PAUSED_GRAPHS",
                            "GPUCAP_PAUSE_DETACH"}) {
    EXPECT_EQ(env.count(unset), 0u) << unset << " is set without its flag";
  }
}

TEST_F(Record, ExitStatusIsTheProgramsStatus) {
  for (int code : {0, 1, 7, 42, 255}) {
    CliRun r = Run("", code);
    EXPECT_EQ(r.code, code) << r.output;
  }
  // Killed by a signal: 128 + the signal, as a shell reports it.
  CliRun killed = Gpucap("record --recorder " + lib_ + " -- sh -c 'kill -TERM $$'");
  EXPECT_EQ(killed.code, 128 + 15) << killed.output;
  CliRun missing = Gpucap("record --recorder " + lib_ + " -- /nonexistent/program");
  EXPECT_EQ(missing.code, 127);
  EXPECT_NE(missing.output.find("cannot run /nonexistent/program"), std::string::npos) << missing.output;
}

TEST_F(Record, BadUsageIsRefusedBeforeRunning) {
  CliRun api = Run("--api some");
  EXPECT_EQ(api.code, 2);
  EXPECT_NE(api.output.find("--api must be lean, all or none, not 'some'"), std::string::npos) << api.output;
  EXPECT_FALSE(std::filesystem::exists(env_file_)) << "the program ran after a bad flag";
  CliRun mode = Run("--cuda-graph-trace nodes");
  EXPECT_EQ(mode.code, 2);
  EXPECT_NE(mode.output.find("--cuda-graph-trace must be node or graph, not 'nodes'"), std::string::npos)
      << mode.output;
  EXPECT_FALSE(std::filesystem::exists(env_file_)) << "the program ran after a bad --cuda-graph-trace";
  CliRun records = Run("--api-records callbacks");
  EXPECT_EQ(records.code, 2);
  EXPECT_NE(records.output.find("--api-records must be activity or callback, not 'callbacks'"), std::string::npos)
      << records.output;
  EXPECT_FALSE(std::filesystem::exists(env_file_)) << "the program ran after a bad --api-records";
  CliRun none = Gpucap("record --recorder " + lib_);
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.output.find("no program given"), std::string::npos) << none.output;
}

// --sample-random: a given seed goes through as is; none is drawn once by
// gpucap (every process of the job gets the same number); a bad one, or one
// without --sample, is refused before the program runs. --pause-detach=off
// keeps CUPTI attached.
TEST_F(Record, SampleRandomSeedsAndPauseDetachOff) {
  CliRun given = Run("--capture-range nvtx:step --sample 10 --sample-random=42 --pause-detach=off -q");
  ASSERT_EQ(given.code, 0) << given.output;
  Env env = ReadEnv();
  EXPECT_EQ(env["GPUCAP_SAMPLE"], "10");
  EXPECT_EQ(env["GPUCAP_SAMPLE_SEED"], "42");
  EXPECT_EQ(env["GPUCAP_PAUSE_DETACH"], "0");
  std::filesystem::remove(env_file_);
  CliRun drawn = Run("--capture-range nvtx:step --sample 10 --sample-random -q");
  ASSERT_EQ(drawn.code, 0) << drawn.output;
  std::string seed = ReadEnv()["GPUCAP_SAMPLE_SEED"];
  ASSERT_FALSE(seed.empty());
  EXPECT_EQ(seed.find_first_not_of("0123456789"), std::string::npos) << seed << ": a number, not 'auto'";
  std::filesystem::remove(env_file_);
  CliRun bad = Run("--capture-range nvtx:step --sample 10 --sample-random=x1");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.output.find("--sample-random must be a seed from 0 to 2^64-1, not 'x1'"), std::string::npos)
      << bad.output;
  CliRun alone = Run("--capture-range nvtx:step --sample-random=3");
  EXPECT_EQ(alone.code, 2);
  EXPECT_NE(alone.output.find("--sample-random needs --sample N"), std::string::npos) << alone.output;
  CliRun detach = Run("--pause-detach=maybe");
  EXPECT_EQ(detach.code, 2);
  EXPECT_NE(detach.output.find("--pause-detach must be on or off, not 'maybe'"), std::string::npos) << detach.output;
  EXPECT_FALSE(std::filesystem::exists(env_file_)) << "the program ran after a bad flag";
}

// Where a run is set up to pause after recording (ranges, sampling, a
// trigger file, a paused start), its pauses detach CUPTI unless told not to,
// with the entry gate preloaded; a run recording from start to end keeps
// CUPTI attached and has no gate on its calls unless --pause-detach on.
TEST_F(Record, PausesDetachByDefaultWhereTheRunIsSetUpToPause) {
  struct Case {
    std::string flags;
    const char* detach;  // GPUCAP_PAUSE_DETACH, nullptr: unset
  };
  const Case cases[] = {
      {"--capture-range nvtx:step", "1"},
      {"--window-nvtx step --sample 10", "1"},
      {"--window-nvtx step --trigger-file " + dir_.File("trigger"), "1"},
      {"--window-nvtx step", nullptr},
      {"--window-nvtx step --capture-range-end repeat", "1"},
      {"--capture-range nvtx:step --counters nvml", "1"},
      {"--capture-range nvtx:step --counters pm", nullptr},
      {"--start-paused", "1"},
      {"--capture-range nvtx:step --pause-detach off", "0"},
      {"--start-paused --pause-detach=off", "0"},
      {"", nullptr},
      {"--pause-detach on", "1"},
  };
  unsetenv("GPUCAP_PAUSE_DETACH");
  for (const Case& c : cases) {
    std::filesystem::remove(env_file_);
    CliRun r = Run(c.flags + " -q");
    ASSERT_EQ(r.code, 0) << c.flags << ": " << r.output;
    Env env = ReadEnv();
    ASSERT_FALSE(env.empty()) << c.flags << ": the program did not run";
    if (c.detach) {
      EXPECT_EQ(env["GPUCAP_PAUSE_DETACH"], c.detach) << c.flags;
    } else {
      EXPECT_EQ(env.count("GPUCAP_PAUSE_DETACH"), 0u) << c.flags;
    }
#if defined(GPUCAP_HAVE_GATE)
    bool gate = env["LD_PRELOAD"].find("libgpucap_gate.so") != std::string::npos;
    EXPECT_EQ(gate, c.detach && std::string(c.detach) == "1") << c.flags << ": " << env["LD_PRELOAD"];
#endif
  }
  // One already in gpucap's environment stands where no flag says
  // otherwise, read as the recorder reads it, and decides the gate too; an
  // empty one says nothing.
  const std::tuple<const char*, const char*, const char*> told[] = {
      {"0", "", "0"},   {"off", "", "0"},   {"on", "", "1"},   {"yes", "", "1"},
      {"", "", "1"},    {"1", "--pause-detach off", "0"},
  };
  for (const auto& [value, flag, expected] : told) {
    setenv("GPUCAP_PAUSE_DETACH", value, 1);
    std::filesystem::remove(env_file_);
    CliRun r = Run(std::string("--capture-range nvtx:step ") + flag + " -q");
    unsetenv("GPUCAP_PAUSE_DETACH");
    ASSERT_EQ(r.code, 0) << r.output;
    Env env = ReadEnv();
    EXPECT_EQ(env["GPUCAP_PAUSE_DETACH"], expected) << "'" << value << "' " << flag;
#if defined(GPUCAP_HAVE_GATE)
    bool gate = env["LD_PRELOAD"].find("libgpucap_gate.so") != std::string::npos;
    EXPECT_EQ(gate, std::string(expected) == "1") << "'" << value << "' " << flag << ": " << env["LD_PRELOAD"];
#endif
  }
}

// A signal sent to gpucap (by a scheduler, kill) reaches the program.
TEST_F(Record, ForwardsSignalsToTheProgram) {
  std::string ready = dir_.File("ready"), got = dir_.File("got");
  std::string script = std::string(GPUCAP_BINARY_DIR) + "/tools/gpucap record --recorder " + lib_ +
                       " -- sh -c 'trap \"echo usr1 > " + got + "; exit 3\" USR1; touch " + ready +
                       "; i=0; while [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; exit 9' & p=$!; "
                       "i=0; while [ ! -e " + ready + " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; "
                       "kill -USR1 $p; wait $p; exit $?";
  int status = std::system(("sh -c '" + [&] {
    std::string q;
    for (char c : script) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q;
  }() + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << "the program's USR1 trap did not run";
  EXPECT_EQ(ReadFile(got), "usr1\n");
}

}  // namespace
}  // namespace gpucap::testing
