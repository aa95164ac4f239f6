#include "gpucap/tools/export/sqlite_export.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <sys/stat.h>
#include <thread>

#include "gpucap/format/output_file.h"
#include "capture_rows.h"
#include "db_writer.h"
#include "image_writer.h"
#include "page_file.h"
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

namespace {

// The page size of an export written by the page writer (a bigger page:
// fewer interior cells and page headers per row).
constexpr uint32_t kPageSize = 16384;

std::vector<std::pair<std::string, std::string>> Meta(const ExportOptions& options, size_t captures) {
  return {
      {"schema_version", std::to_string(kSchemaVersionMajor) + "." + std::to_string(kSchemaVersionMinor)},
      {"clock", "CLOCK_REALTIME"},
      {"time_unit", "ns"},
      {"window_spec", options.build.window},
      {"window_select", options.build.select},
      {"captures", std::to_string(captures)},
  };
}

// Joins the captures (several at once) and hands every batch, in the order
// the workers finish them, to `write` on this thread.
Status Load(std::span<const builder::CaptureIndex* const> captures, const ExportOptions& options,
            const std::function<Status(const RowBatch&)>& write, ExportReport* report) {
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
  for (RowBatch batch; queue.Pop(&batch);) {
    written = write(batch);
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
    report->windows += r.windows;
    report->warnings.insert(report->warnings.end(), r.warnings.begin(), r.warnings.end());
  }
  return Status::Ok();
}

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void Count(const std::array<uint64_t, kTableCount>& rows, ExportReport* report) {
  report->table_rows = rows;
  for (uint64_t n : rows) report->rows += n;
}

// The old path: every row through SQLite's INSERT (db_writer.h).
Result<ExportReport> ExportByInserts(sqlite3* db, std::span<const builder::CaptureIndex* const> captures,
                                     const ExportOptions& options) {
  auto started = Clock::now();
  auto writer = DbWriter::Start(db, captures.size(), Meta(options, captures.size()));
  if (!writer.ok()) return writer.status();
  ExportReport report;
  GPUCAP_RETURN_IF_ERROR(Load(captures, options, [&](const RowBatch& b) { return (*writer)->Write(b); }, &report));
  auto indexing = Clock::now();
  GPUCAP_RETURN_IF_ERROR((*writer)->Finish(options.indexes));
  report.index_seconds = Since(indexing);
  Count((*writer)->rows(), &report);
  report.seconds = Since(started);
  return report;
}

// Joins and writes the image, indexes included, into `file`.
// `spill_pattern`: where the index keys go past options.index_key_memory.
Result<ExportReport> WriteImage(PageFile* file, std::span<const builder::CaptureIndex* const> captures,
                                const ExportOptions& options, std::string spill_pattern) {
  ImageWriter writer(file, captures.size(), Meta(options, captures.size()), options.indexes,
                     options.index_key_memory, std::move(spill_pattern));
  ExportReport report;
  GPUCAP_RETURN_IF_ERROR(Load(captures, options, [&](const RowBatch& b) { return writer.Write(b); }, &report));
  auto finishing = Clock::now();  // the indexes' sort and B-trees, mostly
  GPUCAP_RETURN_IF_ERROR(writer.Finish());
  report.index_seconds = Since(finishing);
  Count(writer.rows(), &report);
  return report;
}

Status CheckInputs(std::span<const builder::CaptureIndex* const> captures, const ExportOptions& options) {
  if (captures.empty()) return Status::InvalidArgument("no capture to export");
  if (auto spec = builder::ParseWindowSpec(options.build.window); !spec.ok()) return spec.status();
  return Status::Ok();
}

}  // namespace

Result<ExportReport> ExportCaptures(sqlite3* db, std::span<const builder::CaptureIndex* const> captures,
                                    const ExportOptions& options) {
  GPUCAP_RETURN_IF_ERROR(CheckInputs(captures, options));
  if (options.sqlite_inserts) return ExportByInserts(db, captures, options);
  auto started = Clock::now();
  MemoryPageFile file(kPageSize);
  // No output file to sit beside: the system's temporary directory.
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  auto report = WriteImage(&file, captures, options, dir + "/gpucap-export-keys-XXXXXX");
  if (!report.ok()) return report;
  if (file.HandTo(db) != SQLITE_OK) return SqliteError(db, "opening the exported image");
  // An in-memory database may grow past SQLite's default limit (1 GiB) with its indexes.
  sqlite3_int64 limit = int64_t{1} << 40;
  sqlite3_file_control(db, "main", SQLITE_FCNTL_SIZE_LIMIT, &limit);
  report->seconds = Since(started);
  return report;
}

namespace {

// The page writer into `temp`, indexes included: SQLite never opens it.
Result<ExportReport> ExportImageFile(std::span<const builder::CaptureIndex* const> captures, const std::string& temp,
                                     const ExportOptions& options) {
  GPUCAP_RETURN_IF_ERROR(CheckInputs(captures, options));
  auto started = Clock::now();
  auto file = FilePageFile::Create(temp, kPageSize);
  if (!file.ok()) return file.status();
  // Beside the database: on the disk that has room for it.
  auto report = WriteImage(file->get(), captures, options, temp + ".keys-XXXXXX");
  if (!report.ok()) return report;
  GPUCAP_RETURN_IF_ERROR((*file)->Close());
  report->seconds = Since(started);
  return report;
}

// The old path: SQLite writes `temp` through INSERTs.
Result<ExportReport> ExportInsertsFile(std::span<const builder::CaptureIndex* const> captures, const std::string& temp,
                                       const ExportOptions& options) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(temp.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    Status s = SqliteError(db, temp + ": cannot create the database");
    sqlite3_close(db);
    return s;
  }
  // A page size is a hint: a database on its default page size is as valid.
  (void)Exec(db, "PRAGMA page_size=16384");
  auto report = ExportCaptures(db, captures, options);
  if (sqlite3_close(db) != SQLITE_OK && report.ok()) return Status::IoError("closing the database failed");
  return report;
}

}  // namespace

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
  // The output rule (format/output_file.h): never over a capture being
  // read, never over a non-regular file, through symlinks; the temporary
  // goes when the export fails or is interrupted.
  auto out = format::OutputFile::Create(path, format::OutputFile::Access::kSeekable);
  if (!out.ok()) return out.status();
  const std::string& temp = (*out)->temp_path();  // the writer opens it by name
  auto report = options.sqlite_inserts ? ExportInsertsFile(captures, temp, options)
                                       : ExportImageFile(captures, temp, options);
  if (!report.ok()) return Status(report.status().code(), path + ": " + report.status().message());
  struct stat st;
  if (::stat(temp.c_str(), &st) == 0) report->bytes = static_cast<uint64_t>(st.st_size);
  GPUCAP_RETURN_IF_ERROR((*out)->Commit());
  return report;
}

}  // namespace gpucap::tools
