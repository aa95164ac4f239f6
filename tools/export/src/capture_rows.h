// What a capture holds besides its windows' joins: the process, devices,
// threads, CUDA graph topology, and the facts a reader judges the data by
// (drops, damage, what decoding skipped), as rows.
#ifndef GPUCAP_TOOLS_EXPORT_SRC_CAPTURE_ROWS_H_
#define GPUCAP_TOOLS_EXPORT_SRC_CAPTURE_ROWS_H_

#include <string>
#include <vector>

#include "gpucap/builder/decode.h"
#include "row_batch.h"
#include "window_rows.h"

namespace gpucap::tools::sqlite {

// processes (one row), devices, threads, graph_nodes, graph_edges,
// graph_execs and the capture's meta rows.
void AddCaptureFacts(CaptureRows* capture, RowBatch* out);

// Meta rows written after the windows: decoding's counts and warnings.
void AddDecodeFacts(CaptureRows* capture, const builder::DecodeStats& decode,
                    const std::vector<std::string>& warnings, RowBatch* out);

}  // namespace gpucap::tools::sqlite

#endif  // GPUCAP_TOOLS_EXPORT_SRC_CAPTURE_ROWS_H_
