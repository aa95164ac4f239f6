// CollectiveIndex reads NCCL's NVTX payloads through the capture's own
// payload schemas: every offset a schema claims is checked against the
// payload's bytes without overflowing (issue 41 item 2).
#include <gtest/gtest.h>

#include <cstring>

#include "gpucap/builder/collectives.h"

namespace gpucap::builder {
namespace {

constexpr uint64_t kUint64Entry = 8;  // NVTX_PAYLOAD_ENTRY_TYPE_ULONGLONG

format::Capture CollectiveCapture(uint64_t size_offset) {
  format::Capture c;
  format::RangeEvent schema;
  schema.kind = format::RangeKind::kPayloadSchema;
  schema.id = 77;
  schema.schema->entries = {{0, kUint64Entry, "NCCL communicator ID", "", 0, 0},
                           {0, kUint64Entry, "Message size [bytes]", "", 0, size_offset}};
  c.ranges.push_back(schema);
  format::RangeEvent push;
  push.kind = format::RangeKind::kPush;
  push.timestamp_ns = 1000;
  push.name = "ncclAllReduce";
  std::string data(24, '\0');  // past the short-string buffer: on the heap
  uint64_t comm = 0xc0ffee, bytes = 4096;
  std::memcpy(data.data(), &comm, 8);
  std::memcpy(data.data() + 8, &bytes, 8);
  push.ext_payloads.push_back({77, data, false});
  c.ranges.push_back(push);
  return c;
}

TEST(CollectiveIndex, ReadsTheEntriesTheSchemaPlaces) {
  CollectiveIndex index(CollectiveCapture(8));
  const Collective* c = index.AtEvent(1);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->name, "all_reduce");
  EXPECT_EQ(c->comm, 0xc0ffeeu);
  EXPECT_EQ(c->bytes, 4096u);
}

TEST(CollectiveIndex, AnOffsetPastThePayloadReadsNothing) {
  // 2^64-8 + 8 wraps to 0: a check written as offset + n <= size passes it
  // and reads the 8 bytes before the payload (the allocator's header).
  for (uint64_t offset : {UINT64_MAX - 7, UINT64_MAX, uint64_t{17}, uint64_t{24}, uint64_t{1} << 40}) {
    CollectiveIndex index(CollectiveCapture(offset));
    EXPECT_EQ(index.AtEvent(1), nullptr) << "offset " << offset;
  }
  CollectiveIndex last(CollectiveCapture(16));  // the last 8 bytes: readable
  ASSERT_NE(last.AtEvent(1), nullptr);
  EXPECT_EQ(last.AtEvent(1)->bytes, 0u);
}

}  // namespace
}  // namespace gpucap::builder
