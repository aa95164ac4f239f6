// Issue 41 item 6: every Text and Data field of the capture schema is either
// transformed by `trim --anonymize` or on its documented allow-list. The test
// walks the compiled schema (Cap'n Proto's reflection API) from the root
// struct of every frame type, so a field or frame type added to
// format/capture.capnp fails here until anonymize.cc classifies it.
#include <capnp/schema.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "capture.capnp.h"
#include "gpucap/format/frame.h"
#include "gpucap/tools/trim/anonymize.h"

namespace gpucap::tools {
namespace {

void Walk(capnp::StructSchema s, const std::string& name, std::set<uint64_t>* seen, std::set<std::string>* out);

// Text, Data, or lists or structs of them, reached through `type`.
void WalkType(capnp::Type type, const std::string& field, std::set<uint64_t>* seen, std::set<std::string>* out) {
  switch (type.which()) {
    case capnp::schema::Type::TEXT:
    case capnp::schema::Type::DATA: out->insert(field); break;
    case capnp::schema::Type::LIST: WalkType(type.asList().getElementType(), field, seen, out); break;
    case capnp::schema::Type::STRUCT: {
      capnp::StructSchema s = type.asStruct();
      Walk(s, s.getShortDisplayName().cStr(), seen, out);
      break;
    }
    case capnp::schema::Type::ANY_POINTER:
    case capnp::schema::Type::INTERFACE:
      ADD_FAILURE() << field << ": a pointer field the anonymizer cannot see into";
      break;
    default: break;
  }
}

void Walk(capnp::StructSchema s, const std::string& name, std::set<uint64_t>* seen, std::set<std::string>* out) {
  if (!seen->insert(s.getProto().getId()).second) return;
  for (capnp::StructSchema::Field f : s.getFields()) {
    std::string field = name + "." + f.getProto().getName().cStr();
    if (f.getProto().isGroup()) {
      // A group's fields belong to the struct that holds it.
      for (capnp::StructSchema::Field g : f.getType().asStruct().getFields()) {
        WalkType(g.getType(), name + "." + g.getProto().getName().cStr(), seen, out);
      }
      continue;
    }
    WalkType(f.getType(), field, seen, out);
  }
}

std::map<format::FrameType, capnp::StructSchema> Roots() {
  using T = format::FrameType;
  return {{T::kSession, capnp::Schema::from<schema::Session>()},
          {T::kDevices, capnp::Schema::from<schema::Devices>()},
          {T::kClocks, capnp::Schema::from<schema::Clocks>()},
          {T::kActivityChunk, capnp::Schema::from<schema::ActivityChunk>()},
          {T::kStrings, capnp::Schema::from<schema::Strings>()},
          {T::kRanges, capnp::Schema::from<schema::Ranges>()},
          {T::kGraphs, capnp::Schema::from<schema::Graphs>()},
          {T::kWindows, capnp::Schema::from<schema::Windows>()},
          {T::kThreads, capnp::Schema::from<schema::Threads>()},
          {T::kMetadata, capnp::Schema::from<schema::Metadata>()},
          {T::kStats, capnp::Schema::from<schema::Stats>()},
          {T::kTrailer, capnp::Schema::from<schema::Trailer>()},
          {T::kCounters, capnp::Schema::from<schema::Counters>()},
          {T::kStreams, capnp::Schema::from<schema::Streams>()}};
}

TEST(AnonymizeSchema, EveryFrameTypeHasItsRootWalked) {
  auto roots = Roots();
  for (uint32_t t = 0; t < 1024; ++t) {
    if (!format::IsKnownFrameType(static_cast<uint16_t>(t))) continue;
    EXPECT_TRUE(roots.count(static_cast<format::FrameType>(t)))
        << "frame type " << t << " (" << format::FrameTypeName(static_cast<uint16_t>(t))
        << ") is not walked here: add its root struct";
  }
}

TEST(AnonymizeSchema, EveryTextAndDataFieldIsClassified) {
  std::set<uint64_t> seen;
  std::set<std::string> fields;
  for (auto& [type, root] : Roots()) Walk(root, root.getShortDisplayName().cStr(), &seen, &fields);
  // The walk itself found what the schema is known to hold.
  EXPECT_TRUE(fields.count("Session.host"));
  EXPECT_TRUE(fields.count("ExtPayload.data"));
  EXPECT_TRUE(fields.count("PayloadEnumEntry.name"));
  EXPECT_TRUE(fields.count("NamedCount.name"));

  std::set<std::string> classified;
  const std::set<std::string> hows = {"hashed", "zeroed", "numbers kept", "kept"};
  for (const FieldRule& r : SchemaFieldRules()) {
    EXPECT_TRUE(classified.insert(r.field).second) << r.field << " classified twice";
    EXPECT_TRUE(hows.count(r.how)) << r.field << ": " << r.how;
    EXPECT_GT(std::string(r.why).size(), 8u) << r.field << " needs its reason";
  }
  for (const std::string& f : fields) {
    EXPECT_TRUE(classified.count(f)) << f << " is a Text or Data field of format/capture.capnp that "
                                     << "tools/trim/src/anonymize.cc does not classify (SchemaFieldRules)";
  }
  for (const std::string& c : classified) EXPECT_TRUE(fields.count(c)) << c << " is classified but not in the schema";
}

}  // namespace
}  // namespace gpucap::tools
