// Writes every generated hostile capture into a directory: seeds for the
// fuzzer, and files to try by hand, and the memory families (memory_families.h)
// at scales 1 and 2.  write_hostile_cases DIR
#include <cstdio>
#include <fstream>
#include <string>

#include "hostile_captures.h"
#include "memory_families.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_hostile_cases DIR\n");
    return 2;
  }
  for (const auto& [name, bytes] : gpucap::testing::hostile::AllCases()) {
    std::string path = std::string(argv[1]) + "/" + name + ".gpucap";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "%s: cannot write\n", path.c_str());
      return 1;
    }
  }
  // The memory families at their test scale and twice it.
  for (const auto& family : gpucap::testing::hostile::MemoryFamilies()) {
    for (int scale : {1, 2}) {
      std::string path = std::string(argv[1]) + "/" + family.name + "_x" + std::to_string(scale) + ".gpucap";
      std::string bytes = family.make(scale);
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!out) {
        std::fprintf(stderr, "%s: cannot write\n", path.c_str());
        return 1;
      }
    }
  }
  return 0;
}
