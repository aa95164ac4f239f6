// PyTorch operators as torch.autograd.profiler.emit_nvtx names them, and the
// capture's operator ranges with their forward -> backward links.
//
// Under emit_nvtx PyTorch opens one NVTX range per RecordFunction, named
//   NAME[, seq = N][, op_id = N][, sizes = [[64, 256], [], ...]][, input_op_ids = [...]]
// (torch/csrc/profiler/stubs: getNvtxStr). Operators and user scopes get the
// same suffixes, so the suffix alone does not say which a range is; Kineto
// tells them apart by the RecordFunction's scope, which the name does not
// carry. The rule here (docs/semantics.md, "Operators"): a suffixed range is
// an operator when its NAME is one PyTorch gives operators (a namespace,
// "aten::addmm"; an autograd node, "AddmmBackward0"; or one of the
// unqualified names torch.profiler files under cpu_op, list in the .cc,
// checked against Kineto's traces in fixtures/kineto); every other range
// (ProfilerStep#3, Optimizer.step#AdamW.step, nccl:all_reduce, a user's
// record_function) stays a user annotation, as Kineto files those.
#ifndef GPUCAP_BUILDER_TORCH_OPERATORS_H_
#define GPUCAP_BUILDER_TORCH_OPERATORS_H_

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpucap/builder/ranges.h"

namespace gpucap::builder {

struct TorchOperatorName {
  std::string_view name;   // the operator, suffix cut: "aten::addmm"
  int64_t sequence = -1;   // autograd's sequence number; -1: none printed
  uint64_t op_id = 0;      // 0: none printed
  std::string_view sizes;  // the input shapes as printed, "[[64, 256], []]"; empty: none
};

// The parts of an emit_nvtx range name; nullopt when `range_name` has none
// of the suffixes or they do not read as emit_nvtx prints them.
std::optional<TorchOperatorName> ParseTorchRangeName(std::string_view range_name);
// Whether PyTorch gives `name` (suffix cut) to operators, by the rule above.
bool IsTorchOperatorName(std::string_view name);
// An autograd node's name ("AddmmBackward0", "CompiledFunctionBackward"):
// the backward op a forward op's sequence number links to.
bool IsBackwardNodeName(std::string_view name);
// The operator a range name stands for: ParseTorchRangeName's, when its
// name is an operator's; else nullopt.
std::optional<TorchOperatorName> ParseTorchOperator(std::string_view range_name);
// emit_nvtx's sizes text as Kineto's "Input Dims" (a JSON array of arrays of
// integers, compact): nullopt when it is not a list of integer lists.
std::optional<std::string> InputDimsJson(std::string_view sizes);

// The operator ranges of a capture. Built once per capture (CaptureIndex).
class TorchOperators {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  TorchOperators() = default;  // no operators: every range as recorded
  // Names are read as `capture` recorded them, not as RangeIndex cut them
  // for display: a long emit_nvtx name (an _foreach_ op's sizes over a
  // model's parameters run past kMaxNameBytes) is still an operator with
  // its whole Input Dims; only the name shown is cut.
  TorchOperators(const format::Capture& capture, const RangeIndex& ranges);

  bool empty() const { return operators_.empty(); }
  size_t size() const { return operators_.size(); }
  // The operator range `range` (an index into RangeIndex::ranges()) stands
  // for; null for a range that is not an operator.
  const TorchOperatorName* Of(uint32_t range) const {
    if (range >= slot_.size() || slot_[range] == kNone) return nullptr;
    return &operators_[slot_[range]].name;
  }
  // For a backward node's range, the forward operator range its sequence
  // number links to (Kineto's "fwdbwd" flow); kNone when none does.
  uint32_t ForwardOf(uint32_t range) const {
    if (range >= slot_.size() || slot_[range] == kNone) return kNone;
    return operators_[slot_[range]].forward;
  }
  // For a forward operator's range, the backward node's range that links
  // to it (one: Kineto draws one flow per forward op); kNone when none.
  uint32_t BackwardOf(uint32_t range) const {
    if (range >= slot_.size() || slot_[range] == kNone) return kNone;
    return operators_[slot_[range]].backward;
  }
  // The name a trace shows for a range: an operator's, or a user scope's
  // that emit_nvtx suffixed ("Optimizer.step#AdamW.step"), without the
  // suffix; an NCCL collective's range (domain NCCL) as torch.distributed
  // names the collective ("ncclAllReduce" -> "nccl:all_reduce", which
  // TensorBoard's Distributed view looks for); else the name as recorded.
  std::string_view ShownName(uint32_t range, std::string_view recorded) const {
    if (const TorchOperatorName* op = Of(range)) return op->name;
    auto it = user_scopes_.find(range);
    return it == user_scopes_.end() ? recorded : it->second;
  }

 private:
  struct Entry {
    TorchOperatorName name;
    uint32_t forward = kNone, backward = kNone;  // operators_ indices while building, then ranges
  };
  std::vector<uint32_t> slot_;  // range -> index into operators_; empty when none
  std::vector<Entry> operators_;
  std::unordered_map<uint32_t, std::string_view> user_scopes_;  // range -> the name shown
  std::deque<std::string> cut_names_;  // shown names over kMaxNameBytes, cut (views above point here)
};

}  // namespace gpucap::builder

#endif  // GPUCAP_BUILDER_TORCH_OPERATORS_H_
