// SharedRuns: the runs of a GPU op's arguments that repeat from launch to
// launch, made once per distinct key and handed to every op that has it.
//
// For a kernel the run is its launch shape's arguments (registers to
// occupancy) and its annotation stack; for other ops, the stack. The op's
// slice copies the run's arguments and carries its id (Slice::shared_id), so
// the occupancy arithmetic and a renderer's formatting of them happen once
// per key, not once per launch. One per describer (slice_describer.h): ids
// are a describer's own, and so are the caches of the renderer it feeds.
// Private to the builder.
#ifndef GPUCAP_BUILDER_SRC_SHARED_RUNS_H_
#define GPUCAP_BUILDER_SRC_SHARED_RUNS_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "block_store.h"
#include "flat_map.h"
#include "join_result.h"
#include "name_table.h"

namespace gpucap::builder::join_internal {

class SharedRuns {
 public:
  struct RunKey {
    uint32_t kind, device;
    int32_t grid[3], block[3];
    uint32_t registers;
    int32_t static_shared, dynamic_shared;
    uint32_t name_stack;  // NameStackId of the annotation stack
    uint32_t unused[2] = {};  // hashed as seven words
    bool operator==(const RunKey&) const = default;
    uint64_t Hash() const {
      uint64_t words[7];
      std::memcpy(words, this, sizeof(words));
      uint64_t h = 0x243f6a8885a308d3ull;
      for (uint64_t w : words) h = (h ^ w) * 0x9e3779b97f4a7c15ull + (h >> 29);
      return h;
    }
  };
  static_assert(sizeof(RunKey) == 56);
  struct SharedRun {
    RunKey key;
    std::array<int64_t, 3> grid, block;
    std::vector<std::string_view> stack_names;  // used only when deeper than shallow_names
    std::array<std::string_view, 8> shallow_names;
    std::array<Arg, 11> args;
    uint8_t n = 0;
    uint32_t id = 0;  // Slice::shared_id; 0: not shared
  };

  // Range names are interned into `names`, the describer's, whose ids the
  // name stacks are kept by; kernel rows are read from `kernels`.
  SharedRuns(const JoinResult& result, RowsAgain<KernelTable>& kernels, NameTable& names)
      : r_(result), kernels_(kernels), names_(names) {}

  // The run of `op`'s arguments: a kept one when its key was seen (id != 0),
  // else one made for it alone (id 0). Valid until the next call.
  const SharedRun& For(const Op& op);

 private:
  void MakeRun(const Op& op, const RunKey& key, std::span<const uint32_t> stack, SharedRun* run);
  // Annotation stacks by their names: in a PyTorch trace every op is a range
  // of its own, so stacks of range indices never repeat, while the names
  // they show do, layer after layer. 0: the empty stack; kNone: not made
  // (too many distinct stacks, or a hash collision).
  uint32_t NameStackId(std::span<const uint32_t> stack);
  // The runs and name stacks kept at once. When either fills up both start
  // over, in the memory they had (BlockStore::Rewind; ids keep counting up,
  // so a renderer's cache stays right): the memory they take stays bounded
  // in a window of any size, and a long window still shares what repeats
  // within each step.
  static constexpr size_t kMaxRuns = kSharedIdsLive;
  void ForgetRuns();

  const JoinResult& r_;
  RowsAgain<KernelTable>& kernels_;
  NameTable& names_;
  std::vector<uint32_t> stack_scratch_;
  uint32_t run_id_base_ = 0;  // ids given out before the last ForgetRuns
  BlockStore<SharedRun> runs_;  // args point into their runs: stable addresses
  FlatMap run_by_hash_;
  // In front of run_by_hash_, which outgrows the cache when a window holds
  // tens of thousands of runs: the runs seen lately, by hash (high half of
  // the hash, run index + 1).
  std::array<uint64_t, 4096> recent_runs_{};
  SharedRun unshared_run_;
  std::vector<uint32_t> range_name_ids_;  // range index -> names_ id, 0: not yet
  std::vector<uint32_t> name_stack_pool_, name_stack_begin_{0, 0};
  FlatMap name_stack_by_hash_;
};

}  // namespace gpucap::builder::join_internal

#endif  // GPUCAP_BUILDER_SRC_SHARED_RUNS_H_
