// CuptiSession's detach and re-attach wired to the correlation shift
// (correlation_shift.h), over a CUPTI faked at link level: this program
// defines the CUPTI functions the session calls, so the static recorder
// core binds to these rather than to libcupti (which is linked for the rest,
// the record walk among it), and exports an entry gate that always closes.
//
// The fake numbers calls from 22 after every cuptiFinalize, as CUPTI 13.0
// did on the H100 (each `--sample 100` cycle's ids from 22 up, 2026-12-06);
// what is asserted is that the session moves the shift past every id seen
// at each attach after a finalize: the ids of CUPTI's buffers its flush
// handed over, and the callback records still in the threads' buffers.
#include "cupti_session.h"

#include <cupti.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api_record.h"
#include "api_records.h"
#include "cupti_buffers.h"
#include "discard_sink.h"
#include "first_seen.h"
#include "gate_api.h"
#include "gpucap/format/capture_writer.h"

namespace {

constexpr size_t kBufferBytes = 1 << 16;

// What the fake CUPTI holds: the buffer callbacks, the one buffer it has
// asked for, the next correlation id, and what was called.
struct FakeCupti {
  std::mutex mu;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  uint8_t* buffer = nullptr;
  size_t valid = 0;
  uint32_t next_id = 22;
  int finalizes = 0;
  int subscribes = 0;
  bool gate_closed = false;
  // Whether each cuptiActivityRegisterCallbacks came with the gate closed.
  std::vector<bool> registered_gated;
  std::map<CUpti_ActivityKind, bool> kinds;
  std::vector<std::string> calls;  // "off", "flush", "finalize", in order

  void Reset() {
    std::lock_guard<std::mutex> lock(mu);
    request = nullptr;
    complete = nullptr;
    buffer = nullptr;
    valid = 0;
    next_id = 22;
    finalizes = subscribes = 0;
    gate_closed = false;
    registered_gated.clear();
    kinds.clear();
    calls.clear();
  }
};
FakeCupti g_cupti;

}  // namespace

// --- the fake CUPTI ------------------------------------------------------------------------------------
extern "C" {
CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult, const char** str) {
  *str = "fake";
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute, size_t*, void*) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                    CUpti_BuffersCallbackCompleteFunc completed) {
  std::lock_guard<std::mutex> lock(g_cupti.mu);
  g_cupti.request = requested;
  g_cupti.complete = completed;
  g_cupti.registered_gated.push_back(g_cupti.gate_closed);
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityEnableLatencyTimestamps(uint8_t) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*) {
  std::lock_guard<std::mutex> lock(g_cupti.mu);
  ++g_cupti.subscribes;
  static int handle;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&handle);
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId) {
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  std::lock_guard<std::mutex> lock(g_cupti.mu);
  g_cupti.kinds[kind] = true;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  std::lock_guard<std::mutex> lock(g_cupti.mu);
  g_cupti.kinds[kind] = false;
  g_cupti.calls.push_back("off");
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityEnableAllSyncRecords(uint8_t) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId, uint8_t) { return CUPTI_SUCCESS; }
CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId, uint8_t) { return CUPTI_SUCCESS; }
// A forced flush hands the buffer CUPTI holds over, records and all.
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) {
  uint8_t* b;
  size_t valid;
  CUpti_BuffersCallbackCompleteFunc complete;
  {
    std::lock_guard<std::mutex> lock(g_cupti.mu);
    b = g_cupti.buffer;
    valid = g_cupti.valid;
    complete = g_cupti.complete;
    g_cupti.buffer = nullptr;
    g_cupti.valid = 0;
    g_cupti.calls.push_back("flush");
  }
  if (b && complete) complete(nullptr, 0, b, kBufferBytes, valid);
  return CUPTI_SUCCESS;
}
// CUPTI forgets its callbacks, its buffer (the recorder takes it back) and
// its count of calls.
CUptiResult CUPTIAPI cuptiFinalize(void) {
  std::lock_guard<std::mutex> lock(g_cupti.mu);
  ++g_cupti.finalizes;
  g_cupti.calls.push_back("finalize");
  g_cupti.request = nullptr;
  g_cupti.complete = nullptr;
  g_cupti.buffer = nullptr;
  g_cupti.valid = 0;
  g_cupti.next_id = 22;
  g_cupti.kinds.clear();
  return CUPTI_SUCCESS;
}

// The entry gate libgpucap_gate.so would export: it always closes (no other
// thread here is in CUDA), and something went through it.
const GpucapEntryGateV1* gpucap_entry_gate_v1(void) {
  static const GpucapEntryGateV1 gate = {
      sizeof(GpucapEntryGateV1),
      [](uint64_t, uint32_t* in_flight, uint64_t* waited_ns) {
        *in_flight = 0;
        *waited_ns = 0;
        std::lock_guard<std::mutex> lock(g_cupti.mu);
        g_cupti.gate_closed = true;
        return 1;
      },
      [] {
        std::lock_guard<std::mutex> lock(g_cupti.mu);
        g_cupti.gate_closed = false;
      },
      [](const void*, const void*) {},
      [] { return uint64_t{1}; },
      [] { return uint64_t{0}; },
      [] { return uint32_t{0}; },
      [](const void*) { return 0; },
      [](uint64_t* tables, uint64_t* entries, uint64_t* refused) {
        if (tables) *tables = 1;
        if (entries) *entries = 1;
        if (refused) *refused = 0;
      },
      [](GpucapGateCall*, size_t) { return size_t{0}; },
      [] {
        std::lock_guard<std::mutex> lock(g_cupti.mu);
        g_cupti.gate_closed = false;
        return uint64_t{0};
      },
  };
  return &gate;
}
}  // extern "C"

namespace gpucap::recorder {
namespace {

CuptiBuffers* g_buffers = nullptr;  // where the session's buffer callbacks lead

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  g_buffers->OnRequested(buffer, size, max_records);
}
void CUPTIAPI BufferCompleted(CUcontext, uint32_t stream, uint8_t* buffer, size_t size, size_t valid) {
  g_buffers->OnCompleted(0, stream, buffer, size, valid, 0);
}
void CUPTIAPI Callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// A call CUPTI records: an API record with its next id, in a buffer asked
// for through the registered callback. Its id.
uint32_t Call() {
  std::lock_guard<std::mutex> lock(g_cupti.mu);
  if (!g_cupti.buffer) {
    size_t size = 0, max_records = 0;
    g_cupti.request(&g_cupti.buffer, &size, &max_records);
    if (!g_cupti.buffer) return 0;
  }
  uint32_t id = g_cupti.next_id++;
  g_cupti.valid += PutApiRecord(g_cupti.buffer + g_cupti.valid, id);
  return id;
}

// A session that detaches at pauses, its buffers, the writer behind them.
struct Session {
  Config config;
  RecorderPhase phase;
  OnceLog log;
  FirstSeen seen;
  std::unique_ptr<format::CaptureWriter> writer;
  std::unique_ptr<CuptiSession> cupti;
  std::unique_ptr<CuptiBuffers> buffers;
  std::unique_ptr<ApiRecords> api_records;
  std::vector<bool> attaches_late;  // each attach's `late`, as the recorder is told it
  bool start_paused = false;

  explicit Session(bool callback_records = false, bool attach_prepare = false, bool start_paused = false,
                   uint32_t detach_quiet_ms = 0) {
    this->start_paused = start_paused;
    g_cupti.Reset();
    config.pause_detach = true;
    config.attach_prepare = attach_prepare;
    config.detach_quiet_ms = detach_quiet_ms;
    config.kinds = {static_cast<uint32_t>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                    static_cast<uint32_t>(CUPTI_ACTIVITY_KIND_RUNTIME)};
    phase.store(RecorderPhase::kRecording);
    writer = format::CaptureWriter::Start(std::make_unique<DiscardSink>(), format::WriterOptions{}).value();
    cupti = std::make_unique<CuptiSession>(
        config, &phase, &log, CuptiSession::Entry{BufferRequested, BufferCompleted, Callback, nullptr},
        [this](bool late) { attaches_late.push_back(late); });
    buffers = std::make_unique<CuptiBuffers>(8, kBufferBytes, writer.get(), &phase, &seen, [] {},
                                             cupti->correlations());
    g_buffers = buffers.get();
    if (callback_records) {
      api_records = std::make_unique<ApiRecords>(
          std::vector<ApiRecords::Id>{{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000}},
          kBufferBytes, 1, [this] { return buffers->pool()->Take(); },
          [this](uint8_t* b, size_t valid) { buffers->OnFilled(b, valid); });
    }
    cupti->MakeDetach();
    cupti->UseBuffers(buffers.get());
    cupti->MarkStarted();
    if (start_paused) phase.store(RecorderPhase::kPaused);
    cupti->Start(/*attach=*/!start_paused, /*recording=*/!start_paused, api_records.get());
  }
  ~Session() {
    EXPECT_TRUE(writer->Close(format::Trailer{}, std::chrono::seconds(10)).ok());
    g_buffers = nullptr;
  }

  // A recorded range's end: the pause, its flush and its detach.
  void PauseAndDetach() {
    phase.store(RecorderPhase::kPaused);
    cupti->Pause();
  }
  // The next recorded range's start.
  bool Resume() {
    phase.store(RecorderPhase::kRecording);
    return cupti->Record();
  }
  std::map<std::string, uint64_t> Stats() const {
    std::vector<std::pair<std::string, uint64_t>> v;
    cupti->Stats(&v);
    return {v.begin(), v.end()};
  }
};

TEST(CuptiSession, EachAttachAfterAFinalizeShiftsPastTheIdsCuptiGaveBefore) {
  Session s;
  ASSERT_TRUE(s.cupti->detaches()) << "the exported gate makes the detach";
  EXPECT_EQ(Call(), 22u);
  EXPECT_EQ(Call(), 23u);
  EXPECT_EQ(Call(), 24u);
  s.PauseAndDetach();
  ASSERT_EQ(g_cupti.finalizes, 1) << "the pause finalized CUPTI";
  EXPECT_EQ(s.cupti->correlations()->shift(), 0u) << "nothing attached since";

  ASSERT_TRUE(s.Resume());
  EXPECT_EQ(g_cupti.subscribes, 2) << "attached again";
  EXPECT_EQ(s.cupti->correlations()->shift(), 25u) << "past the first session's 22..24";
  EXPECT_EQ(Call(), 22u) << "CUPTI numbers from the start again";
  s.PauseAndDetach();
  ASSERT_EQ(g_cupti.finalizes, 2);

  ASSERT_TRUE(s.Resume());
  EXPECT_EQ(s.cupti->correlations()->shift(), 22u + 25u + 1u)
      << "past the second session's one call, written as 22 + 25";
  auto stats = s.Stats();
  EXPECT_EQ(stats["cupti_sessions"], 3u);
  EXPECT_EQ(stats["cupti_detaches"], 2u);
  EXPECT_EQ(stats["cupti_stage_finalize_count"], 2u);
  EXPECT_EQ(stats["cupti_stage_settle_count"], 2u) << "one settling per attach after a finalize";
}

// Callback records (GPUCAP_API_RECORDS=callback) still in a thread's buffer
// when CUPTI was let go: handed over before the shift moves, so the next
// session's ids go past theirs too.
TEST(CuptiSession, CallbackRecordsLeftInAThreadsBufferAreSeenBeforeTheShiftMoves) {
  Session s(/*callback_records=*/true);
  ASSERT_NE(s.api_records, nullptr);
  ASSERT_TRUE(s.api_records->on()) << "switched on with the kinds";
  // A launch's record, made on this thread and left in its buffer.
  s.api_records->OnEnter(CUPTI_CB_DOMAIN_RUNTIME_API, 60, 1000);
  s.api_records->OnExit(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 60, 0, 2000, 7);
  s.PauseAndDetach();
  ASSERT_EQ(g_cupti.finalizes, 1);
  EXPECT_EQ(s.api_records->records(), 0u) << "not handed over by the pause";

  ASSERT_TRUE(s.Resume());
  EXPECT_EQ(s.api_records->records(), 1u) << "handed over by the attach";
  EXPECT_EQ(s.cupti->correlations()->shift(), 61u) << "past the callback record's 60";
}

// The control thread's attach ahead of a recorded range: by default CUPTI
// registers again with every other thread held; with GPUCAP_ATTACH_PREPARE
// the registration comes first, the gate open, and the shift still moves
// before CUPTI is lent a buffer of the new session.
TEST(CuptiSession, AnAttachAheadRegistersCuptiInsideTheGateUnlessPrepared) {
  for (bool prepare : {false, true}) {
    SCOPED_TRACE(prepare ? "prepared" : "gated");
    Session s(/*callback_records=*/false, prepare);
    EXPECT_EQ(Call(), 22u);
    s.PauseAndDetach();
    ASSERT_EQ(g_cupti.finalizes, 1);
    s.cupti->RecordAhead([] { return true; });
    EXPECT_TRUE(s.cupti->activity_enabled()) << "attached, the kinds on, while still paused";
    ASSERT_EQ(g_cupti.registered_gated.size(), 2u);
    EXPECT_FALSE(g_cupti.registered_gated[0]) << "the first, at the start, needs no gate";
    EXPECT_EQ(g_cupti.registered_gated[1], !prepare);
    EXPECT_FALSE(g_cupti.gate_closed) << "opened again";
    EXPECT_EQ(s.cupti->correlations()->shift(), 23u);
    auto stats = s.Stats();
    EXPECT_EQ(stats["cupti_attaches_prepared"], prepare ? 1u : 0u);
    EXPECT_EQ(stats["cupti_recorded_ahead"], 1u);
    EXPECT_EQ(stats["cupti_stage_register_count"], 2u);
    EXPECT_EQ(stats["cupti_stage_attributes_count"], 2u);
    EXPECT_EQ(stats["cupti_sessions"], 2u) << "the shift moved once for the one finalize";
    EXPECT_EQ(s.attaches_late, (std::vector<bool>{false, true}))
        << "the re-attach is late, prepared or not: contexts made meanwhile announced no device";
    EXPECT_EQ(Call(), 22u) << "CUPTI's numbering from the start again";
    s.PauseAndDetach();
    EXPECT_EQ(s.cupti->correlations()->shift(), 23u) << "nothing moves it while detached";
    ASSERT_TRUE(s.Resume());
    EXPECT_EQ(s.cupti->correlations()->shift(), 22u + 23u + 1u)
        << "the prepared session's call was written shifted by 23: its buffer was lent after the shift moved";
  }
}

// A recorder started paused attaches CUPTI for the first time at its first
// recorded range: late (no device was announced), but no finalize came
// before, so the ids stay CUPTI's own.
TEST(CuptiSession, TheFirstAttachOfARecorderStartedPausedKeepsCuptisIds) {
  Session s(/*callback_records=*/false, /*attach_prepare=*/true, /*start_paused=*/true);
  EXPECT_TRUE(g_cupti.registered_gated.empty()) << "nothing of CUPTI while paused from the start";
  s.cupti->RecordAhead([] { return true; });
  ASSERT_EQ(g_cupti.registered_gated.size(), 1u);
  EXPECT_TRUE(g_cupti.registered_gated[0]) << "CUPTI's first initialisation is not prepared outside the gate";
  EXPECT_EQ(s.attaches_late, std::vector<bool>{true});
  EXPECT_EQ(s.cupti->correlations()->shift(), 0u);
  auto stats = s.Stats();
  EXPECT_EQ(stats["cupti_sessions"], 1u);
  EXPECT_EQ(stats["cupti_attaches_prepared"], 0u);
}

// A session that never detaches keeps CUPTI's own ids.
TEST(CuptiSession, WithoutADetachTheIdsAreCuptis) {
  Session s;
  EXPECT_EQ(Call(), 22u);
  s.phase.store(RecorderPhase::kPaused);
  s.cupti->PauseActivity();  // the kinds go off only at a detach: none is made here
  s.phase.store(RecorderPhase::kRecording);
  ASSERT_TRUE(s.cupti->Record());
  EXPECT_EQ(g_cupti.finalizes, 0);
  EXPECT_EQ(s.cupti->correlations()->shift(), 0u);
  EXPECT_EQ(s.Stats()["cupti_sessions"], 1u);
}

// The kinds a pause left on go off inside the finalize's hold, after the
// flush, with the quiet wait on too: a graph launched while CUPTI is
// attached with its kinds off, then finalized, faults at its next launch
// (docs/recorder-detach.md), so they never go off in a hold of their own
// before the waits.
TEST(CuptiSession, TheKindsAPauseLeftOnGoOffOnlyInTheFinalizesHoldQuietWaitOrNot) {
  auto first = [](const std::string& what) {
    const auto& c = g_cupti.calls;
    return std::find(c.begin(), c.end(), what) - c.begin();
  };
  for (uint32_t quiet_ms : {0u, 100u}) {
    Session s(/*callback_records=*/false, /*attach_prepare=*/false, /*start_paused=*/false, quiet_ms);
    Call();
    s.PauseAndDetach();
    ASSERT_EQ(g_cupti.finalizes, 1) << quiet_ms;
    EXPECT_LT(first("flush"), first("off")) << quiet_ms;
    EXPECT_LT(first("off"), first("finalize")) << quiet_ms;
  }
}

}  // namespace
}  // namespace gpucap::recorder
