// The secret behind `trim --anonymize`'s names: HMAC-SHA256 (RFC 2104, from
// Nettle) under a key that is random per run unless a key file is given.
// A name is "<field>_" + the first 16 hex digits of
// HMAC-SHA256(key, field || 0x00 || text): without the key a name cannot be
// reversed by guessing its text, and the field in the MAC input keeps the same
// text under two fields (a host and a process both called "vm") from linking.
// Captures of one job anonymized with one key file hash alike, so they diff
// and merge.
#ifndef GPUCAP_TOOLS_ANONYMIZE_KEY_H_
#define GPUCAP_TOOLS_ANONYMIZE_KEY_H_

#include <nettle/hmac.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "gpucap/status.h"

namespace gpucap::tools {

class AnonymizeKey {
 public:
  // What a key file may hold: its whole content is the key.
  static constexpr uint64_t kMinBytes = 16;
  static constexpr uint64_t kMaxBytes = 4096;

  // 32 bytes from getrandom(2): names that no other run reproduces.
  static Result<AnonymizeKey> Random();
  // The bytes of `path` (a regular file or a pipe of kMinBytes..kMaxBytes):
  // a clear error naming the file otherwise.
  static Result<AnonymizeKey> FromFile(const std::string& path);
  explicit AnonymizeKey(std::string_view secret);

  // field + "_" + 16 hex digits; the empty text stays empty.
  std::string Hash(std::string_view field, std::string_view text) const;

 private:
  hmac_sha256_ctx keyed_;  // the key's inner and outer states, set once
};

}  // namespace gpucap::tools

#endif  // GPUCAP_TOOLS_ANONYMIZE_KEY_H_
