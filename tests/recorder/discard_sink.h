// A capture sink that takes whatever the writer writes and keeps none of it:
// for tests of what reaches the writer's door (the recorder's buffers, the
// correlation shift), not of what it writes.
#ifndef GPUCAP_TESTS_RECORDER_DISCARD_SINK_H_
#define GPUCAP_TESTS_RECORDER_DISCARD_SINK_H_

#include <span>
#include <string>

#include "gpucap/format/capture_writer.h"

namespace gpucap::recorder {

class DiscardSink : public format::Sink {
 public:
  Status Append(std::span<const format::ByteSpan>) override { return Status::Ok(); }
  Status Truncate(uint64_t) override { return Status::Ok(); }
  Status Sync() override { return Status::Ok(); }
  Status Close() override { return Status::Ok(); }
  const std::string& name() const override { return name_; }

 private:
  std::string name_ = "discard";
};

}  // namespace gpucap::recorder

#endif  // GPUCAP_TESTS_RECORDER_DISCARD_SINK_H_
