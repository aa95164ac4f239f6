#include "command.h"

#include <iostream>

#include "gpucap/format/memory_limit.h"

namespace po = boost::program_options;

namespace gpucap::tools {

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {"record", "run a program with the recorder injected: gpucap record -- CMD ARGS", RunRecord},
      {"info", "summarise a capture: process, devices, frames, records, damage", RunInfo},
      {"build", "build traces (Kineto-compatible Chrome JSON) per window", RunBuild},
      {"stats", "GPU time per kernel, copy, API call, NVTX range and stream", RunStats},
      {"diff", "per kernel, count and time changes between two captures or windows", RunDiff},
      {"trim", "cut a valid smaller capture holding only what some windows need", RunTrim},
      {"fixture", "trim, plus golden outputs and a manifest for a regression suite", RunFixture},
      {"merge", "one trace from several processes' captures (all ranks of a job)", RunMerge},
      {"export", "captures (one per rank) into a SQLite database: docs/sqlite.md", RunExport},
      {"report", "one self-contained HTML page of charts: time per step, kernels, streams, ranks", RunReport},
  };
  return commands;
}

bool ParseArgs(const std::vector<std::string>& args, const char* usage,
               const po::options_description& options,
               const po::positional_options_description& positional, po::variables_map* vm,
               int* exit_code) {
  po::options_description all(options);
  // Every command that reads captures holds each to the same memory limit
  // (format/memory_limit.h).
  std::string max_memory;
  all.add_options()("max-memory", po::value<std::string>(&max_memory)->default_value(""),
                    "memory one capture may take to read, e.g. 4G, 512M or none (default: 10x the file's "
                    "size + 256 MB); a capture past it is refused with a message naming what is too large");
  all.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), *vm);
    if (vm->count("help")) {
      std::cout << usage << "\n\n" << all << "\n";
      *exit_code = 0;
      return false;
    }
    po::notify(*vm);
    if (!max_memory.empty()) {
      auto limit = format::ParseMemorySize(max_memory);
      if (!limit.ok()) throw po::error("--max-memory: " + limit.status().message());
      format::SetMemoryLimit(*limit);
    }
  } catch (const po::error& e) {
    std::cerr << "gpucap: " << e.what() << "\n" << usage << "\n(--help for options)\n";
    *exit_code = 2;
    return false;
  }
  return true;
}

}  // namespace gpucap::tools
