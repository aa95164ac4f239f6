// The calling thread's OS thread id, as the capture names threads.
#ifndef GPUCAP_RECORDER_OS_TID_H_
#define GPUCAP_RECORDER_OS_TID_H_

#include <cstdint>

namespace gpucap::recorder {

// Cached per thread: one system call per thread, then a thread-local load.
// After fork the recorder does nothing, so a cached id never outlives its
// process.
uint32_t CurrentOsTid();

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_OS_TID_H_
