#include <algorithm>
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

// Our own scripts inside <script>: "</" would end the element early, so it
// becomes "<\/" (the same to a JavaScript reader where it can occur, in a
// string or a regular expression). Chart.js and report.js hold no "<!--"
// and no "<script" (the page test counts the page's script tags).
std::string ScriptSafe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    out.push_back(text[i]);
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') out.push_back('\\');
  }
  return out;
}

// Text from a capture (any name is the recorded program's, or an
// attacker's, choice) inside <script type="application/json">. The HTML
// parser reads script text looking for "<!--", "<script" and "</script":
// the first two can take it into the double-escaped state, where the
// element's own end tag no longer ends it and the rest of the page becomes
// script. So no "<" goes in as itself: in JSON it occurs only inside
// strings, where "\u003c" reads back as the same character; ">" and "&"
// likewise, so no byte sequence means anything to the parser. U+2028 and
// U+2029 are escaped for JavaScript parsers older than ES2019, and a byte
// that starts no UTF-8 sequence becomes U+FFFD (the page is declared UTF-8;
// the JSON writer already makes its strings valid, this holds for any text).
std::string JsonForScript(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 16);
  for (size_t i = 0; i < json.size();) {
    unsigned char c = static_cast<unsigned char>(json[i]);
    if (c == '<' || c == '>' || c == '&') {
      out += c == '<' ? "\\u003c" : c == '>' ? "\\u003e" : "\\u0026";
      ++i;
      continue;
    }
    size_t n = builder::Utf8SequenceLength(json, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      ++i;
    } else if (n == 3 && c == 0xE2 && static_cast<unsigned char>(json[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(json[i + 2]) & 0xFE) == 0xA8) {
      out += json[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 3;
    } else {
      out.append(json.data() + i, n);
      i += n;
    }
  }
  return out;
}

// The library's last line points a debugger at its source map: a fetch,
// which a page that works offline does not ask for.
std::string_view WithoutSourceMap(std::string_view js) {
  size_t at = js.rfind("//# sourceMappingURL=");
  return at == std::string_view::npos ? js : js.substr(0, at);
}

// Text as HTML element content (the title: from the captures' file names
// or --title), valid UTF-8.
std::string HtmlEscape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    size_t n = builder::Utf8SequenceLength(text, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";
      ++i;
      continue;
    }
    switch (text[i]) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\0': out += "\xef\xbf\xbd"; break;
      default: out.append(text.data() + i, n);
    }
    i += n;
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
  page += "<script type=\"application/json\" id=\"gpucap-data\">" + JsonForScript(json) + "</script>\n";
  page += "<script>/* Chart.js 4.6.1, MIT licence: third_party/chartjs/LICENSE.md */\n";
  page += ScriptSafe(WithoutSourceMap(report_assets::kChartJs));
  page += "</script>\n<script>\n" + ScriptSafe(report_assets::kReportJs) + "</script>\n</body></html>\n";
  return page;
}

}  // namespace report_internal

}  // namespace gpucap::tools
