// Prints the CUPTI record layouts and callback-id names the builder needs, as
// the CUPTI headers it is compiled against define them. Its output is checked
// in (format/layouts/cupti_<major>_<minor>.inc) so that nothing else in gpucap
// ever includes a CUPTI header; tests/format/cupti_layout_test.cc regenerates
// it where the headers exist and fails when the two differ.
//
//   gen_cupti_layout CUPTI_INCLUDE_DIR > cupti_13_0.inc
//
// The include directory is read for the callback-id headers, which are enums
// whose names only exist as text.
#include <cupti_activity.h>
#include <cupti_version.h>

#include "cupti_records.h"

#include <cstddef>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Field {
  const char* name;  // gpucap::format::Field enumerator
  size_t offset;
  size_t size;
};

struct Record {
  unsigned kind;
  const char* struct_name;
  size_t size;
  std::vector<Field> fields;
};

#define GPUCAP_F(S, field, member) Field{#field, offsetof(S, member), sizeof(((S*)nullptr)->member)}

// The records of GPU work: kernels, copies, memsets.
void AddGpuOpRecords(std::vector<Record>& r) {
  using K = gpucap::cupti_records::KernelRecord;
  r.push_back({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, gpucap::cupti_records::kStructName<K>, sizeof(K), {
      GPUCAP_F(K, kRegistersPerThread, registersPerThread),
      GPUCAP_F(K, kStart, start),
      GPUCAP_F(K, kEnd, end),
      GPUCAP_F(K, kCompleted, completed),
      GPUCAP_F(K, kDeviceId, deviceId),
      GPUCAP_F(K, kContextId, contextId),
      GPUCAP_F(K, kStreamId, streamId),
      GPUCAP_F(K, kGridX, gridX),
      GPUCAP_F(K, kGridY, gridY),
      GPUCAP_F(K, kGridZ, gridZ),
      GPUCAP_F(K, kBlockX, blockX),
      GPUCAP_F(K, kBlockY, blockY),
      GPUCAP_F(K, kBlockZ, blockZ),
      GPUCAP_F(K, kStaticSharedMemory, staticSharedMemory),
      GPUCAP_F(K, kDynamicSharedMemory, dynamicSharedMemory),
      GPUCAP_F(K, kLocalMemoryPerThread, localMemoryPerThread),
      GPUCAP_F(K, kCorrelationId, correlationId),
      GPUCAP_F(K, kGridId, gridId),
      GPUCAP_F(K, kName, name),
      GPUCAP_F(K, kQueued, queued),
      GPUCAP_F(K, kSubmitted, submitted),
      GPUCAP_F(K, kLaunchType, launchType),
      GPUCAP_F(K, kSharedMemoryExecuted, sharedMemoryExecuted),
      GPUCAP_F(K, kGraphNodeId, graphNodeId),
      GPUCAP_F(K, kGraphId, graphId),
      GPUCAP_F(K, kChannelId, channelID),
      GPUCAP_F(K, kChannelType, channelType),
      GPUCAP_F(K, kClusterX, clusterX),
      GPUCAP_F(K, kClusterY, clusterY),
      GPUCAP_F(K, kClusterZ, clusterZ),
      GPUCAP_F(K, kIsDeviceLaunched, isDeviceLaunched),
  }});
  using M = gpucap::cupti_records::MemcpyRecord;
  r.push_back({CUPTI_ACTIVITY_KIND_MEMCPY, gpucap::cupti_records::kStructName<M>, sizeof(M), {
      GPUCAP_F(M, kCopyKind, copyKind),
      GPUCAP_F(M, kSrcKind, srcKind),
      GPUCAP_F(M, kDstKind, dstKind),
      GPUCAP_F(M, kFlags, flags),
      GPUCAP_F(M, kBytes, bytes),
      GPUCAP_F(M, kStart, start),
      GPUCAP_F(M, kEnd, end),
      GPUCAP_F(M, kDeviceId, deviceId),
      GPUCAP_F(M, kContextId, contextId),
      GPUCAP_F(M, kStreamId, streamId),
      GPUCAP_F(M, kCorrelationId, correlationId),
      GPUCAP_F(M, kRuntimeCorrelationId, runtimeCorrelationId),
      GPUCAP_F(M, kGraphNodeId, graphNodeId),
      GPUCAP_F(M, kGraphId, graphId),
      GPUCAP_F(M, kChannelId, channelID),
      GPUCAP_F(M, kChannelType, channelType),
      GPUCAP_F(M, kIsDeviceLaunched, isDeviceLaunched),
      GPUCAP_F(M, kCopyCount, copyCount),
  }});
  using P = gpucap::cupti_records::PeerMemcpyRecord;
  r.push_back({CUPTI_ACTIVITY_KIND_MEMCPY2, gpucap::cupti_records::kStructName<P>, sizeof(P), {
      GPUCAP_F(P, kCopyKind, copyKind),
      GPUCAP_F(P, kSrcKind, srcKind),
      GPUCAP_F(P, kDstKind, dstKind),
      GPUCAP_F(P, kFlags, flags),
      GPUCAP_F(P, kBytes, bytes),
      GPUCAP_F(P, kStart, start),
      GPUCAP_F(P, kEnd, end),
      GPUCAP_F(P, kDeviceId, deviceId),
      GPUCAP_F(P, kContextId, contextId),
      GPUCAP_F(P, kStreamId, streamId),
      GPUCAP_F(P, kSrcDeviceId, srcDeviceId),
      GPUCAP_F(P, kSrcContextId, srcContextId),
      GPUCAP_F(P, kDstDeviceId, dstDeviceId),
      GPUCAP_F(P, kDstContextId, dstContextId),
      GPUCAP_F(P, kCorrelationId, correlationId),
      GPUCAP_F(P, kGraphNodeId, graphNodeId),
      GPUCAP_F(P, kGraphId, graphId),
      GPUCAP_F(P, kChannelId, channelID),
      GPUCAP_F(P, kChannelType, channelType),
  }});
  using S = gpucap::cupti_records::MemsetRecord;
  r.push_back({CUPTI_ACTIVITY_KIND_MEMSET, gpucap::cupti_records::kStructName<S>, sizeof(S), {
      GPUCAP_F(S, kValue, value),
      GPUCAP_F(S, kBytes, bytes),
      GPUCAP_F(S, kStart, start),
      GPUCAP_F(S, kEnd, end),
      GPUCAP_F(S, kDeviceId, deviceId),
      GPUCAP_F(S, kContextId, contextId),
      GPUCAP_F(S, kStreamId, streamId),
      GPUCAP_F(S, kCorrelationId, correlationId),
      GPUCAP_F(S, kFlags, flags),
      GPUCAP_F(S, kMemoryKind, memoryKind),
      GPUCAP_F(S, kGraphNodeId, graphNodeId),
      GPUCAP_F(S, kGraphId, graphId),
      GPUCAP_F(S, kChannelId, channelID),
      GPUCAP_F(S, kChannelType, channelType),
      GPUCAP_F(S, kIsDeviceLaunched, isDeviceLaunched),
  }});
}

// The rest: API calls, external ids, overheads, syncs, CUDA events, markers, environment.
void AddHostAndDeviceRecords(std::vector<Record>& r) {
  using A = CUpti_ActivityAPI;
  for (auto [kind, name] : {std::pair{CUPTI_ACTIVITY_KIND_DRIVER, "CUpti_ActivityAPI"},
                            std::pair{CUPTI_ACTIVITY_KIND_RUNTIME, "CUpti_ActivityAPI"}}) {
    r.push_back({static_cast<unsigned>(kind), name, sizeof(A), {
        GPUCAP_F(A, kCbid, cbid),
        GPUCAP_F(A, kStart, start),
        GPUCAP_F(A, kEnd, end),
        GPUCAP_F(A, kProcessId, processId),
        GPUCAP_F(A, kThreadId, threadId),
        GPUCAP_F(A, kCorrelationId, correlationId),
        GPUCAP_F(A, kReturnValue, returnValue),
    }});
  }
  using E = CUpti_ActivityExternalCorrelation;
  r.push_back({CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "CUpti_ActivityExternalCorrelation", sizeof(E), {
      GPUCAP_F(E, kExternalKind, externalKind),
      GPUCAP_F(E, kExternalId, externalId),
      GPUCAP_F(E, kCorrelationId, correlationId),
  }});
  using O = gpucap::cupti_records::OverheadRecord;
  r.push_back({CUPTI_ACTIVITY_KIND_OVERHEAD, gpucap::cupti_records::kStructName<O>, sizeof(O), {
      GPUCAP_F(O, kOverheadKind, overheadKind),
      GPUCAP_F(O, kObjectKind, objectKind),
      GPUCAP_F(O, kObjectProcessId, objectId.pt.processId),
      GPUCAP_F(O, kObjectThreadId, objectId.pt.threadId),
      GPUCAP_F(O, kObjectDeviceId, objectId.dcs.deviceId),
      GPUCAP_F(O, kObjectContextId, objectId.dcs.contextId),
      GPUCAP_F(O, kObjectStreamId, objectId.dcs.streamId),
      GPUCAP_F(O, kStart, start),
      GPUCAP_F(O, kEnd, end),
      GPUCAP_F(O, kCorrelationId, correlationId),
  }});
  using Y = gpucap::cupti_records::SyncRecord;
  r.push_back({CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, gpucap::cupti_records::kStructName<Y>, sizeof(Y), {
      GPUCAP_F(Y, kSyncType, type),
      GPUCAP_F(Y, kStart, start),
      GPUCAP_F(Y, kEnd, end),
      GPUCAP_F(Y, kCorrelationId, correlationId),
      GPUCAP_F(Y, kContextId, contextId),
      GPUCAP_F(Y, kStreamId, streamId),
      GPUCAP_F(Y, kCudaEventId, cudaEventId),
      GPUCAP_F(Y, kCudaEventSyncId, cudaEventSyncId),
      GPUCAP_F(Y, kReturnValue, returnValue),
  }});
  using V = gpucap::cupti_records::CudaEventRecord;
  r.push_back({CUPTI_ACTIVITY_KIND_CUDA_EVENT, gpucap::cupti_records::kStructName<V>, sizeof(V), {
      GPUCAP_F(V, kCorrelationId, correlationId),
      GPUCAP_F(V, kContextId, contextId),
      GPUCAP_F(V, kStreamId, streamId),
      GPUCAP_F(V, kCudaEventId, eventId),
      GPUCAP_F(V, kDeviceId, deviceId),
      GPUCAP_F(V, kDeviceTimestamp, deviceTimestamp),
      GPUCAP_F(V, kCudaEventSyncId, cudaEventSyncId),
  }});
  using R = gpucap::cupti_records::MarkerRecord;
  r.push_back({CUPTI_ACTIVITY_KIND_MARKER, gpucap::cupti_records::kStructName<R>, sizeof(R), {
      GPUCAP_F(R, kFlags, flags),
      GPUCAP_F(R, kTimestamp, timestamp),
      GPUCAP_F(R, kMarkerId, id),
      GPUCAP_F(R, kObjectKind, objectKind),
      GPUCAP_F(R, kObjectProcessId, objectId.pt.processId),
      GPUCAP_F(R, kObjectThreadId, objectId.pt.threadId),
      GPUCAP_F(R, kName, name),
      GPUCAP_F(R, kDomain, domain),
  }});
  // --cuda-graph-trace graph: one record per graph launch (no graph exec id
  // in it; the graph id is the instantiated graph's).
  using G = gpucap::cupti_records::GraphTraceRecord;
  r.push_back({CUPTI_ACTIVITY_KIND_GRAPH_TRACE, gpucap::cupti_records::kStructName<G>, sizeof(G), {
      GPUCAP_F(G, kCorrelationId, correlationId),
      GPUCAP_F(G, kStart, start),
      GPUCAP_F(G, kEnd, end),
      GPUCAP_F(G, kDeviceId, deviceId),
      GPUCAP_F(G, kGraphId, graphId),
      GPUCAP_F(G, kContextId, contextId),
      GPUCAP_F(G, kStreamId, streamId),
      GPUCAP_F(G, kEndDeviceId, endDeviceId),
      GPUCAP_F(G, kEndContextId, endContextId),
  }});
  using N = CUpti_ActivityEnvironment;
  r.push_back({CUPTI_ACTIVITY_KIND_ENVIRONMENT, "CUpti_ActivityEnvironment", sizeof(N), {
      GPUCAP_F(N, kDeviceId, deviceId),
      GPUCAP_F(N, kTimestamp, timestamp),
      GPUCAP_F(N, kEnvironmentKind, environmentKind),
      GPUCAP_F(N, kSmClock, data.speed.smClock),
      GPUCAP_F(N, kMemoryClock, data.speed.memoryClock),
      GPUCAP_F(N, kPcieLinkGen, data.speed.pcieLinkGen),
      GPUCAP_F(N, kPcieLinkWidth, data.speed.pcieLinkWidth),
      GPUCAP_F(N, kClocksThrottleReasons, data.speed.clocksThrottleReasons),
      GPUCAP_F(N, kGpuTemperature, data.temperature.gpuTemperature),
      GPUCAP_F(N, kPower, data.power.power),
      GPUCAP_F(N, kPowerLimit, data.power.powerLimit),
      GPUCAP_F(N, kFanSpeed, data.cooling.fanSpeed),
  }});
}

std::vector<Record> Records() {
  std::vector<Record> r;
  AddGpuOpRecords(r);
  AddHostAndDeviceRecords(r);
  return r;
}

#undef GPUCAP_F

// (cbid, name) from a cupti_*_cbid.h enum, names without the prefix and
// without the `_vNNNN` API-version suffix, as Kineto prints them. Driver
// names keep their `_v2`-style suffixes: those are part of the symbol.
bool ReadCbids(const std::string& path, const std::string& prefix,
               std::map<unsigned, std::string>* out) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "gen_cupti_layout: cannot read " << path << "\n";
    return false;
  }
  std::regex line_re("^\\s*" + prefix + "([A-Za-z0-9_]+)\\s*=\\s*([0-9]+)\\s*,");
  std::regex version_re("_v[0-9]{4,5}$");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, line_re)) continue;
    std::string name = m[1];
    if (name == "INVALID" || name == "SIZE") continue;
    name = std::regex_replace(name, version_re, "");
    out->emplace(static_cast<unsigned>(std::stoul(m[2])), name);
  }
  return !out->empty();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gen_cupti_layout CUPTI_INCLUDE_DIR\n";
    return 2;
  }
  std::string dir = argv[1];
  std::map<unsigned, std::string> runtime, driver;
  if (!ReadCbids(dir + "/cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_", &runtime) ||
      !ReadCbids(dir + "/cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_", &driver)) {
    return 1;
  }
  std::ostringstream o;
  o << "// Generated by format/layouts/gen_cupti_layout.cc from the CUPTI headers of\n"
    << "// CUPTI_API_VERSION " << CUPTI_API_VERSION << ". Do not edit; regenerate with\n"
    << "// `ninja -C build regen_cupti_layouts` where the headers exist.\n"
    << "GPUCAP_LAYOUT(" << CUPTI_API_VERSION << ")\n";
  for (const Record& r : Records()) {
    o << "GPUCAP_RECORD(" << r.kind << ", \"" << r.struct_name << "\", " << r.size << ")\n";
    for (const Field& f : r.fields) {
      o << "GPUCAP_FIELD(" << r.kind << ", " << f.name << ", " << f.offset << ", " << f.size << ")\n";
    }
  }
  for (const auto& [cbid, name] : runtime) o << "GPUCAP_RUNTIME_CBID(" << cbid << ", \"" << name << "\")\n";
  for (const auto& [cbid, name] : driver) o << "GPUCAP_DRIVER_CBID(" << cbid << ", \"" << name << "\")\n";
  std::cout << o.str();
  return 0;
}
