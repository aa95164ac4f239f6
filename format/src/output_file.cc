#include "gpucap/format/output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
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

Status CheckOutputPath(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("empty output path");
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return ErrnoStatus(path, "cannot check the output path", errno);
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(path + ": not a regular file; gpucap writes only regular files");
  }
  std::lock_guard<std::mutex> lock(inputs_mu);
  if (Inputs().count({st.st_dev, st.st_ino})) {
    return Status::InvalidArgument(path + ": is an input of this command; writing it would overwrite it");
  }
  return Status::Ok();
}

Result<std::unique_ptr<OutputFile>> OutputFile::Create(const std::string& path) {
  GPUCAP_RETURN_IF_ERROR(CheckOutputPath(path));
  std::unique_ptr<OutputFile> f(new OutputFile());
  f->path_ = path;
  f->temp_ = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(temp_counter.fetch_add(1));
  // Claimed before the file exists, so a signal between the two finds it.
  f->slot_ = Claim(f->temp_);
  f->fd_ = open(f->temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (f->fd_ < 0) {
    int err = errno;
    Release(f->slot_);
    f->slot_ = -1;
    return ErrnoStatus(f->temp_, "cannot create", err);
  }
  return f;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) close(fd_);
  if (!committed_) unlink(temp_.c_str());
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

Status OutputFile::Commit() {
  if (committed_) return Status::Ok();
  if (fd_ >= 0) {
    int fd = std::exchange(fd_, -1);
    if (close(fd) != 0 && errno != EINTR) return ErrnoStatus(path_, "close failed", errno);
  }
  // Checked again: the path may have become something else while writing.
  GPUCAP_RETURN_IF_ERROR(CheckOutputPath(path_));
  if (rename(temp_.c_str(), path_.c_str()) != 0) {
    return ErrnoStatus(path_, ("cannot rename " + temp_ + " to it").c_str(), errno);
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
