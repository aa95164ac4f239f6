// How every gpucap command writes a file, so that no output destroys data:
// the output may not be one of the command's inputs (by inode: relative
// paths, symlinks and hard links included), may only be a regular file (a
// device node or FIFO is refused, never replaced), and is written under a
// temporary name beside it that replaces the previous file only once it is
// complete. A temporary file is removed on failure, on destruction, and
// (with InstallOutputCleanup) on SIGINT, SIGTERM and SIGHUP. Errors name the
// path and the errno.
#ifndef GPUCAP_FORMAT_OUTPUT_FILE_H_
#define GPUCAP_FORMAT_OUTPUT_FILE_H_

#include <memory>
#include <string>
#include <string_view>

#include "gpucap/status.h"

namespace gpucap::format {

// Remembers an open descriptor's file as an input of this process: no
// OutputFile may replace it until it is unregistered (CaptureFile registers
// its file while open). A path registered by name stays an input.
void RegisterInput(int fd);
void UnregisterInput(int fd);
void RegisterInputPath(const std::string& path);

// Whether `path` may be written: InvalidArgument when it is a registered
// input or exists as something other than a regular file.
Status CheckOutputPath(const std::string& path);

class OutputFile {
 public:
  // Checks `path` (CheckOutputPath) and creates its temporary file.
  static Result<std::unique_ptr<OutputFile>> Create(const std::string& path);
  ~OutputFile();  // removes the temporary file unless committed

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }

  Status Write(std::string_view bytes);
  // Hands the descriptor to another writer (a capture sink); Commit then
  // only renames, after that writer closed it.
  int ReleaseFd();
  // Flushes and closes the file, then renames it over `path`.
  Status Commit();

 private:
  OutputFile() = default;
  std::string path_, temp_;
  int fd_ = -1;
  int slot_ = -1;  // in the signal-time cleanup table
  bool committed_ = false;
};

// Create, Write, Commit.
Status WriteOutputFile(const std::string& path, std::string_view bytes);

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the open
// temporary files, then end the process as the signal would have. Only for
// gpucap's own command line: a library must not take a program's signals.
void InstallOutputCleanup();

}  // namespace gpucap::format

#endif  // GPUCAP_FORMAT_OUTPUT_FILE_H_
