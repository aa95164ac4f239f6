#include "gpucap/tools/export/sqlite_export.h"

#include <sqlite3.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "gpucap/format/output_file.h"
#include "capture_rows.h"
#include "db_writer.h"
#include "gpucap/builder/work_queue.h"
#include "ordered_batches.h"
#include "window_rows.h"

namespace gpucap::tools {

using namespace sqlite;  // NOLINT: the export's own internals

namespace {

struct CaptureResult {
  uint64_t windows = 0;
  std::vector<std::string> warnings;
};

// Joins every window of one capture into batches, handed over in window
// order: the capture's facts, each window's rows, the decoding's facts.
Status ExportCapture(const builder::CaptureIndex& index, uint32_t capture, const ExportOptions& options,
                     const builder::BuildOptions& build, TextArena* texts, OrderedBatches* out,
                     CaptureResult* result) {
  int32_t rank = index.capture().session ? index.capture().session->rank : -1;
  CaptureRows rows(index, capture, rank, texts);
  builder::Builder builder(index, build);
  auto windows = builder.MatchedWindows();
  if (!windows.ok()) {
    const Status& s = windows.status();
    return s.code() == Status::Code::kNotFound ? s : Status(s.code(), index.path() + ": " + s.message());
  }
  result->warnings = index.capture().report.Describe(index.path());
  RowBatch facts = out->Fresh(capture);
  AddCaptureFacts(&rows, &facts);
  if (!out->Put(std::move(facts))) return Status::Ok();  // stopped by another capture or the writer
  for (size_t i = 0; i < windows->size(); ++i) {
    const builder::Window& w = (*windows)[i];
    if (options.on_window) options.on_window(capture, i, windows->size());
    // The sink hands its rows over as it makes them (window_rows.h).
    WindowRows sink(&rows, w, out, options.batch_bytes);
    builder::WindowReport report;
    Status built = builder.BuildWindow(w, &sink, &report);
    if (sink.stopped()) return Status::Ok();
    GPUCAP_RETURN_IF_ERROR(built);
    result->windows++;
  }
  for (const std::string& line : index.decoder().Describe(builder.decode_stats())) result->warnings.push_back(line);
  RowBatch tail = out->Fresh(capture);
  AddDecodeFacts(&rows, builder.decode_stats(), result->warnings, &tail);
  out->Put(std::move(tail));
  return Status::Ok();
}

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

// Joins the captures, several at once on one work queue (the joins'
// decoding runs on the same threads), and hands every batch to `write`
// capture by capture, in order (ordered_batches.h).
// `texts`: one per capture, where its strings are kept (row_batch.h).
// Each capture is opened when a worker takes it and let go when joined:
// its rows keep their strings in `texts`, not in the index.
Status Load(size_t count, const builder::CaptureOpener& open, const ExportOptions& options,
            std::vector<TextArena>* texts, const std::function<Status(const RowBatch&)>& write,
            ExportReport* report) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int jobs = std::min(options.jobs > 0 ? options.jobs : cores, static_cast<int>(count));
  const int threads = std::max(jobs, options.build.threads > 0 ? options.build.threads : cores);
  builder::WorkQueue queue(threads);
  builder::BuildOptions build = options.build;
  build.queue = &queue;
  // The NVTX tables follow nsys: every range as recorded, with a GPU-side
  // span for each range of an op's stack.
  build.join.torch_view = false;
  build.join.gpu_ranges = builder::GpuRanges::kAll;
  build.threads = std::max(1, threads / jobs);  // each join's decoding batches
  OrderedBatches batches(count, write);
  std::vector<CaptureResult> results(count);
  // Captures are taken in order, each by a worker already running: the one
  // being written is always being joined (ordered_batches.h).
  std::atomic<size_t> next{0};
  Status joined = queue.Each(jobs, [&](int) {
    for (size_t c; (c = next.fetch_add(1)) < count;) {
      auto index = open(c);
      Status s = index.ok() ? ExportCapture(**index, static_cast<uint32_t>(c), options, build, &(*texts)[c],
                                            &batches, &results[c])
                            : index.status();
      const bool ok = s.ok();
      batches.Done(static_cast<uint32_t>(c), std::move(s));
      if (!ok) break;
    }
    return Status::Ok();
  });
  GPUCAP_RETURN_IF_ERROR(joined);
  GPUCAP_RETURN_IF_ERROR(batches.Finish());
  for (const CaptureResult& r : results) {
    report->windows += r.windows;
    report->warnings.insert(report->warnings.end(), r.warnings.begin(), r.warnings.end());
  }
  return Status::Ok();
}

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

Status CheckInputs(size_t count, const ExportOptions& options) {
  if (count == 0) return Status::InvalidArgument("no capture to export");
  if (auto spec = builder::ParseWindowSpec(options.build.window); !spec.ok()) return spec.status();
  return Status::Ok();
}

}  // namespace

Result<ExportReport> ExportCaptures(sqlite3* db, std::span<const builder::CaptureIndex* const> captures,
                                    const ExportOptions& options) {
  return ExportCaptures(db, captures.size(), builder::OpenedCaptures(captures), options);
}

Result<ExportReport> ExportCaptures(sqlite3* db, size_t count, const builder::CaptureOpener& open,
                                    const ExportOptions& options) {
  GPUCAP_RETURN_IF_ERROR(CheckInputs(count, options));
  auto started = Clock::now();
  // The captures' strings, which the writer's map keeps pointing into: made first, gone last.
  std::vector<TextArena> texts(count);
  auto writer = DbWriter::Start(db, count, Meta(options, count));
  if (!writer.ok()) return writer.status();
  ExportReport report;
  auto write = [&](const RowBatch& b) {
    report.batches++;
    return (*writer)->Write(b);
  };
  Status loaded = Load(count, open, options, &texts, write, &report);
  if (!loaded.ok()) {
    (void)Exec(db, "ROLLBACK");
    return loaded;
  }
  auto indexing = Clock::now();
  GPUCAP_RETURN_IF_ERROR((*writer)->Finish(options.indexes));
  report.index_seconds = Since(indexing);
  report.table_rows = (*writer)->rows();
  for (uint64_t n : report.table_rows) report.rows += n;
  report.seconds = Since(started);
  return report;
}

namespace {

// SQLite writes `temp` (an empty file or none).
Result<ExportReport> ExportFile(size_t count, const builder::CaptureOpener& open, const std::string& temp,
                                const ExportOptions& options) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(temp.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    Status s = SqliteError(db, temp + ": cannot create the database");
    sqlite3_close(db);
    return s;
  }
  auto report = ExportCaptures(db, count, open, options);
  if (sqlite3_close(db) != SQLITE_OK && report.ok()) return Status::IoError(temp + ": closing the database failed");
  return report;
}

}  // namespace

namespace {

// SQLite says "disk I/O error" and often keeps no errno for a write that
// failed at its commit; one more byte written to the file it was writing
// fails the same way while the cause lasts (a full disk, a size limit), and
// names it. The file is the output rule's temporary, removed after.
std::string WhyWritesFail(const std::string& temp) {
  int fd = ::open(temp.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return "";
  char byte = 0;
  std::string why;
  if (::write(fd, &byte, 1) < 0) why = std::string(" (") + std::strerror(errno) + ")";
  ::close(fd);
  return why;
}

}  // namespace

Result<ExportReport> ExportToFile(const std::vector<std::string>& paths, const std::string& path,
                                  const ExportOptions& options) {
  if (path.empty()) return Status::InvalidArgument("no output path given (-o)");
  // Opened one by one as the workers reach them (a thousand ranks' indexes
  // would not fit at once), each an input from the start.
  for (const std::string& p : paths) format::RegisterInputPath(p);
  builder::CaptureOpener open = [&paths](size_t i) -> Result<std::shared_ptr<const builder::CaptureIndex>> {
    auto index = builder::CaptureIndex::Open(paths[i]);
    if (!index.ok()) return index.status();
    return std::shared_ptr<const builder::CaptureIndex>(std::move(index).value());
  };
  // SQLite counts every allocation under a global mutex unless told not to
  // before its first use; the export makes millions. Refused, harmlessly,
  // when SQLite is in use already.
  static const int kNoMemoryStatus = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)kNoMemoryStatus;
  // The output rule (format/output_file.h): never over a capture being
  // read, never over a non-regular file, through symlinks; the temporary
  // goes when the export fails or is interrupted.
  auto out = format::OutputFile::Create(path, format::OutputFile::Access::kSeekable);
  if (!out.ok()) return out.status();
  const std::string& temp = (*out)->temp_path();  // the writer opens it by name
  auto report = ExportFile(paths.size(), open, temp, options);
  if (!report.ok()) {
    std::string why = report.status().message();
    if (report.status().code() == Status::Code::kIoError) why += WhyWritesFail(temp);
    return Status(report.status().code(), path + ": " + why);
  }
  struct stat st;
  if (::stat(temp.c_str(), &st) == 0) report->bytes = static_cast<uint64_t>(st.st_size);
  GPUCAP_RETURN_IF_ERROR((*out)->Commit());
  return report;
}

}  // namespace gpucap::tools
