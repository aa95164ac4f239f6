#include "gpucap/builder/torch_operators.h"

#include "gpucap/builder/budgets.h"

#include <array>
#include <utility>
#include <charconv>
#include <unordered_map>

namespace gpucap::builder {
namespace {

// The suffixes getNvtxStr appends, in the order it appends them.
constexpr std::array<std::string_view, 4> kSuffixes = {", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = "};

bool ReadInt(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

// A bracketed list's text from `text`'s start, brackets balanced; empty
// when it is not one.
std::string_view Bracketed(std::string_view text) {
  if (text.empty() || text[0] != '[') return {};
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[') depth++;
    if (text[i] == ']' && --depth == 0) return text.substr(0, i + 1);
  }
  return {};
}

bool IsIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Unqualified names torch.profiler files as cpu_op (RecordFunctions of
// scopes other than USER_SCOPE), as seen in Kineto's traces of eager,
// compiled and distributed jobs (fixtures/kineto; the test checks every
// cpu_op name there against this rule). Prefixes.
constexpr std::array<std::string_view, 9> kUnqualifiedOperators = {
    "detach",                    // detach, detach_
    "record_param_comms",        // a collective's parameters (c10d)
    "CompiledFunction",          // torch.compile's autograd function, and its Backward
    "## Call CompiledFxGraph",   // inductor's compiled graph call
    "Torch-Compiled Region",     // dynamo's frame
    "TorchDynamo Cache Lookup",
    "Pregraph bytecode",
    "AOTDispatcher",             // "AOTDispatcher Runtime Wrapper Prologue"
    "triton_",                   // inductor's kernel launchers: triton_poi_fused_...
};

// NCCL's API ranges and the names torch.distributed gives the collective
// (ProcessGroupNCCL's record_function "nccl:<collective>").
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kNcclCollectives = {{
    {"ncclAllReduce", "nccl:all_reduce"},
    {"ncclAllGather", "nccl:all_gather"},
    {"ncclReduceScatter", "nccl:reduce_scatter"},
    {"ncclBroadcast", "nccl:broadcast"},
    {"ncclReduce", "nccl:reduce"},
    {"ncclSend", "nccl:send"},
    {"ncclRecv", "nccl:recv"},
    {"ncclAllToAll", "nccl:all_to_all"},
}};

}  // namespace

std::optional<TorchOperatorName> ParseTorchRangeName(std::string_view range_name) {
  // The name ends where the first suffix begins; a suffix must follow the
  // ones before it in getNvtxStr's order, each once.
  size_t first = std::string_view::npos;
  for (std::string_view s : kSuffixes) first = std::min(first, range_name.find(s));
  if (first == std::string_view::npos || first == 0) return std::nullopt;
  TorchOperatorName out;
  out.name = range_name.substr(0, first);
  std::string_view rest = range_name.substr(first);
  size_t next_suffix = 0;
  while (!rest.empty()) {
    size_t which = kSuffixes.size();
    for (size_t i = next_suffix; i < kSuffixes.size(); ++i) {
      if (rest.starts_with(kSuffixes[i])) {
        which = i;
        break;
      }
    }
    if (which == kSuffixes.size()) return std::nullopt;
    rest.remove_prefix(kSuffixes[which].size());
    next_suffix = which + 1;
    if (which <= 1) {  // seq, op_id: an integer up to the next ", " or the end
      size_t end = rest.find(", ");
      std::string_view number = rest.substr(0, end);
      int64_t v;
      if (!ReadInt(number, &v)) return std::nullopt;
      if (which == 0) {
        out.sequence = v;
      } else {
        if (v < 0) return std::nullopt;
        out.op_id = static_cast<uint64_t>(v);
      }
      rest.remove_prefix(number.size());
    } else {  // sizes, input_op_ids: a bracketed list
      std::string_view list = Bracketed(rest);
      if (list.empty()) return std::nullopt;
      if (which == 2) out.sizes = list;
      rest.remove_prefix(list.size());
    }
  }
  return out;
}

bool IsBackwardNodeName(std::string_view name) {
  // An identifier ending in "Backward" and an optional version number.
  size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') end--;
  constexpr std::string_view kBackward = "Backward";
  if (end < kBackward.size() + 1 || name.substr(end - kBackward.size(), kBackward.size()) != kBackward) {
    return false;
  }
  for (char c : name) {
    if (!IsIdentifierChar(c)) return false;
  }
  return true;
}

bool IsTorchOperatorName(std::string_view name) {
  if (name.find("::") != std::string_view::npos) return true;  // aten::, autograd::, c10d::, mylib::
  if (IsBackwardNodeName(name)) return true;
  for (std::string_view prefix : kUnqualifiedOperators) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

std::optional<TorchOperatorName> ParseTorchOperator(std::string_view range_name) {
  std::optional<TorchOperatorName> parsed = ParseTorchRangeName(range_name);
  if (!parsed || !IsTorchOperatorName(parsed->name)) return std::nullopt;
  return parsed;
}

std::optional<std::string> InputDimsJson(std::string_view sizes) {
  // [[64, 256], [], [3]]: a list of lists of integers, nothing else, copied
  // without its spaces.
  std::string out;
  out.reserve(sizes.size());
  size_t i = 0;
  auto skip_spaces = [&] {
    while (i < sizes.size() && sizes[i] == ' ') i++;
  };
  auto take = [&](char c) {
    skip_spaces();
    if (i >= sizes.size() || sizes[i] != c) return false;
    out.push_back(c);
    i++;
    return true;
  };
  auto integer = [&] {
    skip_spaces();
    size_t start = i;
    if (i < sizes.size() && sizes[i] == '-') i++;
    while (i < sizes.size() && sizes[i] >= '0' && sizes[i] <= '9') i++;
    int64_t v;
    if (!ReadInt(sizes.substr(start, i - start), &v)) return false;
    out.append(sizes.substr(start, i - start));
    return true;
  };
  // '[' ']' or '[' ITEM (',' ITEM)* ']'.
  auto list = [&](auto&& item) {
    if (!take('[')) return false;
    if (take(']')) return true;
    do {
      if (!item()) return false;
    } while (take(','));
    return take(']');
  };
  if (!list([&] { return list(integer); })) return std::nullopt;
  skip_spaces();
  if (i != sizes.size()) return std::nullopt;
  return out;
}

TorchOperators::TorchOperators(const format::Capture& capture, const RangeIndex& index) {
  const std::vector<Range>& ranges = index.ranges();
  // Kineto's link (torch's generateForwardBackwardLink): a backward node
  // runs for the forward op of its sequence number, and among a thread's
  // ops sharing a sequence number the one that started last is the one that
  // made the node. emit_nvtx names no forward thread, so the forward is the
  // latest-starting forward op of that number that started before the
  // backward node did (ranges come by start time).
  std::unordered_map<int64_t, uint32_t> latest_forward;  // sequence -> operators_ index
  for (uint32_t r = 0; r < ranges.size(); ++r) {
    if (ranges[r].domain != 0 && ranges[r].name.starts_with("nccl")) {
      for (auto [nccl, torch] : kNcclCollectives) {
        if (ranges[r].name == nccl && index.DomainName(ranges[r].domain) == "NCCL") user_scopes_.emplace(r, torch);
      }
    }
    std::optional<TorchOperatorName> op = ParseTorchRangeName(capture.ranges[ranges[r].event].name);
    if (!op) continue;
    if (!IsTorchOperatorName(op->name)) {
      user_scopes_.emplace(r, TruncateName(op->name, &cut_names_));
      continue;
    }
    const bool backward_node = IsBackwardNodeName(op->name);
    const bool engine_scope = op->name.starts_with("autograd::engine::evaluate_function: ");
    op->name = TruncateName(op->name, &cut_names_);
    if (slot_.empty()) slot_.assign(ranges.size(), kNone);
    uint32_t i = static_cast<uint32_t>(operators_.size());
    slot_[r] = i;
    operators_.push_back({*op});
    if (op->sequence < 0) continue;
    if (backward_node) {
      auto it = latest_forward.find(op->sequence);
      if (it != latest_forward.end() && operators_[it->second].backward == kNone) {
        operators_[i].forward = it->second;
        operators_[it->second].backward = i;
      }
    } else if (!engine_scope) {
      latest_forward[op->sequence] = i;
    }
  }
  // forward holds operators_ indices so far; make them range indices.
  std::vector<uint32_t> range_of(operators_.size());
  for (uint32_t r = 0; r < slot_.size(); ++r) {
    if (slot_[r] != kNone) range_of[slot_[r]] = r;
  }
  for (Entry& e : operators_) {
    if (e.forward != kNone) e.forward = range_of[e.forward];
    if (e.backward != kNone) e.backward = range_of[e.backward];
  }
}

}  // namespace gpucap::builder
