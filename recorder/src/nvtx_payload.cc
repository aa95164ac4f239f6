#include "nvtx_payload.h"

#include <algorithm>
#include <string>

namespace gpucap::recorder {
namespace {

std::string Text(const char* s) { return s ? std::string(s) : std::string(); }

}  // namespace

format::PayloadSchema SchemaOf(const nvtxPayloadSchemaAttr_t& a) {
  format::PayloadSchema s;
  s.field_mask = a.fieldMask;
  if (a.fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE) s.schema_type = a.type;
  if (a.fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_FLAGS) s.flags = a.flags;
  if (a.fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE) s.static_size = a.payloadStaticSize;
  if (a.fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ALIGNMENT) s.pack_align = a.packAlign;
  if ((a.fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES) &&
      (a.fieldMask & NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES) && a.entries) {
    // A schema of thousands of entries is a bug in the program; keep a bound.
    size_t n = std::min<size_t>(a.numEntries, 4096);
    s.entries.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const nvtxPayloadSchemaEntry_t& e = a.entries[i];
      s.entries.push_back(format::PayloadSchemaEntry{e.flags, e.type, Text(e.name),
                                                     Text(e.description), e.arrayOrUnionDetail,
                                                     e.offset});
    }
  }
  return s;
}

format::PayloadSchema EnumOf(const nvtxPayloadEnumAttr_t& a) {
  format::PayloadSchema s;
  s.field_mask = a.fieldMask;
  if (a.fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_SIZE) s.static_size = a.sizeOfEnum;
  if ((a.fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_ENTRIES) &&
      (a.fieldMask & NVTX_PAYLOAD_ENUM_ATTR_FIELD_NUM_ENTRIES) && a.entries) {
    size_t n = std::min<size_t>(a.numEntries, 4096);
    s.enum_entries.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const nvtxPayloadEnum_t& e = a.entries[i];
      s.enum_entries.push_back(format::PayloadEnumEntry{Text(e.name), e.value, e.isFlag != 0});
    }
  }
  return s;
}

uint64_t SchemaIdOf(uint64_t field_mask, uint64_t schema_id_field, uint64_t schema_id_bit,
                    uint64_t (*next_dynamic)()) {
  if ((field_mask & schema_id_bit) && schema_id_field >= NVTX_PAYLOAD_SCHEMA_ID_STATIC_START &&
      schema_id_field < NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START) {
    return schema_id_field;
  }
  return next_dynamic();
}

std::vector<format::ExtPayload> CopyPayloads(const nvtxPayloadData_t* data, size_t count) {
  std::vector<format::ExtPayload> out;
  if (!data) return out;
  count = std::min(count, kMaxPayloadsPerEvent);
  for (size_t i = 0; i < count; ++i) {
    const nvtxPayloadData_t& d = data[i];
    if (!d.payload || d.size == 0) continue;
    size_t n = std::min(d.size, kMaxPayloadBytes);
    out.push_back(format::ExtPayload{
        d.schemaId, std::string(static_cast<const char*>(d.payload), n), n < d.size});
  }
  return out;
}

std::vector<format::ExtPayload> CopyAttributePayloads(const nvtxEventAttributes_t& a) {
  if (a.payloadType != NVTX_PAYLOAD_TYPE_EXT || a.reserved0 <= 0) return {};
  return CopyPayloads(reinterpret_cast<const nvtxPayloadData_t*>(a.payload.ullValue),
                      static_cast<size_t>(a.reserved0));
}

}  // namespace gpucap::recorder
