// The three forms of `gpucap stats --report`: nsys's column table (a
// " ** Title (name):" line, right-aligned numbers with thousands
// separators, left-aligned text, long text cut to a width with an
// ellipsis), CSV with nsys's headers, and JSON.
#include <array>
#include <cstdio>

#include "gpucap/tools/json/json_out.h"
#include "gpucap/tools/stats/stats_reports.h"

namespace gpucap::tools {
namespace {

using Kind = ReportColumn::Kind;

const char* UnitName(TimeUnit u) {
  switch (u) {
    case TimeUnit::kUs: return "us";
    case TimeUnit::kMs: return "ms";
    case TimeUnit::kS: return "s";
    default: return "ns";
  }
}

std::string Header(const ReportColumn& c, TimeUnit u) {
  switch (c.kind) {
    case Kind::kTime: return c.header + " (" + UnitName(u) + ")";
    case Kind::kMegabytes: return c.header + " (MB)";
    case Kind::kMegabytesPerSecond: return c.header + " (MB/s)";
    case Kind::kPercent: return c.header + " (%)";
    default: return c.header;
  }
}

double Number(const ReportCell& cell) {
  if (const int64_t* v = std::get_if<int64_t>(&cell)) return static_cast<double>(*v);
  return std::get<double>(cell);
}

constexpr std::array<double, 4> kTimeScale = {1, 1e3, 1e6, 1e9};
constexpr std::array<int, 4> kTimeDecimals = {1, 3, 6, 9};

// A cell as text: ns times as integers (averages with nsys's one decimal),
// other units scaled with their decimals, MB and MB/s with three,
// percentages and ratios with one; NULL as nothing.
std::string Format(const ReportCell& cell, const ReportColumn& c, TimeUnit u) {
  if (std::holds_alternative<std::monostate>(cell)) return "";
  if (const std::string* s = std::get_if<std::string>(&cell)) return *s;
  char buf[64];
  switch (c.kind) {
    case Kind::kTime: {
      size_t i = static_cast<size_t>(u);
      if (u == TimeUnit::kNs && std::holds_alternative<int64_t>(cell)) return std::to_string(std::get<int64_t>(cell));
      std::snprintf(buf, sizeof(buf), "%.*f", kTimeDecimals[i], Number(cell) / kTimeScale[i]);
      return buf;
    }
    case Kind::kMegabytes:
    case Kind::kMegabytesPerSecond:
      std::snprintf(buf, sizeof(buf), "%.3f", Number(cell) / 1e6);
      return buf;
    case Kind::kPercent:
    case Kind::kRatio:
      std::snprintf(buf, sizeof(buf), "%.1f", Number(cell));
      return buf;
    default:
      if (const int64_t* v = std::get_if<int64_t>(&cell)) return std::to_string(*v);
      std::snprintf(buf, sizeof(buf), "%.1f", std::get<double>(cell));
      return buf;
  }
}

// 1234567.5 -> 1,234,567.5, as nsys's column format writes amounts.
std::string Grouped(const std::string& number) {
  size_t digits_start = number[0] == '-' ? 1 : 0;
  size_t digits_end = number.find('.');
  if (digits_end == std::string::npos) digits_end = number.size();
  std::string out = number.substr(0, digits_start);
  for (size_t i = digits_start; i < digits_end; ++i) {
    if (i > digits_start && (digits_end - i) % 3 == 0) out += ',';
    out += number[i];
  }
  return out + number.substr(digits_end);
}

// Characters shown (UTF-8 sequences count once).
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

// `s` cut to `width` characters, its last an ellipsis; whole UTF-8
// sequences only.
std::string Cut(const std::string& s, size_t width) {
  if (width == 0 || Width(s) <= width) return s;
  std::string out;
  size_t shown = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    bool starts = (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
    if (starts && shown == width - 1) break;
    shown += starts;
    out += s[i];
  }
  return out + "\xE2\x80\xA6";  // U+2026
}

std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) {
    if (ch == '"') q += '"';
    q += ch;
  }
  return q + "\"";
}

void JsonCell(JsonOut* j, const ReportCell& cell, const ReportColumn& c, TimeUnit u) {
  if (std::holds_alternative<std::monostate>(cell)) {
    j->Null();
  } else if (const std::string* s = std::get_if<std::string>(&cell)) {
    j->String(*s);
  } else if (c.kind == Kind::kTime) {
    size_t i = static_cast<size_t>(u);
    if (u == TimeUnit::kNs && std::holds_alternative<int64_t>(cell)) j->Int(std::get<int64_t>(cell));
    else j->Double(Number(cell) / kTimeScale[i], kTimeDecimals[i]);
  } else if (c.kind == Kind::kMegabytes || c.kind == Kind::kMegabytesPerSecond) {
    j->Double(Number(cell) / 1e6, 6);
  } else if (const int64_t* v = std::get_if<int64_t>(&cell)) {
    j->Int(*v);
  } else {
    j->Double(std::get<double>(cell), 1);
  }
}

}  // namespace

std::string RenderReports(const std::vector<Report>& reports, TableFormat format, const RenderOptions& options) {
  const TimeUnit unit = options.unit;
  if (format == TableFormat::kJson) {
    JsonOut j;
    j.BeginObject().Key("time_unit").String(UnitName(unit)).Key("reports").BeginObject();
    for (const Report& r : reports) {
      j.Key(r.name).BeginArray();
      for (const auto& row : r.rows) {
        j.BeginObject();
        for (size_t c = 0; c < r.columns.size(); ++c) {
          j.Key(Header(r.columns[c], unit));
          JsonCell(&j, row[c], r.columns[c], unit);
        }
        j.EndObject();
      }
      j.EndArray();
    }
    j.EndObject().EndObject();
    return j.Take();
  }
  std::string out;
  for (const Report& r : reports) {
    if (format == TableFormat::kCsv) {
      if (reports.size() > 1) out += "# " + r.name + "\n";
      for (size_t c = 0; c < r.columns.size(); ++c) {
        if (c) out += ',';
        out += Csv(Header(r.columns[c], unit));
      }
      out += '\n';
      for (const auto& row : r.rows) {
        for (size_t c = 0; c < r.columns.size(); ++c) {
          if (c) out += ',';
          out += Csv(Format(row[c], r.columns[c], unit));
        }
        out += '\n';
      }
      continue;
    }
    if (!out.empty()) out += '\n';
    out += " ** ";
    out += r.title;
    out += " (";
    out += r.name;
    out += "):\n\n";
    if (r.rows.empty()) {
      out += "SKIPPED: the capture holds nothing for this report.\n";
      continue;
    }
    std::vector<std::vector<std::string>> cells(1);
    for (const ReportColumn& c : r.columns) cells[0].push_back(Header(c, unit));
    for (const auto& row : r.rows) {
      auto& line = cells.emplace_back();
      for (size_t c = 0; c < r.columns.size(); ++c) {
        std::string text = Format(row[c], r.columns[c], unit);
        Kind kind = r.columns[c].kind;
        if (kind == Kind::kText) text = Cut(text, options.max_text_width);
        else if (kind != Kind::kInt && !text.empty()) text = Grouped(text);
        line.push_back(std::move(text));
      }
    }
    std::vector<size_t> width(r.columns.size());
    for (const auto& line : cells) {
      for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], Width(line[c]));
    }
    for (size_t l = 0; l < cells.size(); ++l) {
      // Columns two spaces apart, as nsys's column format; no trailing
      // spaces after the last.
      for (size_t c = 0; c < cells[l].size(); ++c) {
        const std::string& cell = cells[l][c];
        size_t pad = width[c] - Width(cell);
        bool last = c + 1 == cells[l].size();
        out += c ? "  " : " ";
        if (r.columns[c].kind == Kind::kText) {
          out += cell;
          if (!last) out.append(pad, ' ');
        } else {
          out.append(pad, ' ');
          out += cell;
        }
      }
      out += '\n';
      if (l == 0) {
        for (size_t c = 0; c < width.size(); ++c) {
          out += c ? "  " : " ";
          out.append(width[c], '-');
        }
        out += '\n';
      }
    }
  }
  return out;
}

}  // namespace gpucap::tools
