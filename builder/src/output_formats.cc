// The output-format registry: one row per format. Everything that names a
// format (--format, a trace file's extension, a folder's file name, --help)
// reads this table.
#include <algorithm>
#include <string>
#include <vector>

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

namespace {

// Every suffix TraceFileSuffix knows, longest first.
const std::vector<std::string>& Suffixes() {
  static const std::vector<std::string> suffixes = [] {
    std::vector<std::string> all;
    auto add = [&](std::string_view s) {
      if (!s.empty() && std::find(all.begin(), all.end(), s) == all.end()) all.emplace_back(s);
    };
    for (const OutputFormatEntry& f : kFormats) {
      add(f.folder_file);
      if (f.folder_file.ends_with(".gz")) add(f.folder_file.substr(0, f.folder_file.size() - 3));
      add(std::string(f.extension) + ".gz");
      add(f.extension);
    }
    add(".gz");
    std::stable_sort(all.begin(), all.end(), [](const std::string& a, const std::string& b) {
      return a.size() > b.size();
    });
    return all;
  }();
  return suffixes;
}

}  // namespace

std::string_view TraceFileSuffix(std::string_view path) {
  for (const std::string& s : Suffixes()) {
    if (path.ends_with(s)) return s;
  }
  return {};
}

bool IsTensorBoardSuffix(std::string_view suffix) {
  std::string_view plain = kTensorBoardSuffix.substr(0, kTensorBoardSuffix.size() - 3);  // without ".gz"
  return suffix == kTensorBoardSuffix || suffix == plain;
}

std::string TraceFileNamesHelp() {
  std::vector<std::string> names;
  for (const OutputFormatEntry& f : kFormats) {
    names.push_back(std::string(f.extension));
    names.push_back(std::string(f.extension) + ".gz");
    if (f.folder_file != std::string(f.extension) + ".gz") {
      names.push_back(std::string(f.folder_file) + (IsTensorBoardSuffix(f.folder_file) ? " (TensorBoard)" : ""));
    }
  }
  std::string help;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) help += i + 1 == names.size() ? " or " : ", ";
    help += names[i];
  }
  return help;
}

std::unique_ptr<TraceSink> MakeRenderer(OutputFormat format, std::unique_ptr<ByteSink> out) {
  return OutputFormatOf(format).make(std::move(out));
}

}  // namespace gpucap::builder
