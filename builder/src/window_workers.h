// Windows built at once on several workers. A window's trace is a function
// of the capture and the window alone (never of which windows a worker built
// before it: Builder::Evict leaves the cache as a fresh builder would see
// it), so each worker has a Builder of its own, takes the next window not
// yet taken, and writes its file; the bytes are the same at every thread
// count (tests/builder/thread_count_test.cc compares them).
//
// Threads: `options.threads` (0: one per core) in all, the caller's
// included: one WorkQueue (work_queue.h) for the whole build. W =
// min(threads, windows) workers run on it, and their chunks' decoding and
// gzip members run on the same threads, the idle ones and the workers
// while they wait; with one thread, everything runs on the caller's.
// Memory: each worker holds its window's decoded rows and its renderer's and
// gzip's buffers, so peak memory is about W x the largest window.
#ifndef GPUCAP_BUILDER_WINDOW_WORKERS_H_
#define GPUCAP_BUILDER_WINDOW_WORKERS_H_

#include <map>
#include <vector>

#include "gpucap/builder/build_progress.h"
#include "gpucap/builder/builder.h"

namespace gpucap::builder {

// How many workers build `windows` windows with `threads` threads (0: one
// per core). threads_each (threads / workers) is only how many chunks a
// worker's lookback and lookahead decode per batch (builder.cc), which
// decides which chunks they reach: kept as it was.
struct WorkerPlan {
  int workers = 1;
  int threads_each = 1;
  int threads = 1;  // in all, 0 resolved to the cores
};
WorkerPlan PlanWorkers(int threads, size_t windows);

// Writes each of `windows` to its file (WindowOutputPath) and appends the
// window reports, in window order, and the decoders' warnings to `report`;
// `progress` (may be empty) hears how far the workers are together.
// On failure, the first failing window's status (in window order); the
// workers stop taking windows, and files written before stay.
Status BuildWindowFiles(const CaptureIndex& index, const BuildOptions& options, const std::vector<Window>& windows,
                        bool one_window, const BuildProgressFn& progress, BuildReport* report);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_WINDOW_WORKERS_H_
