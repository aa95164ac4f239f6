#include <filesystem>

#include "gpucap/builder/json_string.h"
#include "report_parts.h"

namespace gpucap::tools {
namespace report_assets {
extern const std::string_view kChartJs;
extern const std::string_view kReportJs;
extern const std::string_view kReportCss;
}  // namespace report_assets

namespace report_internal {
namespace {

// Text inside <script>: "</" would end the element early, so it becomes
// "<\/" (the same string to a JavaScript or JSON reader).
std::string ScriptSafe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    out.push_back(text[i]);
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') out.push_back('\\');
  }
  return out;
}

// The library's last line points a debugger at its source map: a fetch,
// which a page that works offline does not ask for.
std::string_view WithoutSourceMap(std::string_view js) {
  size_t at = js.rfind("//# sourceMappingURL=");
  return at == std::string_view::npos ? js : js.substr(0, at);
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

// Set before anything else runs, so an error in any later script is kept:
// the page lists them, and the test reads them back.
constexpr std::string_view kErrorTrap =
    "window.gpucapErrors=[];"
    "window.addEventListener('error',function(e){window.gpucapErrors.push(String(e.message||e));});"
    "(function(){var f=console.error;console.error=function(){"
    "window.gpucapErrors.push(Array.prototype.join.call(arguments,' '));f.apply(console,arguments);};})();";

}  // namespace

std::string Page(const std::string& title, const std::string& json) {
  std::string page;
  page.reserve(json.size() + report_assets::kChartJs.size() + 64 * 1024);
  page += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  page += "<meta name=\"generator\" content=\"gpucap report\">\n<title>" + HtmlEscape(title) + "</title>\n";
  page += "<style>\n" + std::string(report_assets::kReportCss) + "</style>\n";
  page += "<script>" + std::string(kErrorTrap) + "</script>\n</head><body>\n";
  page += "<header><h1>" + HtmlEscape(title) + "</h1></header>\n<main id=\"report\"></main>\n";
  page += "<script type=\"application/json\" id=\"gpucap-data\">" + ScriptSafe(json) + "</script>\n";
  page += "<script>/* Chart.js 4.6.1, MIT licence: third_party/chartjs/LICENSE.md */\n";
  page += ScriptSafe(WithoutSourceMap(report_assets::kChartJs));
  page += "</script>\n<script>\n" + ScriptSafe(report_assets::kReportJs) + "</script>\n</body></html>\n";
  return page;
}

}  // namespace report_internal

using report_internal::CaptureData;

Result<std::string> ReportJson(std::span<const builder::CaptureIndex* const> captures, const ReportOptions& options,
                               const builder::ProgressFn& progress, std::vector<std::string>* warnings,
                               size_t* windows) {
  if (captures.empty()) return Status::InvalidArgument("report: no capture given");
  std::vector<CaptureData> data;
  for (const builder::CaptureIndex* index : captures) {
    auto stats = CollectWindowStats(*index, options.build, progress);
    if (!stats.ok()) {
      // With several captures, which one it was.
      const Status& s = stats.status();
      if (s.message().find(index->path()) != std::string::npos) return s;
      return Status(s.code(), index->path() + ": " + s.message());
    }
    data.push_back({index, std::move(stats).value()});
    if (warnings != nullptr) {
      warnings->insert(warnings->end(), data.back().stats.warnings.begin(), data.back().stats.warnings.end());
    }
    if (windows != nullptr) *windows += data.back().stats.windows.size();
  }
  JsonOut j(/*compact=*/true);
  j.BeginObject().Field("format", "gpucap-report").Field("version", uint32_t{1});
  j.Field("window_spec", options.build.window).Key("captures").BeginArray();
  for (const CaptureData& c : data) report_internal::WriteCapture(c, options, &j);
  j.EndArray();
  if (data.size() > 1) report_internal::WriteRanks(data, &j);
  j.EndObject();
  return j.Take();
}

Result<ReportResult> BuildReport(std::span<const builder::CaptureIndex* const> captures, const ReportOptions& options,
                                 const builder::ProgressFn& progress) {
  ReportResult r;
  auto json = ReportJson(captures, options, progress, &r.warnings, &r.windows);
  if (!json.ok()) return json.status();
  std::string title = options.title;
  if (title.empty()) {
    title = "gpucap report: ";
    for (size_t i = 0; i < captures.size(); ++i) {
      title += (i ? ", " : "") + std::filesystem::path(captures[i]->path()).filename().string();
    }
  }
  r.html = report_internal::Page(title, *json);
  return r;
}

}  // namespace gpucap::tools
