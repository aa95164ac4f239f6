#include "gpucap/builder/graph.h"

#include <gtest/gtest.h>

namespace gpucap::builder {
namespace {

using format::GraphEvent;
using format::GraphEventKind;

GraphEvent Created(uint64_t node, uint32_t type, std::string fn = "") {
  GraphEvent e;
  e.kind = GraphEventKind::kNodeCreated;
  e.node_id = node;
  e.node_type = type;
  e.function_name = std::move(fn);
  e.os_tid = 9;
  e.timestamp_ns = 100 + node;
  return e;
}
GraphEvent Cloned(uint64_t clone, uint64_t original) {
  GraphEvent e;
  e.kind = GraphEventKind::kNodeCloned;
  e.node_id = clone;
  e.original_node_id = original;
  return e;
}
GraphEvent Edge(uint64_t from, uint64_t to, bool added = true) {
  GraphEvent e;
  e.kind = added ? GraphEventKind::kDependencyAdded : GraphEventKind::kDependencyRemoved;
  e.node_id = from;
  e.peer_node_id = to;
  return e;
}

TEST(GraphIndex, ClonesOfClonesLeadToTheCaptureTimeNode) {
  format::Capture c;
  c.graphs = {Created(1, 0), Cloned(10, 1), Cloned(100, 10), Cloned(7, 7)};
  GraphIndex g(c);
  ASSERT_NE(g.Origin(100), nullptr);
  EXPECT_EQ(g.Origin(100)->id, 1u);
  EXPECT_EQ(g.Origin(100)->created_ns, 101u);
  EXPECT_EQ(g.Origin(1)->id, 1u);
  EXPECT_EQ(g.Origin(555), nullptr);
  EXPECT_EQ(g.Origin(7), nullptr);
}

TEST(GraphIndex, CloneCyclesEndInsteadOfLooping) {
  format::Capture c;
  c.graphs = {Cloned(1, 2), Cloned(2, 1)};
  GraphIndex g(c);
  EXPECT_EQ(g.Origin(1), nullptr);
}

TEST(GraphIndex, DependenciesCollapseThroughNodesThatDrawNothing) {
  format::Capture c;
  // k1 -> event -> host(h) -> k3; k2 -> k3 directly; removed edge k0 -> k3;
  // edges reported between clones map to the originals.
  c.graphs = {Created(1, 0), Created(2, 0), Created(3, 0), Created(4, 7), Created(5, 3, "h"), Created(6, 0),
              Cloned(30, 3), Cloned(20, 2),
              Edge(1, 4), Edge(4, 5), Edge(5, 3), Edge(20, 30), Edge(6, 3), Edge(6, 3, false)};
  GraphIndex g(c);
  const auto& d = g.RenderedPredecessors(3);
  EXPECT_EQ(d.ops, (std::vector<uint64_t>{1, 2}));
  ASSERT_EQ(d.host_functions.size(), 1u);
  EXPECT_EQ(d.host_functions[0], "h");
  EXPECT_TRUE(g.RenderedPredecessors(1).ops.empty());
}

}  // namespace
}  // namespace gpucap::builder
