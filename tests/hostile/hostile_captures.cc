#include "hostile_captures.h"

#include <cmath>
#include <cstring>

#include "capture.capnp.h"
#include "gpucap/format/activity_kind.h"
#include "gpucap/format/cupti_layout.h"
#include "synthetic_capture.h"

namespace gpucap::testing::hostile {

using format::ActivityKind;
using format::Field;
using format::FrameType;
using format::SmallMessage;
using format::testing::FramedCapture;
using format::testing::HostileChunk;

namespace {

const format::LayoutTable& Layouts() { return *format::LayoutForVersion(130001); }

std::string Record(ActivityKind kind, const std::vector<std::pair<Field, uint64_t>>& fields) {
  const format::RecordLayout& l = *Layouts().Find(static_cast<uint32_t>(kind));
  std::string rec(l.size, '\0');
  uint32_t k = static_cast<uint32_t>(kind);
  std::memcpy(rec.data(), &k, 4);
  for (auto [f, v] : fields) format::WriteField(reinterpret_cast<uint8_t*>(rec.data()), l.at(f), v);
  return rec;
}

void Count(format::ChunkInfo* info, ActivityKind kind, uint64_t start, uint64_t end) {
  uint32_t k = static_cast<uint32_t>(kind);
  bool found = false;
  for (format::KindCount& c : info->kind_counts) {
    if (c.kind == k) c.count++, found = true;
  }
  if (!found) {
    info->kind_counts.push_back({k, 1});
    info->record_sizes.push_back({k, Layouts().Find(k)->size});
  }
  info->record_count++;
  if (info->min_start_ns == 0 || start < info->min_start_ns) info->min_start_ns = start;
  info->max_start_ns = std::max(info->max_start_ns, start);
  info->max_end_ns = std::max(info->max_end_ns, end);
}

format::RangeEvent Range(format::RangeKind kind, uint64_t ts, std::string name = {}) {
  format::RangeEvent e;
  e.kind = kind;
  e.timestamp_ns = ts;
  e.os_tid = 4242;
  e.name = std::move(name);
  return e;
}

std::string SeqId(int n) {  // the n-th substitution candidate: S_, S0_, S1_, ...
  if (n == 0) return "S_";
  n -= 1;
  static const char* kDigits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::string s;
  do {
    s.insert(s.begin(), kDigits[n % 36]);
    n /= 36;
  } while (n != 0);
  return "S" + s + "_";
}

// A clean end: a trailer indexing every frame, and the footer.
void Close(FramedCapture* f) {
  format::Trailer t;
  t.clean_shutdown = true;
  t.index = f->Index();
  f->TrailerAndFooter(t);
}

}  // namespace

std::string LaunchRecords(uint32_t correlation, uint64_t start, uint64_t end, uint64_t name, uint32_t device) {
  std::string api = Record(ActivityKind::kRuntime, {{Field::kCbid, 211}, {Field::kStart, start - 500},
                                                    {Field::kEnd, start - 100}, {Field::kProcessId, 4242},
                                                    {Field::kThreadId, 4242}, {Field::kCorrelationId, correlation}});
  std::string kernel = Record(ActivityKind::kConcurrentKernel,
                              {{Field::kStart, start}, {Field::kEnd, end}, {Field::kCompleted, end},
                               {Field::kCorrelationId, correlation}, {Field::kDeviceId, device},
                               {Field::kContextId, 1}, {Field::kStreamId, 7}, {Field::kName, name},
                               {Field::kGridX, 1}, {Field::kGridY, 1}, {Field::kGridZ, 1},
                               {Field::kBlockX, 128}, {Field::kBlockY, 1}, {Field::kBlockZ, 1}});
  return api + kernel;
}

HostileChunk LaunchChunk(int kernels, uint64_t first_start) {
  HostileChunk c;
  for (int i = 0; i < kernels; ++i) {
    uint64_t start = first_start + static_cast<uint64_t>(i) * 1000;
    c.raw += LaunchRecords(static_cast<uint32_t>(i + 1), start, start + 600);
    Count(&c.info, ActivityKind::kRuntime, start - 500, start - 100);
    Count(&c.info, ActivityKind::kConcurrentKernel, start, start + 600);
  }
  c.info.context_id = 1;
  c.info.stream_id = 7;
  return c;
}

FramedCapture Base(int kernels, const std::string& kernel_name) {
  FramedCapture f;
  format::SessionInfo s = builder::testing::DefaultSession();
  s.start_cupti_ns = kT0;
  f.Messages(FrameType::kSession, {s});
  f.Messages(FrameType::kDevices, {builder::testing::H200(0)});
  f.Messages(FrameType::kStrings, {format::StringDef{kKernelName, kernel_name}});
  if (kernels > 0) f.Chunk(LaunchChunk(kernels));
  return f;
}

std::string HugeKindCounts() {
  FramedCapture f = Base(0);
  HostileChunk c = LaunchChunk(1);
  c.raw.resize(4 << 20, '\0');  // zeros compress ~250:1
  c.compress = true;
  c.codec = 1;
  uint32_t kernel = static_cast<uint32_t>(ActivityKind::kConcurrentKernel);
  for (int i = 0; i < 200; ++i) c.info.kind_counts.push_back({kernel, c.raw.size() / 8});
  f.Chunk(c);
  Close(&f);
  return f.bytes();
}

std::string RepeatedIndex(int repeats) {
  FramedCapture f = Base(2);
  std::vector<SmallMessage> strings;
  for (int i = 0; i < 2000; ++i) strings.push_back(format::StringDef{0x9000u + i, std::string(480, 'a')});
  uint64_t at = f.CompressedMessages(FrameType::kStrings, strings);
  std::vector<format::IndexEntry> index = f.Index();
  format::IndexEntry e = index.back();
  (void)at;
  for (int i = 0; i < repeats; ++i) index.push_back(e);
  format::Trailer t;
  t.clean_shutdown = true;
  t.index = index;
  f.TrailerAndFooter(t);
  return f.bytes();
}

std::string ExplodingMangledText(int levels) {
  // f(A, B<A,A>, B<B<A,A>,B<A,A>>, ...): every parameter names the previous
  // one twice through a substitution, so the output doubles per level.
  std::string m = "_Z1f1A1BIS_S_E";
  for (int k = 2; k <= levels; ++k) m += "S0_I" + SeqId(k) + SeqId(k) + "E";
  return m;
}

std::string ExplodingMangledName() {
  FramedCapture f = Base(3, ExplodingMangledText());
  Close(&f);
  return f.bytes();
}

std::string NamedRange(const std::string& name) {
  FramedCapture f = Base(3);
  f.Messages(FrameType::kRanges, {Range(format::RangeKind::kPush, kT0 - 1000, name),
                                  Range(format::RangeKind::kPop, kT0 + 10'000)});
  Close(&f);
  return f.bytes();
}

std::string UnpoppedPushes(int pushes) {
  FramedCapture f = Base(0);
  std::vector<SmallMessage> events;
  for (int i = 0; i < pushes; ++i) {
    events.push_back(Range(format::RangeKind::kPush, kT0 + static_cast<uint64_t>(i) * 1000, "step"));
    if (events.size() == 4096) {
      f.CompressedMessages(FrameType::kRanges, events);
      events.clear();
    }
  }
  if (!events.empty()) f.CompressedMessages(FrameType::kRanges, events);
  f.Chunk(LaunchChunk(std::min(pushes, 2000), kT0 + 100));
  Close(&f);
  return f.bytes();
}

std::string TrailerlessDamage(BadMessage what, bool with_trailer) {
  FramedCapture f = Base(2);
  switch (what) {
    case BadMessage::kHugeDeclaredSize:
      f.CompressedMessages(FrameType::kStrings, {format::StringDef{0x2000, std::string(200, 'x')}}, 1u << 31);
      break;
    case BadMessage::kUnknownCodec: {
      HostileChunk c = LaunchChunk(2, kT0 + 5000);
      c.codec = 7;
      f.Chunk(c);
      break;
    }
    case BadMessage::kChunkRawSize: {
      HostileChunk c = LaunchChunk(2, kT0 + 5000);
      c.raw_size = 1u << 31;
      f.Chunk(c);
      break;
    }
    case BadMessage::kListOutOfBounds: {
      // Segment table: one segment of 2 words. Root: a struct pointer to one
      // pointer word; that pointer is a list pointer far past the segment.
      uint32_t table[2] = {0, 2};
      uint64_t root = (uint64_t{1} << 48) | 0;            // struct, offset 0, 0 data words, 1 pointer
      uint64_t list = 1 | (uint64_t{0x100000} << 2) | (uint64_t{7} << 32) | (uint64_t{1000} << 35);
      std::string payload(reinterpret_cast<const char*>(table), 8);
      payload.append(reinterpret_cast<const char*>(&root), 8);
      payload.append(reinterpret_cast<const char*>(&list), 8);
      f.Frame(static_cast<uint16_t>(FrameType::kStrings), payload);
      break;
    }
    case BadMessage::kBadSegmentTable: {
      uint32_t table[2] = {1000, 1};  // 1001 segments claimed, one word of data
      std::string payload(reinterpret_cast<const char*>(table), 8);
      payload.append(8, '\0');
      f.Frame(static_cast<uint16_t>(FrameType::kStrings), payload);
      break;
    }
  }
  f.Chunk(LaunchChunk(2, kT0 + 9000));
  if (with_trailer) {
    format::Trailer t;
    t.clean_shutdown = true;
    t.index = f.Index();
    f.TrailerAndFooter(t);
  }
  return f.bytes();
}

std::string MaxTimestamp() {
  FramedCapture f = Base(3);
  HostileChunk c = LaunchChunk(1, kT0 + 10'000);
  c.raw = LaunchRecords(9, kT0 + 10'000, UINT64_MAX);
  c.info.max_end_ns = UINT64_MAX;
  f.Chunk(c);
  Close(&f);
  return f.bytes();
}

std::string AbsurdClocks() {
  FramedCapture f = Base(3);
  std::vector<SmallMessage> clocks;
  clocks.push_back(format::ClockSample{format::ClockKind::kStart, kT0, 1, 1'764'000'000'000'000'000});
  clocks.push_back(format::ClockSample{format::ClockKind::kPeriodic, kT0 + 1000, 1, INT64_MIN + 5});
  clocks.push_back(format::ClockSample{format::ClockKind::kPeriodic, UINT64_MAX - 7, 1, INT64_MAX - 3});
  clocks.push_back(format::ClockSample{format::ClockKind::kEnd, (uint64_t{1} << 63) + 9, 1, 7});
  f.Messages(FrameType::kClocks, clocks);
  Close(&f);
  return f.bytes();
}

std::string OneSecond() {
  FramedCapture f = Base(0);
  HostileChunk c = LaunchChunk(2);
  HostileChunk late = LaunchChunk(2, kT0 + 1'000'000'000);
  c.raw += late.raw;
  for (const auto& k : late.info.kind_counts) {
    for (auto& m : c.info.kind_counts) {
      if (m.kind == k.kind) m.count += k.count;
    }
  }
  c.info.record_count += late.info.record_count;
  c.info.max_start_ns = late.info.max_start_ns;
  c.info.max_end_ns = late.info.max_end_ns;
  f.Chunk(c);
  Close(&f);
  return f.bytes();
}

std::string EmptyUuid() {
  FramedCapture f;
  format::SessionInfo s = builder::testing::DefaultSession();
  s.start_cupti_ns = kT0;
  f.Messages(FrameType::kSession, {s});
  // The model's uuid is a fixed array: an empty Data field needs the schema.
  capnp::MallocMessageBuilder devices;
  auto d = devices.initRoot<schema::Devices>().initDevices(1)[0];
  d.setName("NVIDIA H200");
  d.setComputeMajor(9);
  d.setNumSms(132);
  f.Frame(static_cast<uint16_t>(FrameType::kDevices), format::testing::Flatten(devices));
  f.Messages(FrameType::kStrings, {format::StringDef{kKernelName, "kernel_a"}});
  f.Chunk(LaunchChunk(2));
  Close(&f);
  return f.bytes();
}

std::string CpuPid(uint32_t pid) {
  FramedCapture f;
  format::SessionInfo s = builder::testing::DefaultSession();
  s.start_cupti_ns = kT0;
  s.pid = pid;
  f.Messages(FrameType::kSession, {s});
  f.Messages(FrameType::kDevices, {builder::testing::H200(pid)});  // GPU `pid`'s process has pid `pid`
  f.Messages(FrameType::kStrings, {format::StringDef{kKernelName, "kernel_a"}});
  HostileChunk c;
  uint64_t start = kT0;
  std::string api = Record(ActivityKind::kRuntime, {{Field::kCbid, 211}, {Field::kStart, start - 500},
                                                    {Field::kEnd, start - 100}, {Field::kProcessId, pid},
                                                    {Field::kThreadId, pid}, {Field::kCorrelationId, 1}});
  c.raw = api + LaunchRecords(1, start, start + 600, kKernelName, pid).substr(api.size());
  Count(&c.info, ActivityKind::kRuntime, start - 500, start - 100);
  Count(&c.info, ActivityKind::kConcurrentKernel, start, start + 600);
  f.Chunk(c);
  Close(&f);
  return f.bytes();
}

std::string IndexOmitsFrames() {
  FramedCapture f = Base(0);
  f.Chunk(LaunchChunk(4));
  std::vector<format::IndexEntry> index = f.Index();
  index.pop_back();  // the chunk's entry: its frame is left unnamed
  format::Trailer t;
  t.clean_shutdown = true;
  t.index = index;
  f.TrailerAndFooter(t);
  return f.bytes();
}

std::string RawChecksumMismatch() {
  FramedCapture f = Base(0);
  HostileChunk c = LaunchChunk(4);
  c.good_raw_checksum = false;
  f.Chunk(c);
  Close(&f);
  return f.bytes();
}

std::string ImpossibleRecordCount() {
  FramedCapture f = Base(0);
  HostileChunk c = LaunchChunk(1);
  c.info.record_count = 4294967295u;
  f.Chunk(c);
  Close(&f);
  return f.bytes();
}

std::string DeviceWithoutProperties() {
  FramedCapture f;
  format::SessionInfo s = builder::testing::DefaultSession();
  s.start_cupti_ns = kT0;
  f.Messages(FrameType::kSession, {s});
  format::DeviceInfo d;  // id 0, nothing else
  f.Messages(FrameType::kDevices, {d});
  f.Messages(FrameType::kStrings, {format::StringDef{kKernelName, "kernel_a"}});
  f.Chunk(LaunchChunk(2));
  Close(&f);
  return f.bytes();
}

std::string NanCounter() {
  FramedCapture f = Base(2);
  format::CounterDef def{1, "power", "W", 0};
  f.Messages(FrameType::kCounters, {def, format::CounterSample{1, kT0, std::nan("")},
                                    format::CounterSample{1, kT0 + 1000, 250.0}});
  Close(&f);
  return f.bytes();
}

std::string GraphCycle() {
  FramedCapture f = Base(2);
  std::vector<SmallMessage> events;
  format::GraphEvent g;
  g.kind = format::GraphEventKind::kGraphCreated;
  g.graph_id = 1;
  g.timestamp_ns = kT0;
  events.push_back(g);
  for (uint64_t node : {10, 11, 12}) {
    format::GraphEvent n;
    n.kind = format::GraphEventKind::kNodeCreated;
    n.graph_id = 1;
    n.node_id = node;
    n.node_type = 0;
    n.timestamp_ns = kT0 + node;
    events.push_back(n);
  }
  const uint64_t edges[][2] = {{10, 11}, {11, 12}, {12, 10}};
  for (const auto& edge : edges) {
    format::GraphEvent d;
    d.kind = format::GraphEventKind::kDependencyAdded;
    d.graph_id = 1;
    d.node_id = edge[0];
    d.peer_node_id = edge[1];
    d.timestamp_ns = kT0 + 20;
    events.push_back(d);
  }
  f.Messages(FrameType::kGraphs, events);
  Close(&f);
  return f.bytes();
}

std::string CopiesEndingBeforeTheyStart() {
  FramedCapture f = Base(0);
  HostileChunk c;
  for (uint32_t i = 0; i < 4; ++i) {
    uint64_t start = kT0 + 10'000 + i * 1000;
    c.raw += Record(ActivityKind::kMemcpy, {{Field::kStart, start}, {Field::kEnd, start - 400},
                                            {Field::kBytes, uint64_t{1} << 62}, {Field::kCopyKind, 1},
                                            {Field::kCorrelationId, 100 + i}, {Field::kDeviceId, 0},
                                            {Field::kContextId, 1}, {Field::kStreamId, 7}});
    Count(&c.info, ActivityKind::kMemcpy, start, start);
  }
  c.info.context_id = 1;
  c.info.stream_id = 7;
  f.Chunk(c);
  Close(&f);
  return f.bytes();
}

std::string DuplicateCorrelation() {
  FramedCapture f = Base(0);
  HostileChunk c;
  for (int i = 0; i < 2; ++i) {
    uint64_t start = kT0 + static_cast<uint64_t>(i) * 1000;
    c.raw += LaunchRecords(1, start, start + 600);
    Count(&c.info, ActivityKind::kRuntime, start - 500, start - 100);
    Count(&c.info, ActivityKind::kConcurrentKernel, start, start + 600);
  }
  c.info.context_id = 1;
  c.info.stream_id = 7;
  f.Chunk(c);
  Close(&f);
  return f.bytes();
}

std::string SameProcessOtherMachine(int years) {
  FramedCapture f;
  format::SessionInfo s = builder::testing::DefaultSession();
  s.start_cupti_ns = kT0;
  s.start_realtime_ns -= static_cast<int64_t>(years) * 365 * 24 * 3600 * 1'000'000'000ll;
  f.Messages(FrameType::kSession, {s});
  format::DeviceInfo d = builder::testing::H200(0);
  d.name = "NVIDIA A100-SXM4-80GB";
  d.compute_major = 8;
  f.Messages(FrameType::kDevices, {d});
  f.Messages(FrameType::kStrings, {format::StringDef{kKernelName, "kernel_a"}});
  f.Chunk(LaunchChunk(4));
  Close(&f);
  return f.bytes();
}

std::vector<std::pair<std::string, std::string>> AllCases() {
  return {
      {"huge_kind_counts", HugeKindCounts()},
      {"repeated_index", RepeatedIndex()},
      {"exploding_mangled_name", ExplodingMangledName()},
      {"long_nvtx_name", NamedRange("ProfilerStep#" + std::string(50'000, '7'))},
      {"backtracking_nvtx_name", NamedRange(std::string(41, 'a') + "!")},
      {"unpopped_pushes", UnpoppedPushes(40'000)},
      {"trailerless_huge_declared_size", TrailerlessDamage(BadMessage::kHugeDeclaredSize)},
      {"trailerless_unknown_codec", TrailerlessDamage(BadMessage::kUnknownCodec)},
      {"trailerless_list_out_of_bounds", TrailerlessDamage(BadMessage::kListOutOfBounds)},
      {"trailerless_bad_segment_table", TrailerlessDamage(BadMessage::kBadSegmentTable)},
      {"trailerless_chunk_raw_size", TrailerlessDamage(BadMessage::kChunkRawSize)},
      {"max_timestamp", MaxTimestamp()},
      {"absurd_clocks", AbsurdClocks()},
      {"one_second", OneSecond()},
      {"empty_uuid", EmptyUuid()},
      {"cpu_pid_1", CpuPid(1)},
      {"index_omits_frames", IndexOmitsFrames()},
      {"raw_checksum_mismatch", RawChecksumMismatch()},
      {"impossible_record_count", ImpossibleRecordCount()},
      {"device_without_properties", DeviceWithoutProperties()},
      {"nan_counter", NanCounter()},
      {"graph_cycle", GraphCycle()},
      {"duplicate_correlation", DuplicateCorrelation()},
      {"copies_ending_before_they_start", CopiesEndingBeforeTheyStart()},
      {"same_process_other_machine", SameProcessOtherMachine(31)},
  };
}

}  // namespace gpucap::testing::hostile
