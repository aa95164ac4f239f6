#include "gpucap/format/capture_writer.h"

#include <algorithm>

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <lz4.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "bounded_queue.h"
#include "capture.capnp.h"
#include "crc32c.h"
#include "frame_codec.h"
#include "message_codec.h"
#include "open_marks.h"
#include "open_ranges.h"
#include "writer_work.h"

namespace gpucap::format {

using namespace writer_internal;  // writer_work.h: private to this file

class CaptureWriter::Impl : public std::enable_shared_from_this<CaptureWriter::Impl> {
 public:
  Impl(std::unique_ptr<Sink> sink, const WriterOptions& options)
      : options_(options), queue_(options.queue_capacity), sink_(std::move(sink)) {}
  Impl(DumpSinkFactory dump_sink, RingLimits limits, const WriterOptions& options)
      : options_(options),
        queue_(options.queue_capacity),
        dump_sink_(std::move(dump_sink)),
        ring_(std::make_unique<FrameRing>(limits, /*hold_dropped=*/options.ring_crash_snapshots)),
        crash_slot_(options.ring_crash_snapshots ? std::make_shared<RingCrashSlot>() : nullptr) {}

  ~Impl() {
    if (thread_.joinable()) {
      // The last reference can be the writer thread's own, after a close
      // that timed out and left it to finish.
      if (thread_.get_id() == std::this_thread::get_id()) {
        thread_.detach();
      } else {
        thread_.join();
      }
    }
    ReleaseQueued();
  }

  Status Begin() {
    if (ring_) {
      thread_ = std::thread([self = shared_from_this()] { self->Run(); });
      return Status::Ok();
    }
    int64_t created = options_.created_realtime_ns ? options_.created_realtime_ns : RealtimeNs();
    FileHeader header = MakeFileHeader(created);
    ByteSpan piece(reinterpret_cast<const uint8_t*>(&header), sizeof(header));
    Status s = sink_->Append({&piece, 1});
    if (!s.ok()) return s;
    offset_ = sizeof(header);
    counters_.bytes_written.store(offset_);
    thread_ = std::thread([self = shared_from_this()] { self->Run(); });
    return Status::Ok();
  }

  bool SubmitActivity(ActivityBuffer buffer) {
    if (stopped_.load(std::memory_order_acquire)) {
      DropBuffer(buffer, &counters_.buffers_dropped_stopped);
      return false;
    }
    auto* w = new Work;
    w->kind = Work::Kind::kActivity;
    w->buffer = std::move(buffer);
    if (!Push(w)) {
      DropBuffer(w->buffer, &counters_.buffers_dropped_queue_full);
      delete w;
      return false;
    }
    return true;
  }

  bool SubmitMessages(std::vector<SmallMessage> messages) {
    if (messages.empty()) return true;
    if (stopped_.load(std::memory_order_acquire)) {
      counters_.messages_dropped.fetch_add(messages.size(), std::memory_order_relaxed);
      return false;
    }
    auto* w = new Work;
    w->messages = std::move(messages);
    if (!Push(w)) {
      counters_.messages_dropped.fetch_add(w->messages.size(), std::memory_order_relaxed);
      delete w;
      return false;
    }
    return true;
  }

  bool RequestDump(std::string trigger, Trailer trailer) {
    if (!ring_ || stopped_.load(std::memory_order_acquire)) return false;
    auto* w = new Work;
    w->kind = Work::Kind::kDump;
    w->trigger = std::move(trigger);
    w->trailer = std::move(trailer);
    if (!Push(w)) {
      counters_.dumps_failed.fetch_add(1, std::memory_order_relaxed);
      delete w;
      return false;
    }
    return true;
  }

  std::string last_dump() const {
    std::lock_guard<std::mutex> lock(error_mu_);
    return last_dump_;
  }

  RingCounters ring_counters() const {
    std::lock_guard<std::mutex> lock(error_mu_);
    return ring_counters_;
  }

  std::shared_ptr<RingCrashSlot> crash_slot() const { return crash_slot_; }

  bool Flush(std::chrono::milliseconds timeout) {
    if (stopped_.load()) return false;
    uint64_t ticket = flush_requested_.fetch_add(1) + 1;
    wake_cv_.notify_one();
    std::unique_lock<std::mutex> lock(done_mu_);
    done_cv_.wait_for(lock, timeout, [&] { return flush_done_ >= ticket || finished_; });
    return flush_done_ >= ticket;
  }

  Status Close(Trailer trailer, std::chrono::milliseconds timeout) {
    {
      std::lock_guard<std::mutex> lock(done_mu_);
      if (close_requested_) return Status::InvalidArgument(name() + ": closed twice");
      close_trailer_ = std::move(trailer);
      close_requested_ = true;
    }
    wake_cv_.notify_one();
    std::unique_lock<std::mutex> lock(done_mu_);
    bool done = done_cv_.wait_for(lock, timeout, [&] { return finished_; });
    if (!done) {
      // The thread may be stuck in a write to a hung disk; leave it to finish
      // on its own rather than block the process.
      thread_.detach();
      return Status::IoError(name() + ": close timed out after " +
                             std::to_string(timeout.count()) + " ms; the file has no trailer");
    }
    lock.unlock();
    thread_.join();
    return close_status_;
  }

  bool closed() const { return close_requested_; }

  WriterCounters counters() const {
    WriterCounters c;
    c.frames_written = counters_.frames_written.load();
    c.bytes_written = counters_.bytes_written.load();
    c.chunks_written = counters_.chunks_written.load();
    c.chunk_raw_bytes = counters_.chunk_raw_bytes.load();
    c.chunk_stored_bytes = counters_.chunk_stored_bytes.load();
    c.buffers_dropped_queue_full = counters_.buffers_dropped_queue_full.load();
    c.buffers_dropped_stopped = counters_.buffers_dropped_stopped.load();
    c.bytes_dropped = counters_.bytes_dropped.load();
    c.messages_dropped = counters_.messages_dropped.load();
    c.queue_high_water = counters_.queue_high_water.load();
    c.dumps_written = counters_.dumps_written.load();
    c.dumps_failed = counters_.dumps_failed.load();
    return c;
  }

  Status error() const {
    std::lock_guard<std::mutex> lock(error_mu_);
    return error_;
  }

  bool stopped() const { return stopped_.load(); }

 private:
  struct AtomicCounters {
    std::atomic<uint64_t> frames_written{0}, bytes_written{0}, chunks_written{0},
        chunk_raw_bytes{0}, chunk_stored_bytes{0}, buffers_dropped_queue_full{0},
        buffers_dropped_stopped{0}, bytes_dropped{0}, messages_dropped{0}, queue_high_water{0},
        dumps_written{0}, dumps_failed{0};
  };

  bool Push(Work* w) {
    if (!queue_.Push(w)) return false;
    uint64_t depth = queue_.SizeApprox();
    uint64_t high = counters_.queue_high_water.load(std::memory_order_relaxed);
    while (depth > high &&
           !counters_.queue_high_water.compare_exchange_weak(high, depth, std::memory_order_relaxed)) {
    }
    wake_cv_.notify_one();
    return true;
  }

  void DropBuffer(ActivityBuffer& b, std::atomic<uint64_t>* reason) {
    reason->fetch_add(1, std::memory_order_relaxed);
    counters_.bytes_dropped.fetch_add(b.size, std::memory_order_relaxed);
    if (b.release) {
      b.release();
      b.release = nullptr;
    }
  }

  void ReleaseQueued() {
    Work* w;
    while (queue_.Pop(&w)) {
      if (w->kind == Work::Kind::kActivity) {
        DropBuffer(w->buffer, &counters_.buffers_dropped_stopped);
      } else if (w->kind == Work::Kind::kDump) {
        counters_.dumps_failed.fetch_add(1);
      } else {
        counters_.messages_dropped.fetch_add(w->messages.size());
      }
      delete w;
    }
  }

  // --- writer thread ---

  void Run() {
    if (crash_slot_) crash_slot_->SetWriterTid(static_cast<int>(syscall(SYS_gettid)));
    for (;;) {
      bool worked = Drain();
      bool close;
      uint64_t flush_ticket;
      {
        std::lock_guard<std::mutex> lock(done_mu_);
        close = close_requested_;
      }
      flush_ticket = flush_requested_.load();
      if (close) {
        Drain();
        FinishFile();
        return;
      }
      if (flush_ticket > flush_done_seen_) {
        Drain();
        WritePending();
        flush_done_seen_ = flush_ticket;
        {
          std::lock_guard<std::mutex> lock(done_mu_);
          flush_done_ = flush_ticket;
        }
        done_cv_.notify_all();
      }
      WriteAgedBatches();
      if (!worked) {
        std::unique_lock<std::mutex> lock(wake_mu_);
        // Producers notify without the lock; a missed notification costs at
        // most this wait.
        wake_cv_.wait_for(lock, std::chrono::milliseconds(20));
      }
    }
  }

  bool Drain() {
    bool any = false;
    Work* w;
    while (queue_.Pop(&w)) {
      any = true;
      if (w->kind == Work::Kind::kActivity) {
        WriteChunk(w->buffer);
      } else if (w->kind == Work::Kind::kDump) {
        WriteDump(w->trigger, std::move(w->trailer));
      } else {
        AddMessages(w->messages);
      }
      delete w;
    }
    return any;
  }

  bool writing() const { return !failed_ && !capped_; }

  void AddMessages(std::vector<SmallMessage>& messages) {
    if (!writing()) {
      counters_.messages_dropped.fetch_add(messages.size(), std::memory_order_relaxed);
      return;
    }
    for (SmallMessage& m : messages) {
      FrameType type = FrameTypeOf(m);
      if (type == FrameType::kSession) {
        std::get<SessionInfo>(m).format_major = kFormatMajor;
        std::get<SessionInfo>(m).format_minor = kFormatMinor;
        WritePending();  // keep whatever came before the session before it
        std::vector<SmallMessage> one;
        one.push_back(std::move(m));
        WriteBatch(type, one);
        continue;
      }
      // In a ring, NVTX's names and payload schemas are definitions: their
      // own frames, kept when the ranges around them age out.
      bool range_def = ring_ && IsRangeDefinition(m);
      Batch& b = range_def ? range_defs_ : pending_[type];
      if (b.messages.empty()) b.first = Clock::now();
      b.bytes += ApproxEncodedSize(m);
      b.messages.push_back(std::move(m));
      if (b.bytes >= options_.batch_bytes) {
        WriteBatch(type, b.messages, range_def);
        b = Batch{};
      }
    }
  }

  static bool IsRangeDefinition(const SmallMessage& m) {
    const auto* e = std::get_if<RangeEvent>(&m);
    if (!e) return false;
    switch (e->kind) {
      case RangeKind::kNameThread:
      case RangeKind::kNameDomain:
      case RangeKind::kNameCategory:
      case RangeKind::kPayloadSchema:
      case RangeKind::kPayloadEnum:
        return true;
      default:
        return false;
    }
  }

  void WritePending() {
    if (!range_defs_.messages.empty()) {
      WriteBatch(FrameType::kRanges, range_defs_.messages, /*definition=*/true);
      range_defs_ = Batch{};
    }
    for (FrameType type : kBatchOrder) {
      auto it = pending_.find(type);
      if (it == pending_.end() || it->second.messages.empty()) continue;
      WriteBatch(type, it->second.messages);
      it->second = Batch{};
    }
  }

  void WriteAgedBatches() {
    auto now = Clock::now();
    auto max_age = std::chrono::milliseconds(options_.batch_max_age_ms);
    if (!range_defs_.messages.empty() && now - range_defs_.first >= max_age) {
      WritePending();
      return;
    }
    for (auto& [type, b] : pending_) {
      if (!b.messages.empty() && now - b.first >= max_age) {
        // Age out everything at once so strings stay ahead of later chunks.
        WritePending();
        return;
      }
    }
  }

  // `definition`: a ring keeps the frame with its definitions (frame_ring.h).
  void WriteBatch(FrameType type, const std::vector<SmallMessage>& messages, bool definition = false) {
    if (!writing()) {
      counters_.messages_dropped.fetch_add(messages.size(), std::memory_order_relaxed);
      return;
    }
    // A ring's ranges and windows spans: what they open and close, before
    // the ring takes the frame (and drops older ones for it).
    if (ring_ && type == FrameType::kRanges && !definition) open_ranges_.AddFrame(ring_->next_order(), messages);
    if (ring_ && type == FrameType::kWindows && !definition) open_marks_.AddFrame(ring_->next_order(), messages);
    EncodeFrame(type, messages, [&](uint16_t flags, std::span<const ByteSpan> pieces, uint64_t lo, uint64_t hi) {
      WriteFrame(type, flags, pieces, lo, hi, false, nullptr, definition);
    });
  }

  // One frame's payload of `messages`, all of `type`, compressed where that
  // makes it smaller: `put(flags, pieces, min_ts, max_ts)` gets it, the
  // pieces valid only during the call (they may point to the scratch
  // buffers, which `put` may then reuse).
  template <typename Put>
  void EncodeFrame(FrameType type, const std::vector<SmallMessage>& messages, Put&& put) {
    capnp::MallocMessageBuilder builder;
    EncodeBatch(type, messages, &builder);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const SmallMessage& m : messages) {
      if (auto ts = TimestampOf(m)) {
        lo = std::min(lo, *ts);
        hi = std::max(hi, *ts);
      }
    }
    if (lo == UINT64_MAX) lo = 0;
    FlatMessage flat(builder);
    if (flat.bytes() >= kCompressMinBytes) {
      // Concatenate, compress, and keep the compressed form if it is smaller.
      flat_scratch_.resize(flat.bytes());
      size_t at = 0;
      for (ByteSpan p : flat.pieces()) {
        std::memcpy(flat_scratch_.data() + at, p.data(), p.size());
        at += p.size();
      }
      size_t n = Lz4(ByteSpan(flat_scratch_.data(), at), 8);
      if (n > 0 && n + 8 < at) {
        uint32_t raw = static_cast<uint32_t>(at), stored = static_cast<uint32_t>(n);
        std::memcpy(lz4_scratch_.data(), &raw, 4);
        std::memcpy(lz4_scratch_.data() + 4, &stored, 4);
        size_t len = (8 + static_cast<size_t>(n) + 7) & ~size_t{7};
        std::memset(lz4_scratch_.data() + 8 + n, 0, len - 8 - n);
        ByteSpan piece(lz4_scratch_.data(), len);
        put(kFrameCompressed, std::span<const ByteSpan>(&piece, 1), lo, hi);
        return;
      }
    }
    put(uint16_t{0}, flat.pieces(), lo, hi);
  }

  void WriteChunk(ActivityBuffer& buffer) {
    if (!writing()) {
      DropBuffer(buffer, &counters_.buffers_dropped_stopped);
      return;
    }
    WritePending();
    const uint8_t* raw = buffer.data;
    size_t size = buffer.size;
    size_t n = Lz4(ByteSpan(raw, size), 0);
    bool compressed = n > 0 && n < size;
    const uint8_t* stored = compressed ? lz4_scratch_.data() : raw;
    size_t stored_size = compressed ? n : size;

    capnp::MallocMessageBuilder builder(static_cast<unsigned>(stored_size / 8 + 256));
    const ChunkInfo& info = buffer.info;
    EncodeChunk({compressed ? schema::Codec::LZ4_BLOCK : schema::Codec::NONE, static_cast<uint32_t>(size),
                 Crc32c(0, raw, size), ByteSpan(stored, stored_size), &info},
                builder.initRoot<schema::ActivityChunk>());

    FlatMessage flat(builder);
    if (WriteFrame(FrameType::kActivityChunk, 0, flat.pieces(), info.min_start_ns,
                   std::max(info.max_start_ns, info.max_end_ns), false, &info)) {
      counters_.chunks_written.fetch_add(1, std::memory_order_relaxed);
      counters_.chunk_raw_bytes.fetch_add(size, std::memory_order_relaxed);
      counters_.chunk_stored_bytes.fetch_add(stored_size, std::memory_order_relaxed);
      activity_records_ += info.record_count;
      for (const KindCount& kc : info.kind_counts) records_per_kind_[kc.kind] += kc.count;
      if (buffer.release) buffer.release();
    } else {
      DropBuffer(buffer, &counters_.buffers_dropped_stopped);
    }
    buffer.release = nullptr;
  }

  // LZ4 of `in` into lz4_scratch_ from byte `at` on (the bytes before are
  // the caller's frame header), with room for 8 bytes of padding after: the
  // compressed size, 0 where LZ4 failed. The one scratch buffer for frames
  // and chunks, both written on the writer's thread, one at a time.
  size_t Lz4(ByteSpan in, size_t at) {
    int bound = LZ4_compressBound(static_cast<int>(in.size()));
    if (lz4_scratch_.size() < at + static_cast<size_t>(bound) + 8) lz4_scratch_.resize(at + bound + 8);
    int n = LZ4_compress_fast(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(lz4_scratch_.data() + at),
                              static_cast<int>(in.size()), bound, options_.lz4_acceleration);
    return n > 0 ? static_cast<size_t>(n) : 0;
  }

  // The one place bytes go to the sink. False when nothing was written.
  // In ring mode, the frame goes to the ring instead (`chunk`: the
  // activity chunk's counts, for a dump's trailer).
  bool WriteFrame(FrameType type, uint16_t flags, std::span<const ByteSpan> pieces,
                  uint64_t min_ts, uint64_t max_ts, bool is_trailer = false,
                  const ChunkInfo* chunk = nullptr, bool definition = false) {
    if (failed_) return false;
    FrameHeader header =
        MakeFrameHeader(static_cast<uint16_t>(type), flags, sequence_, pieces);
    uint64_t frame_bytes = sizeof(header) + header.length;
    if (ring_) {
      ring_->Add(header, pieces, min_ts, max_ts, SteadyNs(), chunk ? chunk->record_count : 0,
                 chunk ? chunk->kind_counts : std::vector<KindCount>{}, definition);
      // The frame is copied: the scratch buffers `pieces` may point to are
      // free for the leads' encoding.
      CarryOpen();
      PublishCrashSnapshot();
      ++sequence_;
      counters_.frames_written.fetch_add(1, std::memory_order_relaxed);
      counters_.bytes_written.fetch_add(frame_bytes, std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(error_mu_);
      ring_counters_ = ring_->counters();
      return true;
    }
    if (!is_trailer && options_.max_file_bytes != 0) {
      uint64_t reserve = kTrailerReserveBase + kTrailerReservePerFrame * (index_.size() + 1);
      if (offset_ + frame_bytes + reserve > options_.max_file_bytes) {
        capped_ = true;
        stop_reason_ = "size cap of " + std::to_string(options_.max_file_bytes) + " bytes reached";
        stopped_.store(true, std::memory_order_release);
        return false;
      }
    }
    std::vector<ByteSpan> all;
    all.reserve(pieces.size() + 1);
    all.emplace_back(reinterpret_cast<const uint8_t*>(&header), sizeof(header));
    all.insert(all.end(), pieces.begin(), pieces.end());
    Status s = sink_->Append(all);
    if (!s.ok()) {
      Fail(std::move(s));
      return false;
    }
    if (!is_trailer) {
      index_.push_back(IndexEntry{offset_, static_cast<uint16_t>(type), header.length, min_ts, max_ts});
    }
    offset_ += frame_bytes;
    ++sequence_;
    counters_.frames_written.fetch_add(1, std::memory_order_relaxed);
    counters_.bytes_written.store(offset_, std::memory_order_relaxed);
    return true;
  }

  void Fail(Status s) {
    failed_ = true;
    stop_reason_ = "writer stopped: " + s.message();
    {
      // The error is set before stopped_: a submitter that finds the writer
      // stopped reads error() next and must find why, not an empty status.
      std::lock_guard<std::mutex> lock(error_mu_);
      if (error_.ok()) error_ = std::move(s);
    }
    stopped_.store(true, std::memory_order_release);
    // Cut a partially written frame so the file ends at a frame boundary.
    (void)sink_->Truncate(offset_);
  }

  static uint64_t SteadyNs() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
  }

  // Ring mode: the ring as a complete capture in a new sink: a file header,
  // every frame held (definitions and spans in the order they were made,
  // numbered afresh), a trailer with its own index and the trigger, the
  // footer. A failure loses this dump only.
  void WriteDump(const std::string& trigger, Trailer trailer) {
    WritePending();  // what was batched before the request belongs in it
    ring_->Age(SteadyNs());
    CarryOpen();
    PublishCrashSnapshot();
    uint64_t number = ++dumps_begun_;
    auto made = dump_sink_(number);
    if (!made.ok()) {
      DumpFailed(made.status().message());
      return;
    }
    std::unique_ptr<Sink> sink = std::move(made).value();
    trailer.trigger = trigger;
    RecorderStats& st = trailer.stats;
    st.queue_high_water = AddWriterDrops(&st).queue_high_water;
    st.extra.emplace_back("ring_dump_number", number);
    Status s = WriteRingCapture(*ring_, std::move(trailer), RealtimeNs(), sink.get());
    Status closed = sink->Close();
    if (s.ok()) s = closed;
    if (!s.ok()) {
      DumpFailed(s.message());
      return;
    }
    {
      std::lock_guard<std::mutex> lock(error_mu_);
      last_dump_ = sink->name();
    }
    counters_.dumps_written.fetch_add(1, std::memory_order_relaxed);
  }

  // The writer's own drops into a trailer's stats, whose caller left them
  // out (Recorder::Stats's kLeaveToWriter): the counters read, for the rest.
  WriterCounters AddWriterDrops(RecorderStats* st) const {
    WriterCounters c = counters();
    st->buffers_dropped_queue_full = c.buffers_dropped_queue_full;
    st->bytes_dropped += c.bytes_dropped;
    st->messages_dropped += c.messages_dropped;
    return c;
  }

  // Ring mode, after each change of the ring: once ranges (windows) frames
  // have left it, the ranges (window marks) open at the start of what it
  // holds, as its ranges (windows) lead frame (open_ranges.h, open_marks.h),
  // encoded as the ranges (windows) frames are.
  void CarryOpen() {
    uint64_t oldest = ring_->oldest_span_order();
    if (open_ranges_.Advance(oldest)) SetLead(FrameType::kRanges, open_ranges_.Carried());
    if (open_marks_.Advance(oldest)) SetLead(FrameType::kWindows, open_marks_.Carried());
    ring_->NoteOpenForgotten(open_ranges_.forgotten(), open_marks_.forgotten());
  }

  void SetLead(FrameType type, const std::vector<SmallMessage>& carried) {
    if (carried.empty()) {
      ring_->ClearLead(type);
      return;
    }
    EncodeFrame(type, carried, [&](uint16_t flags, std::span<const ByteSpan> pieces, uint64_t lo, uint64_t hi) {
      FrameHeader header = MakeFrameHeader(static_cast<uint16_t>(type), flags, 0, pieces);
      ring_->SetLead(header, pieces, lo, hi, carried.size());
    });
  }

  // Ring mode: the ring as it is now, ready for a crash handler; the
  // payloads of the frames just dropped go once no handler reads the
  // snapshot before this one (crash_slot.h).
  void PublishCrashSnapshot() {
    if (!crash_slot_) return;
    Trailer trailer;
    trailer.stop_reason = "flight-recorder dump";
    trailer.stats.queue_high_water = AddWriterDrops(&trailer.stats).queue_high_water;
    crash_slot_->Publish(RingSnapshot::Build(*ring_, std::move(trailer)), ring_->TakeRetired());
  }

  void DumpFailed(const std::string& why) {
    {
      std::lock_guard<std::mutex> lock(error_mu_);
      last_dump_ = "dump failed: " + why;
    }
    counters_.dumps_failed.fetch_add(1, std::memory_order_relaxed);
  }

  const std::string& name() const {
    static const std::string kRing = "flight-recorder ring";
    return sink_ ? sink_->name() : kRing;
  }

  void FinishFile() {
    stopped_.store(true, std::memory_order_release);
    WritePending();
    if (ring_) {
      // Nothing to close: the ring goes with the writer, unless a crash
      // handler is writing it now (the process is going down: leave it).
      if (crash_slot_ && !crash_slot_->Publish(nullptr, ring_->TakeRetired())) {
        (void)ring_.release();
      } else {
        ring_.reset();
      }
      ReleaseQueued();
      {
        std::lock_guard<std::mutex> lock(done_mu_);
        close_status_ = Status::Ok();
        finished_ = true;
      }
      done_cv_.notify_all();
      return;
    }
    Trailer trailer;
    {
      std::lock_guard<std::mutex> lock(done_mu_);
      trailer = std::move(close_trailer_);
    }
    Status status;
    if (!failed_) {
      trailer.frames = sequence_;
      trailer.activity_records = activity_records_;
      trailer.records_per_kind.clear();
      for (auto [kind, count] : records_per_kind_) trailer.records_per_kind.push_back({kind, count});
      if (!stop_reason_.empty()) {
        trailer.stop_reason = trailer.stop_reason.empty()
                                  ? stop_reason_
                                  : trailer.stop_reason + "; " + stop_reason_;
      }
      RecorderStats& st = trailer.stats;
      WriterCounters c = AddWriterDrops(&st);
      if (options_.own_queue_high_water) st.queue_high_water = c.queue_high_water;
      st.frames_written = c.frames_written;
      st.bytes_written = c.bytes_written;
      // The recorder's stats may carry this name already (from an earlier
      // read of the same counter): one entry, the final count.
      auto stopped = std::find_if(st.extra.begin(), st.extra.end(),
                                  [](const auto& e) { return e.first == "buffers_dropped_writer_stopped"; });
      if (stopped == st.extra.end()) st.extra.emplace_back("buffers_dropped_writer_stopped", c.buffers_dropped_stopped);
      else stopped->second = c.buffers_dropped_stopped;
      trailer.index = std::move(index_);

      capnp::MallocMessageBuilder builder;
      EncodeTrailer(trailer, builder.initRoot<schema::Trailer>());
      FlatMessage flat(builder);
      uint64_t trailer_offset = offset_;
      if (WriteFrame(FrameType::kTrailer, 0, flat.pieces(), 0, 0, /*is_trailer=*/true)) {
        Footer footer = MakeFooter(trailer_offset);
        ByteSpan piece(reinterpret_cast<const uint8_t*>(&footer), sizeof(footer));
        Status s = sink_->Append({&piece, 1});
        if (!s.ok()) {
          Fail(s);
        } else {
          offset_ += sizeof(footer);
          counters_.bytes_written.store(offset_);
        }
      }
    }
    Status closed = sink_->Close();
    {
      std::lock_guard<std::mutex> lock(error_mu_);
      status = error_.ok() ? closed : error_;
    }
    ReleaseQueued();
    {
      std::lock_guard<std::mutex> lock(done_mu_);
      close_status_ = status;
      finished_ = true;
    }
    done_cv_.notify_all();
  }

  const WriterOptions options_;
  BoundedQueue<Work*> queue_;
  std::unique_ptr<Sink> sink_;
  std::thread thread_;
  AtomicCounters counters_;
  std::atomic<bool> stopped_{false};
  std::atomic<uint64_t> flush_requested_{0};

  std::mutex wake_mu_;
  std::condition_variable wake_cv_;

  std::mutex done_mu_;  // guards the fields below up to finished_
  std::condition_variable done_cv_;
  bool close_requested_ = false;
  Trailer close_trailer_;
  uint64_t flush_done_ = 0;
  Status close_status_;
  bool finished_ = false;

  mutable std::mutex error_mu_;
  Status error_;

  // Writer thread only.
  uint64_t offset_ = 0;
  uint32_t sequence_ = 0;
  uint64_t flush_done_seen_ = 0;
  bool failed_ = false;
  bool capped_ = false;
  std::string stop_reason_;
  std::map<FrameType, Batch> pending_;
  std::vector<IndexEntry> index_;
  uint64_t activity_records_ = 0;
  std::map<uint32_t, uint64_t> records_per_kind_;
  std::vector<uint8_t> flat_scratch_;
  std::vector<uint8_t> lz4_scratch_;
  // Ring mode only.
  DumpSinkFactory dump_sink_;
  std::unique_ptr<FrameRing> ring_;
  Batch range_defs_;  // NVTX names and payload schemas, batched apart in a ring
  OpenRanges open_ranges_;  // what the ranges frames in the ring left open
  OpenMarks open_marks_;    // what the windows frames in the ring left open
  std::shared_ptr<RingCrashSlot> crash_slot_;  // with ring_crash_snapshots
  uint64_t dumps_begun_ = 0;
  std::string last_dump_;          // guarded by error_mu_
  RingCounters ring_counters_;     // guarded by error_mu_
};

Result<std::unique_ptr<CaptureWriter>> CaptureWriter::Start(std::unique_ptr<Sink> sink,
                                                            const WriterOptions& options) {
  if (!sink) return Status::InvalidArgument("capture writer needs a sink");
  auto impl = std::make_shared<Impl>(std::move(sink), options);
  Status s = impl->Begin();
  if (!s.ok()) return s;
  return std::unique_ptr<CaptureWriter>(new CaptureWriter(std::move(impl)));
}

Result<std::unique_ptr<CaptureWriter>> CaptureWriter::StartRing(DumpSinkFactory dump_sink, RingLimits limits,
                                                                const WriterOptions& options) {
  if (!dump_sink) return Status::InvalidArgument("a ring writer needs a place for its dumps");
  auto impl = std::make_shared<Impl>(std::move(dump_sink), limits, options);
  Status s = impl->Begin();
  if (!s.ok()) return s;
  return std::unique_ptr<CaptureWriter>(new CaptureWriter(std::move(impl)));
}

CaptureWriter::CaptureWriter(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

CaptureWriter::~CaptureWriter() {
  if (impl_ && !impl_->closed()) {
    Trailer t;
    t.clean_shutdown = false;
    t.stop_reason = "writer destroyed without Close";
    (void)impl_->Close(std::move(t), std::chrono::seconds(5));
  }
}

bool CaptureWriter::SubmitActivity(ActivityBuffer buffer) {
  return impl_->SubmitActivity(std::move(buffer));
}

bool CaptureWriter::Submit(SmallMessage message) {
  std::vector<SmallMessage> one;
  one.push_back(std::move(message));
  return impl_->SubmitMessages(std::move(one));
}

bool CaptureWriter::Submit(std::vector<SmallMessage> batch) {
  return impl_->SubmitMessages(std::move(batch));
}

bool CaptureWriter::Flush(std::chrono::milliseconds timeout) { return impl_->Flush(timeout); }

Status CaptureWriter::Close(Trailer trailer, std::chrono::milliseconds timeout) {
  return impl_->Close(std::move(trailer), timeout);
}

WriterCounters CaptureWriter::counters() const { return impl_->counters(); }
bool CaptureWriter::RequestDump(std::string trigger, Trailer trailer) {
  return impl_->RequestDump(std::move(trigger), std::move(trailer));
}
std::string CaptureWriter::last_dump() const { return impl_->last_dump(); }
RingCounters CaptureWriter::ring_counters() const { return impl_->ring_counters(); }
std::shared_ptr<RingCrashSlot> CaptureWriter::crash_slot() const { return impl_->crash_slot(); }
Status CaptureWriter::error() const { return impl_->error(); }
bool CaptureWriter::stopped() const { return impl_->stopped(); }

}  // namespace gpucap::format
