// What one window's join referenced: the decoded rows it drew or looked
// up, the ranges whose stacks or slices it read, the marks, graph nodes,
// metadata and counter samples it used, and the span of CUPTI time it
// turned into real time. A tool that cuts a capture down to some windows
// (tools/trim) keeps exactly these, so the window builds from the cut copy
// as from the whole capture without the tool knowing the join's rules.
//
// Filled only when asked for (WindowReport::use): a plain build pays
// nothing. Entries may repeat.
#ifndef GPUCAP_BUILDER_JOIN_USE_H_
#define GPUCAP_BUILDER_JOIN_USE_H_

#include <cstdint>
#include <vector>

namespace gpucap::builder {

struct JoinUse {
  struct Row {
    uint16_t part;    // index into the window's parts (WindowReport::chunks)
    uint32_t family;  // one Family bit (decode.h)
    uint32_t row;     // in that part's table of the family
  };
  std::vector<Row> rows;
  std::vector<uint32_t> ranges;           // RangeIndex::ranges(): both events of each are needed
  std::vector<uint32_t> range_events;     // Capture::ranges: the marks drawn
  std::vector<uint64_t> graph_nodes;      // whose capture-time origin (graph.h) the join read
  std::vector<uint32_t> metadata;         // Capture::metadata blobs written into slices
  std::vector<uint32_t> counter_samples;  // Capture::counter_samples drawn
  // The CUPTI times converted to real time lie in [first_ns, last_ns].
  uint64_t first_ns = UINT64_MAX;
  uint64_t last_ns = 0;

  void Use(uint16_t part, uint32_t family, uint32_t row) { rows.push_back({part, family, row}); }
  void Time(uint64_t t) {
    if (t < first_ns) first_ns = t;
    if (t > last_ns) last_ns = t;
  }
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_JOIN_USE_H_
