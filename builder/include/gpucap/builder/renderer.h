// Renderers turn the join's event stream (trace_model.h) into a file format.
// A renderer is a TraceSink over a ByteSink; adding a format means adding a
// renderer and a line in MakeRenderer, never touching the join.
#ifndef GPUCAP_BUILDER_RENDERER_H_
#define GPUCAP_BUILDER_RENDERER_H_

#include <memory>
#include <string>
#include <string_view>

#include "gpucap/builder/output.h"
#include "gpucap/builder/trace_model.h"
#include "gpucap/status.h"

namespace gpucap::builder {

enum class OutputFormat { kChromeJson, kPerfetto };

// "chrome" (or "json") -> kChromeJson, "pftrace" (or "perfetto") -> kPerfetto.
Result<OutputFormat> ParseOutputFormat(std::string_view name);
// The format a trace file's name asks for: kPerfetto for names ending in
// ".pftrace" or ".pftrace.gz", else kChromeJson.
OutputFormat FormatForPath(std::string_view path);
// The file extension a format's traces get: ".json", ".pftrace".
std::string_view FormatExtension(OutputFormat format);

std::unique_ptr<TraceSink> MakeRenderer(OutputFormat format, std::unique_ptr<ByteSink> out);

// Kineto-compatible Chrome trace JSON (the schema torch.profiler writes):
// one event per line, timestamps in us with 3 decimals relative to
// baseTimeNanoseconds, strings escaped (control characters, invalid UTF-8
// replaced by U+FFFD).
std::unique_ptr<TraceSink> NewChromeJsonRenderer(std::unique_ptr<ByteSink> out);

// Perfetto's protobuf trace (a TracePacket stream) for Perfetto UI and
// trace_processor: the same slices, arguments, flows and counters as the
// Chrome JSON, with interned strings and per-track delta timestamps
// (perfetto_renderer.cc says how).
std::unique_ptr<TraceSink> NewPerfettoRenderer(std::unique_ptr<ByteSink> out);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_RENDERER_H_
