// Small text files of /proc (a process's or thread's comm, its cmdline):
// read whole, and their trailing newline or NULs trimmed.
#ifndef GPUCAP_RECORDER_PROC_TEXT_H_
#define GPUCAP_RECORDER_PROC_TEXT_H_

#include <cstdint>
#include <string>

namespace gpucap::recorder {

// The file's bytes; empty when it cannot be read.
std::string ReadText(const std::string& path);
// `s` without its trailing '\n' and '\0' characters.
std::string Trim(std::string s);
// The name of this process's thread `tid` (its comm); empty when gone.
std::string ThreadName(uint32_t tid);

}  // namespace gpucap::recorder

#endif  // GPUCAP_RECORDER_PROC_TEXT_H_
