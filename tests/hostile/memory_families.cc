#include "memory_families.h"

#include <algorithm>

#include "gpucap/format/activity_kind.h"
#include "hostile_captures.h"

namespace gpucap::testing::hostile {

using format::FrameType;
using format::SmallMessage;
using format::testing::FramedCapture;
using format::testing::HostileChunk;

namespace {

constexpr uint32_t kTid = 4242;

void Close(FramedCapture* f) {
  format::Trailer t;
  t.clean_shutdown = true;
  t.index = f->Index();
  f->TrailerAndFooter(t);
}

// Messages in compressed frames of 4096, as the recorder batches them.
void Batched(FramedCapture* f, FrameType type, const std::vector<SmallMessage>& all) {
  for (size_t i = 0; i < all.size(); i += 4096) {
    std::vector<SmallMessage> part(all.begin() + static_cast<ptrdiff_t>(i),
                                   all.begin() + static_cast<ptrdiff_t>(std::min(all.size(), i + 4096)));
    f->CompressedMessages(type, part);
  }
}

format::RangeEvent Range(format::RangeKind kind, uint64_t ts, std::string name = {}, uint32_t tid = kTid) {
  format::RangeEvent e;
  e.kind = kind;
  e.timestamp_ns = ts;
  e.os_tid = tid;
  e.name = std::move(name);
  return e;
}

// `n` push/pop pairs named `name`, each 10 ns long, from kT0 - 20 * n on:
// all of them before the launches, so no op's stack grows with n.
std::string PushPops(int n, const std::string& name) {
  FramedCapture f = Base(4);
  std::vector<SmallMessage> events;
  uint64_t t = kT0 - 20 * static_cast<uint64_t>(n) - 1000;
  for (int i = 0; i < n; ++i, t += 20) {
    events.push_back(Range(format::RangeKind::kPush, t, name));
    events.push_back(Range(format::RangeKind::kPop, t + 10));
  }
  Batched(&f, FrameType::kRanges, events);
  Close(&f);
  return f.bytes();
}

format::GraphEvent NodeCreated(uint64_t node, uint64_t ts) {
  format::GraphEvent e;
  e.kind = format::GraphEventKind::kNodeCreated;
  e.graph_id = 1;
  e.node_id = node;
  e.node_type = 0;  // kernel
  e.os_tid = kTid;
  e.timestamp_ns = ts;
  return e;
}

std::string Graph(int n, bool chain) {
  FramedCapture f = Base(4);
  std::vector<SmallMessage> events;
  format::GraphEvent g;
  g.kind = format::GraphEventKind::kGraphCreated;
  g.graph_id = 1;
  g.os_tid = kTid;
  g.timestamp_ns = kT0 - 100'000;
  events.push_back(g);
  for (int i = 1; i <= n; ++i) events.push_back(NodeCreated(static_cast<uint64_t>(i), kT0 - 50'000));
  if (chain) {
    for (int i = 1; i < n; ++i) {
      format::GraphEvent e;
      e.kind = format::GraphEventKind::kDependencyAdded;
      e.graph_id = 1;
      e.node_id = static_cast<uint64_t>(i);
      e.peer_node_id = static_cast<uint64_t>(i + 1);
      e.os_tid = kTid;
      e.timestamp_ns = kT0 - 40'000;
      events.push_back(e);
    }
  }
  Batched(&f, FrameType::kGraphs, events);
  Close(&f);
  return f.bytes();
}

}  // namespace

std::string NamelessRanges(int n) { return PushPops(n, ""); }

std::string NvtxPushes(int n) { return PushPops(n, "layer"); }

std::string ManyMetadataBlobs(int ops, int blobs) {
  FramedCapture f = Base(ops);
  f.Messages(FrameType::kRanges, {Range(format::RangeKind::kPush, kT0 - 1000, "step"),
                                  Range(format::RangeKind::kPop, kT0 + 1000 * static_cast<uint64_t>(ops) + 1000)});
  std::vector<SmallMessage> metadata;
  for (int i = 0; i < blobs; ++i) {
    format::MetadataBlob b;
    b.key_kind = format::MetadataKey::kRange;
    b.key = 0;  // the first range
    b.name = "shape";
    b.content_type = "text/plain";
    b.data = "[1024, 1024]";
    b.timestamp_ns = kT0 - 500;
    b.os_tid = kTid;
    metadata.push_back(b);
  }
  Batched(&f, FrameType::kMetadata, metadata);
  Close(&f);
  return f.bytes();
}

std::string GraphNodes(int n) { return Graph(n, false); }

std::string GraphChain(int n) { return Graph(n, true); }

std::string ManyThreads(int n) {
  FramedCapture f = Base(4);
  std::vector<SmallMessage> threads, ranges;
  for (int i = 0; i < n; ++i) {
    uint32_t tid = 100'000 + static_cast<uint32_t>(i);
    threads.push_back(format::ThreadInfo{4242, tid, tid, "worker"});
    ranges.push_back(Range(format::RangeKind::kPush, kT0 - 5000, "work", tid));
    ranges.push_back(Range(format::RangeKind::kPop, kT0 - 4000, {}, tid));
  }
  Batched(&f, FrameType::kThreads, threads);
  Batched(&f, FrameType::kRanges, ranges);
  Close(&f);
  return f.bytes();
}

std::string UniqueKernelNames(int n, size_t bytes) {
  FramedCapture f = Base(0);
  std::vector<SmallMessage> strings;
  HostileChunk c;
  for (int i = 0; i < n; ++i) {
    std::string name = "kernel_" + std::to_string(i) + "_";
    name.resize(std::max(bytes, name.size()), 'k');
    strings.push_back(format::StringDef{0x100000 + static_cast<uint64_t>(i), name});
  }
  Batched(&f, FrameType::kStrings, strings);
  for (int i = 0; i < n; ++i) {
    uint64_t start = kT0 + static_cast<uint64_t>(i) * 1000;
    HostileChunk one = LaunchChunk(1, start);
    c.raw += LaunchRecords(static_cast<uint32_t>(i + 1), start, start + 600, 0x100000 + static_cast<uint64_t>(i));
    if (i == 0) {
      c.info = one.info;
    } else {
      for (auto& k : c.info.kind_counts) k.count++;
      c.info.record_count += 2;
      c.info.max_start_ns = start;
      c.info.max_end_ns = start + 600;
    }
  }
  c.compress = true;
  c.codec = 1;
  f.Chunk(c);
  Close(&f);
  return f.bytes();
}

std::string LongKernelName(size_t bytes) {
  std::string name = "kernel_";
  name.resize(bytes, 'k');
  FramedCapture f = Base(0);
  f.CompressedMessages(FrameType::kStrings, {format::StringDef{kKernelName, name}});
  f.Chunk(LaunchChunk(4));
  Close(&f);
  return f.bytes();
}

std::vector<Family> MemoryFamilies() {
  return {
      {"nameless_ranges", [](int s) { return NamelessRanges(100'000 * s); }},
      {"metadata_blobs", [](int s) { return ManyMetadataBlobs(500 * s, 500 * s); }},
      {"graph_nodes", [](int s) { return GraphNodes(100'000 * s); }},
      {"graph_chain", [](int s) { return GraphChain(100'000 * s); }},
      {"nvtx_pushes", [](int s) { return NvtxPushes(100'000 * s); }},
      {"threads", [](int s) { return ManyThreads(50'000 * s); }},
      {"unique_kernel_names", [](int s) { return UniqueKernelNames(2'000 * s, 4096); }},
      {"long_kernel_name", [](int s) { return LongKernelName((4u << 20) * static_cast<size_t>(s)); }},
  };
}

}  // namespace gpucap::testing::hostile
