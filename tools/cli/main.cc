#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "command.h"
#include "gpucap/format/output_file.h"

#ifndef GPUCAP_VERSION
#define GPUCAP_VERSION "0.0.0"
#endif

namespace {

void PrintUsage(std::ostream& out) {
  out << "usage: gpucap COMMAND [options]\n\ncommands:\n";
  for (const auto& c : gpucap::tools::Commands()) {
    out << "  " << c.name << std::string(10 - std::strlen(c.name), ' ') << c.summary << "\n";
  }
  out << "\n'gpucap COMMAND --help' (or 'gpucap help COMMAND') for a command's options; "
         "'gpucap --version' for the version.\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(std::cerr);
    return 2;
  }
  // An interrupted command leaves no temporary files behind.
  gpucap::format::InstallOutputCleanup();
  std::string name = argv[1];
  if (name == "--version" || name == "-V" || name == "version") {
    std::cout << "gpucap " GPUCAP_VERSION "\n";
    return 0;
  }
  // `gpucap help build` is `gpucap build --help`.
  if (name == "help" && argc > 2) {
    for (const auto& c : gpucap::tools::Commands()) {
      if (argv[2] == std::string_view(c.name)) return c.run({"--help"});
    }
    std::cerr << "gpucap: unknown command '" << argv[2] << "'\n";
    PrintUsage(std::cerr);
    return 2;
  }
  if (name == "-h" || name == "--help" || name == "help") {
    PrintUsage(std::cout);
    return 0;
  }
  for (const auto& c : gpucap::tools::Commands()) {
    if (name == c.name) return c.run(std::vector<std::string>(argv + 2, argv + argc));
  }
  std::cerr << "gpucap: unknown command '" << name << "'\n";
  PrintUsage(std::cerr);
  return 2;
}
