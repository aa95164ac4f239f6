#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "command.h"
#include "gpucap/format/output_file.h"

namespace {

void PrintUsage(std::ostream& out) {
  out << "usage: gpucap COMMAND [options]\n\ncommands:\n";
  for (const auto& c : gpucap::tools::Commands()) {
    out << "  " << c.name << std::string(10 - std::strlen(c.name), ' ') << c.summary << "\n";
  }
  out << "\n'gpucap COMMAND --help' for a command's options.\n";
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
