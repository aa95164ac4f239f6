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

enum class OutputFormat { kChromeJson };

// "chrome" -> kChromeJson.
Result<OutputFormat> ParseOutputFormat(std::string_view name);
// The file extension a format's traces get: ".json".
std::string_view FormatExtension(OutputFormat format);

std::unique_ptr<TraceSink> MakeRenderer(OutputFormat format, std::unique_ptr<ByteSink> out);

// Kineto-compatible Chrome trace JSON (the schema torch.profiler writes):
// one event per line, timestamps in us with 3 decimals relative to
// baseTimeNanoseconds, strings escaped (control characters, invalid UTF-8
// replaced by U+FFFD).
std::unique_ptr<TraceSink> NewChromeJsonRenderer(std::unique_ptr<ByteSink> out);

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_RENDERER_H_
