#include "gpucap/builder/window.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "gpucap/builder/annotation_stacks.h"
#include "gpucap/builder/budgets.h"
#include "gpucap/builder/name_matcher.h"

namespace gpucap::builder {
namespace {

// "'<text>' <why>", built by appending: GCC 12 warns falsely (-Wrestrict) on
// some chains of operator+ over temporaries.
std::string Quoted(std::string_view text, std::string_view why) {
  std::string s = "'";
  s.append(text);
  s.append("' ");
  s.append(why);
  return s;
}

Status Bad(std::string_view spec, const std::string& why) {
  return Status::InvalidArgument("--window '" + std::string(spec) + "': " + why);
}

// Splits "1.25ms" into an exact ns count.
Result<uint64_t> ParseScaled(std::string_view text, uint64_t default_unit) {
  size_t digits_end = 0;
  while (digits_end < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits_end])) ||
                                      text[digits_end] == '.')) {
    digits_end++;
  }
  std::string_view number = text.substr(0, digits_end), unit = text.substr(digits_end);
  if (number.empty() || std::count(number.begin(), number.end(), '.') > 1) {
    return Status::InvalidArgument(Quoted(text, "is not a number with a unit"));
  }
  uint64_t scale = default_unit;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1'000;
  else if (unit == "ms") scale = 1'000'000;
  else if (unit == "s") scale = 1'000'000'000;
  else if (unit == "m" || unit == "min") scale = 60'000'000'000;
  else if (!unit.empty()) {
    return Status::InvalidArgument("unknown unit '" + std::string(unit) + "' (ns, us, ms, s, m)");
  }
  size_t dot = number.find('.');
  std::string_view whole = number.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? std::string_view() : number.substr(dot + 1);
  unsigned __int128 ns = 0;
  for (char c : whole) ns = ns * 10 + static_cast<unsigned>(c - '0');
  ns *= scale;
  unsigned __int128 place = scale;
  for (char c : frac) {
    place /= 10;
    ns += place * static_cast<unsigned>(c - '0');
    if (place == 0 && c != '0') {
      return Status::InvalidArgument(Quoted(text, "is finer than a nanosecond"));
    }
  }
  if (ns > UINT64_MAX) return Status::InvalidArgument(Quoted(text, "is too large"));
  return static_cast<uint64_t>(ns);
}

Result<SpecTime> ParseTime(std::string_view text) {
  SpecTime t;
  if (!text.empty() && text[0] == '+') {
    t.relative = true;
    text.remove_prefix(1);
  }
  auto ns = ParseScaled(text, 1);
  if (!ns.ok()) return ns.status();
  t.ns = *ns;
  return t;
}

// An open mark whose close is not in the capture (a recorder that lost it)
// ends at the next open mark of the same label less its digits
// (ProfilerStep#0 where ProfilerStep#1 opens), else at the capture's end
// (docs/semantics.md): left at the capture's end it would swallow the steps
// after it.
void EndUnclosedMarks(const std::map<uint64_t, size_t>& unclosed, const std::vector<size_t>& opened,
                      std::vector<Window>* out) {
  auto family = [](std::string_view label) {
    std::string s;
    for (char c : label) {
      if (!std::isdigit(static_cast<unsigned char>(c))) s.push_back(c);
    }
    return s;
  };
  std::map<std::string, std::vector<uint64_t>> starts;  // family -> open times, ascending
  for (size_t w : opened) starts[family((*out)[w].label)].push_back((*out)[w].start_ns);
  for (const auto& [id, w] : unclosed) {
    Window& win = (*out)[w];
    const std::vector<uint64_t>& s = starts[family(win.label)];
    auto next = std::upper_bound(s.begin(), s.end(), win.start_ns);
    if (next != s.end()) win.end_ns = std::min(win.end_ns, *next);
  }
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

}  // namespace

Result<uint64_t> ParseDuration(std::string_view text) { return ParseScaled(text, 1); }

Result<WindowSpec> ParseWindowSpec(std::string_view text) {
  WindowSpec spec;
  spec.text = std::string(text);
  size_t colon = text.find(':');
  std::string_view kind = text.substr(0, colon);
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (kind == "all" || kind == "marks") {
    if (colon != std::string_view::npos) return Bad(text, "'" + std::string(kind) + "' takes no argument");
    spec.kind = kind == "all" ? WindowSpec::Kind::kAll : WindowSpec::Kind::kMarks;
    return spec;
  }
  if (kind == "range") {
    size_t sep = rest.find(':');
    if (sep == std::string_view::npos) return Bad(text, "expected range:START:END");
    auto start = ParseTime(rest.substr(0, sep));
    if (!start.ok()) return Bad(text, start.status().message());
    auto end = ParseTime(rest.substr(sep + 1));
    if (!end.ok()) return Bad(text, end.status().message());
    if (start->relative == end->relative && end->ns <= start->ns) {
      return Bad(text, "the range ends before it starts");
    }
    spec.kind = WindowSpec::Kind::kRange;
    spec.start = *start;
    spec.end = *end;
    return spec;
  }
  if (kind == "every") {
    // A bare number is a mistake, not nanoseconds: every:100 meant 100 ns.
    if (!rest.empty() && (std::isdigit(static_cast<unsigned char>(rest.back())) || rest.back() == '.')) {
      return Bad(text, "'" + std::string(rest) + "' has no unit (ns, us, ms, s, m), e.g. every:100ms");
    }
    auto d = ParseDuration(rest);
    if (!d.ok()) return Bad(text, d.status().message());
    if (*d == 0) return Bad(text, "the duration must be positive");
    spec.kind = WindowSpec::Kind::kEvery;
    spec.every_ns = *d;
    return spec;
  }
  if (kind == "nvtx") {
    if (rest.empty()) return Bad(text, "expected nvtx:REGEX");
    auto matcher = NameMatcher::Compile(rest);
    if (!matcher.ok()) return Bad(text, matcher.status().message());
    spec.kind = WindowSpec::Kind::kNvtx;
    spec.pattern = std::string(rest);
    return spec;
  }
  return Bad(text, "expected all, marks, range:START:END, every:DURATION or nvtx:REGEX");
}

Result<std::vector<uint32_t>> ParseSelection(std::string_view text) {
  std::vector<uint32_t> out;
  auto number = [&](std::string_view s) -> Result<uint32_t> {
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) {
      return Status::InvalidArgument("--select '" + std::string(text) + "': '" + std::string(s) +
                                     "' is not a window index");
    }
    return v;
  };
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t dash = item.find('-');
    auto lo = number(item.substr(0, dash));
    if (!lo.ok()) return lo.status();
    uint32_t hi_v = *lo;
    if (dash != std::string_view::npos) {
      auto hi = number(item.substr(dash + 1));
      if (!hi.ok()) return hi.status();
      hi_v = *hi;
    }
    if (hi_v < *lo) {
      return Status::InvalidArgument("--select '" + std::string(text) + "': '" + std::string(item) +
                                     "' ends before it starts");
    }
    if (hi_v - *lo >= kMaxSelected || out.size() + (hi_v - *lo) >= kMaxSelected) {
      return Status::InvalidArgument("--select: '" + std::string(item) + "' names more than " +
                                     std::to_string(kMaxSelected) + " windows in all");
    }
    // 64-bit: a uint32_t counter never passes hi_v = 2^32-1.
    for (uint64_t i = *lo; i <= hi_v; ++i) out.push_back(static_cast<uint32_t>(i));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

CaptureExtent ComputeExtent(const format::Capture& c) {
  // The anchor every plausible timestamp lies near: the session's start, else
  // the earliest chunk start. A lone 2^64-1 must not stretch (or, one past
  // it, wrap) the capture's extent.
  uint64_t anchor = c.session ? c.session->start_cupti_ns : 0;
  if (anchor == 0) {
    for (const format::ChunkView& ch : c.chunks) {
      if (ch.info.min_start_ns != 0 && (anchor == 0 || ch.info.min_start_ns < anchor)) anchor = ch.info.min_start_ns;
    }
  }
  CaptureExtent extent;
  uint64_t lo = UINT64_MAX, hi = 0;
  auto see = [&](uint64_t t) {
    if (t == 0) return;
    if (!PlausibleTime(anchor, t)) {
      extent.implausible++;
      return;
    }
    lo = std::min(lo, t);
    hi = std::max(hi, t);
  };
  if (c.session) see(c.session->start_cupti_ns);
  for (const format::ChunkView& ch : c.chunks) {
    see(ch.info.min_start_ns);
    see(ch.info.max_start_ns);
    see(ch.info.max_end_ns);
  }
  for (const format::RangeEvent& r : c.ranges) see(r.timestamp_ns);
  for (const format::GraphEvent& g : c.graphs) see(g.timestamp_ns);
  for (const format::WindowMark& m : c.windows) see(m.timestamp_ns);
  for (const format::CounterSample& s : c.counter_samples) see(s.timestamp_ns);
  if (c.trailer) see(c.trailer->end_cupti_ns);
  if (lo == UINT64_MAX) return extent;
  extent.start_ns = lo;
  extent.end_ns = hi;
  return extent;
}

bool PlausibleTime(uint64_t anchor, uint64_t t) {
  if (t >= (uint64_t{1} << 63) || t == UINT64_MAX) return false;
  if (anchor == 0) return true;
  uint64_t distance = t > anchor ? t - anchor : anchor - t;
  return distance <= kMaxPlausibleSpanNs;
}

Result<std::vector<Window>> ResolveWindows(const WindowSpec& spec, const format::Capture& capture,
                                           const CaptureExtent& extent, const RangeIndex& ranges) {
  std::vector<Window> out;
  uint64_t origin = extent.start_ns;
  uint64_t end = extent.end_ns + 1;  // windows are half-open
  switch (spec.kind) {
    case WindowSpec::Kind::kAll:
      out.push_back({0, "", origin, end});
      break;
    case WindowSpec::Kind::kRange: {
      auto at = [&](SpecTime t) { return t.relative ? SaturatingAdd(origin, t.ns) : t.ns; };
      uint64_t s = at(spec.start), e = at(spec.end);
      if (e <= s) return Bad(spec.text, "the range ends before it starts");
      out.push_back({0, "", s, e});
      break;
    }
    case WindowSpec::Kind::kEvery:
      if ((end - origin) / spec.every_ns >= kMaxWindows) {
        return Bad(spec.text, "gives " + std::to_string((end - origin) / spec.every_ns + 1) +
                                  " windows over this capture, more than " + std::to_string(kMaxWindows) +
                                  "; take a longer period");
      }
      // Saturating: a period near 2^64 must end the loop, not wrap back below `end`.
      for (uint64_t s = origin; s < end; s = SaturatingAdd(s, spec.every_ns)) {
        out.push_back({0, "", s, SaturatingAdd(s, spec.every_ns)});
      }
      break;
    case WindowSpec::Kind::kNvtx: {
      auto matcher = NameMatcher::Compile(spec.pattern);
      if (!matcher.ok()) return Bad(spec.text, matcher.status().message());
      const std::vector<Range>& all = ranges.ranges();
      RepeatedSteps repeated;
      for (uint32_t i = 0; i < all.size(); ++i) {
        const Range& r = all[i];
        // The name as recorded, not as cut for display.
        std::string_view recorded = capture.ranges[r.event].name;
        if (MatchesRangeName(*matcher, recorded) && !repeated.Repeats(r, recorded)) {
          if (out.size() >= kMaxWindows) {
            return Bad(spec.text, "matches more than " + std::to_string(kMaxWindows) + " ranges");
          }
          out.push_back({0, std::string(r.name), r.start_ns, std::max(r.end_ns, r.start_ns + 1), true, i,
                         spec.pattern});
        }
      }
      break;
    }
    case WindowSpec::Kind::kMarks: {
      std::map<uint64_t, size_t> open;  // id -> window
      std::vector<const format::WindowMark*> marks;
      for (const format::WindowMark& m : capture.windows) marks.push_back(&m);
      std::stable_sort(marks.begin(), marks.end(), [](auto* a, auto* b) {
        return a->timestamp_ns < b->timestamp_ns;
      });
      std::vector<size_t> opened;  // windows of open marks, by time
      std::vector<const format::WindowMark*> opener;  // by window: its open mark, or null
      const format::WindowMark* last_instant = nullptr;
      for (const format::WindowMark* m : marks) {
        switch (m->kind) {
          case format::WindowMarkKind::kOpen:
            opened.push_back(out.size());
            open[m->id] = out.size();
            opener.resize(out.size() + 1, nullptr);
            opener[out.size()] = m;
            out.push_back({0, std::string(ShownStepName(m->label)), m->timestamp_ns, end, true});
            break;
          case format::WindowMarkKind::kClose: {
            auto it = open.find(m->id);
            if (it == open.end()) break;
            Window& w = out[it->second];
            w.end_ns = std::max(m->timestamp_ns, w.start_ns + 1);
            if (w.label.empty()) w.label = std::string(ShownStepName(m->label));
            open.erase(it);
            break;
          }
          case format::WindowMarkKind::kInstant:
            if (last_instant != nullptr && m->timestamp_ns > last_instant->timestamp_ns) {
              out.push_back({0, last_instant->label, last_instant->timestamp_ns, m->timestamp_ns, true});
            }
            last_instant = m;
            break;
        }
      }
      EndUnclosedMarks(open, opened, &out);
      // A step marked twice (its own range and emit_nvtx's, both matching
      // --window-nvtx) is one window, as with nvtx:REGEX (RepeatedSteps).
      opener.resize(out.size(), nullptr);
      std::vector<size_t> by_start;
      for (size_t i = 0; i < out.size(); ++i) {
        if (opener[i]) by_start.push_back(i);
      }
      std::stable_sort(by_start.begin(), by_start.end(), [&](size_t a, size_t b) {
        if (out[a].start_ns != out[b].start_ns) return out[a].start_ns < out[b].start_ns;
        return out[a].end_ns > out[b].end_ns;  // the outer first
      });
      RepeatedSteps repeated;
      std::vector<bool> drop(out.size(), false);
      for (size_t i : by_start) {
        drop[i] = repeated.Repeats(opener[i]->os_tid, out[i].start_ns, out[i].end_ns, opener[i]->label);
      }
      size_t kept = 0;
      for (size_t i = 0; i < out.size(); ++i) {
        if (drop[i]) continue;
        if (kept != i) out[kept] = std::move(out[i]);  // never onto itself: a self-moved string is empty
        ++kept;
      }
      out.resize(kept);
      if (out.empty()) return Bad(spec.text, "the capture has no window marks");
      break;
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Window& a, const Window& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;
  });
  for (size_t i = 0; i < out.size(); ++i) out[i].index = static_cast<uint32_t>(i);
  return out;
}

Result<std::vector<Window>> SelectWindows(std::vector<Window> windows,
                                          const std::vector<uint32_t>& selection) {
  if (selection.empty()) return windows;
  std::vector<Window> out;
  for (uint32_t i : selection) {
    if (i >= windows.size()) {
      return Status::InvalidArgument("--select: window " + std::to_string(i) + " does not exist (" +
                                     std::to_string(windows.size()) + " windows, 0 to " +
                                     std::to_string(windows.size() ? windows.size() - 1 : 0) + ")");
    }
    out.push_back(windows[i]);
  }
  return out;
}

}  // namespace gpucap::builder
