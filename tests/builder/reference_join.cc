#include "reference_join.h"

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include "gpucap/format/recording_state.h"
#include "json.h"
#include "trace_util.h"

namespace gpucap::testing {
namespace {

using format::RangeKind;

// A CPU range as docs/semantics.md forms it.
struct RefRange {
  std::string name;
  uint32_t tid = 0;
  uint64_t start = 0, end = 0;  // end: the capture's end when never closed
  bool closed = false;
  size_t event = 0;  // opening event's position among the time-sorted events
};

struct RefLaunch {
  uint32_t tid = 0;
  uint64_t start = 0;
};

struct RefGpuOp {
  uint32_t correlation = 0;
  uint64_t graph_node = 0, start = 0;
};

struct Model {
  uint64_t extent_start = 0, extent_end = 0;  // inclusive end
  std::vector<RefRange> ranges;               // by (start, longer first, event)
  std::vector<bool> step;                     // by range: a closed range the steps pattern matches
  std::map<uint32_t, RefLaunch> launches;     // by correlation, first record standing
  std::vector<RefGpuOp> ops;
  std::map<uint64_t, uint64_t> cloned_from;
  std::map<uint64_t, format::GraphEvent> created;
};

// The span of everything timed (the builder's extent, written again).
void Extent(const format::Capture& c, Model* m) {
  std::vector<uint64_t> ts;
  if (c.session) ts.push_back(c.session->start_cupti_ns);
  for (const auto& ch : c.chunks) ts.insert(ts.end(), {ch.info.min_start_ns, ch.info.max_start_ns, ch.info.max_end_ns});
  for (const auto& r : c.ranges) ts.push_back(r.timestamp_ns);
  for (const auto& g : c.graphs) ts.push_back(g.timestamp_ns);
  for (const auto& w : c.windows) ts.push_back(w.timestamp_ns);
  for (const auto& s : c.counter_samples) ts.push_back(s.timestamp_ns);
  if (c.trailer) ts.push_back(c.trailer->end_cupti_ns);
  ts.erase(std::remove(ts.begin(), ts.end(), 0), ts.end());
  if (ts.empty()) return;
  m->extent_start = *std::min_element(ts.begin(), ts.end());
  m->extent_end = *std::max_element(ts.begin(), ts.end());
}

void Ranges(const format::Capture& c, Model* m) {
  std::vector<size_t> order(c.ranges.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return c.ranges[a].timestamp_ns < c.ranges[b].timestamp_ns; });
  std::vector<RefRange> out;
  std::vector<bool> is_push;
  std::vector<uint64_t> domain, id;
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const format::RangeEvent& e = c.ranges[order[pos]];
    if (e.kind == RangeKind::kPush || e.kind == RangeKind::kStart) {
      out.push_back({e.name, e.os_tid, e.timestamp_ns, 0, false, pos});
      is_push.push_back(e.kind == RangeKind::kPush);
      domain.push_back(e.domain);
      id.push_back(e.id);
    } else if (e.kind == RangeKind::kPop) {
      // The innermost open push of this thread and domain.
      for (size_t i = out.size(); i-- > 0;) {
        if (is_push[i] && !out[i].closed && out[i].tid == e.os_tid && domain[i] == e.domain) {
          out[i].closed = true;
          out[i].end = e.timestamp_ns;
          break;
        }
      }
    } else if (e.kind == RangeKind::kEnd) {
      for (size_t i = out.size(); i-- > 0;) {
        if (!is_push[i] && !out[i].closed && id[i] == e.id) {
          out[i].closed = true;
          out[i].end = e.timestamp_ns;
          break;
        }
      }
    }
  }
  for (RefRange& r : out) {
    if (!r.closed) r.end = std::max(m->extent_end, r.start);
  }
  std::stable_sort(out.begin(), out.end(), [](const RefRange& a, const RefRange& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.event < b.event;
  });
  m->ranges = std::move(out);
}

// Whether range i, which a pattern takes, is a step marked twice: inside an
// earlier range of its thread, also taken, with the same name (the
// generated captures have no emit_nvtx suffixes, so "as shown" is the name).
bool MarkedTwice(const Model& m, const std::vector<bool>& taken, size_t i) {
  const RefRange& r = m.ranges[i];
  for (size_t j = 0; j < i; ++j) {
    const RefRange& o = m.ranges[j];
    if (taken[j] && o.tid == r.tid && o.name == r.name && o.start <= r.start && r.end <= o.end) return true;
  }
  return false;
}

// Which ranges are steps: closed ones whose whole name `pattern` matches,
// but for a step marked twice.
std::vector<bool> Steps(const Model& m, const std::string& pattern) {
  std::regex re(pattern);
  std::vector<bool> out(m.ranges.size());
  for (size_t i = 0; i < m.ranges.size(); ++i) {
    out[i] = m.ranges[i].closed && std::regex_match(m.ranges[i].name, re) && !MarkedTwice(m, out, i);
  }
  return out;
}

// The steps pattern when none is given: ProfilerStep#<n>, or the pattern the
// recorder marked windows by (its GPUCAP_WINDOW_NVTX, else an nvtx: capture
// range), in std::regex's words.
std::string DefaultSteps(const format::Capture& c) {
  std::string marked;
  if (c.session) {
    for (const auto& [key, value] : c.session->options) {
      if (key == "GPUCAP_WINDOW_NVTX") marked = value;
      if (key == "GPUCAP_CAPTURE_RANGE" && marked.empty() && value.rfind("nvtx:", 0) == 0) marked = value.substr(5);
    }
  }
  return marked.empty() ? "ProfilerStep#[0-9]+" : "(ProfilerStep#[0-9]+)|(" + marked + ")";
}

// The steps of `steps` open at `t` that hold a launch of `tid`: its own
// closed ranges that are steps; when there are none, the last (in range
// order) open on another thread.
std::vector<size_t> StepsHolding(const Model& m, const std::vector<bool>& steps, uint32_t tid, uint64_t t) {
  std::vector<size_t> own;
  size_t other = SIZE_MAX;
  for (size_t i = 0; i < m.ranges.size(); ++i) {
    const RefRange& r = m.ranges[i];
    if (!steps[i] || r.start > t || t >= r.end) continue;
    if (r.tid == tid) own.push_back(i);
    else other = i;
  }
  if (own.empty() && other != SIZE_MAX) own.push_back(other);
  return own;
}

// The stack of `tid` at `t`: its own closed ranges open then, under the step
// another thread is in when it is in none.
std::vector<size_t> StackAt(const Model& m, uint32_t tid, uint64_t t) {
  std::vector<size_t> own;
  bool has_step = false;
  for (size_t i = 0; i < m.ranges.size(); ++i) {
    const RefRange& r = m.ranges[i];
    if (r.tid == tid && r.closed && r.start <= t && t < r.end) {
      own.push_back(i);
      has_step = has_step || m.step[i];
    }
  }
  if (!has_step) {
    std::vector<size_t> other = StepsHolding(m, m.step, tid, t);
    if (!other.empty()) own.insert(own.begin(), other[0]);
  }
  return own;
}

// The node created at capture time: back through clones (an instantiated
// node is reported created too, but it is the original's ranges that count).
const format::GraphEvent* Origin(const Model& m, uint64_t node) {
  for (int hops = 0; hops < 64; ++hops) {
    auto up = m.cloned_from.find(node);
    if (up == m.cloned_from.end()) {
      auto c = m.created.find(node);
      return c == m.created.end() ? nullptr : &c->second;
    }
    node = up->second;
  }
  return nullptr;
}

std::vector<std::string> StackNames(const Model& m, const RefGpuOp& op) {
  std::vector<size_t> stack;
  auto launch = m.launches.find(op.correlation);
  if (launch != m.launches.end()) stack = StackAt(m, launch->second.tid, launch->second.start);
  if (op.graph_node != 0) {
    if (const format::GraphEvent* o = Origin(m, op.graph_node)) {
      for (size_t r : StackAt(m, o->os_tid, o->timestamp_ns)) {
        if (std::find(stack.begin(), stack.end(), r) == stack.end()) stack.push_back(r);
      }
    }
  }
  std::vector<std::string> names;
  for (size_t r : stack) names.push_back(m.ranges[r].name);
  return names;
}

Result<Model> Load(const builder::CaptureIndex& index, const std::string& steps) {
  Model m;
  const format::Capture& c = index.capture();
  Extent(c, &m);
  Ranges(c, &m);
  m.step = Steps(m, steps.empty() ? DefaultSteps(c) : steps);
  for (const format::GraphEvent& g : c.graphs) {
    if (g.kind == format::GraphEventKind::kNodeCreated) m.created.emplace(g.node_id, g);
    if (g.kind == format::GraphEventKind::kNodeCloned && g.node_id != g.original_node_id) {
      m.cloned_from[g.node_id] = g.original_node_id;
    }
  }
  // Stretches the recorder was paused in: a call made in one is left out,
  // with the ops it launched (docs/semantics.md, "Recorded while paused").
  std::vector<format::RecordingInterval> paused;
  for (const auto& r : format::RecordingIntervals(c.metadata, UINT64_MAX)) {
    if (r.state == format::RecordingState::kPaused) paused.push_back(r);
  }
  auto made_paused = [&](uint64_t t) {
    for (const auto& r : paused) {
      if (r.start_ns <= t && t < r.end_ns) return true;
    }
    return false;
  };
  std::set<uint32_t> left_out;  // correlations of calls made while paused
  std::set<uint32_t> recorded;  // correlations of every call record, timed or not
  std::vector<uint64_t> scratch;
  for (size_t ch = 0; ch < c.chunks.size(); ++ch) {
    builder::ActivityTables t;
    builder::DecodeStats stats;
    index.decoder().DecodeChunk(ch, builder::kAllFamilies, &t, &stats, &scratch);
    for (size_t r = 0; r < t.apis.size(); ++r) {
      if (t.apis.correlation[r] != 0) recorded.insert(t.apis.correlation[r]);
      if (t.apis.start[r] == 0 || m.launches.count(t.apis.correlation[r]) || left_out.count(t.apis.correlation[r])) {
        continue;  // the first record standing
      }
      if (made_paused(t.apis.start[r])) left_out.insert(t.apis.correlation[r]);
      else m.launches.emplace(t.apis.correlation[r], RefLaunch{t.apis.tid[r], t.apis.start[r]});
    }
    auto add = [&](const auto& table) {
      for (size_t r = 0; r < table.size(); ++r) {
        if (table.start[r] != 0) m.ops.push_back({table.correlation[r], table.graph_node_id[r], table.start[r]});
      }
    };
    add(t.kernels);
    add(t.memcpys);
    add(t.memsets);
  }
  std::erase_if(m.ops, [&](const RefGpuOp& op) { return left_out.count(op.correlation) != 0; });
  // A flight-recorder dump: an op without its launch record whose id is
  // below every launch record the dump holds was launched before the
  // dump's span, and is left out ("A flight-recorder dump's first ops");
  // a dump that holds no launch record leaves nothing out by this rule.
  if (c.trailer && !c.trailer->trigger.empty() && !recorded.empty()) {
    uint32_t lowest = *recorded.begin();
    std::erase_if(m.ops, [&](const RefGpuOp& op) {
      return op.correlation != 0 && op.correlation < lowest && !recorded.count(op.correlation);
    });
  }
  return m;
}

// A window and how its ops belong: by GPU start, by launch, or by range.
struct RefSpan {
  ReferenceWindow w;
  bool by_launch = false;
  size_t range = SIZE_MAX;  // nvtx windows
  std::vector<bool> kin;    // nvtx windows: the ranges of the window's pattern
};

std::string DropDigits(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch < '0' || ch > '9') out.push_back(ch);
  }
  return out;
}

Result<std::vector<RefSpan>> Spans(const Model& m, const format::Capture& c, const std::string& spec) {
  std::vector<RefSpan> out;
  uint64_t end = m.extent_end + 1;
  auto span = [](std::string label, uint64_t s, uint64_t e, bool by_launch, size_t range = SIZE_MAX) {
    RefSpan r;
    r.w.label = std::move(label);
    r.w.start_ns = s;
    r.w.end_ns = e;
    r.by_launch = by_launch;
    r.range = range;
    return r;
  };
  if (spec == "all") {
    out.push_back(span("", m.extent_start, end, false));
  } else if (spec.rfind("every:", 0) == 0) {
    auto d = builder::ParseDuration(spec.substr(6));
    if (!d.ok()) return d.status();
    for (uint64_t s = m.extent_start; s < end; s += *d) out.push_back(span("", s, s + *d, false));
  } else if (spec.rfind("nvtx:", 0) == 0) {
    std::regex re(spec.substr(5));
    std::vector<bool> kin = Steps(m, spec.substr(5));
    std::vector<bool> taken(m.ranges.size());
    for (size_t i = 0; i < m.ranges.size(); ++i) {
      const RefRange& r = m.ranges[i];
      taken[i] = std::regex_match(r.name, re) && !MarkedTwice(m, taken, i);
      if (taken[i]) {
        out.push_back(span(r.name, r.start, std::max(r.end, r.start + 1), true, i));
        out.back().kin = kin;
      }
    }
  } else if (spec == "marks") {
    std::vector<format::WindowMark> marks(c.windows.begin(), c.windows.end());
    std::stable_sort(marks.begin(), marks.end(),
                     [](const auto& a, const auto& b) { return a.timestamp_ns < b.timestamp_ns; });
    std::vector<bool> closed;
    std::vector<uint64_t> ids;
    const format::WindowMark* last_instant = nullptr;
    for (const format::WindowMark& k : marks) {
      if (k.kind == format::WindowMarkKind::kOpen) {
        out.push_back(span(k.label, k.timestamp_ns, end, true));
        closed.push_back(false);
        ids.push_back(k.id);
      } else if (k.kind == format::WindowMarkKind::kClose) {
        // The latest open mark of this id still open.
        for (size_t i = out.size(); i-- > 0;) {
          if (i < ids.size() && ids[i] == k.id && !closed[i]) {
            closed[i] = true;
            out[i].w.end_ns = std::max(k.timestamp_ns, out[i].w.start_ns + 1);
            if (out[i].w.label.empty()) out[i].w.label = k.label;
            break;
          }
        }
      } else {
        if (last_instant != nullptr && k.timestamp_ns > last_instant->timestamp_ns) {
          out.push_back(span(last_instant->label, last_instant->timestamp_ns, k.timestamp_ns, true));
          closed.push_back(true);
          ids.push_back(UINT64_MAX);
        }
        last_instant = &k;
      }
    }
    // An open mark never closed ends at the next open of its label's family.
    for (size_t i = 0; i < ids.size(); ++i) {
      if (closed[i]) continue;
      for (size_t j = 0; j < ids.size(); ++j) {
        if (ids[j] != UINT64_MAX && out[j].w.start_ns > out[i].w.start_ns &&
            DropDigits(out[j].w.label) == DropDigits(out[i].w.label)) {
          out[i].w.end_ns = std::min(out[i].w.end_ns, out[j].w.start_ns);
        }
      }
    }
  } else {
    return Status::InvalidArgument("reference join: spec " + spec);
  }
  std::stable_sort(out.begin(), out.end(), [](const RefSpan& a, const RefSpan& b) {
    if (a.w.start_ns != b.w.start_ns) return a.w.start_ns < b.w.start_ns;
    return a.w.end_ns > b.w.end_ns;
  });
  return out;
}

bool InWindow(const Model& m, const RefSpan& s, const RefGpuOp& op) {
  auto launch = m.launches.find(op.correlation);
  bool known = launch != m.launches.end();
  if (!s.by_launch || !known) return op.start >= s.w.start_ns && op.start < s.w.end_ns;
  const RefLaunch& l = launch->second;
  if (l.start < s.w.start_ns || l.start >= s.w.end_ns) return false;
  if (s.range == SIZE_MAX) return true;
  const RefRange& r = m.ranges[s.range];
  if (!r.closed) return l.tid == r.tid;
  // The step rule with the window's pattern for steps.
  std::vector<size_t> holding = StepsHolding(m, s.kin, l.tid, l.start);
  return std::find(holding.begin(), holding.end(), s.range) != holding.end();
}

}  // namespace

Result<std::vector<ReferenceWindow>> ReferenceJoin(const builder::CaptureIndex& index, const std::string& spec,
                                                   const std::string& steps) {
  auto m = Load(index, steps);
  if (!m.ok()) return m.status();
  auto spans = Spans(*m, index.capture(), spec);
  if (!spans.ok()) return spans.status();
  std::vector<ReferenceWindow> out;
  for (const RefSpan& s : *spans) {
    ReferenceWindow w = s.w;
    for (const RefGpuOp& op : m->ops) {
      if (!InWindow(*m, s, op)) continue;
      ReferenceOp r;
      r.stack = StackNames(*m, op);
      auto launch = m->launches.find(op.correlation);
      r.launch_in_window = launch != m->launches.end() && launch->second.start >= s.w.start_ns &&
                           launch->second.start < s.w.end_ns;
      w.ops[{op.correlation, op.graph_node, op.start}] = r;
    }
    out.push_back(std::move(w));
  }
  return out;
}

Result<std::vector<ReferenceWindow>> BuiltWindows(const builder::CaptureIndex& index, const std::string& spec,
                                                  const std::string& steps) {
  builder::BuildOptions o;
  o.window = spec;
  o.join.steps = steps;
  // The reference names ranges as recorded: compare stacks in that view
  // (PyTorch's names are torch_view_test.cc's).
  o.join.torch_view = false;
  o.max_windows = 0;
  builder::Builder b(index, o);
  auto windows = b.Windows();
  if (!windows.ok()) return windows.status();
  // GPU starts back in CUPTI ns: the op's own record, found by its key.
  std::map<std::pair<uint32_t, uint64_t>, std::vector<uint64_t>> starts;
  {
    auto m = Load(index, steps);
    for (const RefGpuOp& op : m->ops) starts[{op.correlation, op.graph_node}].push_back(op.start);
    for (auto& [k, v] : starts) std::sort(v.begin(), v.end());
  }
  std::vector<ReferenceWindow> out;
  for (const builder::Window& w : *windows) {
    std::string text;
    auto sink = builder::NewChromeJsonRenderer(builder::NewStringSink(&text));
    builder::WindowReport report;
    GPUCAP_RETURN_IF_ERROR(b.BuildWindow(w, sink.get(), &report));
    Json root;
    std::string error;
    if (!ParseJson(text, &root, &error)) return Status::Internal("window " + std::to_string(w.index) + ": " + error);
    ReferenceWindow rw;
    rw.label = w.label;
    rw.start_ns = w.start_ns;
    rw.end_ns = w.end_ns;
    std::map<uint32_t, size_t> flows;  // correlation -> launch flows ending in the window
    for (const Json& e : root["traceEvents"].items) {
      if (e["ph"].text == "f" && e["cat"].text == "ac2g") flows[static_cast<uint32_t>(e["id"].u())]++;
    }
    std::map<std::pair<uint32_t, uint64_t>, size_t> seen;
    for (const Json& e : root["traceEvents"].items) {
      std::string cat = e["cat"].text;
      if (e["ph"].text != "X" || (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset")) continue;
      const Json& args = e["args"];
      uint32_t corr = static_cast<uint32_t>(args["correlation"].u());
      uint64_t node = args.has("graph node") ? args["graph node"].u() : 0;
      ReferenceOp op;
      for (const Json& s : args["annotation stack"].items) op.stack.push_back(s.text);
      op.launch_in_window = flows[corr] > 0;
      // Ops sharing a key (rare: one call, two copies) are told apart by order.
      const std::vector<uint64_t>& st = starts[{corr, node}];
      size_t i = seen[{corr, node}]++;
      uint64_t start = i < st.size() ? st[i] : 0;
      rw.ops[{corr, node, start}] = op;
    }
    out.push_back(std::move(rw));
  }
  return out;
}

std::string CompareWindows(const std::vector<ReferenceWindow>& want, const std::vector<ReferenceWindow>& got) {
  std::ostringstream s;
  auto stack = [](const std::vector<std::string>& v) {
    std::string o = "[";
    for (const std::string& n : v) o += "'" + n + "',";
    return o + "]";
  };
  if (want.size() != got.size()) s << "windows: reference " << want.size() << ", built " << got.size() << "\n";
  for (size_t i = 0; i < std::min(want.size(), got.size()); ++i) {
    const ReferenceWindow &a = want[i], &b = got[i];
    if (a.label != b.label || a.start_ns != b.start_ns || a.end_ns != b.end_ns) {
      s << "window " << i << ": reference '" << a.label << "' [" << a.start_ns << ", " << a.end_ns << "), built '"
        << b.label << "' [" << b.start_ns << ", " << b.end_ns << ")\n";
    }
    int shown = 0;
    for (const auto& [key, op] : a.ops) {
      auto it = b.ops.find(key);
      std::string who = "window " + std::to_string(i) + " op correlation " + std::to_string(std::get<0>(key)) +
                        " node " + std::to_string(std::get<1>(key));
      if (it == b.ops.end()) {
        if (shown++ < 5) s << who << ": in the reference, not built\n";
      } else if (!(it->second == op)) {
        if (shown++ < 5) {
          s << who << ": reference " << stack(op.stack) << " flow " << op.launch_in_window << ", built "
            << stack(it->second.stack) << " flow " << it->second.launch_in_window << "\n";
        }
      }
    }
    for (const auto& [key, op] : b.ops) {
      if (!a.ops.count(key) && shown++ < 5) {
        s << "window " << i << " op correlation " << std::get<0>(key) << ": built, not in the reference\n";
      }
    }
  }
  return s.str();
}

}  // namespace gpucap::testing
