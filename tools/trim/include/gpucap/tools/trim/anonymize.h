// What `trim --anonymize` does to the messages that identify a machine, a
// person or a job, beyond kernel and range names: host, process and thread
// names, the command line and its paths, options (the environment the
// recorder was given, where the fixture was cut from), PCI bus ids, device
// UUIDs, window labels, metadata blobs and writer errors. Text is replaced by
// stable hashes (the same input gives the same name, so a trace keeps its
// shape: how many threads, which ones share a name); ids and times stay.
#ifndef GPUCAP_TOOLS_ANONYMIZE_H_
#define GPUCAP_TOOLS_ANONYMIZE_H_

#include <string>

#include "gpucap/format/model.h"

namespace gpucap::tools {

void AnonymizeSession(format::SessionInfo* s);
void AnonymizeDevice(format::DeviceInfo* d);
void AnonymizeThread(format::ThreadInfo* t);
void AnonymizeWindowMark(format::WindowMark* m);
void AnonymizeMetadata(format::MetadataBlob* b);  // name, content type and data
void AnonymizeStats(format::RecorderStats* s);
// Thread, domain and category names given through NVTX (kNameThread, ...).
void AnonymizeRangeName(format::RangeEvent* e);

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_ANONYMIZE_H_
