// The fit of clock_alignment.h's rule.
#include "gpucap/tools/align/clock_alignment.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace gpucap::tools {
namespace {

// One collective seen on a rank (x, its own clock) and on the reference (y).
struct Pair {
  int64_t x, y;
};

// The pairs of `c` with the reference `ref`: n-th stream with n-th, equal
// ordinals, until a stream's names part.
std::vector<Pair> Match(const CollectiveTimes& c, const CollectiveTimes& ref) {
  std::vector<Pair> out;
  size_t n = std::min(c.streams.size(), ref.streams.size());
  for (size_t s = 0; s < n; ++s) {
    const auto& a = c.streams[s];
    const auto& b = ref.streams[s];
    for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
      if (a[i].ordinal < b[j].ordinal) {
        i++;
      } else if (a[i].ordinal > b[j].ordinal) {
        j++;
      } else {
        if (c.names[a[i].name] != ref.names[b[j].name]) break;
        out.push_back({a[i].end_ns, b[j].end_ns});
        i++;
        j++;
      }
    }
  }
  return out;
}

struct Line {
  int64_t origin = 0;
  long double offset = 0, drift = 0;
  long double At(int64_t x) const { return offset + drift * static_cast<long double>(x - origin); }
};

// Least squares of y - x against x, centred on the pairs' mean x.
Line Fit(const std::vector<Pair>& pairs) {
  Line line;
  if (pairs.empty()) return line;
  __int128 sum = 0;
  for (const Pair& p : pairs) sum += p.x;
  line.origin = static_cast<int64_t>(sum / static_cast<__int128>(pairs.size()));
  long double n = static_cast<long double>(pairs.size()), mx = 0, md = 0;
  for (const Pair& p : pairs) {
    mx += static_cast<long double>(p.x - line.origin);
    md += static_cast<long double>(p.y - p.x);
  }
  mx /= n;
  md /= n;
  long double sxx = 0, sxd = 0;
  for (const Pair& p : pairs) {
    long double dx = static_cast<long double>(p.x - line.origin) - mx;
    sxx += dx * dx;
    sxd += dx * (static_cast<long double>(p.y - p.x) - md);
  }
  // A span under a millisecond says nothing about drift of parts per million.
  line.drift = sxx > 0 && std::sqrt(sxx / n) >= 1e6L ? sxd / sxx : 0;
  line.offset = md - line.drift * mx;
  return line;
}

// Fitted once, then again without the pairs far off the first line.
Line FitRobust(std::vector<Pair> pairs) {
  Line line = Fit(pairs);
  if (pairs.size() < 3) return line;
  std::vector<long double> off;
  for (const Pair& p : pairs) off.push_back(std::fabs(static_cast<long double>(p.y - p.x) - line.At(p.x)));
  std::vector<long double> sorted = off;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  long double limit = std::max<long double>(5 * sorted[sorted.size() / 2], 1000);
  std::vector<Pair> kept;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (off[i] <= limit) kept.push_back(pairs[i]);
  }
  return kept.size() < pairs.size() && kept.size() >= 2 ? Fit(kept) : line;
}

}  // namespace

int64_t RankClock::Apply(int64_t t) const {
  if (!aligned) return t;
  long double shift = static_cast<long double>(offset_ns) +
                      static_cast<long double>(drift) * (static_cast<long double>(t) - static_cast<long double>(origin_ns));
  long double v = static_cast<long double>(t) + std::nearbyint(shift);
  if (v >= 9.2e18L) return INT64_MAX;
  if (v <= -9.2e18L) return INT64_MIN;
  return static_cast<int64_t>(v);
}

JobClocks AlignClocks(std::span<const CollectiveTimes> captures) {
  JobClocks job;
  if (captures.empty()) return job;
  for (size_t i = 1; i < captures.size(); ++i) {
    const CollectiveTimes& c = captures[i];
    const CollectiveTimes& r = captures[job.reference];
    if (c.rank >= 0 && (r.rank < 0 || c.rank < r.rank)) job.reference = i;
  }
  const CollectiveTimes& ref = captures[job.reference];
  std::vector<std::vector<Pair>> pairs(captures.size());
  std::map<std::string, std::vector<size_t>> by_host;
  for (size_t i = 0; i < captures.size(); ++i) {
    if (i != job.reference) pairs[i] = Match(captures[i], ref);
    by_host[captures[i].host].push_back(i);
  }
  job.hosts = by_host.size();
  job.ranks.resize(captures.size());
  for (size_t i = 0; i < captures.size(); ++i) {
    job.ranks[i].rank = captures[i].rank;
    job.ranks[i].host = captures[i].host;
  }
  job.ranks[job.reference].reference = true;
  job.ranks[job.reference].matched = pairs[job.reference].size();
  for (const auto& [host, members] : by_host) {
    std::vector<Pair> all;
    for (size_t i : members) all.insert(all.end(), pairs[i].begin(), pairs[i].end());
    bool own = host == ref.host;  // the reference's host keeps its clock
    bool fitted = !own && !all.empty();
    Line line = fitted ? FitRobust(std::move(all)) : Line{};
    for (size_t i : members) {
      RankClock& rc = job.ranks[i];
      if (fitted) {
        rc.aligned = true;
        rc.origin_ns = line.origin;
        rc.offset_ns = static_cast<int64_t>(std::nearbyint(line.offset));
        rc.drift = static_cast<double>(line.drift);
      } else if (!own) {
        rc.note = "no collective matched with the reference's: times left as recorded";
      }
      if (i == job.reference) continue;
      rc.matched = pairs[i].size();
      long double sq = 0;
      for (const Pair& p : pairs[i]) {
        int64_t r = p.y - rc.Apply(p.x);
        uint64_t a = r < 0 ? 0 - static_cast<uint64_t>(r) : static_cast<uint64_t>(r);
        rc.residual_max_ns = std::max<int64_t>(rc.residual_max_ns, a > INT64_MAX ? INT64_MAX : static_cast<int64_t>(a));
        sq += static_cast<long double>(r) * static_cast<long double>(r);
      }
      if (!pairs[i].empty()) {
        rc.residual_rms_ns =
            static_cast<int64_t>(std::nearbyint(std::sqrt(sq / static_cast<long double>(pairs[i].size()))));
      }
    }
  }
  for (size_t i = 0; i < job.ranks.size(); ++i) {
    if (job.ranks[i].matched > 0 && job.ranks[i].residual_max_ns > job.worst_residual_ns) {
      job.worst_residual_ns = job.ranks[i].residual_max_ns;
      job.worst = i;
    }
  }
  return job;
}

Result<ClockAlign> ParseClockAlign(std::string_view text) {
  if (text == "auto") return ClockAlign::kAuto;
  if (text == "on") return ClockAlign::kOn;
  if (text == "off") return ClockAlign::kOff;
  return Status::InvalidArgument("--align-clocks takes auto, on or off, not '" + std::string(text) + "'");
}

JobClocks AlignCaptures(std::span<const builder::CaptureIndex* const> captures, builder::WorkQueue* queue) {
  std::vector<CollectiveTimes> times(captures.size());
  std::atomic<size_t> next{0};
  auto work = [&](int) {
    for (size_t i; (i = next.fetch_add(1)) < captures.size();) times[i] = ReadCollectiveTimes(*captures[i]);
    return Status::Ok();
  };
  int workers = static_cast<int>(std::min<size_t>(captures.size(), static_cast<size_t>(queue->threads())));
  (void)queue->Each(std::max(1, workers), work);  // the work cannot fail
  return AlignClocks(times);
}

namespace {

std::string Micros(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f us", static_cast<double>(ns) / 1000.0);
  return text;
}

std::string RankName(const RankClock& rc) {
  return (rc.rank >= 0 ? "rank " + std::to_string(rc.rank) : std::string("a capture without a rank")) + " (" +
         rc.host + ")";
}

}  // namespace

std::vector<std::string> DescribeClocks(const JobClocks& clocks, int64_t loose_ns, size_t most) {
  std::vector<std::string> out;
  if (clocks.ranks.empty()) return out;
  size_t aligned = 0;
  for (const RankClock& rc : clocks.ranks) aligned += rc.aligned;
  out.push_back("clocks: " + std::to_string(clocks.hosts) + " host(s); " + std::to_string(aligned) + " of " +
                std::to_string(clocks.ranks.size()) + " captures shifted onto " +
                RankName(clocks.ranks[clocks.reference]) + " by the collectives they share; largest residual " +
                Micros(clocks.worst_residual_ns) +
                (clocks.worst_residual_ns > 0 ? " (" + RankName(clocks.ranks[clocks.worst]) + ")" : ""));
  std::vector<size_t> loose;
  for (size_t i = 0; i < clocks.ranks.size(); ++i) {
    if (clocks.ranks[i].matched > 0 && clocks.ranks[i].residual_max_ns > loose_ns) loose.push_back(i);
  }
  std::stable_sort(loose.begin(), loose.end(), [&](size_t a, size_t b) {
    return clocks.ranks[a].residual_max_ns > clocks.ranks[b].residual_max_ns;
  });
  for (size_t k = 0; k < loose.size() && k < most; ++k) {
    const RankClock& rc = clocks.ranks[loose[k]];
    out.push_back("clocks: " + RankName(rc) + " is " + Micros(rc.residual_max_ns) + " off the reference at worst (" +
                  Micros(rc.residual_rms_ns) + " rms over " + std::to_string(rc.matched) +
                  " collectives): its collectives may not be the reference's, or its ends not simultaneous");
  }
  if (loose.size() > most) out.push_back("clocks: " + std::to_string(loose.size() - most) + " more ranks past " + Micros(loose_ns));
  return out;
}

bool SeveralHosts(std::span<const builder::CaptureIndex* const> captures) {
  std::set<std::string> hosts;
  for (const builder::CaptureIndex* c : captures) {
    const auto& s = c->capture().session;
    if (s && !s->host.empty()) hosts.insert(s->host);
  }
  return hosts.size() > 1;
}

}  // namespace gpucap::tools
