// Text and bytes between std::string and Cap'n Proto's readers and
// builders, for the message codecs (message_codec.cc, trailer_codec.cc).
// Private to format/.
#ifndef GPUCAP_FORMAT_SRC_CAPNP_TEXT_H_
#define GPUCAP_FORMAT_SRC_CAPNP_TEXT_H_

#include <string>

#include <capnp/blob.h>

namespace gpucap::format::capnp_text {

inline kj::StringPtr Str(const std::string& s) { return kj::StringPtr(s.c_str(), s.size()); }
inline std::string Str(capnp::Text::Reader t) { return std::string(t.cStr(), t.size()); }
inline capnp::Data::Reader Bytes(const std::string& s) {
  return capnp::Data::Reader(reinterpret_cast<const kj::byte*>(s.data()), s.size());
}
inline std::string Bytes(capnp::Data::Reader d) {
  return std::string(reinterpret_cast<const char*>(d.begin()), d.size());
}

}  // namespace gpucap::format::capnp_text

#endif  // GPUCAP_FORMAT_SRC_CAPNP_TEXT_H_
