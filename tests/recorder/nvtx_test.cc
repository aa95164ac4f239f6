// The recorder as an NVTX tool, driven through NVTX's own header code: this
// binary links gpucap's hooks as a static injection, so each nvtx* call below
// goes through NVTX's dispatch tables (core, core2 and the payload
// extension) exactly as NCCL's and PyTorch's copies do.
//
// What it pins down: NCCL closes its init ranges with nvtxRangePopPayload (a
// payload-extension call); with the extension unhandled that pop was lost,
// the range never closed and, with window marks kept on one stack per
// thread, the application's step pop closed the NCCL range's entry instead
// of its window (allreduce-0: "4 open, 3 close").
#include <cstdint>

// NVTX's static-injection hooks, declared before its headers use them.
struct nvtxExtModuleInfo_t;
extern "C" int (*InitializeInjectionNvtx2_fnptr)(const void* (*)(uint32_t));
extern "C" int (*InitializeInjectionNvtxExtension_fnptr)(nvtxExtModuleInfo_t*);

#define NVTX_STATIC_INJECTION_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

#include "gpucap/format/capture.h"
#include "nvtx_hooks.h"
#include "process_recorder.h"
#include "recorder.h"
#include "../support/temp_dir.h"

namespace gpucap::recorder {
namespace {

Recorder* g_test_recorder = nullptr;

extern "C" int TestInitNvtx(NvtxGetExportTableFunc_t get_export_table) {
  return InstallNvtxHooks(get_export_table) ? 1 : 0;
}
extern "C" int TestInitNvtxExtension(nvtxExtModuleInfo_t* info) {
  return InstallNvtxPayloadHooks(info) ? 1 : 0;
}

}  // namespace
}  // namespace gpucap::recorder

extern "C" {
// NVTX never says when a domain or registered string dies, so the recorder
// keeps them for the process's life (nvtx_hooks.cc): not leaks to report.
const char* __lsan_default_suppressions() { return "leak:DomainCreate\nleak:DomainRegisterString\n"; }
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = gpucap::recorder::TestInitNvtx;
NvtxExtInitializeInjectionFunc_t InitializeInjectionNvtxExtension_fnptr =
    gpucap::recorder::TestInitNvtxExtension;
}

namespace gpucap::recorder {
namespace {

struct Params {  // laid out as NCCL's NcclNvtxParamsAllReduce
  uint64_t comm;
  size_t bytes;
  int32_t op;
};
constexpr uint64_t kSchema = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5;

nvtxEventAttributes_t Attr(const char* name, nvtxPayloadData_t* payload = nullptr) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  if (payload) {
    a.payloadType = NVTX_PAYLOAD_TYPE_EXT;
    a.reserved0 = 1;
    a.payload.ullValue = reinterpret_cast<uint64_t>(payload);
  }
  return a;
}

std::string Bytes(const Params& p) { return std::string(reinterpret_cast<const char*>(&p), sizeof(p)); }

// One test: NVTX initialises its tables once per process, so one recorder
// sees everything.
TEST(NvtxHooks, TwoDomainsOnOneThreadPayloadPopsAndEndsElsewhere) {
  testing::TempDir dir;
  std::string path = dir.File("nvtx.gpucap");
  Config config;
  config.output = path;
  config.quiet = true;
  config.toggle_signal = false;
  config.window_nvtx = "(Step|Phase)#\\d+";
  g_test_recorder = Recorder::Create(config);
  ASSERT_NE(g_test_recorder, nullptr);
  SetProcessRecorder(g_test_recorder);  // as the injection entry point does

  nvtxDomainHandle_t nccl = nvtxDomainCreateA("NCCL");
  static const nvtxPayloadSchemaEntry_t entries[] = {
      {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "NCCL communicator ID", nullptr, 0, offsetof(Params, comm), nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", nullptr, 0, offsetof(Params, bytes), nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "Reduction operation", nullptr, 0, offsetof(Params, op), nullptr, nullptr},
  };
  nvtxPayloadSchemaAttr_t schema = {};
  schema.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID;
  schema.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
  schema.entries = entries;
  schema.numEntries = 3;
  schema.payloadStaticSize = sizeof(Params);
  schema.schemaId = kSchema;
  EXPECT_EQ(nvtxPayloadSchemaRegister(nccl, &schema), kSchema);

  // Step 0 as torch + NCCL run it: the NCCL init range opens inside the step
  // and closes through the payload extension with the communicator's hash.
  EXPECT_EQ(nvtxRangePushA("Step#0"), 0);
  nvtxEventAttributes_t init = Attr("ncclCommInitRankConfig");
  EXPECT_EQ(nvtxDomainRangePushEx(nccl, &init), 0) << "depth counts per domain";
  Params hash{0x1234, 0, 0};
  nvtxPayloadData_t at_pop[] = {{kSchema, sizeof(hash), &hash}};
  EXPECT_EQ(nvtxRangePopPayload(nccl, at_pop, 1), 0);
  Params op{0x1234, 4 << 20, 0};
  nvtxPayloadData_t at_push[] = {{kSchema, sizeof(op), &op}};
  nvtxEventAttributes_t all_reduce = Attr("ncclAllReduce", at_push);
  EXPECT_EQ(nvtxDomainRangePushEx(nccl, &all_reduce), 0);
  EXPECT_EQ(nvtxRangePop(), 0) << "ends Step#0, not the NCCL range";
  EXPECT_EQ(nvtxDomainRangePop(nccl), 0);
  // Step 1 leaves a NCCL range open; the step's window still closes.
  EXPECT_EQ(nvtxRangePushA("Step#1"), 0);
  nvtxEventAttributes_t leak = Attr("leaked");
  nvtxDomainRangePushEx(nccl, &leak);
  EXPECT_EQ(nvtxRangePop(), 0);
  EXPECT_EQ(nvtxDomainRangePop(nullptr), -1) << "nothing of the default domain is open";
  // A start/end window ended on another thread.
  nvtxRangeId_t phase = nvtxRangeStartA("Phase#0");
  std::thread([phase] { nvtxRangeEnd(phase); }).join();
  nvtxMarkA("marked");
  g_test_recorder->Stop("test");

  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok()) << c.status().message();
  std::map<uint64_t, int> opens, closes;
  std::map<uint64_t, std::string> labels;
  for (const auto& m : c->windows) {
    if (m.kind == format::WindowMarkKind::kOpen) opens[m.id]++, labels[m.id] = m.label;
    if (m.kind == format::WindowMarkKind::kClose) closes[m.id]++;
  }
  ASSERT_EQ(opens.size(), 3u);
  EXPECT_EQ(opens, closes) << "every window opened is closed, once";

  uint64_t nccl_domain = 0;
  for (const auto& e : c->ranges) {
    if (e.kind == format::RangeKind::kNameDomain && e.name == "NCCL") nccl_domain = e.domain;
  }
  ASSERT_NE(nccl_domain, 0u);
  int pushes = 0, pops = 0, schemas = 0, marks = 0;
  bool pop_payload = false, push_payload = false;
  uint64_t started = 0, ended = 0;
  uint32_t start_tid = 0, end_tid = 0;
  for (const auto& e : c->ranges) {
    if (e.domain == nccl_domain && e.kind == format::RangeKind::kPush) pushes++;
    if (e.domain == nccl_domain && e.kind == format::RangeKind::kPop) {
      pops++;
      if (e.ext_payloads.size() == 1 && e.ext_payloads[0].schema_id == kSchema &&
          e.ext_payloads[0].data == Bytes(hash)) {
        pop_payload = true;
      }
    }
    if (e.kind == format::RangeKind::kPush && e.name == "ncclAllReduce") {
      ASSERT_EQ(e.ext_payloads.size(), 1u);
      EXPECT_EQ(e.ext_payloads[0].data, Bytes(op));
      EXPECT_FALSE(e.ext_payloads[0].truncated);
      push_payload = true;
    }
    if (e.kind == format::RangeKind::kPayloadSchema) {
      schemas++;
      EXPECT_EQ(e.id, kSchema);
      EXPECT_EQ(e.domain, nccl_domain);
      EXPECT_EQ(e.schema->static_size, sizeof(Params));
      ASSERT_EQ(e.schema->entries.size(), 3u);
      EXPECT_EQ(e.schema->entries[1].name, "Message size [bytes]");
      EXPECT_EQ(e.schema->entries[1].type, uint64_t{NVTX_PAYLOAD_ENTRY_TYPE_SIZE});
      EXPECT_EQ(e.schema->entries[2].offset, offsetof(Params, op));
    }
    if (e.kind == format::RangeKind::kStart) started = e.id, start_tid = e.os_tid;
    if (e.kind == format::RangeKind::kEnd) ended = e.id, end_tid = e.os_tid;
    if (e.kind == format::RangeKind::kMark) marks++;
  }
  EXPECT_EQ(pushes, 3);
  EXPECT_EQ(pops, 2) << "the init range's pop through nvtxRangePopPayload arrived";
  EXPECT_TRUE(pop_payload);
  EXPECT_TRUE(push_payload);
  EXPECT_EQ(schemas, 1);
  EXPECT_EQ(marks, 1);
  EXPECT_NE(started, 0u);
  EXPECT_EQ(started, ended);
  EXPECT_NE(start_tid, end_tid);
  SetProcessRecorder(nullptr);
  delete g_test_recorder;
  g_test_recorder = nullptr;
}

// The names a window pattern is matched on are remembered per thread
// (MatchCache): a buffer written again with another name, as PyTorch's
// emit_nvtx does, must be matched by its new text, and a registered string
// each time it is used.
TEST(NvtxHooks, AReusedNameBufferAndRegisteredStringsOpenWindowsByTheirText) {
  testing::TempDir dir;
  std::string path = dir.File("reuse.gpucap");
  Config config;
  config.output = path;
  config.quiet = true;
  config.toggle_signal = false;
  config.window_nvtx = "Step#\\d+";
  g_test_recorder = Recorder::Create(config);
  ASSERT_NE(g_test_recorder, nullptr);
  SetProcessRecorder(g_test_recorder);

  char buf[64];
  const char* texts[] = {"Step#1", "Stepper", "Step#1", "Step#2", "Step#x"};
  for (const char* t : texts) {
    std::snprintf(buf, sizeof(buf), "%s", t);
    nvtxRangePushA(buf);
    nvtxRangePop();
  }
  nvtxDomainHandle_t d = nvtxDomainCreateA("reuse");
  nvtxStringHandle_t step7 = nvtxDomainRegisterStringA(d, "Step#7");
  nvtxStringHandle_t other = nvtxDomainRegisterStringA(d, "Other#7");
  for (nvtxStringHandle_t h : {step7, other, step7}) {
    nvtxEventAttributes_t a = {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = h;
    nvtxDomainRangePushEx(d, &a);
    nvtxDomainRangePop(d);
  }
  g_test_recorder->Stop("test");

  auto c = format::LoadCapture(path);
  ASSERT_TRUE(c.ok()) << c.status().message();
  std::vector<std::string> pushed, opened;
  for (const auto& e : c->ranges) {
    if (e.kind == format::RangeKind::kPush) pushed.push_back(e.name);
  }
  int closes = 0;
  for (const auto& m : c->windows) {
    if (m.kind == format::WindowMarkKind::kOpen) opened.push_back(m.label);
    if (m.kind == format::WindowMarkKind::kClose) ++closes;
  }
  EXPECT_EQ(pushed, (std::vector<std::string>{"Step#1", "Stepper", "Step#1", "Step#2", "Step#x", "Step#7",
                                               "Other#7", "Step#7"}));
  EXPECT_EQ(opened, (std::vector<std::string>{"Step#1", "Step#1", "Step#2", "Step#7", "Step#7"}));
  EXPECT_EQ(closes, 5);
  SetProcessRecorder(nullptr);
  delete g_test_recorder;
  g_test_recorder = nullptr;
}

}  // namespace
}  // namespace gpucap::recorder
