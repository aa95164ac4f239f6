// The entry points the CUDA driver and NVTX call, and the process hooks
// (exit, fork, signals). Whichever entry point runs first creates the
// recorder of this process and makes it the one global (process_recorder.h).
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "crash_dump.h"
#include "dump_signal.h"
#include "gpucap/gpucap_recorder_api.h"
#include "nvtx_hooks.h"
#include "process_recorder.h"
#include "recorder.h"

namespace gpucap::recorder {
namespace {

std::once_flag g_once;

void AtExit() {
  if (Recorder* r = ProcessRecorder()) r->Stop("exit");
}

void BeforeExec() {
  if (Recorder* r = ProcessRecorder()) r->Stop("exec");
}

void AfterForkInChild() {
  if (Recorder* r = TakeProcessRecorder()) r->AbandonAfterFork();
}

void OnStopSignal(int sig) {
  if (Recorder* r = ProcessRecorder()) r->RequestStop(sig);
}

void OnToggleSignal(int) {
  if (Recorder* r = ProcessRecorder()) r->RequestToggle();
}

// Takes a signal only where the program left it at its default action: a
// handler the program installed is the program's business.
void HandleIfDefault(int sig, void (*handler)(int)) {
  struct sigaction old {};
  if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL ||
      (old.sa_flags & SA_SIGINFO)) {
    return;
  }
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(sig, &sa, nullptr);
}

Recorder* EnsureRecorder() {
  std::call_once(g_once, [] {
    Config config = Config::FromEnvironment();
    Recorder* r = Recorder::Create(config);
    if (!r) return;
    SetProcessRecorder(r);
    atexit(AtExit);
    pthread_atfork(nullptr, nullptr, AfterForkInChild);
    HandleIfDefault(SIGTERM, OnStopSignal);
    HandleIfDefault(SIGINT, OnStopSignal);
    if (config.toggle_signal) HandleIfDefault(SIGUSR2, OnToggleSignal);
    if (config.ring() && !InstallDumpSignal() && !config.quiet) {
      fprintf(stderr, "gpucap: SIGUSR1 is the program's: dump with gpucap_dump() instead\n");
    }
    if (config.ring() && config.ring_crash && !InstallCrashDump(r->crash_slot(), r->output_path(), config.quiet) && !config.quiet) {
      fprintf(stderr, "gpucap: no dump at a crash: the crash handler could not be installed\n");
    }
    // The exec shim, when `gpucap record` preloaded it, closes the capture
    // before this process execs.
    using Register = void (*)(void (*)(), pid_t);
    if (auto reg = reinterpret_cast<Register>(dlsym(RTLD_DEFAULT, "gpucap_exec_shim_register"))) {
      reg(BeforeExec, getpid());
    }
    if (config.ring()) {
      if (!config.quiet) {
        fprintf(stderr, "gpucap: recording into a %.0f MB ring; dumps go to %s\n", config.ring_bytes / 1048576.0,
                RingDumpPath(r->output_path(), 1).c_str());
      }
    } else if (!config.quiet) {
      fprintf(stderr, "gpucap: recording to %s\n", r->output_path().c_str());
    }
  });
  return ProcessRecorder();
}

// --- the gpucap C API, reached through gpucap_recorder_api_v1() ---

int ApiRangePush(const char* name) {
  Recorder* r = ProcessRecorder();
  if (!r || !r->accepting()) return -1;
  format::RangeEvent e;
  e.kind = format::RangeKind::kPush;
  e.source = format::RangeSource::kApi;
  e.timestamp_ns = r->Now();
  e.os_tid = CurrentOsTid();
  e.name = name ? name : "";
  r->AddRange(std::move(e));
  return 0;
}

int ApiRangePop() {
  Recorder* r = ProcessRecorder();
  if (!r || !r->accepting()) return -1;
  format::RangeEvent e;
  e.kind = format::RangeKind::kPop;
  e.source = format::RangeSource::kApi;
  e.timestamp_ns = r->Now();
  e.os_tid = CurrentOsTid();
  r->AddRange(std::move(e));
  return 0;
}

void ApiMark(const char* name) {
  Recorder* r = ProcessRecorder();
  if (!r || !r->accepting()) return;
  format::RangeEvent e;
  e.kind = format::RangeKind::kMark;
  e.source = format::RangeSource::kApi;
  e.timestamp_ns = r->Now();
  e.os_tid = CurrentOsTid();
  e.name = name ? name : "";
  r->AddRange(std::move(e));
}

uint64_t ApiWindowBegin(const char* label) {
  Recorder* r = ProcessRecorder();
  if (!r) return 0;
  format::WindowMark m;
  m.kind = format::WindowMarkKind::kOpen;
  m.timestamp_ns = r->Now();
  m.os_tid = CurrentOsTid();
  m.id = r->NextWindowId();
  m.label = label ? label : "";
  uint64_t id = m.id;
  r->AddEvent(std::move(m));
  return id;
}

void ApiWindowEnd(uint64_t id) {
  Recorder* r = ProcessRecorder();
  if (!r || id == 0) return;
  format::WindowMark m;
  m.kind = format::WindowMarkKind::kClose;
  m.timestamp_ns = r->Now();
  m.os_tid = CurrentOsTid();
  m.id = id;
  r->AddEvent(std::move(m));
}

int ApiMetadata(const char* name, const char* content_type, const void* data, size_t size) {
  Recorder* r = ProcessRecorder();
  if (!r || !r->accepting()) return -1;
  format::MetadataBlob b;
  b.key_kind = format::MetadataKey::kRange;  // the innermost range open on this thread now
  b.name = name ? name : "";
  b.content_type = content_type ? content_type : "";
  if (data && size) b.data.assign(static_cast<const char*>(data), size);
  b.timestamp_ns = r->Now();
  b.os_tid = CurrentOsTid();
  r->AddEvent(std::move(b));
  return 0;
}

int ApiIsRecording() {
  Recorder* r = ProcessRecorder();
  return r && r->accepting() ? 1 : 0;
}

int ApiDump(const char* why) {
  Recorder* r = ProcessRecorder();
  return r && r->RequestApiDump(why) ? 1 : 0;
}

const GpucapRecorderApiV1 kApi = {
    sizeof(GpucapRecorderApiV1), ApiRangePush, ApiRangePop,  ApiMark,
    ApiWindowBegin,              ApiWindowEnd, ApiMetadata, ApiIsRecording,
    ApiDump,
};

}  // namespace
}  // namespace gpucap::recorder

using gpucap::recorder::EnsureRecorder;

// Called by the CUDA driver at cuInit when CUDA_INJECTION64_PATH names this
// library. Returning 1 keeps CUDA going whatever happens here.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (auto* r = EnsureRecorder()) r->StartCupti();
  return 1;
}

// Called by each NVTX copy when NVTX_INJECTION64_PATH names this library.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* (*get_export_table)(uint32_t)) {
  auto* r = EnsureRecorder();
  if (!r || !r->config().nvtx) return 0;
  return gpucap::recorder::InstallNvtxHooks(get_export_table) ? 1 : 0;
}

// Called by each NVTX copy for each extension module it uses; gpucap takes
// the payload extension (NCCL's ranges end through nvtxRangePopPayload).
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtxExtension(
    nvtxExtModuleInfo_t* info) {
  auto* r = EnsureRecorder();
  if (!r || !r->config().nvtx) return 0;
  return gpucap::recorder::InstallNvtxPayloadHooks(info) ? 1 : 0;
}

extern "C" __attribute__((visibility("default"))) const GpucapRecorderApiV1* gpucap_recorder_api_v1(void) {
  return &gpucap::recorder::kApi;
}
