// Writes what a TrimPlan keeps as a new, valid capture: the kept records
// re-packed into CUPTI-format buffers (same record layouts and strides, one
// buffer per source buffer that keeps anything, in the source's order), the
// string definitions those records point to written before the buffer that
// uses them, and the session, devices, threads, clock samples, ranges, graph
// events, marks, metadata and counters the plan keeps. With `anonymize`,
// every name becomes a keyed hash ("kernel_1f3a...", anonymize.h): the same
// name hashes the same under one key, so captures anonymized with one key
// file still diff.
#ifndef GPUCAP_TOOLS_CAPTURE_TRIM_H_
#define GPUCAP_TOOLS_CAPTURE_TRIM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpucap/builder/capture_index.h"
#include "gpucap/format/output_file.h"
#include "gpucap/tools/trim/anonymize_key.h"
#include "gpucap/tools/trim/trim_plan.h"

namespace gpucap::tools {

struct TrimOptions {
  std::optional<AnonymizeKey> anonymize;  // set: anonymize under this key
  // Range names this regex (RE2, name_matcher.h) matches whole stay readable when
  // anonymizing: the window's nvtx pattern, so the window can still be found.
  std::string keep_names;
  // Appended to the session's options: where the capture was cut from.
  std::vector<std::pair<std::string, std::string>> provenance;
};

struct TrimResult {
  uint64_t chunks = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;  // of the new file
};

// Writes the trimmed capture into `out` and closes it, uncommitted: the
// caller commits it once the result passed its checks (a failed check then
// leaves nothing behind). `out` should be made with Access::kSeekable.
Result<TrimResult> WriteTrimmedCapture(const builder::CaptureIndex& index, const TrimPlan& plan,
                                       const TrimOptions& options, format::OutputFile* out);
// The same into a new OutputFile for `path`, committed.
Result<TrimResult> WriteTrimmedCapture(const builder::CaptureIndex& index, const TrimPlan& plan,
                                       const TrimOptions& options, const std::string& path);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_CAPTURE_TRIM_H_
