// gpucap info CAPTURE [--json]: what a capture holds, and what is wrong with it.
#include <iostream>

#include "gpucap/tools/info/capture_info.h"
#include "cli.h"
#include "command.h"

namespace po = boost::program_options;

namespace gpucap::tools {

int RunInfo(const std::vector<std::string>& args) {
  po::options_description options("gpucap info options");
  options.add_options()
      ("capture", po::value<std::string>()->required(), "capture file")
      ("json", po::bool_switch(), "print JSON (stable keys) instead of text");
  po::positional_options_description positional;
  positional.add("capture", 1);
  po::variables_map vm;
  int code = 0;
  if (!ParseArgs(args, "usage: gpucap info CAPTURE [--json]", options, positional, &vm, &code)) return code;
  auto index = OpenCapture(vm["capture"].as<std::string>(), /*verify=*/true);
  if (!index.ok()) return Fail("info", index.status());
  CaptureInfo info = DescribeCapture(**index);
  std::cout << (vm["json"].as<bool>() ? InfoJson(info) : InfoText(info));
  return kExitOk;
}

}  // namespace gpucap::tools
