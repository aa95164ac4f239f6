#include "gpucap/tools/info/strict.h"

namespace gpucap::tools {

std::vector<std::string> StrictFindings(const CaptureInfo& info) {
  std::vector<std::string> out;
  for (const std::string& line : info.damage_lines) {
    // Frames of a newer writer's types are skipped, not lost.
    if (line.find("of unknown type") == std::string::npos) out.push_back(line);
  }
  if (out.empty() && (!info.damage.empty() || info.sequence_gaps != 0 || info.tail_bytes_lost != 0)) {
    out.push_back(info.path + ": damaged (" + std::to_string(info.damage.size()) + " findings)");
  }
  if (info.recorder) {
    const format::RecorderStats& st = *info.recorder;
    auto dropped = [&](uint64_t n, const char* what) {
      if (n != 0) out.push_back(info.path + ": the recorder dropped " + std::to_string(n) + " " + what);
    };
    dropped(st.cupti_dropped_records, "records (CUPTI)");
    dropped(st.buffers_dropped_pool_empty, "buffers (pool empty)");
    dropped(st.buffers_dropped_queue_full, "buffers (queue full)");
    dropped(st.messages_dropped, "messages");
    if (!st.writer_error.empty()) out.push_back(info.path + ": the recorder's writer failed: " + st.writer_error);
  }
  if (!info.has_trailer) {
    out.push_back(info.path + ": no trailer: the capture was cut before it was closed");
  } else if (!info.clean_shutdown) {
    out.push_back(info.path + ": the trailer says the recorder did not shut down cleanly");
  }
  return out;
}

std::vector<std::string> StrictFindings(const builder::CaptureIndex& index) {
  std::vector<std::string> out = StrictFindings(DescribeCapture(index));
  // What the reader left out because the capture claimed the impossible.
  for (std::string& w : index.Warnings()) out.push_back(std::move(w));
  return out;
}

}  // namespace gpucap::tools
