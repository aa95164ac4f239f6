// Shared by the GPU fixture programs: error checks and a manifest writer.
// Each program writes `<name>.expect.json`: what it did (kernel launches per
// name, bytes copied, streams, graph shape, ranges), so a test can hold the
// capture against the program rather than against the recorder's own view.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#define CK(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

struct Manifest {
  std::map<std::string, long> counts;              // "kernel:<name>" -> launches, "bytes:<kind>" -> bytes, ...
  std::vector<std::pair<std::string, std::string>> facts;  // raw JSON values

  void Add(const std::string& key, long n = 1) { counts[key] += n; }
  void Fact(const std::string& key, const std::string& json) { facts.emplace_back(key, json); }

  void Write(const char* path) const {
    FILE* f = std::fopen(path, "w");
    if (!f) return;
    std::fprintf(f, "{\n  \"counts\": {");
    bool first = true;
    for (auto& [k, v] : counts) {
      std::fprintf(f, "%s\n    \"%s\": %ld", first ? "" : ",", k.c_str(), v);
      first = false;
    }
    std::fprintf(f, "\n  }");
    for (auto& [k, v] : facts) std::fprintf(f, ",\n  \"%s\": %s", k.c_str(), v.c_str());
    std::fprintf(f, "\n}\n");
    std::fclose(f);
  }
};
