#include "proc_text.h"

#include <fstream>
#include <sstream>

namespace gpucap::recorder {

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

std::string ThreadName(uint32_t tid) { return Trim(ReadText("/proc/self/task/" + std::to_string(tid) + "/comm")); }

}  // namespace gpucap::recorder
