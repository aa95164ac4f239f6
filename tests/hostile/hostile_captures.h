// Small captures with valid checksums and hostile contents, one per way the
// reader, the join or the renderers were found to trust what they read (issue
// 23). Each is a few KB; the regression tests, the memory-limit test and the
// fuzzer's seeds use them.
#ifndef GPUCAP_TESTS_HOSTILE_HOSTILE_CAPTURES_H_
#define GPUCAP_TESTS_HOSTILE_HOSTILE_CAPTURES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "framed_capture.h"

namespace gpucap::testing::hostile {

inline constexpr uint64_t kT0 = 1'790'857'026'000'000'000;  // like the H200 runs' CUPTI clock
inline constexpr uint64_t kKernelName = 0x1000;             // string pointer of the kernels' name

// Session, one device, a kernel name and `kernels` launches (runtime API +
// kernel) 1 us apart from kT0. A frame writer the cases extend.
format::testing::FramedCapture Base(int kernels = 4, const std::string& kernel_name = "kernel_a");
// The CUPTI bytes of a launch: runtime API record then kernel record.
std::string LaunchRecords(uint32_t correlation, uint64_t start, uint64_t end, uint64_t name = kKernelName,
                          uint32_t device = 0);
format::testing::HostileChunk LaunchChunk(int kernels, uint64_t first_start = kT0);

// Item 1: a chunk claiming 200 x (raw bytes / 8) kernels in kind_counts.
std::string HugeKindCounts();
// Item 1: a trailer whose index names one 1 MB strings frame `repeats` times.
std::string RepeatedIndex(int repeats = 3000);
// Item 1: a kernel whose mangled name (~260 bytes) demangles exponentially.
std::string ExplodingMangledName();
std::string ExplodingMangledText(int levels = 26);
// Item 2: an NVTX range named `name` around the launches.
std::string NamedRange(const std::string& name);
// Item 3: `pushes` NVTX pushes never popped, each with a launch inside.
std::string UnpoppedPushes(int pushes);
// Item 4: no trailer; one frame with intact checksums and a bad message.
enum class BadMessage { kHugeDeclaredSize, kUnknownCodec, kListOutOfBounds, kBadSegmentTable, kChunkRawSize };
std::string TrailerlessDamage(BadMessage what, bool with_trailer = false);
// Item 6: a kernel (and its chunk's max end) ending at 2^64-1.
std::string MaxTimestamp();
// Item 6: clock samples that cannot be (cupti time over 2^63, realtime before 1970).
std::string AbsurdClocks();
// Item 7: launches spread over one second (every:1us gives a million windows).
std::string OneSecond();
// Item 7: a device with an empty uuid.
std::string EmptyUuid();
// Item 7: a CPU process whose pid is the number the GPU process would get.
std::string CpuPid(uint32_t pid);

// Issue 41 item 5, contradictions and damage a reader must name:
// a trailer whose index leaves out the frame of the launches;
std::string IndexOmitsFrames();
// a chunk whose stored bytes restore to other bytes than its raw checksum;
std::string RawChecksumMismatch();
// a chunk claiming 4294967295 records in a few hundred raw bytes;
std::string ImpossibleRecordCount();
// device 0 with no properties at all (no name, no SMs, no compute capability);
std::string DeviceWithoutProperties();
// a GPU counter whose samples are NaN;
std::string NanCounter();
// graph nodes whose dependencies form a cycle;
std::string GraphCycle();
// four copies of 2^62 bytes each that end before they start;
std::string CopiesEndingBeforeTheyStart();
// two launches sharing correlation id 1;
std::string DuplicateCorrelation();
// the process of Base() (same host, pid and rank 0) on an A100, its clock
// `years` years earlier: no capture of that process can say so.
std::string SameProcessOtherMachine(int years);

// Every case above, named, for the memory test and the fuzzer's seeds.
std::vector<std::pair<std::string, std::string>> AllCases();

}  // namespace gpucap::testing::hostile

#endif  // GPUCAP_TESTS_HOSTILE_HOSTILE_CAPTURES_H_
