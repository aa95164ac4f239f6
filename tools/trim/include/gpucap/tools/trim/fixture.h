// Trimmed captures and regression fixtures made from them.
//
// `gpucap fixture` writes, into one directory:
//   NAME.gpucap           the capture trimmed to the windows
//   NAME[.i-label].json   the windows' Chrome JSON traces built from it
//                         (and .pftrace, once the builder renders Perfetto)
//   NAME.stats.json       `gpucap stats --format json` of the same windows
//   NAME.fixture.json     the manifest: how the goldens are rebuilt
// The goldens are built single-threaded, with the capture shown as
// NAME.gpucap, so they are the same bytes on every machine; a regression
// test rebuilds them from the manifest and compares.
#ifndef GPUCAP_TOOLS_FIXTURE_H_
#define GPUCAP_TOOLS_FIXTURE_H_

#include <string>
#include <vector>

#include "gpucap/tools/trim/capture_trim.h"
#include "gpucap/builder/builder.h"

namespace gpucap::tools {

struct FixtureRequest {
  std::string source;
  builder::BuildOptions build;  // window, select, lookback, threads
  bool anonymize = false;
  // A key file (anonymize_key.h): names hash alike in every capture
  // anonymized with it. Implies `anonymize`; empty: a random key per run.
  std::string anonymize_key;
  std::string name;     // fixture: the files' base name
  bool verify = true;   // fixture: check the trimmed capture against the source
};

struct Trimmed {
  size_t windows = 0;
  uint64_t records_seen = 0;
  TrimResult result;
  // The spec and selection that find the same windows in the trimmed capture.
  std::string window, select;
  std::vector<std::string> warnings;
};

Result<Trimmed> Trim(const builder::CaptureIndex& source, const FixtureRequest& request, const std::string& output,
                     const builder::ProgressFn& progress);

struct FixtureManifest {
  std::string capture;  // file name, beside the manifest
  std::string window, select;
  std::string lookback = "2s";
  bool anonymized = false;
  std::string source;   // what it was cut from, for a person
  // Trace formats with goldens ("chrome", "pftrace"): every format the
  // builder rendered when the fixture was made, so a builder that learns a
  // new one rebuilds old fixtures as they were.
  std::vector<std::string> formats = {"chrome"};
  std::vector<std::string> goldens;  // file names, beside the manifest
};

// The trace formats this builder renders, by the names --format takes.
std::vector<std::string> GoldenFormats();

Result<FixtureManifest> ReadFixtureManifest(const std::string& path);
std::string FixtureManifestJson(const FixtureManifest& m);

// Builds the golden outputs of the fixture in `dir` into `out_dir` (the
// fixture's own directory when making it); returns the file names written.
Result<std::vector<std::string>> WriteFixtureGoldens(const std::string& dir, const FixtureManifest& m,
                                                     const std::string& out_dir);

struct Fixture {
  std::vector<std::string> files;  // paths written
  std::vector<std::string> warnings;
};

// Builds each window from the source and from the trimmed capture and
// compares the traces from their events on (the metadata before them names
// the file and the window's index, which differ by nature).
Status VerifyTrimmed(const builder::CaptureIndex& source, const builder::BuildOptions& options,
                     const builder::CaptureIndex& trimmed, const Trimmed& how);

Result<Fixture> MakeFixture(const builder::CaptureIndex& source, const FixtureRequest& request, const std::string& dir,
                            const builder::ProgressFn& progress);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_FIXTURE_H_
