// Well-framed captures (valid checksums, valid Cap'n Proto) whose contents
// are legal but huge in one direction: the memory families of issue 41 items
// 1 and 6. Each takes a scale so a test can run it small (seconds on two
// cores) and at twice the size, and read the growth of peak RSS and of the
// outputs per byte of capture rather than one absolute number.
#ifndef GPUCAP_TESTS_HOSTILE_MEMORY_FAMILIES_H_
#define GPUCAP_TESTS_HOSTILE_MEMORY_FAMILIES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpucap::testing::hostile {

// `n` push/pop pairs with empty names on one thread, around a few launches.
std::string NamelessRanges(int n);
// One range around `ops` launches and `blobs` metadata blobs keyed by that
// range: every op carries every blob.
std::string ManyMetadataBlobs(int ops, int blobs);
// A graph of `n` created nodes (no edges).
std::string GraphNodes(int n);
// A graph of `n` nodes in one chain: n-1 dependency edges.
std::string GraphChain(int n);
// `n` named NVTX push/pop pairs on one thread, around a few launches.
std::string NvtxPushes(int n);
// `n` threads, each named and each with one range.
std::string ManyThreads(int n);
// `n` launches, each of a kernel with its own name of `bytes` bytes.
std::string UniqueKernelNames(int n, size_t bytes);
// A few launches of one kernel named with `bytes` bytes.
std::string LongKernelName(size_t bytes);

struct Family {
  std::string name;
  std::function<std::string(int scale)> make;  // scale 1, 2, ...: the family at that size
};
// Every family above, at a CI-sized base scale.
std::vector<Family> MemoryFamilies();

}  // namespace gpucap::testing::hostile

#endif  // GPUCAP_TESTS_HOSTILE_MEMORY_FAMILIES_H_
