#include "sample_capture.h"

#include <cstring>

namespace gpucap::testing {

using namespace gpucap::format;

SampleContents MakeSampleContents(int chunks, size_t chunk_bytes, int ranges_per_round) {
  SampleContents c;
  c.session.tool_version = "gpucap-test";
  c.session.host = "testhost";
  c.session.pid = 4242;
  c.session.ppid = 1;
  c.session.process_name = "trainer";
  c.session.command_line = {"python3", "train.py", "--steps=10"};
  c.session.start_realtime_ns = 1790857026000000000;
  c.session.start_monotonic_ns = 5109977000000000;
  c.session.start_cupti_ns = 1790857026000000123;
  c.session.cupti_runtime_version = 130001;
  c.session.cupti_header_version = 130001;
  c.session.cuda_driver_version = 13000;
  c.session.cuda_runtime_version = 13000;
  c.session.enabled_kinds = {10, 1, 2, 5, 6};
  c.session.record_sizes = {{10, 216}, {1, 104}};
  c.session.rank = 3;
  c.session.local_rank = 1;
  c.session.world_size = 8;
  c.session.options = {{"kinds", "default"}, {"pool_mb", "32"}};

  DeviceInfo d;
  d.id = 0;
  for (int i = 0; i < 16; ++i) d.uuid[i] = static_cast<uint8_t>(i * 7);
  d.name = "NVIDIA H200";
  d.total_global_mem = 150109880320ull;
  d.compute_major = 9;
  d.num_sms = 132;
  d.shared_mem_per_block_optin = 232448;
  d.pci_bus_id = "0000:19:00.0";
  c.devices.push_back(d);
  d.id = 1;
  d.pci_bus_id = "0000:3b:00.0";
  c.devices.push_back(d);

  c.threads = {{4242, 4242, 4242, "python3"}, {4242, 4250, 4250, "pt_autograd_0"}};
  // A high-priority non-blocking stream and a default one (negative priority: signed on disk).
  c.streams = {{0, 1, 13, -5, 1, 1'000'000'100, 4242}, {1, 2, 14, 0, 0, 1'000'000'200, 4250}};
  c.clocks = {{ClockKind::kStart, 1000, 2000, 3000}, {ClockKind::kPeriodic, 1100, 2100, 3100}};
  c.counter_defs = {{1, "power", "W", 0}};
  c.counter_samples = {{1, 1'000'000'500, 412.5}, {1, 1'000'050'500, 415.0}};
  c.stats.cupti_dropped_records = 7;
  c.stats.buffers_dropped_pool_empty = 2;
  c.stats.extra = {{"nvtx_batches", 12}};
  // A blob with an embedded NUL: blobs are bytes, not C strings.
  static constexpr char kBlob[] = "{\"op\":\"allreduce\",\"bytes\":1048576}\0x";
  c.metadata.push_back({MetadataKey::kExternalId, 99, "collective", "application/json",
                        std::string(kBlob, sizeof(kBlob) - 1), 1'000'000'900, 4242});

  for (int i = 0; i < chunks; ++i) {
    SampleChunk ch;
    ch.bytes = CuptiLikeBytes(chunk_bytes + i * 136, static_cast<uint32_t>(i + 1));
    ch.info.raw_size = static_cast<uint32_t>(ch.bytes.size());
    ch.info.record_count = static_cast<uint32_t>(ch.bytes.size() / 64);
    ch.info.kind_counts = {{10, ch.info.record_count}};
    ch.info.record_sizes = {{10, 64}};
    ch.info.min_start_ns = 1'000'000'000ull + i * 1'000'000ull;
    ch.info.max_start_ns = ch.info.min_start_ns + 500'000;
    ch.info.max_end_ns = ch.info.max_start_ns + 20'000;
    ch.info.context_id = 1;
    ch.info.stream_id = static_cast<uint32_t>(7 + i % 2);
    c.chunks.push_back(std::move(ch));
    c.strings.push_back({0x7f0000001000ull + i * 64, "_Z6kernelILi" + std::to_string(i) + "EEvPf"});
    for (int r = 0; r < ranges_per_round; ++r) {
      RangeEvent e;
      e.kind = r % 2 == 0 ? RangeKind::kPush : RangeKind::kPop;
      e.source = RangeSource::kNvtx;
      e.timestamp_ns = ch.info.min_start_ns + r * 100;
      e.os_tid = 4242 + r % 3;
      e.name = e.kind == RangeKind::kPush ? "ProfilerStep#" + std::to_string(i) : "";
      e.domain = r % 4;
      e.color = 0xff00ff00u;
      if (r % 5 == 1) e.payload = uint64_t{123456789};
      if (r % 5 == 2) e.payload = int64_t{-42};
      if (r % 5 == 3) e.payload = 2.5;
      c.ranges.push_back(std::move(e));
    }
    GraphEvent g;
    g.kind = static_cast<GraphEventKind>(i % 14);
    g.timestamp_ns = ch.info.min_start_ns + 10;
    g.os_tid = 4242;
    g.graph_id = 3;
    g.node_id = 100 + i;
    g.node_type = 1;
    g.original_node_id = 50 + i;
    g.peer_node_id = 101 + i;
    g.exec_id = 2;
    g.function_name = "hostFn" + std::to_string(i);
    g.function_address = 0x400000 + i;
    g.event_handle = 0xdead0000 + i;
    g.context_id = 1;
    if (i % 2 == 0) {  // the capture-stream fields, on every other event
      g.capture_stream = 7 + i;
      g.capture_stream_handle = 0x5500000000 + i;
      g.api_correlation_id = 900 + i;
      g.capture_id = 40 + i;
      g.capture_mode = i % 3;
    }
    c.graphs.push_back(g);
    c.windows.push_back({i % 2 ? WindowMarkKind::kClose : WindowMarkKind::kOpen,
                         ch.info.min_start_ns, 4242, static_cast<uint64_t>(i / 2),
                         "step " + std::to_string(i / 2)});
  }
  return c;
}

Status WriteSample(const std::string& path, const SampleContents& c, bool close_cleanly,
                   size_t batch_bytes) {
  auto sink = OpenFileSink(path);
  if (!sink.ok()) return sink.status();
  WriterOptions options;
  options.batch_bytes = batch_bytes;
  options.created_realtime_ns = 1790857026000000000;
  auto writer = CaptureWriter::Start(std::move(sink).value(), options);
  if (!writer.ok()) return writer.status();
  CaptureWriter& w = **writer;
  w.Submit(c.session);
  std::vector<SmallMessage> first;
  for (const auto& d : c.devices) first.emplace_back(d);
  for (const auto& t : c.threads) first.emplace_back(t);
  for (const auto& s : c.streams) first.emplace_back(s);
  for (const auto& k : c.clocks) first.emplace_back(k);
  for (const auto& d : c.counter_defs) first.emplace_back(d);
  for (const auto& s : c.counter_samples) first.emplace_back(s);
  for (const auto& m : c.metadata) first.emplace_back(m);
  first.emplace_back(c.stats);
  w.Submit(std::move(first));
  size_t per_round = c.chunks.empty() ? 0 : c.ranges.size() / c.chunks.size();
  for (size_t i = 0; i < c.chunks.size(); ++i) {
    std::vector<SmallMessage> batch;
    batch.emplace_back(c.strings[i]);
    for (size_t r = 0; r < per_round; ++r) batch.emplace_back(c.ranges[i * per_round + r]);
    batch.emplace_back(c.graphs[i]);
    batch.emplace_back(c.windows[i]);
    w.Submit(std::move(batch));
    ActivityBuffer buffer;
    buffer.data = c.chunks[i].bytes.data();
    buffer.size = c.chunks[i].bytes.size();
    buffer.info = c.chunks[i].info;
    // Wait for each chunk so the queue never fills in a test that is not
    // about drops.
    w.SubmitActivity(std::move(buffer));
    w.Flush(std::chrono::seconds(10));
  }
  if (!close_cleanly) {
    w.Flush(std::chrono::seconds(10));
    return Status::Ok();  // the destructor closes without a clean mark
  }
  Trailer t;
  t.clean_shutdown = true;
  t.end_cupti_ns = 2'000'000'000;
  t.stats = c.stats;
  return w.Close(std::move(t), std::chrono::seconds(10));
}

}  // namespace gpucap::testing
