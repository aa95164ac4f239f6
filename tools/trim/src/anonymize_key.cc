#include "gpucap/tools/trim/anonymize_key.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpucap::tools {

AnonymizeKey::AnonymizeKey(std::string_view secret) {
  hmac_sha256_set_key(&keyed_, secret.size(), reinterpret_cast<const uint8_t*>(secret.data()));
}

Result<AnonymizeKey> AnonymizeKey::Random() {
  std::string secret(32, '\0');
  size_t got = 0;
  while (got < secret.size()) {
    ssize_t n = getrandom(secret.data() + got, secret.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::IoError(std::string("no random key for --anonymize: getrandom: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  return AnonymizeKey(secret);
}

Result<AnonymizeKey> AnonymizeKey::FromFile(const std::string& path) {
  auto fail = [&](const std::string& why) {
    return Status::InvalidArgument(path + ": not a usable --anonymize-key: " + why + " (a key file holds " +
                                   std::to_string(kMinBytes) + " to " + std::to_string(kMaxBytes) +
                                   " secret bytes, e.g. head -c 32 /dev/urandom > job.key)");
  };
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode))) {
    close(fd);
    return fail(S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > kMaxBytes) {
    close(fd);
    return fail(std::to_string(st.st_size) + " bytes is too long");
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // a pipe is read to its end
  std::string secret(kMaxBytes + 1, '\0');
  size_t got = 0;
  while (got < secret.size()) {
    ssize_t n = read(fd, secret.data() + got, secret.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string why = std::strerror(errno);
      close(fd);
      return fail(why);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  if (got > kMaxBytes) return fail("more than " + std::to_string(kMaxBytes) + " bytes is too long");
  if (got == 0) return fail("empty");
  if (got < kMinBytes) return fail(std::to_string(got) + " bytes is too short");
  secret.resize(got);
  return AnonymizeKey(secret);
}

std::string AnonymizeKey::Hash(std::string_view field, std::string_view text) const {
  if (text.empty()) return std::string();
  hmac_sha256_ctx ctx = keyed_;
  hmac_sha256_update(&ctx, field.size(), reinterpret_cast<const uint8_t*>(field.data()));
  const uint8_t zero = 0;
  hmac_sha256_update(&ctx, 1, &zero);
  hmac_sha256_update(&ctx, text.size(), reinterpret_cast<const uint8_t*>(text.data()));
  uint8_t digest[SHA256_DIGEST_SIZE];
  hmac_sha256_digest(&ctx, sizeof(digest), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(field);
  out.push_back('_');
  for (int i = 0; i < 8; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

}  // namespace gpucap::tools
