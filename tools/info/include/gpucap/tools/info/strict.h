// What `--strict` refuses (docs/cli.md): a capture that lost data. Damaged
// or missing frames, records or buffers the recorder dropped, a writer
// error, or no clean end (no trailer: the process was cut short). For CI,
// where a trace built from part of a run must not pass as the run.
#ifndef GPUCAP_TOOLS_INFO_STRICT_H_
#define GPUCAP_TOOLS_INFO_STRICT_H_

#include <string>
#include <vector>

#include "gpucap/builder/capture_index.h"
#include "gpucap/tools/info/capture_info.h"

namespace gpucap::tools {

// One line per finding, each naming the capture; empty when intact.
std::vector<std::string> StrictFindings(const CaptureInfo& info);
// The same, plus what the reader left out of the capture (CaptureIndex::Warnings).
std::vector<std::string> StrictFindings(const builder::CaptureIndex& index);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_INFO_STRICT_H_
