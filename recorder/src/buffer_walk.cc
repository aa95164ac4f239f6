#include "buffer_walk.h"

#include <cupti.h>

#include <algorithm>
#include <map>

#include "cupti_records.h"

namespace gpucap::recorder {
namespace {

struct Span {
  uint64_t lo = UINT64_MAX, start_hi = 0, end_hi = 0;
  void Add(uint64_t start, uint64_t end) {
    // CUPTI leaves 0 when it could not take a timestamp; such records have none.
    if (start == 0) return;
    lo = std::min(lo, start);
    start_hi = std::max(start_hi, start);
    end_hi = std::max(end_hi, end);
  }
};

// The chunk's index entry from the walk's tallies: counts and record sizes
// per kind (known kinds in kind order, then the others), and the time span.
void Summarize(size_t valid_size, const uint32_t* counts, const uint32_t* strides,
               const std::map<uint32_t, uint32_t>& other_counts, const Span& span, format::ChunkInfo* out) {
  format::ChunkInfo& info = *out;
  info.raw_size = static_cast<uint32_t>(valid_size);
  for (uint32_t k = 0; k < 64; ++k) {
    if (counts[k]) {
      info.kind_counts.push_back({k, counts[k]});
      info.record_count += counts[k];
      info.record_sizes.push_back({k, strides[k]});
    }
  }
  for (auto [k, n] : other_counts) {
    info.kind_counts.push_back({k, n});
    info.record_count += n;
  }
  if (span.lo != UINT64_MAX) {
    info.min_start_ns = span.lo;
    info.max_start_ns = span.start_hi;
    info.max_end_ns = span.end_hi;
  }
}

}  // namespace

WalkResult WalkBuffer(uint8_t* buffer, size_t valid_size, StringInterner* interner, uint32_t correlation_shift) {
  WalkResult out;
  uint32_t highest = 0;
  auto correlate = [&](uint32_t* id) {
    *id = CorrelationShift::Apply(*id, correlation_shift);
    highest = std::max(highest, *id);
  };
  uint32_t counts[64] = {};
  uint32_t strides[64] = {};
  std::map<uint32_t, uint32_t> other_counts;
  Span span;
  uint32_t last_tid = 0;
  CUpti_Activity* record = nullptr;
  CUpti_Activity* prev = nullptr;
  uint8_t* base = buffer;
  while (cuptiActivityGetNextRecord(base, valid_size, &record) == CUPTI_SUCCESS) {
    if (prev) {
      uint32_t k = prev->kind;
      auto stride = static_cast<uint32_t>(reinterpret_cast<uint8_t*>(record) -
                                          reinterpret_cast<uint8_t*>(prev));
      if (k < 64 && strides[k] == 0) strides[k] = stride;
    }
    prev = record;
    uint32_t kind = record->kind;
    if (kind < 64) {
      ++counts[kind];
    } else {
      ++other_counts[kind];
    }
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        auto* k = reinterpret_cast<cupti_records::KernelRecord*>(record);
        span.Add(k->start, k->end);
        correlate(&k->correlationId);
        interner->Note(k->name, &out.strings);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        auto* m = reinterpret_cast<cupti_records::MemcpyRecord*>(record);
        span.Add(m->start, m->end);
        correlate(&m->correlationId);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        auto* m = reinterpret_cast<cupti_records::PeerMemcpyRecord*>(record);
        span.Add(m->start, m->end);
        correlate(&m->correlationId);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        auto* m = reinterpret_cast<cupti_records::MemsetRecord*>(record);
        span.Add(m->start, m->end);
        correlate(&m->correlationId);
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER: {
        auto* a = reinterpret_cast<CUpti_ActivityAPI*>(record);
        span.Add(a->start, a->end);
        correlate(&a->correlationId);
        if (a->threadId != last_tid) {
          last_tid = a->threadId;
          if (std::find(out.threads.begin(), out.threads.end(), last_tid) == out.threads.end()) {
            out.threads.push_back(last_tid);
          }
        }
        break;
      }
      case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        auto* o = reinterpret_cast<cupti_records::OverheadRecord*>(record);
        span.Add(o->start, o->end);
        correlate(&o->correlationId);
        break;
      }
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        auto* s = reinterpret_cast<cupti_records::SyncRecord*>(record);
        span.Add(s->start, s->end);
        correlate(&s->correlationId);
        break;
      }
      case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
        auto* e = reinterpret_cast<cupti_records::CudaEventRecord*>(record);
        span.Add(e->deviceTimestamp, e->deviceTimestamp);
        correlate(&e->correlationId);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MARKER: {
        auto* m = reinterpret_cast<const cupti_records::MarkerRecord*>(record);
        span.Add(m->timestamp, m->timestamp);
        interner->Note(m->name, &out.strings);
        interner->Note(m->domain, &out.strings);
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        correlate(&reinterpret_cast<CUpti_ActivityExternalCorrelation*>(record)->correlationId);
        break;
      case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
        correlate(&reinterpret_cast<cupti_records::GraphTraceRecord*>(record)->correlationId);
        break;
      default:
        break;
    }
  }
  if (prev) {
    uint32_t k = prev->kind;
    auto stride = static_cast<uint32_t>(valid_size - (reinterpret_cast<uint8_t*>(prev) - base));
    if (k < 64 && strides[k] == 0) strides[k] = stride;
  }
  Summarize(valid_size, counts, strides, other_counts, span, &out.info);
  out.highest_correlation = highest;
  return out;
}

}  // namespace gpucap::recorder
