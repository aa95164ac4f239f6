// NVTX as NCCL and PyTorch use it together on one thread: push/pop ranges of
// two domains interleaved without nesting (a library range opened inside a
// step and closed after it), start/end ranges ended on another thread, a
// library range never closed inside a window, marks, and payload-extension
// ranges (a schema, a push with an extended payload, a pop through
// nvtxRangePopPayload carrying a second payload, as NCCL's init ranges do).
// Recorded with --window-nvtx '(Step|Phase)#\d+'.
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <cstddef>
#include <cstdint>
#include <thread>

#include "common.h"

__global__ void work(float* x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + 1.f;
}

struct LibParams {  // the payload: a static-size struct, as NCCL's are
  uint64_t comm;
  size_t bytes;
  int32_t op;
};

constexpr uint64_t kSchemaId = NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5;

nvtxEventAttributes_t Named(const char* name) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = name;
  return a;
}

int main(int argc, char** argv) {
  const char* manifest_path = argc > 1 ? argv[1] : "nvtx_domains.expect.json";
  Manifest m;
  const int n = 1 << 16;
  float* d;
  CK(cudaMalloc(&d, n * sizeof(float)));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  auto launch = [&](const char* what) {
    work<<<(n + 255) / 256, 256, 0, s>>>(d, n, 1.0001f);
    m.Add(std::string("kernel_in:") + what);
    m.Add("kernel:work");
  };
  launch("before_windows");  // the context exists before the first window

  nvtxDomainHandle_t lib = nvtxDomainCreateA("lib");
  nvtxDomainHandle_t app = nvtxDomainCreateA("app");

  static const nvtxPayloadSchemaEntry_t entries[] = {
      {0, NVTX_PAYLOAD_ENTRY_TYPE_UINT64, "comm", nullptr, 0, offsetof(LibParams, comm), nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_SIZE, "Message size [bytes]", nullptr, 0, offsetof(LibParams, bytes), nullptr, nullptr},
      {0, NVTX_PAYLOAD_ENTRY_TYPE_INT32, "op", nullptr, 0, offsetof(LibParams, op), nullptr, nullptr},
  };
  nvtxPayloadSchemaAttr_t schema = {};
  schema.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
                     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_SCHEMA_ID;
  schema.name = "LibParams";
  schema.type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC;
  schema.entries = entries;
  schema.numEntries = 3;
  schema.payloadStaticSize = sizeof(LibParams);
  schema.schemaId = kSchemaId;
  uint64_t got_id = nvtxPayloadSchemaRegister(lib, &schema);
  m.Fact("schema", "{\"id\": " + std::to_string(kSchemaId) + ", \"registered_id\": " + std::to_string(got_id) +
                       ", \"name\": \"LibParams\", \"entries\": 3, \"static_size\": " +
                       std::to_string(sizeof(LibParams)) + ", \"domain\": \"lib\"}");

  const int steps = 4;
  std::string payloads = "[";
  for (int step = 0; step < steps; ++step) {
    std::string step_name = "Step#" + std::to_string(step);
    nvtxRangePushA(step_name.c_str());  // default domain: a window
    m.Add("window:push_pop");
    if (step == 0) {
      // NCCL's init: a library range with a payload at push, closed with a
      // second payload through the payload extension's pop.
      LibParams p{0xabc0 + uint64_t(step), 0, 0};
      nvtxPayloadData_t pd[] = {{kSchemaId, sizeof(p), &p}};
      nvtxEventAttributes_t a = Named("lib_init");
      a.payloadType = NVTX_PAYLOAD_TYPE_EXT;
      a.reserved0 = 1;
      a.payload.ullValue = reinterpret_cast<uint64_t>(pd);
      nvtxDomainRangePushEx(lib, &a);
      launch("lib_init");
      LibParams done{0xabc0, 4096, 0};
      nvtxPayloadData_t pd2[] = {{kSchemaId, sizeof(done), &done}};
      nvtxRangePopPayload(lib, pd2, 1);
      m.Add("payload_events", 2);
    }
    // Interleaved, not nested: the app range ends while the library's is open.
    nvtxRangePushA("outer");
    LibParams op{0xabc0, size_t(n) * sizeof(float) << step, 7};
    nvtxPayloadData_t pd[] = {{kSchemaId, sizeof(op), &op}};
    nvtxEventAttributes_t a = Named("lib_op");
    a.payloadType = NVTX_PAYLOAD_TYPE_EXT;
    a.reserved0 = 1;
    a.payload.ullValue = reinterpret_cast<uint64_t>(pd);
    nvtxDomainRangePushEx(lib, &a);
    m.Add("payload_events");
    payloads += (step ? ", " : "") + std::to_string(op.bytes);
    launch("outer+lib_op");
    nvtxRangePop();  // ends "outer", not "lib_op"
    launch("lib_op");
    nvtxDomainRangePop(lib);
    if (step == 1) {
      nvtxDomainRangePushEx(lib, &(a = Named("lib_leak")));  // never closed
      m.Add("never_closed");
    }
    // A start/end range of the app domain, ended on another thread.
    nvtxEventAttributes_t sa = Named("async_io");
    nvtxRangeId_t id = nvtxDomainRangeStartEx(app, &sa);
    launch("async_io");
    std::thread([id, app] { nvtxDomainRangeEnd(app, id); }).join();
    m.Add("ended_on_other_thread");
    nvtxMarkA(("mark " + step_name).c_str());
    m.Add("marks");
    nvtxRangePop();  // ends the step
  }
  payloads += "]";
  m.Fact("lib_op_bytes", payloads);

  // A start/end window opened here and closed on another thread.
  nvtxRangeId_t phase = nvtxRangeStartA("Phase#0");
  m.Add("window:start_end");
  launch("phase");
  std::thread([phase] { nvtxRangeEnd(phase); }).join();
  m.Add("ended_on_other_thread");
  launch("after_windows");
  CK(cudaStreamSynchronize(s));

  m.Fact("steps", std::to_string(steps));
  m.Fact("window_nvtx", "\"(Step|Phase)#\\\\d+\"");
  m.Fact("windows", std::to_string(steps + 1));
  m.Fact("domains", "[\"lib\", \"app\"]");
  m.Write(manifest_path);
  CK(cudaFree(d));
  std::printf("nvtx_domains: done\n");
  return 0;
}
