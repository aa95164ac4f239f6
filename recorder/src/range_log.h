// Range events (NVTX and gpucap API pushes, pops, starts, ends, marks, the
// names NVTX defines) and the window marks derived from them, kept per thread
// as compact records in fixed chunks, and turned into capture messages off
// the application's thread.
//
// The calling thread appends to its own chunk with no lock, no allocation
// and no copy but the name's: a record is a fixed header and the name's
// bytes. A full chunk is handed over through a lock-free list and the
// collector is woken (`on_full`); the collector (the recorder's control
// thread) decodes every thread's records, in the order each thread made
// them, into RangeEvent and WindowMark messages for the writer. A drained
// chunk goes back to its thread for reuse, and the collector pages in a
// couple ahead, so a hand-over costs its thread no allocation and no page
// fault in the steady state. Memory is bounded: past `max_bytes` of chunks
// a record is dropped and counted, never waited for.
#ifndef GPUCAP_RECORDER_RANGE_LOG_H_
#define GPUCAP_RECORDER_RANGE_LOG_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "gpucap/format/model.h"
#include "range_matcher.h"
#include "step_log.h"
#include "thread_buffers.h"

namespace gpucap::recorder {

// A range event's fields but its name and extended payloads.
struct RangeFields {
  format::RangeKind kind = format::RangeKind::kPush;
  format::RangeSource source = format::RangeSource::kNvtx;
  uint64_t timestamp_ns = 0;
  uint32_t os_tid = 0;  // 0: the appending thread's
  uint64_t id = 0;
  uint64_t domain = 0;
  uint32_t category = 0;
  uint32_t color = 0;
  // 0: none; 1: uint64; 2: int64; 3: double (format::RangeEvent::payload's
  // alternatives), its bits in `payload`.
  uint8_t payload_type = 0;
  uint64_t payload = 0;
};

namespace range_log_detail {

// A record: this header, the name's bytes, then `ext_count` extended
// payloads (ExtHeader and its bytes), each part padded to 8 bytes.
struct RecordHeader {
  uint32_t size;  // the whole record's bytes
  uint8_t type;   // kRangeRecord or kMarkRecord
  uint8_t kind;
  uint8_t source;
  uint8_t payload_type;
  uint32_t os_tid;
  uint32_t reserved;
  uint64_t timestamp_ns;
  uint64_t id;
  uint64_t domain;
  uint64_t payload;
  uint32_t category;
  uint32_t color;
  uint32_t name_bytes;
  uint32_t ext_count;
};
static_assert(sizeof(RecordHeader) % 8 == 0);

struct ExtHeader {
  uint64_t schema_id;
  uint32_t bytes;
  uint32_t truncated;
};
static_assert(sizeof(ExtHeader) % 8 == 0);

inline constexpr uint8_t kRangeRecord = 1;
inline constexpr uint8_t kMarkRecord = 2;

constexpr size_t Pad(size_t n) { return (n + 7) & ~size_t{7}; }

}  // namespace range_log_detail

// A RangeEvent's fields (the API's ranges and names come as RangeEvents).
RangeFields FieldsOf(const format::RangeEvent& e);

class RangeLog {
 public:
  using Submit = std::function<bool(std::vector<format::SmallMessage>)>;
  struct Limits {
    size_t chunk_bytes = 64 << 10;
    size_t max_bytes = 32 << 20;  // every thread's chunks together
    size_t batch_events = 512;    // messages per Submit
    // Drained chunks kept for their thread's reuse: recycled memory is
    // already paged in, a fresh chunk costs its thread page faults.
    int spares_per_thread = 8;
    // Chunks the collector allocates and pages in ahead for each thread
    // that records, so its thread never faults pages in at a hand-over.
    int ready_per_thread = 2;
  };

  // `submit` hands a batch to the writer (false: it was dropped). `on_full`
  // is called on the appending thread when it hands a chunk over; it must
  // not block (the recorder notifies its control thread).
  RangeLog(Submit submit, Limits limits, std::function<void()> on_full);
  ~RangeLog();
  RangeLog(const RangeLog&) = delete;
  RangeLog& operator=(const RangeLog&) = delete;

  struct Chunk {
    Chunk* next = nullptr;  // in a full or spare list
    size_t capacity = 0;
    std::atomic<size_t> committed{0};  // whole records' bytes, stored by the owner
    size_t consumed = 0;               // bytes decoded, by the collector only
    unsigned char* data() { return reinterpret_cast<unsigned char*>(this + 1); }
  };
  // One thread's records. Only its thread appends; the collector reads.
  struct Writer {
    std::mutex mu;         // ThreadBuffers' contract: retirement and collection
    bool retired = false;  // under mu
    uint32_t os_tid = 0;
    // The recorder's per-thread state beside the records (found with them,
    // no thread_local of its own): the thread named, the pushes open per
    // domain with the window each opened (0: none), the window pattern's
    // answers.
    bool announced = false;
    std::vector<std::pair<uint64_t, uint64_t>> open_windows;
    MatchCache window_names;
    StepLog::Slot* steps = nullptr;  // the flight recorder's step watch (step_log.h), on the first step
    RangeLog* log = nullptr;
    Chunk* current = nullptr;              // owner only
    size_t used = 0;                       // bytes of `current` written, owner only
    std::atomic<Chunk*> live{nullptr};     // `current`, for the collector
    std::atomic<Chunk*> full{nullptr};     // handed over, newest first
    std::atomic<Chunk*> spare{nullptr};    // drained, given back by the collector
    std::atomic<int> spares{0};            // given back and not yet taken
    Chunk* local = nullptr;                // taken from `spare`, owner only
    ~Writer();
  };

  // The calling thread's writer (made on its first use).
  Writer* Mine();
  // The same through a cache the caller keeps in its own thread_local
  // (trivially destructible, so reaching it is one TLS lookup, no guard):
  // a writer stays valid while its thread lives, and owners are numbered,
  // so a cache filled for another log never matches this one.
  struct WriterCache {
    uint64_t owner = 0;
    Writer* writer = nullptr;
  };
  Writer* Mine(WriterCache* cache) {
    if (cache->owner == writers_.owner()) return cache->writer;
    Writer* w = Mine();
    *cache = {writers_.owner(), w};
    return w;
  }

  // Appends one record; false when it was dropped (no chunk to be had).
  // Inline: the NVTX handlers' path ends here, once per event.
  bool AddRange(Writer* w, const RangeFields& f, std::string_view name,
                const std::vector<format::ExtPayload>* ext = nullptr) {
    using namespace range_log_detail;
    size_t bytes = sizeof(RecordHeader) + Pad(name.size());
    if (ext || !w->current || w->used + bytes > w->current->capacity) return AddRangeSlow(w, f, name, ext);
    unsigned char* at = w->current->data() + w->used;
    RecordHeader h;
    Fill(&h, w, f, bytes, name.size(), 0);
    std::memcpy(at, &h, sizeof(h));
    if (!name.empty()) std::memcpy(at + sizeof(h), name.data(), name.size());
    w->used += bytes;
    w->current->committed.store(w->used, std::memory_order_release);
    return true;
  }
  bool AddMark(Writer* w, format::WindowMarkKind kind, uint64_t timestamp_ns, uint32_t os_tid, uint64_t id,
               std::string_view label);

  // Decodes and submits every thread's records so far (full_only: only the
  // chunks handed over). One collection at a time; never on an appending
  // thread's path.
  void Collect(bool full_only = false);

  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t chunk_bytes_in_use() const { return bytes_.load(std::memory_order_relaxed); }

 private:
  static void Fill(range_log_detail::RecordHeader* h, const Writer* w, const RangeFields& f, size_t bytes,
                   size_t name_bytes, uint32_t ext_count) {
    h->size = static_cast<uint32_t>(bytes);
    h->type = range_log_detail::kRangeRecord;
    h->kind = static_cast<uint8_t>(f.kind);
    h->source = static_cast<uint8_t>(f.source);
    h->payload_type = f.payload_type;
    h->os_tid = f.os_tid ? f.os_tid : w->os_tid;
    h->reserved = 0;
    h->timestamp_ns = f.timestamp_ns;
    h->id = f.id;
    h->domain = f.domain;
    h->payload = f.payload;
    h->category = f.category;
    h->color = f.color;
    h->name_bytes = static_cast<uint32_t>(name_bytes);
    h->ext_count = ext_count;
  }
  bool AddRangeSlow(Writer* w, const RangeFields& f, std::string_view name,
                    const std::vector<format::ExtPayload>* ext);
  // Room for `bytes` more in w's chunk, handing the full one over; nullptr
  // when over the limit.
  unsigned char* Reserve(Writer* w, size_t bytes);
  Chunk* NewChunk(size_t capacity);
  void FreeChunk(Chunk* c);
  // Collector side (under collect_mu_).
  void Drain(Writer& w, bool full_only, std::vector<format::SmallMessage>* out);
  void DecodeFrom(Chunk* c, std::vector<format::SmallMessage>* out);
  void Recycle(Writer& w, Chunk* c);
  void GiveBack(Writer& w, Chunk* c);
  void Flush(std::vector<format::SmallMessage>* out);

  Submit submit_;
  const Limits limits_;
  std::function<void()> on_full_;
  ThreadBuffers<Writer> writers_;
  std::mutex collect_mu_;
  std::atomic<size_t> bytes_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_RANGE_LOG_H_
