// The trailer and the recorder's statistics (message_codec.h): the last
// frame of a capture and the counts it carries.
#include "message_codec.h"

#include "capnp_text.h"

namespace gpucap::format {

using capnp_text::Str;

void EncodeStats(const RecorderStats& s, schema::Stats::Builder b) {
  b.setTimestampNs(s.timestamp_ns);
  b.setCuptiDroppedRecords(s.cupti_dropped_records);
  b.setBuffersDroppedPoolEmpty(s.buffers_dropped_pool_empty);
  b.setBuffersDroppedQueueFull(s.buffers_dropped_queue_full);
  b.setBytesDropped(s.bytes_dropped);
  b.setMessagesDropped(s.messages_dropped);
  b.setQueueHighWater(s.queue_high_water);
  b.setFramesWritten(s.frames_written);
  b.setBytesWritten(s.bytes_written);
  b.setWriterError(Str(s.writer_error));
  auto extra = b.initExtra(s.extra.size());
  for (size_t i = 0; i < s.extra.size(); ++i) {
    extra[i].setName(Str(s.extra[i].first));
    extra[i].setValue(s.extra[i].second);
  }
}

RecorderStats DecodeStats(schema::Stats::Reader r) {
  RecorderStats s;
  s.timestamp_ns = r.getTimestampNs();
  s.cupti_dropped_records = r.getCuptiDroppedRecords();
  s.buffers_dropped_pool_empty = r.getBuffersDroppedPoolEmpty();
  s.buffers_dropped_queue_full = r.getBuffersDroppedQueueFull();
  s.bytes_dropped = r.getBytesDropped();
  s.messages_dropped = r.getMessagesDropped();
  s.queue_high_water = r.getQueueHighWater();
  s.frames_written = r.getFramesWritten();
  s.bytes_written = r.getBytesWritten();
  s.writer_error = Str(r.getWriterError());
  for (auto e : r.getExtra()) s.extra.emplace_back(Str(e.getName()), e.getValue());
  return s;
}

void EncodeTrailer(const Trailer& t, schema::Trailer::Builder b) {
  b.setCleanShutdown(t.clean_shutdown);
  b.setEndCuptiNs(t.end_cupti_ns);
  b.setFrames(t.frames);
  b.setActivityRecords(t.activity_records);
  auto kinds = b.initRecordsPerKind(t.records_per_kind.size());
  for (size_t i = 0; i < t.records_per_kind.size(); ++i) {
    kinds[i].setKind(t.records_per_kind[i].kind);
    kinds[i].setCount(t.records_per_kind[i].count);
  }
  EncodeStats(t.stats, b.initStats());
  auto index = b.initIndex(t.index.size());
  for (size_t i = 0; i < t.index.size(); ++i) {
    const IndexEntry& e = t.index[i];
    index[i].setOffset(e.offset);
    index[i].setType(e.type);
    index[i].setLength(e.length);
    index[i].setMinTimestampNs(e.min_timestamp_ns);
    index[i].setMaxTimestampNs(e.max_timestamp_ns);
  }
  b.setStopReason(Str(t.stop_reason));
  b.setTrigger(Str(t.trigger));
}

Trailer DecodeTrailerMessage(schema::Trailer::Reader r) {
  Trailer t;
  t.clean_shutdown = r.getCleanShutdown();
  t.end_cupti_ns = r.getEndCuptiNs();
  t.frames = r.getFrames();
  t.activity_records = r.getActivityRecords();
  for (auto k : r.getRecordsPerKind()) t.records_per_kind.push_back({k.getKind(), k.getCount()});
  t.stats = DecodeStats(r.getStats());
  auto index = r.getIndex();
  t.index.reserve(index.size());
  for (auto e : index) {
    t.index.push_back(IndexEntry{e.getOffset(), e.getType(), e.getLength(), e.getMinTimestampNs(),
                                 e.getMaxTimestampNs()});
  }
  t.stop_reason = Str(r.getStopReason());
  t.trigger = Str(r.getTrigger());
  return t;
}

}  // namespace gpucap::format
