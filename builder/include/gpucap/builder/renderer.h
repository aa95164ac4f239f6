// Renderers turn the join's event stream (trace_model.h) into a file format.
// A renderer is a TraceSink over a ByteSink; adding a format means adding a
// renderer and a row in output_formats.cc's table, never touching the join.
#ifndef GPUCAP_BUILDER_RENDERER_H_
#define GPUCAP_BUILDER_RENDERER_H_

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gpucap/builder/output.h"
#include "gpucap/builder/trace_model.h"
#include "gpucap/status.h"

namespace gpucap::builder {

enum class OutputFormat { kChromeJson, kPerfetto };

// The output formats, each once (output_formats.cc holds the table): what
// --format calls it, what a trace file's name says, and its renderer. Adding
// a format is a renderer and a row there; the CLI's help, name checks and the
// builder's file names read the table.
struct OutputFormatEntry {
  OutputFormat format;
  std::string_view name;         // --format NAME
  std::string_view alias;        // a second name --format takes
  std::string_view description;  // in --help: "NAME (DESCRIPTION)"
  std::string_view extension;    // a trace file's extension (also with ".gz" after it)
  std::string_view folder_file;  // how a trace written into a folder (-o DIR/) ends
  std::unique_ptr<TraceSink> (*make)(std::unique_ptr<ByteSink> out);
};
// Every format, the default (for a name that says none) first.
std::span<const OutputFormatEntry> OutputFormats();
const OutputFormatEntry& OutputFormatOf(OutputFormat format);
// --format's help: "chrome (Kineto-compatible JSON) | pftrace (Perfetto)".
std::string OutputFormatsHelp();

// A format by its name or alias ("chrome" or "json" -> kChromeJson).
Result<OutputFormat> ParseOutputFormat(std::string_view name);
// The format a trace file's name asks for (by its extension, with or without
// ".gz"), if it asks for one.
std::optional<OutputFormat> FormatNamedByPath(std::string_view path);
// The format a trace file's name asks for, else the default (kChromeJson).
OutputFormat FormatForPath(std::string_view path);
// The file extension a format's traces get: ".json", ".pftrace".
std::string_view FormatExtension(OutputFormat format);
// The trace-file suffix `path` ends with, from the table: each format's
// folder file name and extension, with and without ".gz", longest first
// (".pt.trace.json.gz" before ".json.gz"), then ".gz"; "" when none. A
// window's index goes before it (WindowOutputPath).
std::string_view TraceFileSuffix(std::string_view path);
// Whether a suffix is TensorBoard's (".pt.trace.json", gzipped or not):
// its plugin reads NAME.DIGITS.pt.trace.json as a span of worker NAME.
bool IsTensorBoardSuffix(std::string_view suffix);
// -o's list of trace file names, for --help: ".json, .json.gz,
// .pt.trace.json.gz (TensorBoard), .pftrace or .pftrace.gz".
std::string TraceFileNamesHelp();

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
