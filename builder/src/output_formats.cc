// The output-format registry: one row per format. Everything that names a
// format (--format, a trace file's extension, a folder's file name, --help)
// reads this table.
#include <string>

#include "gpucap/builder/builder.h"
#include "gpucap/builder/renderer.h"

namespace gpucap::builder {

namespace {

constexpr OutputFormatEntry kFormats[] = {
    {OutputFormat::kChromeJson, "chrome", "json", "Kineto-compatible JSON", ".json", kTensorBoardSuffix,
     &NewChromeJsonRenderer},
    {OutputFormat::kPerfetto, "pftrace", "perfetto", "Perfetto", ".pftrace", ".pftrace.gz", &NewPerfettoRenderer},
};

}  // namespace

std::span<const OutputFormatEntry> OutputFormats() { return kFormats; }

const OutputFormatEntry& OutputFormatOf(OutputFormat format) {
  for (const OutputFormatEntry& f : kFormats) {
    if (f.format == format) return f;
  }
  return kFormats[0];
}

std::string OutputFormatsHelp() {
  std::string help;
  for (const OutputFormatEntry& f : kFormats) {
    if (!help.empty()) help += " | ";
    help.append(f.name).append(" (").append(f.description).append(")");
  }
  return help;
}

Result<OutputFormat> ParseOutputFormat(std::string_view name) {
  std::string expected;
  for (const OutputFormatEntry& f : kFormats) {
    if (name == f.name || name == f.alias) return f.format;
    expected.append(expected.empty() ? "" : " or ").append(f.name);
  }
  return Status::InvalidArgument("--format '" + std::string(name) + "': expected " + expected);
}

std::optional<OutputFormat> FormatNamedByPath(std::string_view path) {
  for (const OutputFormatEntry& f : kFormats) {
    std::string gz = std::string(f.extension) + ".gz";
    if (path.ends_with(f.extension) || path.ends_with(gz)) return f.format;
  }
  return std::nullopt;
}

OutputFormat FormatForPath(std::string_view path) { return FormatNamedByPath(path).value_or(kFormats[0].format); }

std::string_view FormatExtension(OutputFormat format) { return OutputFormatOf(format).extension; }

std::unique_ptr<TraceSink> MakeRenderer(OutputFormat format, std::unique_ptr<ByteSink> out) {
  return OutputFormatOf(format).make(std::move(out));
}

}  // namespace gpucap::builder
