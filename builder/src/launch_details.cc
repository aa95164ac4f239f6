// A kernel's launch details beyond Kineto's: the channel CUPTI says it ran
// on (CUpti_ActivityKernel's channelID and channelType, CUPTI 12 on). Written
// only where CUPTI filled them (type 0 is CUPTI_CHANNEL_TYPE_INVALID: older
// CUPTI, or a record without them). Kineto's "queued" stays with the other
// Kineto keys (join_args.cc). The stream's priority comes from the
// recorder's StreamInfo (recorder/src/stream_facts.h), on every op of a
// stream the program created (docs/semantics.md, "Launch details").
#include "slice_describer.h"

namespace gpucap::builder::join_internal {
namespace {

std::string_view ChannelTypeName(uint8_t type) {
  switch (type) {  // CUpti_ChannelType
    case 1:
      return "compute";
    case 2:
      return "async memcpy";
    case 3:
      return "decomp";
    default:
      return "unknown";
  }
}

}  // namespace

void SliceDescriber::LaunchDetailArgs(const KernelTable& k, uint32_t row) {
  StreamDetailArgs(k.context[row], k.stream[row]);
  if (k.channel_type[row] == 0) return;
  args_.push_back(Arg::Uint(trace_keys::kChannelId, k.channel_id[row]));
  args_.push_back(Arg::String(trace_keys::kChannelType, ChannelTypeName(k.channel_type[row])));
}

void SliceDescriber::StreamDetailArgs(uint32_t context_id, uint32_t stream_id) {
  if (const format::StreamInfo* s = r_.index.Stream(context_id, stream_id)) {
    args_.push_back(Arg::Int(trace_keys::kStreamPriority, s->priority));
  }
}

}  // namespace gpucap::builder::join_internal
