#include "api_records.h"

#include <cupti.h>

#include <algorithm>
#include <cstring>

namespace gpucap::recorder {

struct ApiRecords::ThreadBuffer {
  std::mutex mu;  // the owner's appends and Collect; nobody else
  uint8_t* data = nullptr;
  size_t used = 0;
  bool retired = false;  // its thread exited
  // Calls entered and not yet exited, innermost last: a runtime call's nested
  // driver call. Touched only by the owning thread.
  static constexpr int kDepth = 8;
  struct Open {
    uint32_t correlation;
    uint64_t start;
    bool runtime;
  };
  Open open[kDepth];
  int depth = 0;
};

ApiRecords::ApiRecords(std::vector<Id> ids, size_t buffer_bytes, uint32_t process_id, Take take, Hand hand)
    : ids_(std::move(ids)),
      buffer_bytes_(buffer_bytes),
      process_id_(process_id),
      take_(std::move(take)),
      hand_(std::move(hand)),
      buffers_(std::make_unique<ThreadBuffers<ThreadBuffer>>()) {
  for (const Id& id : ids_) {
    std::vector<uint8_t>& table = id.first == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime_ : driver_;
    if (id.first != CUPTI_CB_DOMAIN_RUNTIME_API && id.first != CUPTI_CB_DOMAIN_DRIVER_API) continue;
    if (table.size() <= id.second) table.resize(id.second + 1, 0);
    table[id.second] = 1;
  }
}

ApiRecords::~ApiRecords() { Collect(); }

bool ApiRecords::Records(uint32_t domain, uint32_t cbid) const {
  const std::vector<uint8_t>* table = domain == CUPTI_CB_DOMAIN_RUNTIME_API  ? &runtime_
                                      : domain == CUPTI_CB_DOMAIN_DRIVER_API ? &driver_
                                                                              : nullptr;
  return table && cbid < table->size() && (*table)[cbid];
}

void ApiRecords::OnEnter(uint32_t domain, uint32_t correlation, uint64_t now) {
  if (!on()) return;
  ThreadBuffer* b = buffers_->Mine();
  if (b->depth == ThreadBuffer::kDepth) return;  // its EXIT counts as unmatched
  b->open[b->depth++] = {correlation, now, domain == CUPTI_CB_DOMAIN_RUNTIME_API};
}

void ApiRecords::OnExit(uint32_t domain, uint32_t cbid, uint32_t correlation, uint32_t return_value,
                        uint64_t now, uint32_t thread_id) {
  ThreadBuffer* b = buffers_->Mine();
  // The innermost open call with this id; calls above it lost their EXIT
  // (switched off inside them) and are forgotten.
  int d = b->depth - 1;
  while (d >= 0 && b->open[d].correlation != correlation) --d;
  if (d < 0) {
    if (on()) unmatched_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  uint64_t start = b->open[d].start;
  b->depth = d;
  if (!on()) return;
  // CUPTI calls back for the driver calls a runtime call makes, which its
  // activity records leave out (torch_train on the H200: 512 runtime
  // records, 40 driver records from activity, 552 from callbacks): such a
  // call makes no record here either.
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    for (int outer = 0; outer < d; ++outer) {
      if (b->open[outer].runtime) return;
    }
  }
  CUpti_ActivityAPI r;
  std::memset(&r, 0, sizeof(r));
  r.kind = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
  r.cbid = cbid;
  r.start = start;
  r.end = now;
  r.processId = process_id_;
  r.threadId = thread_id;
  r.correlationId = correlation;
  r.returnValue = return_value;
  std::lock_guard<std::mutex> lock(b->mu);
  if (b->data && b->used + sizeof(r) > buffer_bytes_) HandLocked(b);
  if (!b->data) {
    b->data = take_();
    b->used = 0;
    if (!b->data) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  std::memcpy(b->data + b->used, &r, sizeof(r));
  b->used += sizeof(r);
}

void ApiRecords::HandLocked(ThreadBuffer* b) {
  uint8_t* data = b->data;
  size_t used = b->used;
  b->data = nullptr;
  b->used = 0;
  // Counted here, not per record: one shared counter per record would move
  // its cache line between the launching threads at every call.
  records_.fetch_add(used / sizeof(CUpti_ActivityAPI), std::memory_order_relaxed);
  hand_(data, used);  // queues it for the writer; never waits for the disk
}

void ApiRecords::Collect() {
  buffers_->Collect(
      [this](ThreadBuffer& b) {
        if (b.data) HandLocked(&b);
      },
      [](const ThreadBuffer& b) { return b.data == nullptr; });
}

}  // namespace gpucap::recorder
