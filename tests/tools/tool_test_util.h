// Shared by the tools tests: the fixtures, damaged copies of them, the gpucap
// binary run as a user runs it, and traces read back.
#ifndef GPUCAP_TESTS_TOOLS_TOOL_TEST_UTIL_H_
#define GPUCAP_TESTS_TOOLS_TOOL_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../support/gpucap_cli.h"
#include "json.h"
#include "trace_util.h"

namespace gpucap::testing {

// fixtures/<name>.gpucap in the source tree.
std::string Fixture(const std::string& name);
// Every fixture capture's name.
const std::vector<std::string>& FixtureNames();

// A copy of `from` cut to `fraction` of its bytes (a crash mid-run).
void WriteCutCopy(const std::string& from, const std::string& to, double fraction);
// A copy of `from` with bytes flipped around `fraction` of the way in (a bad
// disk block): the frames there fail their checksums.
void WriteFlippedCopy(const std::string& from, const std::string& to, double fraction);


// A trace file, gunzipped if needed, parsed; fails the test on bad JSON.
std::unique_ptr<Trace> ReadTrace(const std::string& path);
std::unique_ptr<Trace> ParseTrace(std::string text);
Json ParseOrFail(const std::string& text);

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_TOOLS_TOOL_TEST_UTIL_H_
