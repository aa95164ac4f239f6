#include "range_log.h"

#include <cstring>
#include <new>

#include "os_tid.h"

namespace gpucap::recorder {
using namespace range_log_detail;

namespace {

void DeleteChunk(RangeLog::Chunk* c) {
  c->~Chunk();
  ::operator delete(c);
}

void DeleteList(RangeLog::Chunk* c) {
  while (c) {
    RangeLog::Chunk* next = c->next;
    DeleteChunk(c);
    c = next;
  }
}

}  // namespace

RangeFields FieldsOf(const format::RangeEvent& e) {
  RangeFields f;
  f.kind = e.kind;
  f.source = e.source;
  f.timestamp_ns = e.timestamp_ns;
  f.os_tid = e.os_tid;
  f.id = e.id;
  f.domain = e.domain;
  f.category = e.category;
  f.color = e.color;
  if (const uint64_t* u = std::get_if<uint64_t>(&e.payload)) {
    f.payload_type = 1;
    f.payload = *u;
  } else if (const int64_t* i = std::get_if<int64_t>(&e.payload)) {
    f.payload_type = 2;
    f.payload = static_cast<uint64_t>(*i);
  } else if (const double* d = std::get_if<double>(&e.payload)) {
    f.payload_type = 3;
    std::memcpy(&f.payload, d, sizeof(*d));
  }
  return f;
}

RangeLog::Writer::~Writer() {
  // The log may be gone by now (a thread outliving its recorder): free the
  // chunks without it. `current` is `live` (or nullptr).
  DeleteList(full.exchange(nullptr));
  DeleteList(spare.exchange(nullptr));
  DeleteList(local);
  Chunk* c = live.exchange(nullptr);
  if (c) DeleteChunk(c);
}

RangeLog::RangeLog(Submit submit, Limits limits, std::function<void()> on_full)
    : submit_(std::move(submit)), limits_(limits), on_full_(std::move(on_full)) {}

RangeLog::~RangeLog() = default;

RangeLog::Writer* RangeLog::Mine() {
  Writer* w = writers_.Mine();
  if (!w->log) {
    w->log = this;
    w->os_tid = CurrentOsTid();
  }
  return w;
}

RangeLog::Chunk* RangeLog::NewChunk(size_t capacity) {
  size_t total = bytes_.fetch_add(capacity, std::memory_order_relaxed) + capacity;
  if (total > limits_.max_bytes) {
    bytes_.fetch_sub(capacity, std::memory_order_relaxed);
    return nullptr;
  }
  void* raw = ::operator new(sizeof(Chunk) + capacity, std::nothrow);
  if (!raw) {
    bytes_.fetch_sub(capacity, std::memory_order_relaxed);
    return nullptr;
  }
  auto* c = new (raw) Chunk();
  c->capacity = capacity;
  return c;
}

void RangeLog::FreeChunk(Chunk* c) {
  bytes_.fetch_sub(c->capacity, std::memory_order_relaxed);
  DeleteChunk(c);
}

unsigned char* RangeLog::Reserve(Writer* w, size_t bytes) {
  if (w->current && w->used + bytes <= w->current->capacity) return w->current->data() + w->used;
  if (Chunk* c = w->current) {
    // Hand the chunk over (an empty one too, when a record is larger than
    // it: the collector may be reading it, so only the collector frees).
    // The collector takes the whole list at once, so a plain push needs no
    // ABA care.
    w->live.store(nullptr, std::memory_order_release);
    c->next = w->full.load(std::memory_order_relaxed);
    while (!w->full.compare_exchange_weak(c->next, c, std::memory_order_release, std::memory_order_relaxed)) {
    }
    w->current = nullptr;
    w->used = 0;
    if (on_full_) on_full_();
  }
  Chunk* c = nullptr;
  if (bytes <= limits_.chunk_bytes) {
    // A chunk the collector gave back, else a new one.
    if (!w->local) w->local = w->spare.exchange(nullptr, std::memory_order_acquire);
    if ((c = w->local)) {
      w->local = c->next;
      w->spares.fetch_sub(1, std::memory_order_relaxed);
    } else {
      c = NewChunk(limits_.chunk_bytes);
    }
  } else {
    c = NewChunk(Pad(bytes));  // freed, not kept, once decoded
  }
  if (!c) return nullptr;
  c->committed.store(0, std::memory_order_relaxed);
  c->consumed = 0;
  c->next = nullptr;
  w->current = c;
  w->used = 0;
  w->live.store(c, std::memory_order_release);
  return c->data();
}

bool RangeLog::AddRangeSlow(Writer* w, const RangeFields& f, std::string_view name,
                            const std::vector<format::ExtPayload>* ext) {
  size_t bytes = sizeof(RecordHeader) + Pad(name.size());
  uint32_t ext_count = 0;
  if (ext) {
    for (const format::ExtPayload& p : *ext) bytes += sizeof(ExtHeader) + Pad(p.data.size());
    ext_count = static_cast<uint32_t>(ext->size());
  }
  unsigned char* at = Reserve(w, bytes);
  if (!at) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  RecordHeader h;
  Fill(&h, w, f, bytes, name.size(), ext_count);
  std::memcpy(at, &h, sizeof(h));
  unsigned char* p = at + sizeof(h);
  if (!name.empty()) std::memcpy(p, name.data(), name.size());
  p += Pad(name.size());
  if (ext) {
    for (const format::ExtPayload& e : *ext) {
      ExtHeader eh{e.schema_id, static_cast<uint32_t>(e.data.size()), e.truncated ? 1u : 0u};
      std::memcpy(p, &eh, sizeof(eh));
      p += sizeof(eh);
      if (!e.data.empty()) std::memcpy(p, e.data.data(), e.data.size());
      p += Pad(e.data.size());
    }
  }
  w->used += bytes;
  w->current->committed.store(w->used, std::memory_order_release);
  return true;
}

bool RangeLog::AddMark(Writer* w, format::WindowMarkKind kind, uint64_t timestamp_ns, uint32_t os_tid,
                       uint64_t id, std::string_view label) {
  size_t bytes = sizeof(RecordHeader) + Pad(label.size());
  unsigned char* at = Reserve(w, bytes);
  if (!at) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  RecordHeader h{};
  h.size = static_cast<uint32_t>(bytes);
  h.type = kMarkRecord;
  h.kind = static_cast<uint8_t>(kind);
  h.os_tid = os_tid ? os_tid : w->os_tid;
  h.timestamp_ns = timestamp_ns;
  h.id = id;
  h.name_bytes = static_cast<uint32_t>(label.size());
  std::memcpy(at, &h, sizeof(h));
  if (!label.empty()) std::memcpy(at + sizeof(h), label.data(), label.size());
  w->used += bytes;
  w->current->committed.store(w->used, std::memory_order_release);
  return true;
}

void RangeLog::DecodeFrom(Chunk* c, std::vector<format::SmallMessage>* out) {
  size_t end = c->committed.load(std::memory_order_acquire);
  while (c->consumed < end) {
    const unsigned char* at = c->data() + c->consumed;
    RecordHeader h;
    std::memcpy(&h, at, sizeof(h));
    const char* name = reinterpret_cast<const char*>(at + sizeof(h));
    if (h.type == kMarkRecord) {
      format::WindowMark m;
      m.kind = static_cast<format::WindowMarkKind>(h.kind);
      m.timestamp_ns = h.timestamp_ns;
      m.os_tid = h.os_tid;
      m.id = h.id;
      m.label.assign(name, h.name_bytes);
      out->emplace_back(std::move(m));
    } else {
      format::RangeEvent e;
      e.kind = static_cast<format::RangeKind>(h.kind);
      e.source = static_cast<format::RangeSource>(h.source);
      e.timestamp_ns = h.timestamp_ns;
      e.os_tid = h.os_tid;
      e.id = h.id;
      e.name.assign(name, h.name_bytes);
      e.domain = h.domain;
      e.category = h.category;
      e.color = h.color;
      switch (h.payload_type) {
        case 1: e.payload = h.payload; break;
        case 2: e.payload = static_cast<int64_t>(h.payload); break;
        case 3: {
          double d;
          std::memcpy(&d, &h.payload, sizeof(d));
          e.payload = d;
          break;
        }
        default: break;
      }
      const unsigned char* p = at + sizeof(h) + Pad(h.name_bytes);
      for (uint32_t i = 0; i < h.ext_count; ++i) {
        ExtHeader eh;
        std::memcpy(&eh, p, sizeof(eh));
        p += sizeof(eh);
        format::ExtPayload ep;
        ep.schema_id = eh.schema_id;
        ep.data.assign(reinterpret_cast<const char*>(p), eh.bytes);
        ep.truncated = eh.truncated != 0;
        e.ext_payloads.push_back(std::move(ep));
        p += Pad(eh.bytes);
      }
      out->emplace_back(std::move(e));
    }
    c->consumed += h.size;
    if (out->size() >= limits_.batch_events) Flush(out);
  }
}

void RangeLog::Flush(std::vector<format::SmallMessage>* out) {
  if (out->empty()) return;
  size_t n = out->size();
  if (!submit_(std::move(*out))) dropped_.fetch_add(n, std::memory_order_relaxed);
  out->clear();
}

void RangeLog::Recycle(Writer& w, Chunk* c) {
  // Back to its thread, up to a few (a burst on one thread must not keep
  // memory from the others); the rest, and oversized chunks, are freed.
  if (!w.retired && c->capacity == limits_.chunk_bytes &&
      w.spares.load(std::memory_order_relaxed) < limits_.spares_per_thread) {
    GiveBack(w, c);
    return;
  }
  FreeChunk(c);
}

void RangeLog::GiveBack(Writer& w, Chunk* c) {
  // The owner takes the whole list at once: a plain push needs no ABA care.
  w.spares.fetch_add(1, std::memory_order_relaxed);
  c->next = w.spare.load(std::memory_order_relaxed);
  while (!w.spare.compare_exchange_weak(c->next, c, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

void RangeLog::Drain(Writer& w, bool full_only, std::vector<format::SmallMessage>* out) {
  // The live chunk is read before the full list is taken: a chunk handed
  // over in between is then in the list (decoded first, in order) and the
  // newer live chunk waits for the next collection.
  Chunk* live = w.live.load(std::memory_order_acquire);
  Chunk* full = w.full.exchange(nullptr, std::memory_order_acquire);
  Chunk* fifo = nullptr;  // oldest first
  while (full) {
    Chunk* next = full->next;
    full->next = fifo;
    fifo = full;
    full = next;
  }
  bool live_was_full = false;
  while (fifo) {
    Chunk* next = fifo->next;
    DecodeFrom(fifo, out);
    if (fifo == live) {
      live_was_full = true;  // recycled below, once nothing reads it
    } else {
      Recycle(w, fifo);
    }
    fifo = next;
  }
  if (live_was_full) {
    Recycle(w, live);
  } else if (live && (!full_only || w.retired)) {
    DecodeFrom(live, out);
    if (w.retired && live->consumed == live->committed.load(std::memory_order_acquire)) {
      // Its thread is gone: nothing more will be written.
      w.live.store(nullptr, std::memory_order_relaxed);
      w.current = nullptr;
      FreeChunk(live);
    }
  }
  if (w.retired) {
    // Its thread is gone: what it kept for reuse goes too.
    for (Chunk* list : {w.spare.exchange(nullptr), w.local}) {
      while (list) {
        Chunk* next = list->next;
        FreeChunk(list);
        list = next;
      }
    }
    w.local = nullptr;
    w.spares.store(0, std::memory_order_relaxed);
    return;
  }
  // Chunks ready for the thread, paged in here rather than by its first
  // records (a thread that made none yet gets none).
  while (w.live.load(std::memory_order_relaxed) &&
         w.spares.load(std::memory_order_relaxed) < limits_.ready_per_thread) {
    Chunk* c = NewChunk(limits_.chunk_bytes);
    if (!c) break;
    std::memset(c->data(), 0, c->capacity);
    GiveBack(w, c);
  }
}

void RangeLog::Collect(bool full_only) {
  std::lock_guard<std::mutex> lock(collect_mu_);
  std::vector<format::SmallMessage> out;
  writers_.Collect(
      [&](Writer& w) {
        Drain(w, full_only, &out);
        // A thread's records reach the writer in order: its own batches.
        Flush(&out);
      },
      [](const Writer& w) {
        return w.live.load(std::memory_order_relaxed) == nullptr && w.full.load(std::memory_order_relaxed) == nullptr;
      });
}

}  // namespace gpucap::recorder
