#include "range_sample.h"

#include <cerrno>
#include <cstdlib>
#include <random>

namespace gpucap::recorder {
namespace {

// splitmix64's finaliser: a bijection on 64 bits whose outputs for
// consecutive inputs pass BigCrush; enough to pick one of N per block.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

RangeSample::RangeSample(uint32_t every, std::optional<uint64_t> seed) : every_(every), seed_(seed) {}

uint32_t RangeSample::Offset(uint64_t block) const {
  if (every_ <= 1) return 0;
  if (!seed_) return every_ - 1;
  // Multiply-shift maps 64 random bits onto [0, N) with a bias below
  // N / 2^64: uniform for any N a person would give.
  uint64_t r = Mix(Mix(*seed_) ^ block);
  return static_cast<uint32_t>((static_cast<unsigned __int128>(r) * every_) >> 64);
}

std::string RangeSample::Describe() const {
  std::string s = "1 in " + std::to_string(every_);
  if (seed_) s += " at random (seed " + std::to_string(*seed_) + ")";
  return s;
}

bool ParseSampleSeed(const std::string& text, uint64_t* seed, std::string* error) {
  if (text.empty() || text == "auto") {
    std::random_device rd;
    *seed = (uint64_t{rd()} << 32) ^ rd();
    return true;
  }
  if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 20) {
    *error = "sample seed '" + text + "' is not auto or a decimal number";
    return false;
  }
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno == ERANGE || *end) {
    *error = "sample seed '" + text + "' is larger than 2^64-1";
    return false;
  }
  *seed = v;
  return true;
}

}  // namespace gpucap::recorder
