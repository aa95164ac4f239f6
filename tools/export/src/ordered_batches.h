// The batches of several captures' joins, running at once, written in one
// order whatever the order the joins finish in: every batch of capture 0
// in the order its worker hands them over, then capture 1's, and so on.
// That order is what makes an export's ids, and so its file, the same run
// to run and at any --parallel (sqlite_export.h).
//
// There is no writer thread: a worker that hands over a batch writes it
// itself when it is next in line and nobody else is writing (then writes
// whatever became next meanwhile); otherwise the batch waits, at most
// kPendingPerCapture of them per capture, and a worker whose capture has
// that many waiting waits for room. Only a worker of a later capture than
// the one being written ever waits, and the one being written is taken by
// a worker that is running (captures are taken in order, by running
// workers: sqlite_export.cc), which never waits for room, so the export
// always moves on. Memory: about (workers x (kPendingPerCapture + 2))
// batches, each a bounded piece of a window's rows (window_rows.h).
#ifndef GPUCAP_TOOLS_EXPORT_SRC_ORDERED_BATCHES_H_
#define GPUCAP_TOOLS_EXPORT_SRC_ORDERED_BATCHES_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "gpucap/status.h"
#include "row_batch.h"

namespace gpucap::tools::sqlite {

class OrderedBatches {
 public:
  static constexpr size_t kPendingPerCapture = 2;

  // `write` is called for one batch at a time, under no lock of ours, from
  // whichever worker's thread writes it.
  OrderedBatches(size_t captures, std::function<Status(const RowBatch&)> write);

  // A batch for capture `capture` to fill: an emptied one when one is spare
  // (its vectors keep their capacity: fresh pages cost more than the rows).
  RowBatch Fresh(uint32_t capture);
  // Hands over the next batch of `batch.capture`. False once the export has
  // stopped (a write or another capture failed): the worker stops too.
  bool Put(RowBatch batch);
  // The capture's worker has handed over its last batch. `status`: why it
  // stopped early, if it did (stops the export).
  void Done(uint32_t capture, Status status);

  // After every worker is done: the first failure, by capture order (a
  // capture's join before the writes), else whether every batch was written.
  Status Finish();

 private:
  // Writes what is next in line while nobody else writes. Holds `lock` on
  // entry and return.
  void Drain(std::unique_lock<std::mutex>* lock);
  void Recycle(RowBatch batch);

  std::function<Status(const RowBatch&)> write_;
  std::mutex mu_;
  std::condition_variable room_;  // a batch left a capture's queue, or the export stopped
  std::vector<std::deque<RowBatch>> pending_;
  std::vector<bool> done_;
  std::vector<Status> failed_;  // by capture
  Status write_status_ = Status::Ok();
  size_t current_ = 0;  // the capture being written
  bool writing_ = false;
  bool stopped_ = false;
  std::vector<RowBatch> spare_;
};

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_ORDERED_BATCHES_H_
