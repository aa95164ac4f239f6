// A sink for tests: keeps bytes in memory, can hold every append until
// released (a stalled disk), and can fail on command (disk full, I/O error)
// after writing part of the failing append, as a real disk does.
#ifndef GPUCAP_TESTS_FORMAT_TEST_SINK_H_
#define GPUCAP_TESTS_FORMAT_TEST_SINK_H_

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

#include "gpucap/format/sink.h"

namespace gpucap::testing {

struct TestSinkState {
  std::mutex mu;
  std::condition_variable cv;
  std::string bytes;
  bool hold = false;               // Append waits while set
  int appends_waiting = 0;
  std::optional<uint64_t> fail_at;  // byte offset at which writes fail
  Status failure = Status::NoSpace("test sink: no space left on device");
  int truncates = 0;
  bool closed = false;

  void Release() {
    std::lock_guard<std::mutex> lock(mu);
    hold = false;
    cv.notify_all();
  }
  bool WaitForHeldAppend() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return appends_waiting > 0; });
  }
};

class TestSink : public format::Sink {
 public:
  explicit TestSink(TestSinkState* state) : s_(state) {}
  Status Append(std::span<const format::ByteSpan> pieces) override {
    std::unique_lock<std::mutex> lock(s_->mu);
    ++s_->appends_waiting;
    s_->cv.notify_all();
    s_->cv.wait(lock, [&] { return !s_->hold; });
    --s_->appends_waiting;
    for (const auto& p : pieces) {
      for (uint8_t b : p) {
        if (s_->fail_at && s_->bytes.size() >= *s_->fail_at) return s_->failure;
        s_->bytes.push_back(static_cast<char>(b));
      }
    }
    return Status::Ok();
  }
  Status Truncate(uint64_t size) override {
    std::lock_guard<std::mutex> lock(s_->mu);
    ++s_->truncates;
    s_->bytes.resize(size);
    return Status::Ok();
  }
  Status Sync() override { return Status::Ok(); }
  Status Close() override {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->closed = true;
    return Status::Ok();
  }
  const std::string& name() const override { return name_; }

 private:
  TestSinkState* s_;
  std::string name_ = "test-sink";
};

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_FORMAT_TEST_SINK_H_
