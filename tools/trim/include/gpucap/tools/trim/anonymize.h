// What `trim --anonymize` does to each text and byte field of a capture
// (format/capture.capnp): every one is either transformed here or on the
// allow-list of SchemaFieldRules() with the reason it cannot identify a
// machine, a person or a job. A test walks the compiled schema, so a field
// added to it fails until it is classified here.
//
// Text becomes keyed hashes (anonymize_key.h) named by what the text is:
// the same name gives the same hash within a field and run (a trace keeps
// its shape: how many threads, which kernels repeat), never across fields.
// NVTX extended payloads keep only the bytes their schema says are numbers
// (fixed-size integers and floats, not addresses or characters); the rest,
// and every payload without a known schema, is zeroed. Ids and times stay.
#ifndef GPUCAP_TOOLS_ANONYMIZE_H_
#define GPUCAP_TOOLS_ANONYMIZE_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpucap/builder/name_matcher.h"
#include "gpucap/format/capture.h"
#include "gpucap/format/model.h"
#include "gpucap/tools/trim/anonymize_key.h"

namespace gpucap::tools {

// How one Text or Data field of the schema is treated, by its schema name
// ("Session.host"); `how` is "hashed", "zeroed", "numbers kept" or "kept",
// `why` says what and, for "kept", why it identifies no one.
struct FieldRule {
  const char* field;
  const char* how;
  const char* why;
};
const std::vector<FieldRule>& SchemaFieldRules();

class Anonymizer {
 public:
  // `keep`: range names this regex (RE2) matches whole stay readable (the
  // window's nvtx pattern, so the window can still be found); `capture`:
  // where the payload schemas are found.
  Anonymizer(AnonymizeKey key, const std::string& keep, const format::Capture& capture);

  void Session(format::SessionInfo* s) const;
  void Device(format::DeviceInfo* d) const;
  void Thread(format::ThreadInfo* t) const;
  void WindowMark(format::WindowMark* m) const;
  void Metadata(format::MetadataBlob* b) const;  // name, content type and data
  void Stats(format::RecorderStats* s) const;
  void Graph(format::GraphEvent* e) const;
  void Range(format::RangeEvent* e) const;
  std::string StopReason(const std::string& reason) const;

  // CUPTI string definitions, by what points to them.
  std::string Kernel(const std::string& name) const { return key_.Hash("kernel", name); }
  std::string RangeName(const std::string& name) const;
  std::string Domain(const std::string& name) const { return key_.Hash("domain", name); }

 private:
  void Payload(const format::RangeEvent& e, format::ExtPayload* p) const;

  AnonymizeKey key_;
  std::optional<builder::NameMatcher> keep_;
  std::map<std::pair<uint64_t, uint64_t>, format::PayloadSchema> schemas_;  // (domain, id)
};

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_ANONYMIZE_H_
