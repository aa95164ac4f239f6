#include "gpucap/format/output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

namespace gpucap::format {
namespace {

std::string Errno(const std::string& path, const char* what, int err) {
  return path + ": " + what + ": " + std::strerror(err) + " (errno " + std::to_string(err) + ")";
}

Status ErrnoStatus(const std::string& path, const char* what, int err) {
  if (err == ENOSPC || err == EDQUOT || err == EFBIG) return Status::NoSpace(Errno(path, what, err));
  return Status::IoError(Errno(path, what, err));
}

// Inputs by (device, inode).
std::mutex inputs_mu;
std::multiset<std::pair<dev_t, ino_t>>& Inputs() {
  static auto* inputs = new std::multiset<std::pair<dev_t, ino_t>>();
  return *inputs;
}

// Temporary files open now, for the signal handler: fixed storage it can
// read without allocating or locking. A slot is claimed by its `used` flag.
constexpr int kSlots = 64;
constexpr size_t kPathMax = 4096;
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<bool> ready{false};
  char path[kPathMax];
};
Slot slots[kSlots];

int Claim(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (slots[i].used.compare_exchange_strong(expected, true)) {
      std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
      slots[i].ready.store(true);
      return i;
    }
  }
  return -1;  // more than 64 at once: removed on failure, not on a signal
}

void Release(int slot) {
  if (slot < 0) return;
  slots[slot].ready.store(false);
  slots[slot].used.store(false);
}

extern "C" void RemoveTemporariesAndDie(int sig) {
  for (Slot& s : slots) {
    if (s.ready.load()) unlink(s.path);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

std::atomic<uint64_t> temp_counter{0};

}  // namespace

void RegisterInput(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return;
  std::lock_guard<std::mutex> lock(inputs_mu);
  Inputs().insert({st.st_dev, st.st_ino});
}

void UnregisterInput(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return;
  std::lock_guard<std::mutex> lock(inputs_mu);
  auto it = Inputs().find({st.st_dev, st.st_ino});
  if (it != Inputs().end()) Inputs().erase(it);
}

void RegisterInputPath(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return;
  std::lock_guard<std::mutex> lock(inputs_mu);
  Inputs().insert({st.st_dev, st.st_ino});
}

bool IsStandardOutput(std::string_view path) {
  return path == "-" || path == "/dev/stdout" || path == "/dev/fd/1" || path == "/proc/self/fd/1";
}

Result<std::string> ResolveOutputPath(const std::string& path) {
  std::string p = path;
  // As many links as the kernel follows before ELOOP.
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) return p;  // a new file, or where a dangling link points
      return ErrnoStatus(p, "cannot check the output path", errno);
    }
    if (!S_ISLNK(st.st_mode)) return p;
    std::string link(static_cast<size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
    ssize_t n = readlink(p.c_str(), link.data(), link.size());
    if (n < 0) return ErrnoStatus(p, "cannot read the link", errno);
    if (static_cast<size_t>(n) >= link.size()) return Status::IoError(p + ": the link changed while it was read");
    link.resize(static_cast<size_t>(n));
    if (link.empty()) return Status::InvalidArgument(p + ": an empty symlink");
    if (link.front() == '/') {
      p = link;
    } else {
      size_t slash = p.rfind('/');
      p = slash == std::string::npos ? link : p.substr(0, slash + 1) + link;
    }
  }
  return Status::InvalidArgument(path + ": too many levels of symbolic links");
}

namespace {

// `path` as given, and the file it stands for when a link led elsewhere.
std::string Name(const std::string& path, const std::string& target) {
  return target == path ? path : path + " (-> " + target + ")";
}

Status CheckStandardOutput() {
  struct stat st;
  if (fstat(1, &st) != 0) return ErrnoStatus("standard output", "cannot write", errno);
  std::lock_guard<std::mutex> lock(inputs_mu);
  if (S_ISREG(st.st_mode) && Inputs().count({st.st_dev, st.st_ino})) {
    return Status::InvalidArgument("standard output is an input of this command; writing it would overwrite it");
  }
  return Status::Ok();
}

// The rule for the file `target` (`path` through its links).
Status CheckTarget(const std::string& path, const std::string& target) {
  struct stat st;
  if (stat(target.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return ErrnoStatus(Name(path, target), "cannot check the output path", errno);
  }
  if (S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(Name(path, target) +
                                   ": is a folder, not a regular file; give a file name (gpucap writes only regular files)");
  }
  if (!S_ISREG(st.st_mode)) {
    const char* what = S_ISFIFO(st.st_mode)  ? "a FIFO"
                       : S_ISCHR(st.st_mode) ? "a character device"
                       : S_ISBLK(st.st_mode) ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "something else";
    return Status::InvalidArgument(Name(path, target) + ": is " + what +
                                   ", not a regular file; gpucap writes only regular files (or '-' for standard output)");
  }
  std::lock_guard<std::mutex> lock(inputs_mu);
  if (Inputs().count({st.st_dev, st.st_ino})) {
    return Status::InvalidArgument(Name(path, target) + ": is an input of this command; writing it would overwrite it");
  }
  return Status::Ok();
}

// Where a spool for standard output goes.
std::string TempFolder() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

}  // namespace

Status CheckOutputPath(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("empty output path");
  if (IsStandardOutput(path)) return CheckStandardOutput();
  auto target = ResolveOutputPath(path);
  if (!target.ok()) return target.status();
  return CheckTarget(path, *target);
}

Result<std::unique_ptr<OutputFile>> OutputFile::Create(const std::string& path, Access access) {
  GPUCAP_RETURN_IF_ERROR(CheckOutputPath(path));
  std::unique_ptr<OutputFile> f(new OutputFile());
  f->path_ = path;
  f->stdout_ = IsStandardOutput(path);
  if (f->stdout_ && access == Access::kStream) {
    f->fd_ = fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (f->fd_ < 0) return ErrnoStatus("standard output", "cannot write", errno);
    return f;
  }
  if (f->stdout_) {
    f->temp_ = TempFolder() + "/gpucap-stdout-" + std::to_string(getpid()) + "-" +
               std::to_string(temp_counter.fetch_add(1));
  } else {
    auto target = ResolveOutputPath(path);
    if (!target.ok()) return target.status();
    f->target_ = *target;
    f->temp_ = f->target_ + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(temp_counter.fetch_add(1));
  }
  // Claimed before the file exists, so a signal between the two finds it.
  f->slot_ = Claim(f->temp_);
  f->fd_ = open(f->temp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (f->fd_ < 0) {
    int err = errno;
    Release(f->slot_);
    f->slot_ = -1;
    return ErrnoStatus(f->stdout_ ? f->temp_ : Name(path, f->target_), ("cannot create " + f->temp_).c_str(), err);
  }
  return f;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) close(fd_);
  if (!committed_ && !temp_.empty()) unlink(temp_.c_str());
  Release(slot_);
}

Status OutputFile::Write(std::string_view bytes) {
  if (fd_ < 0) return Status::IoError(path_ + ": write after the file was closed");
  while (!bytes.empty()) {
    ssize_t n = write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(path_, "write failed", errno);
    }
    if (n == 0) return ErrnoStatus(path_, "write failed", ENOSPC);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

int OutputFile::ReleaseFd() { return std::exchange(fd_, -1); }

Status OutputFile::CopyToStandardOutput() {
  int in = open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return ErrnoStatus(temp_, "cannot reopen", errno);
  std::unique_ptr<char[]> buf(new char[1 << 20]);
  Status s;
  for (;;) {
    ssize_t n = read(in, buf.get(), 1 << 20);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s = ErrnoStatus(temp_, "read failed", errno);
      break;
    }
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = write(1, buf.get() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        s = ErrnoStatus("standard output", "write failed", w < 0 ? errno : ENOSPC);
        break;
      }
      done += w;
    }
    if (!s.ok()) break;
  }
  close(in);
  return s;
}

Status OutputFile::Commit() {
  if (committed_) return Status::Ok();
  if (fd_ >= 0) {
    int fd = std::exchange(fd_, -1);
    if (close(fd) != 0 && errno != EINTR) return ErrnoStatus(path_, "close failed", errno);
  }
  if (stdout_) {
    if (!temp_.empty()) GPUCAP_RETURN_IF_ERROR(CopyToStandardOutput());
    committed_ = true;
    if (!temp_.empty()) unlink(temp_.c_str());
    return Status::Ok();
  }
  // Checked again: the path may have become something else while writing.
  GPUCAP_RETURN_IF_ERROR(CheckTarget(path_, target_));
  if (rename(temp_.c_str(), target_.c_str()) != 0) {
    return ErrnoStatus(Name(path_, target_), ("cannot rename " + temp_ + " to it").c_str(), errno);
  }
  committed_ = true;
  return Status::Ok();
}

Status WriteOutputFile(const std::string& path, std::string_view bytes) {
  auto file = OutputFile::Create(path);
  if (!file.ok()) return file.status();
  GPUCAP_RETURN_IF_ERROR((*file)->Write(bytes));
  return (*file)->Commit();
}

void InstallOutputCleanup() {
  struct sigaction sa {};
  sa.sa_handler = RemoveTemporariesAndDie;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

}  // namespace gpucap::format
