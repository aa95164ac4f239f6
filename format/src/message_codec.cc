#include "message_codec.h"

#include <cstring>
#include <type_traits>

#include "capnp_text.h"

namespace gpucap::format {
namespace {

using capnp_text::Bytes;
using capnp_text::Str;

void Encode(const SessionInfo& s, schema::Session::Builder b) {
  b.setFormatMajor(s.format_major);
  b.setFormatMinor(s.format_minor);
  b.setToolVersion(Str(s.tool_version));
  b.setHost(Str(s.host));
  b.setPid(s.pid);
  b.setPpid(s.ppid);
  b.setProcessName(Str(s.process_name));
  auto cmd = b.initCommandLine(s.command_line.size());
  for (size_t i = 0; i < s.command_line.size(); ++i) cmd.set(i, Str(s.command_line[i]));
  b.setStartRealtimeNs(s.start_realtime_ns);
  b.setStartMonotonicNs(s.start_monotonic_ns);
  b.setStartCuptiNs(s.start_cupti_ns);
  b.setCuptiRuntimeVersion(s.cupti_runtime_version);
  b.setCuptiHeaderVersion(s.cupti_header_version);
  b.setCudaDriverVersion(s.cuda_driver_version);
  b.setCudaRuntimeVersion(s.cuda_runtime_version);
  auto kinds = b.initEnabledKinds(s.enabled_kinds.size());
  for (size_t i = 0; i < s.enabled_kinds.size(); ++i) kinds.set(i, s.enabled_kinds[i]);
  auto sizes = b.initRecordSizes(s.record_sizes.size());
  for (size_t i = 0; i < s.record_sizes.size(); ++i) {
    sizes[i].setKind(s.record_sizes[i].kind);
    sizes[i].setSize(s.record_sizes[i].size);
  }
  b.setRank(s.rank);
  b.setLocalRank(s.local_rank);
  b.setWorldSize(s.world_size);
  auto opts = b.initOptions(s.options.size());
  for (size_t i = 0; i < s.options.size(); ++i) {
    opts[i].setKey(Str(s.options[i].first));
    opts[i].setValue(Str(s.options[i].second));
  }
}

SessionInfo Decode(schema::Session::Reader r) {
  SessionInfo s;
  s.format_major = r.getFormatMajor();
  s.format_minor = r.getFormatMinor();
  s.tool_version = Str(r.getToolVersion());
  s.host = Str(r.getHost());
  s.pid = r.getPid();
  s.ppid = r.getPpid();
  s.process_name = Str(r.getProcessName());
  for (auto t : r.getCommandLine()) s.command_line.push_back(Str(t));
  s.start_realtime_ns = r.getStartRealtimeNs();
  s.start_monotonic_ns = r.getStartMonotonicNs();
  s.start_cupti_ns = r.getStartCuptiNs();
  s.cupti_runtime_version = r.getCuptiRuntimeVersion();
  s.cupti_header_version = r.getCuptiHeaderVersion();
  s.cuda_driver_version = r.getCudaDriverVersion();
  s.cuda_runtime_version = r.getCudaRuntimeVersion();
  for (auto k : r.getEnabledKinds()) s.enabled_kinds.push_back(k);
  for (auto ks : r.getRecordSizes()) s.record_sizes.push_back({ks.getKind(), ks.getSize()});
  s.rank = r.getRank();
  s.local_rank = r.getLocalRank();
  s.world_size = r.getWorldSize();
  for (auto kv : r.getOptions()) s.options.emplace_back(Str(kv.getKey()), Str(kv.getValue()));
  return s;
}

void Encode(const DeviceInfo& d, schema::Device::Builder b) {
  b.setId(d.id);
  b.setUuid(capnp::Data::Reader(d.uuid.data(), d.uuid.size()));
  b.setName(Str(d.name));
  b.setTotalGlobalMem(d.total_global_mem);
  b.setComputeMajor(d.compute_major);
  b.setComputeMinor(d.compute_minor);
  b.setMaxThreadsPerBlock(d.max_threads_per_block);
  b.setMaxThreadsPerMultiprocessor(d.max_threads_per_multiprocessor);
  b.setRegsPerBlock(d.regs_per_block);
  b.setRegsPerMultiprocessor(d.regs_per_multiprocessor);
  b.setWarpSize(d.warp_size);
  b.setSharedMemPerBlock(d.shared_mem_per_block);
  b.setSharedMemPerMultiprocessor(d.shared_mem_per_multiprocessor);
  b.setSharedMemPerBlockOptin(d.shared_mem_per_block_optin);
  b.setNumSms(d.num_sms);
  b.setL2CacheSize(d.l2_cache_size);
  b.setClockRateKhz(d.clock_rate_khz);
  b.setMemoryClockRateKhz(d.memory_clock_rate_khz);
  b.setMemoryBusWidth(d.memory_bus_width);
  b.setPciBusId(Str(d.pci_bus_id));
}

DeviceInfo Decode(schema::Device::Reader r) {
  DeviceInfo d;
  d.id = r.getId();
  auto uuid = r.getUuid();
  // An empty Data reads as a null pointer: memcpy must not see it.
  if (uuid.size() != 0) std::memcpy(d.uuid.data(), uuid.begin(), std::min<size_t>(uuid.size(), d.uuid.size()));
  d.name = Str(r.getName());
  d.total_global_mem = r.getTotalGlobalMem();
  d.compute_major = r.getComputeMajor();
  d.compute_minor = r.getComputeMinor();
  d.max_threads_per_block = r.getMaxThreadsPerBlock();
  d.max_threads_per_multiprocessor = r.getMaxThreadsPerMultiprocessor();
  d.regs_per_block = r.getRegsPerBlock();
  d.regs_per_multiprocessor = r.getRegsPerMultiprocessor();
  d.warp_size = r.getWarpSize();
  d.shared_mem_per_block = r.getSharedMemPerBlock();
  d.shared_mem_per_multiprocessor = r.getSharedMemPerMultiprocessor();
  d.shared_mem_per_block_optin = r.getSharedMemPerBlockOptin();
  d.num_sms = r.getNumSms();
  d.l2_cache_size = r.getL2CacheSize();
  d.clock_rate_khz = r.getClockRateKhz();
  d.memory_clock_rate_khz = r.getMemoryClockRateKhz();
  d.memory_bus_width = r.getMemoryBusWidth();
  d.pci_bus_id = Str(r.getPciBusId());
  return d;
}

void Encode(const ClockSample& c, schema::ClockSample::Builder b) {
  b.setKind(static_cast<schema::ClockKind>(c.kind));
  b.setCuptiNs(c.cupti_ns);
  b.setMonotonicNs(c.monotonic_ns);
  b.setRealtimeNs(c.realtime_ns);
}

ClockSample Decode(schema::ClockSample::Reader r) {
  return ClockSample{static_cast<ClockKind>(r.getKind()), r.getCuptiNs(), r.getMonotonicNs(),
                     r.getRealtimeNs()};
}

void Encode(const StringDef& s, schema::StringDef::Builder b) {
  b.setPointer(s.pointer);
  b.setText(Str(s.text));
}

StringDef Decode(schema::StringDef::Reader r) { return StringDef{r.getPointer(), Str(r.getText())}; }

void Encode(const PayloadSchema& s, schema::PayloadSchema::Builder b) {
  b.setFieldMask(s.field_mask);
  b.setSchemaType(s.schema_type);
  b.setFlags(s.flags);
  b.setStaticSize(s.static_size);
  b.setPackAlign(s.pack_align);
  auto entries = b.initEntries(s.entries.size());
  for (size_t i = 0; i < s.entries.size(); ++i) {
    const PayloadSchemaEntry& x = s.entries[i];
    entries[i].setFlags(x.flags);
    entries[i].setType(x.type);
    entries[i].setName(Str(x.name));
    entries[i].setDescription(Str(x.description));
    entries[i].setArrayOrUnionDetail(x.array_or_union_detail);
    entries[i].setOffset(x.offset);
  }
  auto enums = b.initEnumEntries(s.enum_entries.size());
  for (size_t i = 0; i < s.enum_entries.size(); ++i) {
    enums[i].setName(Str(s.enum_entries[i].name));
    enums[i].setValue(s.enum_entries[i].value);
    enums[i].setIsFlag(s.enum_entries[i].is_flag);
  }
}

PayloadSchema Decode(schema::PayloadSchema::Reader r) {
  PayloadSchema s;
  s.field_mask = r.getFieldMask();
  s.schema_type = r.getSchemaType();
  s.flags = r.getFlags();
  s.static_size = r.getStaticSize();
  s.pack_align = r.getPackAlign();
  for (auto x : r.getEntries()) {
    s.entries.push_back(PayloadSchemaEntry{x.getFlags(), x.getType(), Str(x.getName()),
                                           Str(x.getDescription()), x.getArrayOrUnionDetail(),
                                           x.getOffset()});
  }
  for (auto x : r.getEnumEntries()) {
    s.enum_entries.push_back(PayloadEnumEntry{Str(x.getName()), x.getValue(), x.getIsFlag()});
  }
  return s;
}

void Encode(const RangeEvent& e, schema::RangeEvent::Builder b) {
  b.setKind(static_cast<schema::RangeKind>(e.kind));
  b.setSource(static_cast<schema::RangeSource>(e.source));
  b.setTimestampNs(e.timestamp_ns);
  b.setOsTid(e.os_tid);
  b.setId(e.id);
  b.setName(Str(e.name));
  b.setDomain(e.domain);
  b.setCategory(e.category);
  b.setColor(e.color);
  auto p = b.getPayload();
  if (auto* u = std::get_if<uint64_t>(&e.payload)) {
    p.setUint64(*u);
  } else if (auto* i = std::get_if<int64_t>(&e.payload)) {
    p.setInt64(*i);
  } else if (auto* d = std::get_if<double>(&e.payload)) {
    p.setDouble(*d);
  } else {
    p.setNone();
  }
  if (!e.ext_payloads.empty()) {
    auto list = b.initExtPayloads(e.ext_payloads.size());
    for (size_t i = 0; i < e.ext_payloads.size(); ++i) {
      const ExtPayload& x = e.ext_payloads[i];
      list[i].setSchemaId(x.schema_id);
      list[i].setData(kj::arrayPtr(reinterpret_cast<const kj::byte*>(x.data.data()), x.data.size()));
      list[i].setTruncated(x.truncated);
    }
  }
  if (e.kind == RangeKind::kPayloadSchema || e.kind == RangeKind::kPayloadEnum) {
    Encode(*e.schema, b.initSchema());
  }
}

RangeEvent Decode(schema::RangeEvent::Reader r) {
  RangeEvent e;
  e.kind = static_cast<RangeKind>(r.getKind());
  e.source = static_cast<RangeSource>(r.getSource());
  e.timestamp_ns = r.getTimestampNs();
  e.os_tid = r.getOsTid();
  e.id = r.getId();
  e.name = Str(r.getName());
  e.domain = r.getDomain();
  e.category = r.getCategory();
  e.color = r.getColor();
  auto p = r.getPayload();
  switch (p.which()) {
    case schema::RangeEvent::Payload::UINT64: e.payload = p.getUint64(); break;
    case schema::RangeEvent::Payload::INT64: e.payload = p.getInt64(); break;
    case schema::RangeEvent::Payload::DOUBLE: e.payload = p.getDouble(); break;
    default: break;
  }
  for (auto x : r.getExtPayloads()) {
    auto d = x.getData();
    e.ext_payloads.push_back(ExtPayload{
        x.getSchemaId(), std::string(reinterpret_cast<const char*>(d.begin()), d.size()),
        x.getTruncated()});
  }
  if (r.hasSchema()) e.schema = Decode(r.getSchema());
  return e;
}

void Encode(const GraphEvent& g, schema::GraphEvent::Builder b) {
  b.setKind(static_cast<schema::GraphEventKind>(g.kind));
  b.setTimestampNs(g.timestamp_ns);
  b.setOsTid(g.os_tid);
  b.setGraphId(g.graph_id);
  b.setNodeId(g.node_id);
  b.setNodeType(g.node_type);
  b.setOriginalGraphId(g.original_graph_id);
  b.setOriginalNodeId(g.original_node_id);
  b.setPeerNodeId(g.peer_node_id);
  b.setExecId(g.exec_id);
  b.setFunctionName(Str(g.function_name));
  b.setFunctionAddress(g.function_address);
  b.setEventHandle(g.event_handle);
  b.setContextId(g.context_id);
  b.setDeviceId(g.device_id);
  b.setEndNs(g.end_ns);
  b.setCaptureStream(g.capture_stream);
  b.setCaptureStreamHandle(g.capture_stream_handle);
  b.setApiCorrelationId(g.api_correlation_id);
  b.setCaptureId(g.capture_id);
  b.setCaptureMode(g.capture_mode);
}

GraphEvent Decode(schema::GraphEvent::Reader r) {
  GraphEvent g;
  g.kind = static_cast<GraphEventKind>(r.getKind());
  g.timestamp_ns = r.getTimestampNs();
  g.os_tid = r.getOsTid();
  g.graph_id = r.getGraphId();
  g.node_id = r.getNodeId();
  g.node_type = r.getNodeType();
  g.original_graph_id = r.getOriginalGraphId();
  g.original_node_id = r.getOriginalNodeId();
  g.peer_node_id = r.getPeerNodeId();
  g.exec_id = r.getExecId();
  g.function_name = Str(r.getFunctionName());
  g.function_address = r.getFunctionAddress();
  g.event_handle = r.getEventHandle();
  g.context_id = r.getContextId();
  g.device_id = r.getDeviceId();
  g.end_ns = r.getEndNs();
  g.capture_stream = r.getCaptureStream();
  g.capture_stream_handle = r.getCaptureStreamHandle();
  g.api_correlation_id = r.getApiCorrelationId();
  g.capture_id = r.getCaptureId();
  g.capture_mode = r.getCaptureMode();
  return g;
}

void Encode(const WindowMark& w, schema::WindowMark::Builder b) {
  b.setKind(static_cast<schema::WindowMarkKind>(w.kind));
  b.setTimestampNs(w.timestamp_ns);
  b.setOsTid(w.os_tid);
  b.setId(w.id);
  b.setLabel(Str(w.label));
}

WindowMark Decode(schema::WindowMark::Reader r) {
  return WindowMark{static_cast<WindowMarkKind>(r.getKind()), r.getTimestampNs(), r.getOsTid(),
                    r.getId(), Str(r.getLabel())};
}

void Encode(const ThreadInfo& t, schema::ThreadInfo::Builder b) {
  b.setPid(t.pid);
  b.setCuptiThreadId(t.cupti_thread_id);
  b.setOsTid(t.os_tid);
  b.setName(Str(t.name));
}

ThreadInfo Decode(schema::ThreadInfo::Reader r) {
  return ThreadInfo{r.getPid(), r.getCuptiThreadId(), r.getOsTid(), Str(r.getName())};
}

void Encode(const StreamInfo& s, schema::StreamInfo::Builder b) {
  b.setDevice(s.device);
  b.setContextId(s.context_id);
  b.setStreamId(s.stream_id);
  b.setPriority(s.priority);
  b.setFlags(s.flags);
  b.setTimestampNs(s.timestamp_ns);
  b.setOsTid(s.os_tid);
}

StreamInfo Decode(schema::StreamInfo::Reader r) {
  return StreamInfo{r.getDevice(), r.getContextId(), r.getStreamId(), r.getPriority(),
                    r.getFlags(),  r.getTimestampNs(), r.getOsTid()};
}

void Encode(const MetadataBlob& m, schema::MetadataBlob::Builder b) {
  b.setKeyKind(static_cast<schema::MetadataKey>(m.key_kind));
  b.setKey(m.key);
  b.setName(Str(m.name));
  b.setContentType(Str(m.content_type));
  b.setData(Bytes(m.data));
  b.setTimestampNs(m.timestamp_ns);
  b.setOsTid(m.os_tid);
}

MetadataBlob Decode(schema::MetadataBlob::Reader r) {
  MetadataBlob m;
  m.key_kind = static_cast<MetadataKey>(r.getKeyKind());
  m.key = r.getKey();
  m.name = Str(r.getName());
  m.content_type = Str(r.getContentType());
  m.data = Bytes(r.getData());
  m.timestamp_ns = r.getTimestampNs();
  m.os_tid = r.getOsTid();
  return m;
}

void Encode(const CounterDef& c, schema::CounterDef::Builder b) {
  b.setId(c.id);
  b.setName(Str(c.name));
  b.setUnit(Str(c.unit));
  b.setDeviceId(c.device_id);
}

CounterDef Decode(schema::CounterDef::Reader r) {
  return CounterDef{r.getId(), Str(r.getName()), Str(r.getUnit()), r.getDeviceId()};
}

void Encode(const CounterSample& c, schema::CounterSample::Builder b) {
  b.setId(c.id);
  b.setTimestampNs(c.timestamp_ns);
  b.setValue(c.value);
}

CounterSample Decode(schema::CounterSample::Reader r) {
  return CounterSample{r.getId(), r.getTimestampNs(), r.getValue()};
}

// Fills a list field with every message of type T in the batch.
template <typename T, typename ListBuilder>
void FillList(const std::vector<SmallMessage>& batch, ListBuilder list) {
  unsigned i = 0;
  for (const auto& m : batch) {
    if (const T* v = std::get_if<T>(&m)) Encode(*v, list[i++]);
  }
}

template <typename T>
unsigned CountOf(const std::vector<SmallMessage>& batch) {
  unsigned n = 0;
  for (const auto& m : batch) n += std::holds_alternative<T>(m);
  return n;
}

template <typename T, typename ListReader>
void AppendAll(ListReader list, std::vector<SmallMessage>* out) {
  out->reserve(out->size() + list.size());
  for (auto r : list) out->emplace_back(Decode(r));
}

}  // namespace

FrameType FrameTypeOf(const SmallMessage& message) {
  struct Visitor {
    FrameType operator()(const SessionInfo&) const { return FrameType::kSession; }
    FrameType operator()(const DeviceInfo&) const { return FrameType::kDevices; }
    FrameType operator()(const ClockSample&) const { return FrameType::kClocks; }
    FrameType operator()(const StringDef&) const { return FrameType::kStrings; }
    FrameType operator()(const RangeEvent&) const { return FrameType::kRanges; }
    FrameType operator()(const GraphEvent&) const { return FrameType::kGraphs; }
    FrameType operator()(const WindowMark&) const { return FrameType::kWindows; }
    FrameType operator()(const ThreadInfo&) const { return FrameType::kThreads; }
    FrameType operator()(const StreamInfo&) const { return FrameType::kStreams; }
    FrameType operator()(const MetadataBlob&) const { return FrameType::kMetadata; }
    FrameType operator()(const RecorderStats&) const { return FrameType::kStats; }
    FrameType operator()(const CounterDef&) const { return FrameType::kCounters; }
    FrameType operator()(const CounterSample&) const { return FrameType::kCounters; }
  };
  return std::visit(Visitor{}, message);
}

void EncodeBatch(FrameType type, const std::vector<SmallMessage>& batch,
                 capnp::MessageBuilder* builder) {
  switch (type) {
    case FrameType::kSession:
      // One session per frame: the writer never batches sessions together.
      for (const auto& m : batch) {
        if (auto* s = std::get_if<SessionInfo>(&m)) Encode(*s, builder->initRoot<schema::Session>());
      }
      break;
    case FrameType::kDevices:
      FillList<DeviceInfo>(batch, builder->initRoot<schema::Devices>().initDevices(
                                      CountOf<DeviceInfo>(batch)));
      break;
    case FrameType::kClocks:
      FillList<ClockSample>(batch, builder->initRoot<schema::Clocks>().initSamples(
                                       CountOf<ClockSample>(batch)));
      break;
    case FrameType::kStrings:
      FillList<StringDef>(batch, builder->initRoot<schema::Strings>().initDefs(
                                     CountOf<StringDef>(batch)));
      break;
    case FrameType::kRanges:
      FillList<RangeEvent>(batch, builder->initRoot<schema::Ranges>().initEvents(
                                      CountOf<RangeEvent>(batch)));
      break;
    case FrameType::kGraphs:
      FillList<GraphEvent>(batch, builder->initRoot<schema::Graphs>().initEvents(
                                      CountOf<GraphEvent>(batch)));
      break;
    case FrameType::kWindows:
      FillList<WindowMark>(batch, builder->initRoot<schema::Windows>().initMarks(
                                      CountOf<WindowMark>(batch)));
      break;
    case FrameType::kThreads:
      FillList<ThreadInfo>(batch, builder->initRoot<schema::Threads>().initThreads(
                                      CountOf<ThreadInfo>(batch)));
      break;
    case FrameType::kStreams:
      FillList<StreamInfo>(batch, builder->initRoot<schema::Streams>().initStreams(
                                      CountOf<StreamInfo>(batch)));
      break;
    case FrameType::kMetadata:
      FillList<MetadataBlob>(batch, builder->initRoot<schema::Metadata>().initBlobs(
                                        CountOf<MetadataBlob>(batch)));
      break;
    case FrameType::kStats:
      // Snapshots supersede each other: only the last of a batch is worth keeping.
      for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
        if (auto* s = std::get_if<RecorderStats>(&*it)) {
          EncodeStats(*s, builder->initRoot<schema::Stats>());
          break;
        }
      }
      break;
    case FrameType::kCounters: {
      auto root = builder->initRoot<schema::Counters>();
      FillList<CounterDef>(batch, root.initDefs(CountOf<CounterDef>(batch)));
      FillList<CounterSample>(batch, root.initSamples(CountOf<CounterSample>(batch)));
      break;
    }
    case FrameType::kActivityChunk:
    case FrameType::kTrailer:
      break;  // written by the writer itself, never batched
  }
}

void DecodeBatch(FrameType type, capnp::MessageReader* reader, std::vector<SmallMessage>* out) {
  switch (type) {
    case FrameType::kSession:
      out->emplace_back(Decode(reader->getRoot<schema::Session>()));
      break;
    case FrameType::kDevices:
      AppendAll<DeviceInfo>(reader->getRoot<schema::Devices>().getDevices(), out);
      break;
    case FrameType::kClocks:
      AppendAll<ClockSample>(reader->getRoot<schema::Clocks>().getSamples(), out);
      break;
    case FrameType::kStrings:
      AppendAll<StringDef>(reader->getRoot<schema::Strings>().getDefs(), out);
      break;
    case FrameType::kRanges:
      AppendAll<RangeEvent>(reader->getRoot<schema::Ranges>().getEvents(), out);
      break;
    case FrameType::kGraphs:
      AppendAll<GraphEvent>(reader->getRoot<schema::Graphs>().getEvents(), out);
      break;
    case FrameType::kWindows:
      AppendAll<WindowMark>(reader->getRoot<schema::Windows>().getMarks(), out);
      break;
    case FrameType::kThreads:
      AppendAll<ThreadInfo>(reader->getRoot<schema::Threads>().getThreads(), out);
      break;
    case FrameType::kStreams:
      AppendAll<StreamInfo>(reader->getRoot<schema::Streams>().getStreams(), out);
      break;
    case FrameType::kMetadata:
      AppendAll<MetadataBlob>(reader->getRoot<schema::Metadata>().getBlobs(), out);
      break;
    case FrameType::kStats:
      out->emplace_back(DecodeStats(reader->getRoot<schema::Stats>()));
      break;
    case FrameType::kCounters: {
      auto root = reader->getRoot<schema::Counters>();
      AppendAll<CounterDef>(root.getDefs(), out);
      AppendAll<CounterSample>(root.getSamples(), out);
      break;
    }
    case FrameType::kActivityChunk:
    case FrameType::kTrailer:
      break;
  }
}

namespace {
size_t RangeEventBytes(const RangeEvent& e) {
  size_t n = 96 + e.name.size();
  for (const ExtPayload& x : e.ext_payloads) n += 32 + x.data.size();
  for (const PayloadSchemaEntry& x : e.schema->entries) n += 64 + x.name.size() + x.description.size();
  for (const PayloadEnumEntry& x : e.schema->enum_entries) n += 32 + x.name.size();
  return n;
}
}  // namespace

size_t ApproxEncodedSize(const SmallMessage& message) {
  return std::visit(
      [](const auto& m) -> size_t {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, StringDef>) return 32 + m.text.size();
        if constexpr (std::is_same_v<T, RangeEvent>) return RangeEventBytes(m);
        if constexpr (std::is_same_v<T, GraphEvent>) return 128 + m.function_name.size();
        if constexpr (std::is_same_v<T, MetadataBlob>) return 96 + m.name.size() + m.data.size();
        if constexpr (std::is_same_v<T, WindowMark>) return 48 + m.label.size();
        if constexpr (std::is_same_v<T, ThreadInfo>) return 40 + m.name.size();
        if constexpr (std::is_same_v<T, StreamInfo>) return 48;
        return 256;
      },
      message);
}

void EncodeChunk(const ChunkMessage& m, schema::ActivityChunk::Builder chunk) {
  chunk.setCodec(m.codec);
  chunk.setRawSize(m.raw_size);
  chunk.setRawChecksum(m.raw_checksum);
  chunk.setPayload(capnp::Data::Reader(m.payload.data(), m.payload.size()));
  const ChunkInfo& info = *m.info;
  chunk.setRecordCount(info.record_count);
  auto kinds = chunk.initKindCounts(static_cast<unsigned>(info.kind_counts.size()));
  for (size_t i = 0; i < info.kind_counts.size(); ++i) {
    kinds[i].setKind(info.kind_counts[i].kind);
    kinds[i].setCount(info.kind_counts[i].count);
  }
  chunk.setMinStartNs(info.min_start_ns);
  chunk.setMaxStartNs(info.max_start_ns);
  chunk.setMaxEndNs(info.max_end_ns);
  chunk.setContextId(info.context_id);
  chunk.setStreamId(info.stream_id);
  auto sizes = chunk.initRecordSizes(static_cast<unsigned>(info.record_sizes.size()));
  for (size_t i = 0; i < info.record_sizes.size(); ++i) {
    sizes[i].setKind(info.record_sizes[i].kind);
    sizes[i].setSize(info.record_sizes[i].size);
  }
}

}  // namespace gpucap::format
