// The gpucap CLI: one binary, one subcommand per file. Each subcommand parses
// its own options with Boost.Program_options and returns the process exit
// code; errors go to stderr naming the file and what was wrong.
#ifndef GPUCAP_TOOLS_COMMAND_H_
#define GPUCAP_TOOLS_COMMAND_H_

#include <boost/program_options.hpp>
#include <string>
#include <vector>

namespace gpucap::tools {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

const std::vector<Command>& Commands();

// Parses args into vm; prints help and returns false when asked for it or on
// a usage error (exit code in *exit_code).
bool ParseArgs(const std::vector<std::string>& args, const char* usage,
               const boost::program_options::options_description& options,
               const boost::program_options::positional_options_description& positional,
               boost::program_options::variables_map* vm, int* exit_code);

int RunInfo(const std::vector<std::string>& args);
int RunRecord(const std::vector<std::string>& args);
int RunBuild(const std::vector<std::string>& args);
int RunStats(const std::vector<std::string>& args);
int RunDiff(const std::vector<std::string>& args);
int RunTrim(const std::vector<std::string>& args);
int RunFixture(const std::vector<std::string>& args);
int RunMerge(const std::vector<std::string>& args);
int RunExport(const std::vector<std::string>& args);
int RunReport(const std::vector<std::string>& args);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_COMMAND_H_
