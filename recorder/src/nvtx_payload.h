// NVTX extended payloads (the payload extension, module 2): schema and enum
// registrations become capture events, and each event's payload bytes are
// copied as the program passed them. Decoding waits for the builder, which
// has the schema; the recorder only copies.
#ifndef GPUCAP_RECORDER_NVTX_PAYLOAD_H_
#define GPUCAP_RECORDER_NVTX_PAYLOAD_H_

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpucap/format/model.h"

namespace gpucap::recorder {

// Bytes kept per payload and payloads kept per event: a payload is a small
// struct (NCCL's are 24 bytes); a larger one keeps its head, marked truncated.
inline constexpr size_t kMaxPayloadBytes = 1024;
inline constexpr size_t kMaxPayloadsPerEvent = 8;

// The schema as registered, pointers resolved into strings.
format::PayloadSchema SchemaOf(const nvtxPayloadSchemaAttr_t& attr);
format::PayloadSchema EnumOf(const nvtxPayloadEnumAttr_t& attr);

// The schema id a registration gets: the one it asks for (static ids), or
// the next from `next_dynamic` (ids from NVTX_PAYLOAD_SCHEMA_ID_DYNAMIC_START).
uint64_t SchemaIdOf(uint64_t field_mask, uint64_t schema_id_field, uint64_t schema_id_bit,
                    uint64_t (*next_dynamic)());

// Copies of `count` payloads (null or empty ones skipped).
std::vector<format::ExtPayload> CopyPayloads(const nvtxPayloadData_t* data, size_t count);

// Payloads attached to event attributes (payloadType NVTX_PAYLOAD_TYPE_EXT:
// payload.ullValue points at reserved0 nvtxPayloadData_t).
std::vector<format::ExtPayload> CopyAttributePayloads(const nvtxEventAttributes_t& a);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_NVTX_PAYLOAD_H_
