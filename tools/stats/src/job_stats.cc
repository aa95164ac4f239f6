#include "gpucap/tools/stats/job_stats.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "gpucap/builder/work_queue.h"
#include "gpucap/tools/stats/window_stats.h"

namespace gpucap::tools {
namespace {

void Thin(Durations* d) {
  while (d->samples.size() > kJobSamples) {
    size_t kept = 0;
    for (size_t i = 0; i < d->samples.size(); i += 2) d->samples[kept++] = d->samples[i];
    d->samples.resize(kept);
  }
}

void ThinAll(GpuStats* s) {
  for (auto& [name, d] : s->kernels) Thin(&d);
  for (auto& [name, d] : s->apis) Thin(&d);
  for (auto& [name, c] : s->copies) Thin(&c.time);
  for (auto& [name, r] : s->ranges) Thin(&r.cpu);
}

// One capture's part, from its worker to the in-order merge.
struct Part {
  Status status = Status::Ok();
  GpuStats stats;
  JobStats::Rank rank;
  RankSummary summary;
};

}  // namespace

Status NamingCapture(const Status& status, const std::string& path) {
  if (status.ok() || status.message().find(path) != std::string::npos) return status;
  return Status(status.code(), path + ": " + status.message());
}

Result<JobStats> CollectJobStats(size_t count, const CaptureOpener& open, const builder::BuildOptions& options,
                                 const builder::ProgressFn& progress) {
  JobStats job;
  builder::WorkQueue queue(options.threads);  // 0: one per core
  const int threads = queue.threads();
  builder::BuildOptions each = options;
  if (count > 1) each.threads = 1;
  // Parts wait in `ready` until every capture before them is merged: the
  // totals are the same whatever order the threads finish in.
  std::vector<std::optional<Part>> ready(count);
  size_t merged = 0;
  std::mutex mu;
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  Status first_error = Status::Ok();
  auto merge_ready = [&]() {
    while (merged < count && ready[merged]) {
      Part& p = *ready[merged];
      if (!p.status.ok()) {
        if (first_error.ok()) first_error = p.status;
      } else {
        job.total.Merge(p.stats);
        ThinAll(&job.total);
        job.ranks.push_back(std::move(p.rank));
        job.steps.push_back(std::move(p.summary));
      }
      ready[merged].reset();
      merged++;
      if (progress) progress("reading captures", merged, count);
    }
  };
  auto work = [&](int) {
    for (size_t i; !failed && (i = next.fetch_add(1)) < count;) {
      Part part;
      auto index = open(i);
      if (!index.ok()) {
        part.status = index.status();
      } else {
        auto stats = CollectWindowStats(**index, each, count == 1 ? progress : builder::ProgressFn());
        if (!stats.ok()) {
          part.status = NamingCapture(stats.status(), (*index)->path());
        } else {
          part.summary = Summarize(*stats);
          part.rank.path = (*index)->path();
          for (WindowStats& w : stats->windows) {
            part.stats.Merge(w.stats);
            w.stats = GpuStats();
          }
          for (const auto& [device, d] : part.stats.devices) {
            part.rank.gpu.compute_ns += d.compute_ns;
            part.rank.gpu.communication_ns += d.communication_ns;
            part.rank.gpu.memcpy_ns += d.memcpy_ns;
            part.rank.gpu.memset_ns += d.memset_ns;
            part.rank.gpu.busy_ns += d.busy_ns;
            part.rank.gpu.idle_ns += d.idle_ns;
          }
          part.rank.windows = part.stats.windows;
          part.rank.window_ns = part.stats.window_ns;
          part.stats.streams.clear();
          part.stats.devices.clear();
          part.stats.warnings = stats->warnings;
          ThinAll(&part.stats);
        }
      }
      if (!part.status.ok()) failed = true;
      std::lock_guard<std::mutex> lock(mu);
      ready[i] = std::move(part);
      merge_ready();
    }
    return Status::Ok();
  };
  int workers = static_cast<int>(std::min<size_t>(count, static_cast<size_t>(threads)));
  GPUCAP_RETURN_IF_ERROR(queue.Each(std::max(1, workers), work));
  if (!first_error.ok()) return first_error;
  if (failed || merged < count) {
    // A failure stopped the workers before some captures: find the first.
    for (size_t i = 0; i < count; ++i) {
      if (ready[i] && !ready[i]->status.ok()) return ready[i]->status;
    }
    return Status::Internal("a capture of the job was not read");
  }
  return job;
}

std::vector<Table> RankTables(const JobStats& job) {
  using Unit = Column::Unit;
  RankFindings f = FindAcrossRanks(job.steps);
  Table ranks{"ranks", "Ranks", {{"capture", "Capture", Unit::kCount}, {"rank", "Rank", Unit::kCount},
              {"host", "Host", Unit::kText}, {"windows", "Windows", Unit::kCount},
              {"window_ns", "Windows (us)", Unit::kNanos}, {"compute_ns", "Compute (us)", Unit::kNanos},
              {"communication_ns", "NCCL (us)", Unit::kNanos}, {"wait_ns", "NCCL wait (us)", Unit::kNanos},
              {"memcpy_ns", "Memcpy (us)", Unit::kNanos}, {"memset_ns", "Memset (us)", Unit::kNanos},
              {"busy_ns", "GPU busy (us)", Unit::kNanos}, {"idle_ns", "GPU idle (us)", Unit::kNanos},
              {"straggled", "Straggled", Unit::kCount}, {"path", "Capture file", Unit::kText}}, {}, 0};
  Table steps{"steps", "Steps across ranks", {{"capture", "Capture", Unit::kCount}, {"rank", "Rank", Unit::kCount},
              {"step", "Step", Unit::kText}, {"step_ns", "Step (us)", Unit::kNanos},
              {"communication_ns", "NCCL (us)", Unit::kNanos}, {"wait_ns", "NCCL wait (us)", Unit::kNanos},
              {"straggler", "Straggler", Unit::kCount}}, {}, 0};
  for (size_t c = 0; c < job.ranks.size(); ++c) {
    const JobStats::Rank& r = job.ranks[c];
    const RankSummary& s = job.steps[c];
    int64_t rank = s.rank >= 0 ? s.rank : static_cast<int64_t>(c);
    int64_t wait = 0;
    for (size_t k = 0; k < f.steps.size(); ++k) {
      wait += f.Wait(c, k);
      steps.rows.push_back({static_cast<int64_t>(c), rank, f.steps[k], f.Step(c, k).dur_ns,
                            f.Step(c, k).communication_ns, f.Wait(c, k),
                            static_cast<int64_t>(f.straggler[k] == static_cast<int>(c))});
    }
    ranks.rows.push_back({static_cast<int64_t>(c), rank, s.host, static_cast<int64_t>(r.windows), r.window_ns,
                          r.gpu.compute_ns, r.gpu.communication_ns, wait, r.gpu.memcpy_ns, r.gpu.memset_ns,
                          r.gpu.busy_ns, r.gpu.idle_ns, static_cast<int64_t>(f.straggled[c]), r.path});
  }
  return {ranks, steps};
}

}  // namespace gpucap::tools
