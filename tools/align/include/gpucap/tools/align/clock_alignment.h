// Ranks' clocks brought onto one from the collectives they share.
//
// Each capture's times are its host's CLOCK_REALTIME (the join converts
// CUPTI time through the capture's clock pairs), so ranks of one host share a
// clock and ranks of different hosts agree only as well as NTP keeps the
// hosts: often within a millisecond, sometimes worse, and drifting by parts
// per million. A collective kernel runs on every member rank until the last
// one reaches it and the data has gone round, so its ends on the ranks are
// one instant up to a few microseconds: each shared collective is a clock
// reading taken on every rank at once.
//
// The rule, in one place:
//  - A capture's collectives are its kernels whose name starts with "nccl"
//    (as gpucap stats counts communication), per stream in start order. A
//    capture's NCCL streams are numbered by their first collective's start:
//    the n-th stream of one rank is matched with the n-th of another, and
//    the k-th collective of a stream with the k-th, while their kernel names
//    agree (a stream's matching stops at the first name that differs). This
//    holds where every rank runs the same communicators in the same order
//    (data-parallel jobs, and SPMD programs whose ranks share each stream's
//    communicator); where it does not, the residual says so.
//  - The reference is the capture of the lowest rank (else the first). Ranks
//    of its host keep their times. Each other host gets one correction,
//    fitted by least squares over every matched pair of all its ranks:
//    t -> t + offset + drift * (t - origin), a line through the reference's
//    ends against the host's own; pairs whose residual is past five times
//    the median one (and past a microsecond) are left out and the line is
//    fitted again, once.
//  - A rank's residual is the distance, after its host's correction, between
//    its collective ends and the reference's: the largest and the root mean
//    square. A host with no collective shared with the reference keeps its
//    times, and its ranks say so.
//
// Integer nanoseconds in, integer nanoseconds out; the same captures always
// give the same corrections.
#ifndef GPUCAP_TOOLS_ALIGN_CLOCK_ALIGNMENT_H_
#define GPUCAP_TOOLS_ALIGN_CLOCK_ALIGNMENT_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpucap/builder/capture_index.h"
#include "gpucap/builder/work_queue.h"
#include "gpucap/status.h"

namespace gpucap::tools {

// One capture's collective kernel ends, CLOCK_REALTIME ns as the join gives
// them, grouped by stream as the rule above numbers them. A stream of many
// collectives keeps every stride-th (a power of two, at most kKeptPerStream
// kept): a line needs a few hundred readings, and a thousand ranks' every
// collective would not fit in memory. Strides are powers of two so that
// two ranks' kept ordinals always share the coarser one's.
inline constexpr size_t kKeptPerStream = 1024;
struct CollectiveTimes {
  struct End {
    uint64_t ordinal = 0;  // the collective's place in its stream, from 0
    uint32_t name = 0;     // into names
    int64_t end_ns = 0;
  };
  int64_t rank = -1;     // from the session; -1 when the capture has none
  std::string host;      // from the session; the capture's path when it has none
  std::vector<std::string> names;         // demangled kernel names
  std::vector<std::vector<End>> streams;  // by first collective's start; each by ordinal
};

// Reads every activity chunk of `capture` for its kernels (nothing else is
// decoded; memory is one chunk's kernels at a time plus the collectives).
CollectiveTimes ReadCollectiveTimes(const builder::CaptureIndex& capture);

// One capture's correction and how well it fits.
struct RankClock {
  int64_t rank = -1;
  std::string host;
  bool aligned = false;      // a correction was fitted (false: the reference's host, or nothing shared)
  bool reference = false;    // the capture the others are aligned on
  size_t matched = 0;        // collectives matched with the reference's
  int64_t origin_ns = 0;     // where offset_ns holds
  int64_t offset_ns = 0;     // added at origin_ns
  double drift = 0;          // ns added per ns past origin_ns (1e-6 is 1 ppm)
  int64_t residual_max_ns = 0;
  int64_t residual_rms_ns = 0;
  std::string note;          // why not aligned, when it is not and is not the reference's host

  // `t` on the reference's clock.
  int64_t Apply(int64_t t) const;
  double drift_ppm() const { return drift * 1e6; }
};

struct JobClocks {
  size_t reference = 0;          // index of the reference capture
  std::vector<RankClock> ranks;  // one per capture, in the captures' order
  size_t hosts = 0;
  // The largest residual of any rank with matched collectives, and its index.
  int64_t worst_residual_ns = 0;
  size_t worst = 0;
};

JobClocks AlignClocks(std::span<const CollectiveTimes> captures);

// When merge and report align: always, never, or (auto) when the captures
// come from more than one host.
enum class ClockAlign { kAuto, kOn, kOff };
Result<ClockAlign> ParseClockAlign(std::string_view text);
inline constexpr const char* kClockAlignHelp =
    "align the hosts' clocks on the lowest rank's from the collectives their ranks share: auto (when the captures "
    "come from more than one host), on, off";

// Reads every capture's collectives on `queue`'s threads and aligns them.
JobClocks AlignCaptures(std::span<const builder::CaptureIndex* const> captures, builder::WorkQueue* queue);

// Lines for a person: what was aligned on what, the worst residual, and the
// ranks whose residual is past `loose_ns` (at most `most` of them named).
std::vector<std::string> DescribeClocks(const JobClocks& clocks, int64_t loose_ns = 100'000, size_t most = 8);

// Whether a job's captures come from more than one host (by the sessions'
// host names): where merge and report align by default.
bool SeveralHosts(std::span<const builder::CaptureIndex* const> captures);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_ALIGN_CLOCK_ALIGNMENT_H_
