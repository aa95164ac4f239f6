// Argument runs that repeat from launch to launch (launch shape to occupancy,
// annotation stack), made once per key and shared by the slices
// (shared_runs.h).
#include "shared_runs.h"

#include "gpucap/builder/trace_keys.h"
#include "occupancy.h"

namespace gpucap::builder::join_internal {

void SharedRuns::ForgetRuns() {
  run_id_base_ += static_cast<uint32_t>(runs_.size());
  runs_.Rewind();
  run_by_hash_.Reset(0);
  recent_runs_.fill(0);
  name_stack_pool_.clear();
  name_stack_begin_.assign(2, 0);
  name_stack_by_hash_.Reset(0);
}

const SharedRuns::SharedRun& SharedRuns::For(const Op& op) {
  if (runs_.size() >= kMaxRuns || name_stack_begin_.size() > kMaxRuns) ForgetRuns();
  std::span<const uint32_t> stack = r_.StackOf(op, &stack_scratch_);
  RunKey key{};
  key.kind = static_cast<uint32_t>(op.kind);
  key.name_stack = NameStackId(stack);
  if (op.kind == OpKind::kKernel) {
    const KernelTable& k = kernels_.Of(op.part);
    uint32_t r = op.row;
    key.device = k.device[r];
    key.grid[0] = k.grid_x[r], key.grid[1] = k.grid_y[r], key.grid[2] = k.grid_z[r];
    key.block[0] = k.block_x[r], key.block[1] = k.block_y[r], key.block[2] = k.block_z[r];
    key.registers = k.registers_per_thread[r];
    key.static_shared = k.static_shared_memory[r];
    key.dynamic_shared = k.dynamic_shared_memory[r];
  }
  uint32_t found = FlatMap::kMissing;
  uint64_t hash = key.Hash();
  uint64_t& recent = recent_runs_[hash % recent_runs_.size()];
  if (key.name_stack != kNone) {
    if ((recent >> 32) == (hash >> 32) && static_cast<uint32_t>(recent) != 0) {
      const SharedRun& run = runs_[static_cast<uint32_t>(recent) - 1];
      if (run.key == key) return run;
    }
    found = run_by_hash_.Find(hash);
    if (found != FlatMap::kMissing && runs_[found].key == key) {
      recent = (hash >> 32 << 32) | (found + 1);
      return runs_[found];
    }
  }
  if (key.name_stack == kNone || found != FlatMap::kMissing || run_id_base_ + runs_.size() >= UINT32_MAX - 1) {
    // Not to be shared: made afresh each time.
    MakeRun(op, key, stack, &unshared_run_);
    unshared_run_.id = 0;
    return unshared_run_;
  }
  SharedRun& run = runs_.emplace_back();
  run_by_hash_.Insert(hash, static_cast<uint32_t>(runs_.size() - 1));
  recent = (hash >> 32 << 32) | runs_.size();
  MakeRun(op, key, stack, &run);
  run.id = run_id_base_ + static_cast<uint32_t>(runs_.size());
  return run;
}

void SharedRuns::MakeRun(const Op& op, const RunKey& key, std::span<const uint32_t> stack, SharedRun* run) {
  run->key = key;
  run->n = 0;
  run->stack_names.clear();
  auto push = [&](const Arg& a) { run->args[run->n++] = a; };
  if (op.kind == OpKind::kKernel) {
    static const format::DeviceInfo kUnknownDevice;
    const format::DeviceInfo* d = r_.index.Device(key.device);
    if (d == nullptr) d = &kUnknownDevice;
    KernelShape shape{key.grid[0], key.grid[1], key.grid[2], key.block[0], key.block[1], key.block[2],
                      static_cast<uint16_t>(key.registers), key.static_shared, key.dynamic_shared};
    run->grid = {key.grid[0], key.grid[1], key.grid[2]};
    run->block = {key.block[0], key.block[1], key.block[2]};
    push(Arg::Uint(trace_keys::kRegistersPerThread, key.registers));
    push(Arg::Int(trace_keys::kSharedMemory, int64_t{key.static_shared} + key.dynamic_shared));
    push(Arg::Int(trace_keys::kStaticSharedMemory, key.static_shared));
    push(Arg::Int(trace_keys::kDynamicSharedMemory, key.dynamic_shared));
    push(Arg::Float6("blocks per SM", BlocksPerSm(*d, shape)));
    push(Arg::Float6("warps per SM", WarpsPerSm(*d, shape)));
    push(Arg::Ints(trace_keys::kGrid, run->grid));
    push(Arg::Ints(trace_keys::kBlock, run->block));
    push(Arg::Int(trace_keys::kEstAchievedOccupancy, EstimatedOccupancyPercent(*d, shape)));
  }
  if (!stack.empty()) {
    std::span<const std::string_view> names;
    if (stack.size() <= run->shallow_names.size()) {
      for (size_t i = 0; i < stack.size(); ++i) {
        run->shallow_names[i] = r_.ShownRangeName(stack[i]);
      }
      names = std::span<const std::string_view>(run->shallow_names.data(), stack.size());
    } else {
      for (uint32_t r : stack) run->stack_names.push_back(r_.ShownRangeName(r));
      names = run->stack_names;
    }
    push(Arg::String(trace_keys::kAnnotation, names.back()));
    push(Arg::Strings(trace_keys::kAnnotationStack, names));
  }
}


uint32_t SharedRuns::NameStackId(std::span<const uint32_t> stack) {
  if (stack.empty()) return 0;
  const std::vector<Range>& ranges = r_.index.ranges().ranges();
  if (range_name_ids_.empty()) range_name_ids_.assign(ranges.size(), 0);
  uint64_t h = 0x13198a2e03707344ull;
  for (uint32_t r : stack) {
    uint32_t& id = range_name_ids_[r];
    if (id == 0) id = names_.Intern(r_.ShownRangeName(r)).first;
    h = (h ^ id) * 0x9e3779b97f4a7c15ull + (h >> 31);
  }
  auto same = [&](uint32_t n) {
    std::span<const uint32_t> kept(name_stack_pool_.data() + name_stack_begin_[n],
                                   name_stack_begin_[n + 1] - name_stack_begin_[n]);
    if (kept.size() != stack.size()) return false;
    for (size_t i = 0; i < kept.size(); ++i) {
      if (kept[i] != range_name_ids_[stack[i]]) return false;
    }
    return true;
  };
  uint32_t found = name_stack_by_hash_.Find(h);
  if (found != FlatMap::kMissing) return same(found) ? found : kNone;
  uint32_t id = static_cast<uint32_t>(name_stack_begin_.size() - 1);
  for (uint32_t r : stack) name_stack_pool_.push_back(range_name_ids_[r]);
  name_stack_begin_.push_back(static_cast<uint32_t>(name_stack_pool_.size()));
  name_stack_by_hash_.Insert(h, id);
  return id;
}

}  // namespace gpucap::builder::join_internal
