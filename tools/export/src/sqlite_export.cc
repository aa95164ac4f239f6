#include "gpucap/tools/export/sqlite_export.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <sys/stat.h>
#include <thread>

#include "capture_rows.h"
#include "db_writer.h"
#include "window_rows.h"

namespace gpucap::tools {

using namespace sqlite;  // NOLINT: the export's own internals

namespace {

// Batches from the joining workers to the one writer; bounded, so joins
// that outrun the writer wait rather than hold every window in memory.
class BatchQueue {
 public:
  explicit BatchQueue(size_t capacity) : capacity_(capacity) {}
  // False when the export was stopped.
  bool Push(RowBatch batch) {
    std::unique_lock lock(mu_);
    space_.wait(lock, [&] { return stopped_ || items_.size() < capacity_; });
    if (stopped_) return false;
    items_.push_back(std::move(batch));
    ready_.notify_one();
    return true;
  }
  // False when every producer is done and nothing is left.
  bool Pop(RowBatch* out) {
    std::unique_lock lock(mu_);
    ready_.wait(lock, [&] { return stopped_ || !items_.empty() || producers_ == 0; });
    if (stopped_ || items_.empty()) return false;
    *out = std::move(items_.front());
    items_.pop_front();
    space_.notify_one();
    return true;
  }
  // A written batch, emptied, for a producer to fill again: a window's
  // cells run to hundreds of MB, and fresh pages cost more than the rows.
  void Recycle(RowBatch batch) {
    for (TableRows& t : batch.tables) {
      t.cells.clear();
      t.rows = 0;
    }
    batch.texts.clear();
    batch.new_strings.clear();
    batch.new_stacks.clear();
    std::lock_guard lock(mu_);
    if (spare_.size() < capacity_) spare_.push_back(std::move(batch));
  }
  RowBatch Fresh(uint32_t capture) {
    RowBatch b;
    {
      std::lock_guard lock(mu_);
      if (!spare_.empty()) {
        b = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    b.capture = capture;
    return b;
  }
  void SetProducers(size_t n) { producers_ = n; }
  void ProducerDone() {
    std::lock_guard lock(mu_);
    producers_--;
    ready_.notify_all();
  }
  void Stop() {
    std::lock_guard lock(mu_);
    stopped_ = true;
    ready_.notify_all();
    space_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<RowBatch> items_;
  std::vector<RowBatch> spare_;
  size_t capacity_;
  size_t producers_ = 0;
  bool stopped_ = false;
};

struct CaptureResult {
  Status status;
  uint64_t windows = 0;
  std::vector<std::string> warnings;
};

// Joins every window of one capture into batches.
void ExportCapture(const builder::CaptureIndex& index, uint32_t capture, const ExportOptions& options,
                   int decode_threads, BatchQueue* queue, CaptureResult* result) {
  auto fail = [&](Status s) {
    result->status = std::move(s);
    queue->Stop();
  };
  int32_t rank = index.capture().session ? index.capture().session->rank : -1;
  CaptureRows rows(index, capture, rank);
  builder::BuildOptions b = options.build;
  b.threads = decode_threads;
  builder::Builder builder(index, b);
  auto windows = builder.Windows();
  if (!windows.ok()) return fail(Status(windows.status().code(), index.path() + ": " + windows.status().message()));
  if (windows->empty()) {
    return fail(Status::NotFound(index.path() + ": --window '" + options.build.window +
                                 "' matches nothing in the capture"));
  }
  result->warnings = index.capture().report.Describe(index.path());
  RowBatch facts;
  facts.capture = capture;
  AddCaptureFacts(&rows, &facts);
  if (!queue->Push(std::move(facts))) return;
  for (size_t i = 0; i < windows->size(); ++i) {
    const builder::Window& w = (*windows)[i];
    if (options.on_window) options.on_window(capture, i, windows->size());
    RowBatch batch = queue->Fresh(capture);
    WindowRows sink(&rows, w, &batch);
    builder::WindowReport report;
    if (Status s = builder.BuildWindow(w, &sink, &report); !s.ok()) return fail(s);
    if (!queue->Push(std::move(batch))) return;
    result->windows++;
  }
  for (const std::string& line : index.decoder().Describe(builder.decode_stats())) result->warnings.push_back(line);
  RowBatch tail;
  tail.capture = capture;
  AddDecodeFacts(&rows, builder.decode_stats(), result->warnings, &tail);
  queue->Push(std::move(tail));
}

}  // namespace

Result<ExportReport> ExportCaptures(sqlite3* db, std::span<const builder::CaptureIndex* const> captures,
                                    const ExportOptions& options) {
  auto started = std::chrono::steady_clock::now();
  if (captures.empty()) return Status::InvalidArgument("no capture to export");
  if (auto spec = builder::ParseWindowSpec(options.build.window); !spec.ok()) return spec.status();
  std::vector<std::pair<std::string, std::string>> meta = {
      {"schema_version", std::to_string(kSchemaVersionMajor) + "." + std::to_string(kSchemaVersionMinor)},
      {"clock", "CLOCK_REALTIME"},
      {"time_unit", "ns"},
      {"window_spec", options.build.window},
      {"window_select", options.build.select},
      {"captures", std::to_string(captures.size())},
  };
  auto writer = DbWriter::Start(db, captures.size(), meta);
  if (!writer.ok()) return writer.status();

  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  size_t jobs = options.jobs > 0 ? static_cast<size_t>(options.jobs) : cores;
  jobs = std::min(jobs, captures.size());
  int decode_threads = options.build.threads > 0 ? options.build.threads
                                                : static_cast<int>(std::max<size_t>(1, cores / jobs));
  BatchQueue queue(2 * jobs + 2);
  queue.SetProducers(jobs);
  std::vector<CaptureResult> results(captures.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (size_t j = 0; j < jobs; ++j) {
    workers.emplace_back([&] {
      for (size_t c; (c = next.fetch_add(1)) < captures.size();) {
        ExportCapture(*captures[c], static_cast<uint32_t>(c), options, decode_threads, &queue, &results[c]);
        if (!results[c].status.ok()) break;
      }
      queue.ProducerDone();
    });
  }
  Status written = Status::Ok();
  ExportReport report;
  for (RowBatch batch; queue.Pop(&batch);) {
    written = (*writer)->Write(batch);
    if (!written.ok()) {
      queue.Stop();
      break;
    }
    queue.Recycle(std::move(batch));
  }
  for (std::thread& t : workers) t.join();
  GPUCAP_RETURN_IF_ERROR(written);
  for (const CaptureResult& r : results) {
    GPUCAP_RETURN_IF_ERROR(r.status);
    report.windows += r.windows;
    report.warnings.insert(report.warnings.end(), r.warnings.begin(), r.warnings.end());
  }
  auto indexing = std::chrono::steady_clock::now();
  GPUCAP_RETURN_IF_ERROR((*writer)->Finish(options.indexes));
  report.index_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - indexing).count();
  report.table_rows = (*writer)->rows();
  for (uint64_t n : report.table_rows) report.rows += n;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

Result<ExportReport> ExportToFile(const std::vector<std::string>& paths, const std::string& path,
                                  const ExportOptions& options) {
  if (path.empty()) return Status::InvalidArgument("no output path given (-o)");
  std::vector<std::unique_ptr<builder::CaptureIndex>> indexes;
  std::vector<const builder::CaptureIndex*> captures;
  for (const std::string& p : paths) {
    auto index = builder::CaptureIndex::Open(p);
    if (!index.ok()) return index.status();
    captures.push_back(index->get());
    indexes.push_back(std::move(index).value());
  }
  // SQLite counts every allocation under a global mutex unless told not to
  // before its first use; the export makes millions (the mutex alone was
  // 1.5% of an export's profile, bench/README.md). Refused, harmlessly, when
  // SQLite is in use already.
  static const int kNoMemoryStatus = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)kNoMemoryStatus;
  std::string temp = path + ".partial-" + std::to_string(::getpid());
  std::remove(temp.c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(temp.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    Status s = SqliteError(db, temp + ": cannot create the database");
    sqlite3_close(db);
    return s;
  }
  // A page size is a hint: a database on its default page size is as valid.
  (void)Exec(db, "PRAGMA page_size=16384");
  auto report = ExportCaptures(db, captures, options);
  int closed = sqlite3_close(db);
  if (!report.ok() || closed != SQLITE_OK) {
    std::remove(temp.c_str());
    if (!report.ok()) return Status(report.status().code(), path + ": " + report.status().message());
    return Status::IoError(path + ": closing the database failed");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return Status::IoError(path + ": cannot rename " + temp + " into place");
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) report->bytes = static_cast<uint64_t>(st.st_size);
  return report;
}

}  // namespace gpucap::tools
