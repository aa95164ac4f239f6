// How every gpucap command writes a file: the one output rule (docs/cli.md,
// "Outputs"), so that no output destroys data.
//
//  - The output may not be one of the command's inputs (compared by device
//    and inode: relative paths, symlinks and hard links included).
//  - Only a regular file is ever replaced: a folder, device node, FIFO or
//    socket is refused, never replaced.
//  - Through a symlink (live or dangling), the file it points to is written
//    and the link stays a link.
//  - The file is written under a temporary name beside its final place and
//    renamed over it only once complete. The temporary is removed on
//    failure, on destruction, and (with InstallOutputCleanup) on SIGINT,
//    SIGTERM and SIGHUP.
//  - The pipe case: "-" and /dev/stdout (/dev/fd/1, /proc/self/fd/1) mean
//    this process's standard output, which is written into, never replaced.
//    A writer that streams writes it directly; one that needs a seekable
//    file (a capture, a database) gets a temporary file that Commit copies
//    to standard output.
// Errors name the path and the errno.
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

// Whether `path` names this process's standard output: "-", /dev/stdout,
// /dev/fd/1 or /proc/self/fd/1.
bool IsStandardOutput(std::string_view path);

// The file `path` stands for: `path` itself unless it is a symlink, else
// what the chain of links ends at (which need not exist: a dangling link is
// written through too). Relative links resolve from their own folder.
Result<std::string> ResolveOutputPath(const std::string& path);

// Whether `path` may be written: InvalidArgument when it (through its
// links) is a registered input or exists as something other than a regular
// file. Standard output may be written unless it is an input's file.
Status CheckOutputPath(const std::string& path);

class OutputFile {
 public:
  // How the writer writes: kStream only appends (Write, or the descriptor
  // from ReleaseFd written in order); kSeekable needs a real file it may
  // seek in, truncate or reopen by temp_path().
  enum class Access { kStream, kSeekable };

  // Checks `path` (CheckOutputPath) and creates its temporary file (or, for
  // standard output with kStream, opens a copy of descriptor 1).
  static Result<std::unique_ptr<OutputFile>> Create(const std::string& path, Access access = Access::kStream);
  ~OutputFile();  // removes the temporary file unless committed

  // The path as given, for messages.
  const std::string& path() const { return path_; }
  // Where the bytes go until Commit: the temporary file (empty when
  // streaming to standard output).
  const std::string& temp_path() const { return temp_; }
  bool to_standard_output() const { return stdout_; }

  Status Write(std::string_view bytes);
  // Hands the descriptor to another writer (a capture sink); Commit then
  // only renames (or copies to standard output), after that writer closed it.
  int ReleaseFd();
  // Flushes and closes the file, then renames it over the file `path`
  // stands for (or copies it to standard output).
  Status Commit();

 private:
  OutputFile() = default;
  Status CopyToStandardOutput();
  std::string path_;    // as given
  std::string target_;  // the file written: `path_` through its links
  std::string temp_;
  int fd_ = -1;
  int slot_ = -1;  // in the signal-time cleanup table
  bool stdout_ = false;
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
