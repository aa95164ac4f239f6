// gpucap info CAPTURE [--json]: what a capture holds, and what is wrong with it.
#include <iostream>

#include "gpucap/tools/info/capture_info.h"
#include "gpucap/tools/info/strict.h"
#include "cli.h"
#include "command.h"

namespace po = boost::program_options;

namespace gpucap::tools {

int RunInfo(const std::vector<std::string>& args) {
  po::options_description options("gpucap info options");
  options.add_options()
      ("capture", po::value<std::string>()->required(), "capture file")
      ("json", po::bool_switch(), "print JSON (stable keys) instead of text")
      ("strict", po::bool_switch(),
       "exit 4 when the capture is damaged, lost records or buffers, or was not closed cleanly (after printing)")
      ("quiet,q", po::bool_switch(), "print nothing (with --strict: the exit status alone says whether it is intact)");
  po::positional_options_description positional;
  positional.add("capture", 1);
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(args, "usage: gpucap info CAPTURE [--json]", options, positional, &vm, &code)) return code;
  auto index = OpenCapture(vm["capture"].as<std::string>(), /*verify=*/true);
  if (!index.ok()) return Fail("info", index.status());
  CaptureInfo info = DescribeCapture(**index);
  bool quiet = vm["quiet"].as<bool>();
  if (!quiet) std::cout << (vm["json"].as<bool>() ? InfoJson(info) : InfoText(info)) << std::flush;
  if (vm["strict"].as<bool>()) {
    std::vector<std::string> findings = StrictFindings(info);
    for (std::string& w : (*index)->Warnings()) findings.push_back(std::move(w));
    for (const std::string& f : findings) {
      if (!quiet) std::cerr << "gpucap info: --strict: " << f << "\n";
    }
    if (!findings.empty()) return kExitDamaged;
  }
  return kExitOk;
}

}  // namespace gpucap::tools
