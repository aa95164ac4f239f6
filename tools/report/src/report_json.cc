// The report's data: each capture read once for its statistics, a few at a
// time, and summarised (RankSummary) before the next; the captures drawn in
// full written as they are read when there are few, else opened again once
// the notable ones are known.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>

#include "gpucap/builder/work_queue.h"
#include "report_parts.h"

namespace gpucap::tools {

using report_internal::CaptureData;


namespace {

// Whether `spec` yields at least one window in `index` (an error, such as
// "no window marks", is a no).
bool HasWindows(const builder::CaptureIndex& index, const std::string& spec) {
  builder::BuildOptions o;
  o.window = spec;
  auto windows = builder::Builder(index, o).Windows();
  return windows.ok() && !windows->empty();
}

std::string RecordedWindowPattern(const builder::CaptureIndex& index) {
  const auto& session = index.capture().session;
  if (!session) return {};
  for (const auto& [key, value] : session->options) {
    if (key == "GPUCAP_WINDOW_NVTX") return value;
  }
  return {};
}

// What one capture's pass leaves behind.
struct CapturePass {
  Status status = Status::Ok();
  std::string path;
  std::optional<std::string> section;  // its object in "captures", when drawn in full
  RankSummary summary;
  CollectiveTimes collectives;         // when the clocks are aligned
  std::vector<std::string> warnings;
  size_t windows = 0;
};

std::string Section(const CaptureData& data, const ReportOptions& options) {
  JsonOut j(/*compact=*/true);
  report_internal::WriteCapture(data, options, &j);
  return j.Take();
}

Result<std::string> JobJson(size_t count, const CaptureOpener& open, const ReportOptions& options,
                            const builder::ProgressFn& progress, std::vector<std::string>* warnings, size_t* windows,
                            const std::string& spec, bool chosen, std::vector<std::string>* names) {
  builder::BuildOptions build = options.build;
  build.window = spec;
  bool detail_all = count <= options.detailed_captures;
  // Whether the hosts differ is known once every capture is read: their
  // collectives are read on the way unless aligning is off.
  bool gather = options.align != ClockAlign::kOff && count > 1;
  // One capture: its own threads and progress, as `gpucap stats`. Several:
  // a capture per thread, each joined on one.
  builder::WorkQueue queue(options.build.threads);  // 0: one per core
  const int threads = queue.threads();
  int workers = static_cast<int>(std::min<size_t>(count, static_cast<size_t>(threads)));
  if (count > 1) build.threads = 1;
  std::vector<CapturePass> passes(count);
  std::atomic<size_t> next{0}, done{0};
  std::mutex progress_mutex;
  auto read = [&](size_t i, bool write_section, CapturePass* pass) {
    auto index = open(i);
    if (!index.ok()) {
      pass->status = index.status();
      return;
    }
    pass->path = (*index)->path();
    auto stats = CollectWindowStats(**index, build, count == 1 ? progress : builder::ProgressFn());
    if (!stats.ok()) {
      pass->status = NamingCapture(stats.status(), pass->path);
      return;
    }
    CaptureData data{index->get(), std::move(stats).value(), i};
    if (write_section) pass->section = Section(data, options);
    pass->summary = Summarize(data.stats);
    pass->warnings = data.stats.warnings;
    pass->windows = data.stats.windows.size();
    if (gather) pass->collectives = ReadCollectiveTimes(**index);
  };
  auto work = [&](int) {
    for (size_t i; (i = next.fetch_add(1)) < count;) {
      read(i, detail_all, &passes[i]);
      size_t n = ++done;
      if (progress && count > 1) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        progress("reading captures", n, count);
      }
      if (!passes[i].status.ok()) next = count;  // the first error ends the report
    }
    return Status::Ok();
  };
  GPUCAP_RETURN_IF_ERROR(queue.Each(std::max(1, workers), work));
  for (const CapturePass& p : passes) GPUCAP_RETURN_IF_ERROR(p.status);

  std::vector<RankSummary> summaries;
  std::set<std::string> hosts;
  for (CapturePass& p : passes) {
    if (names->size() < 3) names->push_back(std::filesystem::path(p.path).filename().string());
    if (!p.summary.host.empty()) hosts.insert(p.summary.host);
    if (warnings != nullptr) warnings->insert(warnings->end(), p.warnings.begin(), p.warnings.end());
    if (windows != nullptr) *windows += p.windows;
    summaries.push_back(std::move(p.summary));
  }
  std::vector<size_t> detailed;
  if (detail_all) {
    for (size_t i = 0; i < count; ++i) detailed.push_back(i);
  } else {
    detailed = report_internal::NotableCaptures(summaries, options.detailed_captures);
    for (size_t i : detailed) {
      if (progress) progress("drawing " + passes[i].path, 0, 0);
      read(i, true, &passes[i]);
      GPUCAP_RETURN_IF_ERROR(passes[i].status);
    }
  }

  JsonOut j(/*compact=*/true);
  j.BeginObject().Field("format", "gpucap-report").Field("version", uint32_t{1});
  // The spec, and whether the report chose it (no --window given).
  j.Field("window_spec", spec).Field("window_chosen", chosen);
  j.Field("capture_count", static_cast<uint64_t>(count)).Key("captures").BeginArray();
  for (size_t i : detailed) j.Raw(*passes[i].section);
  j.EndArray();
  if (count > 1) report_internal::WriteRanks(summaries, &j);
  if (gather && (options.align == ClockAlign::kOn || hosts.size() > 1)) {
    std::vector<CollectiveTimes> times;
    for (CapturePass& p : passes) times.push_back(std::move(p.collectives));
    report_internal::WriteClocks(AlignClocks(times), &j);
  }
  j.EndObject();
  return j.Take();
}

std::string Title(const ReportOptions& options, const std::vector<std::string>& names, size_t count) {
  if (!options.title.empty()) return options.title;
  std::string title = "gpucap report: ";
  for (size_t i = 0; i < names.size(); ++i) title += (i ? ", " : "") + names[i];
  if (count > names.size()) title += " and " + std::to_string(count - names.size()) + " more";
  return title;
}

}  // namespace

std::string StepWindowSpec(std::span<const builder::CaptureIndex* const> captures) {
  std::vector<std::string> candidates = {"marks"};
  for (const builder::CaptureIndex* index : captures) {
    std::string pattern = RecordedWindowPattern(*index);
    if (!pattern.empty()) candidates.push_back("nvtx:" + pattern);
  }
  candidates.push_back("nvtx:ProfilerStep#\\d+");
  for (const std::string& spec : candidates) {
    if (!captures.empty() && std::all_of(captures.begin(), captures.end(), [&](const builder::CaptureIndex* index) {
          return HasWindows(*index, spec);
        })) {
      return spec;
    }
  }
  return "all";
}

namespace {

Status CheckOptions(const ReportOptions& options) {
  if (options.strip_bins == 0 || options.strip_bins > kMaxStripBins) {
    return Status::InvalidArgument("--bins " + std::to_string(options.strip_bins) + ": a strip has 1 to " +
                                   std::to_string(kMaxStripBins) + " bins");
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> ReportJson(std::span<const builder::CaptureIndex* const> captures, const ReportOptions& options,
                               const builder::ProgressFn& progress, std::vector<std::string>* warnings,
                               size_t* windows) {
  if (captures.empty()) return Status::InvalidArgument("report: no capture given");
  GPUCAP_RETURN_IF_ERROR(CheckOptions(options));
  bool chosen = options.build.window.empty();
  std::string spec = chosen ? StepWindowSpec(captures) : options.build.window;
  builder::CaptureOpener open = builder::OpenedCaptures(captures);
  std::vector<std::string> names;
  return JobJson(captures.size(), open, options, progress, warnings, windows, spec, chosen, &names);
}

Result<ReportResult> BuildReport(std::span<const builder::CaptureIndex* const> captures, const ReportOptions& options,
                                 const builder::ProgressFn& progress) {
  ReportResult r;
  auto json = ReportJson(captures, options, progress, &r.warnings, &r.windows);
  if (!json.ok()) return json.status();
  std::vector<std::string> names;
  for (const builder::CaptureIndex* c : captures) names.push_back(std::filesystem::path(c->path()).filename().string());
  r.html = report_internal::Page(Title(options, names, names.size()), *json);
  return r;
}

Result<ReportResult> BuildReport(size_t count, const CaptureOpener& open, const ReportOptions& options,
                                 const builder::ProgressFn& progress) {
  if (count == 0) return Status::InvalidArgument("report: no capture given");
  GPUCAP_RETURN_IF_ERROR(CheckOptions(options));
  // The first capture picks the steps, and names the page with the next few.
  auto first = open(0);
  if (!first.ok()) return first.status();
  bool chosen = options.build.window.empty();
  const builder::CaptureIndex* head = first->get();
  std::string spec = chosen ? StepWindowSpec(std::span<const builder::CaptureIndex* const>(&head, 1))
                            : options.build.window;
  first->reset();
  ReportResult r;
  std::vector<std::string> names;
  auto json = JobJson(count, open, options, progress, &r.warnings, &r.windows, spec, chosen, &names);
  if (!json.ok()) return json.status();
  r.html = report_internal::Page(Title(options, names, count), *json);
  return r;
}

}  // namespace gpucap::tools
