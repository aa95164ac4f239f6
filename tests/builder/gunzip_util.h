// Inflates a .gz file's bytes, every gzip member in turn, as gzip readers
// do: for tests that compare what traces say rather than how they were
// cut into members.
#ifndef GPUCAP_TESTS_BUILDER_GUNZIP_UTIL_H_
#define GPUCAP_TESTS_BUILDER_GUNZIP_UTIL_H_

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace gpucap::testing {

inline std::string Gunzip(const std::string& in, int* members = nullptr) {
  std::string out;
  int count = 0;
  z_stream z{};
  inflateInit2(&z, 15 + 32);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  char buf[65536];
  while (z.avail_in > 0) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    int rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
    if (rc == Z_STREAM_END) {
      count++;
      inflateReset(&z);
    } else if (rc != Z_OK) {
      ADD_FAILURE() << "inflate failed: " << rc;
      break;
    }
  }
  inflateEnd(&z);
  if (members != nullptr) *members = count;
  return out;
}

}  // namespace gpucap::testing

#endif  // GPUCAP_TESTS_BUILDER_GUNZIP_UTIL_H_
