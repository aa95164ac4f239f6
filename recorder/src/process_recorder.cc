#include "process_recorder.h"

#include <atomic>

namespace gpucap::recorder {
namespace {

std::atomic<Recorder*> g_recorder{nullptr};

}  // namespace

Recorder* ProcessRecorder() { return g_recorder.load(std::memory_order_acquire); }
void SetProcessRecorder(Recorder* recorder) { g_recorder.store(recorder, std::memory_order_release); }
Recorder* TakeProcessRecorder() { return g_recorder.exchange(nullptr, std::memory_order_acq_rel); }

}  // namespace gpucap::recorder
