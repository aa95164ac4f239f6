#include "gpucap/tools/trim/anonymize.h"

#include "gpucap/tools/trim/capture_trim.h"

namespace gpucap::tools {
namespace {

std::string Hashed(std::string_view prefix, const std::string& text) {
  return text.empty() ? text : HashedName(prefix, text);
}

}  // namespace

void AnonymizeSession(format::SessionInfo* s) {
  s->host = Hashed("host_", s->host);
  s->process_name = Hashed("process_", s->process_name);
  for (std::string& arg : s->command_line) arg = Hashed("arg_", arg);
  // Keys say what was set (GPUCAP_WINDOW, source); values can be paths.
  for (auto& [key, value] : s->options) value = Hashed("value_", value);
}

void AnonymizeDevice(format::DeviceInfo* d) {
  d->pci_bus_id = Hashed("pci_", d->pci_bus_id);
  d->uuid.fill(0);
}

void AnonymizeThread(format::ThreadInfo* t) { t->name = Hashed("thread_", t->name); }

void AnonymizeWindowMark(format::WindowMark* m) { m->label = Hashed("label_", m->label); }

void AnonymizeMetadata(format::MetadataBlob* b) {
  b->name = Hashed("name_", b->name);
  b->content_type = Hashed("type_", b->content_type);
  b->data = Hashed("data_", b->data);
}

void AnonymizeStats(format::RecorderStats* s) {
  s->writer_error = Hashed("error_", s->writer_error);
  for (auto& [name, value] : s->extra) name = Hashed("counter_", name);
}

void AnonymizeRangeName(format::RangeEvent* e) {
  using K = format::RangeKind;
  if (e->kind == K::kNameThread) e->name = Hashed("thread_", e->name);
  if (e->kind == K::kNameDomain) e->name = Hashed("domain_", e->name);
  if (e->kind == K::kNameCategory) e->name = Hashed("category_", e->name);
}

}  // namespace gpucap::tools
