// gpucap trim CAPTURE -o SMALL --window SPEC [--select LIST] [--anonymize]:
// a valid smaller capture holding only what the windows need.
// gpucap fixture CAPTURE -o DIR --window SPEC ...: the same, plus the golden
// outputs built from it and a manifest, for a regression suite.
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "command.h"
#include "progress.h"
#include "gpucap/tools/trim/fixture.h"

namespace po = boost::program_options;

namespace gpucap::tools {
namespace {

struct TrimFlags {
  WindowFlags window;
  std::string output;
  std::string name;
  bool anonymize = false;
  std::string anonymize_key;
  bool quiet = false;
  bool no_verify = false;
  bool strict = false;
};

void AddTrimFlags(po::options_description* options, TrimFlags* f) {
  options->add_options()
      ("capture", po::value<std::string>()->required(), "capture file")
      ("anonymize", po::bool_switch(&f->anonymize),
       "replace every name, path and label with a keyed hash under a key random to this run (names --window "
       "nvtx: matches stay); docs/cli.md lists what is kept")
      ("anonymize-key", po::value<std::string>(&f->anonymize_key),
       "anonymize with the key in this file (16-4096 bytes) instead: captures anonymized with one key hash alike")
      ("strict", po::bool_switch(&f->strict), kStrictHelp)
      ("quiet,q", po::bool_switch(&f->quiet), "no progress line, no warnings, no summary");
  AddWindowFlags(options, &f->window, "Several windows are kept together.");
}

Result<FixtureRequest> Request(const po::variables_map& vm, const TrimFlags& f) {
  FixtureRequest r;
  r.source = vm["capture"].as<std::string>();
  GPUCAP_RETURN_IF_ERROR(ApplyWindowFlags(f.window, &r.build));
  r.anonymize = f.anonymize;
  r.anonymize_key = f.anonymize_key;
  return r;
}

}  // namespace

int RunTrim(const std::vector<std::string>& args) {
  po::options_description options("gpucap trim options");
  TrimFlags f;
  options.add_options()("output,o", po::value<std::string>(&f.output)->required(),
                        "the trimmed capture (-: standard output, written once complete)");
  AddTrimFlags(&options, &f);
  po::positional_options_description positional;
  positional.add("capture", 1);
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(args, "usage: gpucap trim CAPTURE -o SMALL --window SPEC [--select LIST] [--anonymize] [--anonymize-key FILE]", options,
                 positional, &vm, &code)) {
    return code;
  }
  auto request = Request(vm, f);
  if (!request.ok()) return Fail("trim", request.status(), kExitUsage);
  auto index = OpenCapture(request->source, /*verify=*/f.strict);
  if (!index.ok()) return Fail("trim", index.status());
  if (f.strict && StrictRefuses("trim", **index)) return kExitDamaged;
  Progress progress("trim", Progress::ShouldShow(f.quiet));
  auto trimmed = Trim(**index, *request, f.output, progress.Fn());
  progress.Clear();
  if (!trimmed.ok()) return Fail("trim", trimmed.status());
  for (const std::string& w : trimmed->warnings) Warn("trim", w, f.quiet);
  if (f.quiet) return kExitOk;
  std::ostream& say = SummaryStream(f.output);
  say << f.output << ": " << trimmed->windows << " window(s), " << trimmed->result.records << " of "
            << trimmed->records_seen << " records in " << trimmed->result.chunks << " chunks, " << trimmed->result.bytes
            << " bytes (the source: " << (*index)->capture().file->size() << ")\n";
  say << "the same windows: gpucap build " << f.output << " --window '" << trimmed->window << "'";
  if (!trimmed->select.empty()) say << " --select " << trimmed->select;
  say << "\n";
  return kExitOk;
}

int RunFixture(const std::vector<std::string>& args) {
  po::options_description options("gpucap fixture options");
  TrimFlags f;
  options.add_options()
      ("output,o", po::value<std::string>(&f.output)->required(), "directory for the fixture (made if missing)")
      ("name", po::value<std::string>(&f.name), "base name of the files (default: the capture's)")
      ("no-verify", po::bool_switch(&f.no_verify),
       "skip checking that the trimmed capture builds the windows as the source does");
  AddTrimFlags(&options, &f);
  po::positional_options_description positional;
  positional.add("capture", 1);
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(args, "usage: gpucap fixture CAPTURE -o DIR --window SPEC [--select LIST] [--name NAME]", options,
                 positional, &vm, &code)) {
    return code;
  }
  auto request = Request(vm, f);
  if (!request.ok()) return Fail("fixture", request.status(), kExitUsage);
  request->name = f.name.empty() ? std::filesystem::path(request->source).stem().string() : f.name;
  request->verify = !f.no_verify;
  auto index = OpenCapture(request->source, /*verify=*/f.strict);
  if (!index.ok()) return Fail("fixture", index.status());
  if (f.strict && StrictRefuses("fixture", **index)) return kExitDamaged;
  Progress progress("fixture", Progress::ShouldShow(f.quiet));
  auto fixture = MakeFixture(**index, *request, f.output, progress.Fn());
  progress.Clear();
  if (!fixture.ok()) return Fail("fixture", fixture.status());
  for (const std::string& w : fixture->warnings) Warn("fixture", w, f.quiet);
  if (f.quiet) return kExitOk;
  for (const std::string& file : fixture->files) std::cout << file << "\n";
  return kExitOk;
}

}  // namespace gpucap::tools
