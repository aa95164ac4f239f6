#include "gpucap/tools/trim/fixture.h"

#include <filesystem>

#include "gpucap/tools/json/json_out.h"
#include "gpucap/tools/json/json_read.h"
#include "gpucap/tools/stats/stats_table.h"
#include "gpucap/format/output_file.h"

namespace fs = std::filesystem;

namespace gpucap::tools {
namespace {

std::string Basename(const std::string& path) { return fs::path(path).filename().string(); }

Status WriteText(const std::string& path, const std::string& text) {
  return format::WriteOutputFile(path, text);
}

// The spec and selection that yield, in `index`, windows equal to `want`.
Status FindWindows(const builder::CaptureIndex& index, const std::string& spec, const std::vector<builder::Window>& want,
                   std::string* window, std::string* select) {
  builder::BuildOptions o;
  o.window = spec;
  builder::Builder b(index, o);
  auto all = b.Windows();
  if (!all.ok()) return all.status();
  std::string indices;
  bool found = true;
  for (const builder::Window& w : want) {
    auto it = std::find_if(all->begin(), all->end(), [&](const builder::Window& t) {
      return t.start_ns == w.start_ns && t.end_ns == w.end_ns && t.label == w.label && t.ops_by_launch == w.ops_by_launch;
    });
    if (it == all->end()) {
      found = false;
      break;
    }
    if (!indices.empty()) indices.push_back(',');
    indices.append(std::to_string(it->index));
  }
  if (found) {
    *window = spec;
    *select = want.size() == all->size() ? "" : indices;
    return Status::Ok();
  }
  // A time window relative to the capture's start, where the trimmed
  // capture starts later: the same span, in absolute time.
  if (want.size() == 1 && !want[0].ops_by_launch) {
    *window = "range:" + std::to_string(want[0].start_ns) + ":" + std::to_string(want[0].end_ns);
    select->clear();
    return Status::Ok();
  }
  return Status::Internal(index.path() + ": the trimmed capture does not yield the same windows for --window '" +
                          spec + "'; trim one window at a time");
}

Result<std::string> BuildOne(builder::Builder* builder, const builder::Window& w) {
  std::string text;
  auto sink = builder::MakeRenderer(builder::OutputFormat::kChromeJson, builder::NewStringSink(&text));
  builder->set_trace_name("verify");
  builder::WindowReport report;
  GPUCAP_RETURN_IF_ERROR(builder->BuildWindow(w, sink.get(), &report));
  return text;
}

}  // namespace

Result<Trimmed> Trim(const builder::CaptureIndex& source, const FixtureRequest& request, const std::string& output,
                     const builder::ProgressFn& progress) {
  auto plan = PlanTrim(source, request.build, progress);
  if (!plan.ok()) return plan.status();
  TrimOptions to;
  if (request.anonymize || !request.anonymize_key.empty()) {
    auto key = request.anonymize_key.empty() ? AnonymizeKey::Random() : AnonymizeKey::FromFile(request.anonymize_key);
    if (!key.ok()) return key.status();
    to.anonymize.emplace(std::move(key).value());
  }
  auto spec = builder::ParseWindowSpec(request.build.window);
  if (!spec.ok()) return spec.status();
  if (spec->kind == builder::WindowSpec::Kind::kNvtx) to.keep_names = spec->pattern;
  to.provenance = {{"gpucap.trimmed_from", Basename(source.path())}, {"gpucap.trim_window", request.build.window}};
  if (!request.build.select.empty()) to.provenance.emplace_back("gpucap.trim_select", request.build.select);
  if (to.anonymize) to.provenance.emplace_back("gpucap.anonymized", "1");
  // Committed only once the trimmed capture is checked below: a failed
  // check leaves no output (and the previous file where it was).
  auto out = format::OutputFile::Create(output, format::OutputFile::Access::kSeekable);
  if (!out.ok()) return out.status();
  auto written = WriteTrimmedCapture(source, *plan, to, out->get());
  if (!written.ok()) return written.status();

  Trimmed t;
  t.windows = plan->windows.size();
  t.records_seen = plan->records_seen;
  t.result = *written;
  t.warnings = source.capture().report.Describe(source.path());
  t.warnings.insert(t.warnings.end(), plan->warnings.begin(), plan->warnings.end());
  if (!t.warnings.empty()) t.warnings.push_back("the trimmed capture holds what could be read of " + source.path());
  {
    auto trimmed = builder::CaptureIndex::Open((*out)->temp_path());
    if (!trimmed.ok()) return Status(trimmed.status().code(), output + ": " + trimmed.status().message());
    Status found = FindWindows(**trimmed, request.build.window, plan->windows, &t.window, &t.select);
    if (!found.ok()) {
      // Named by the output, not by the temporary it was checked in.
      std::string message = found.message();
      const std::string& temp = (*out)->temp_path();
      for (size_t at; (at = message.find(temp)) != std::string::npos;) message.replace(at, temp.size(), output);
      if (message.rfind(output, 0) != 0) message = output + ": " + message;
      return Status(found.code(), message + " (nothing written)");
    }
  }
  GPUCAP_RETURN_IF_ERROR((*out)->Commit());
  return t;
}

Status VerifyTrimmed(const builder::CaptureIndex& source, const builder::BuildOptions& options,
                     const builder::CaptureIndex& trimmed, const Trimmed& how) {
  builder::BuildOptions os = options, ot = options;
  os.threads = ot.threads = 1;
  ot.window = how.window;
  ot.select = how.select;
  builder::Builder bs(source, os), bt(trimmed, ot);
  auto ws = bs.Windows();
  auto wt = bt.Windows();
  if (!ws.ok()) return ws.status();
  if (!wt.ok()) return wt.status();
  if (ws->size() != wt->size()) return Status::Internal("the trimmed capture yields a different number of windows");
  for (size_t i = 0; i < ws->size(); ++i) {
    auto a = BuildOne(&bs, (*ws)[i]);
    if (!a.ok()) return a.status();
    auto b = BuildOne(&bt, (*wt)[i]);
    if (!b.ok()) return b.status();
    std::string_view x = *a, y = *b;
    x.remove_prefix(std::min(x.size(), x.find("\"displayTimeUnit\"")));
    y.remove_prefix(std::min(y.size(), y.find("\"displayTimeUnit\"")));
    if (x == y) continue;
    size_t at = 0;
    while (at < x.size() && at < y.size() && x[at] == y[at]) ++at;
    size_t line_start = x.rfind('\n', at) == std::string_view::npos ? 0 : x.rfind('\n', at) + 1;
    return Status::Internal(trimmed.path() + ": window " + std::to_string((*ws)[i].index) +
                            " builds differently from the source; first difference:\n  source:  " +
                            std::string(x.substr(line_start, 240)) + "\n  trimmed: " +
                            std::string(y.substr(line_start, 240)));
  }
  return Status::Ok();
}

std::vector<std::string> GoldenFormats() {
  std::vector<std::string> out;
  for (const char* name : {"chrome", "pftrace"}) {
    if (builder::ParseOutputFormat(name).ok()) out.push_back(name);
  }
  return out;
}

Result<FixtureManifest> ReadFixtureManifest(const std::string& path) {
  auto text = JsonText::Read(path);
  if (!text.ok()) return text.status();
  std::string_view doc = text->view();
  FixtureManifest m;
  auto string = [&](ondemand::value v, std::string* out) -> Status {
    std::string_view s;
    GPUCAP_RETURN_IF_ERROR(ReadJsonString(doc, v, &s));
    out->assign(s);
    return Status::Ok();
  };
  // A list of strings; anything else reads as no list.
  auto strings = [&](ondemand::value v, std::vector<std::string>* out) -> Status {
    ondemand::json_type type;
    if (auto e = v.type().get(type)) return JsonError(doc, e, v.raw_json_token().data());
    if (type != ondemand::json_type::array) return CheckJsonValue(doc, v, 1);
    return ForEachJsonElement(doc, v, [&](ondemand::value item) { return string(item, &out->emplace_back()); });
  };
  ondemand::parser parser;
  ondemand::document d;
  ondemand::value root;
  Status s = OpenJsonObject(parser, *text, "a fixture manifest", &d, &root);
  if (s.ok()) {
    s = ForEachJsonMember(doc, root, [&](std::string_view key, ondemand::value v) -> Status {
      if (key == "capture") return string(v, &m.capture);
      if (key == "source") return string(v, &m.source);
      if (key == "window") return string(v, &m.window);
      if (key == "select") return string(v, &m.select);
      if (key == "lookback") return string(v, &m.lookback);
      if (key == "anonymized") {
        m.anonymized = v.raw_json_token().substr(0, 4) == "true";
        return CheckJsonValue(doc, v, 1);
      }
      if (key == "formats") {
        m.formats.clear();
        return strings(v, &m.formats);
      }
      if (key == "goldens") return strings(v, &m.goldens);
      return CheckJsonValue(doc, v, 1);
    });
  }
  if (s.ok()) s = CloseJson(doc, d);
  if (!s.ok()) return Status::Corrupt(path + ": " + s.message());
  if (m.capture.empty() || m.window.empty()) return Status::Corrupt(path + ": no capture or window named");
  return m;
}

std::string FixtureManifestJson(const FixtureManifest& m) {
  JsonOut j;
  j.BeginObject()
      .Field("capture", m.capture)
      .Field("source", m.source)
      .Field("window", m.window)
      .Field("select", m.select)
      .Field("lookback", m.lookback)
      .Field("anonymized", m.anonymized);
  j.Key("formats").BeginArray();
  for (const std::string& f : m.formats) j.String(f);
  j.EndArray();
  j.Key("goldens").BeginArray();
  for (const std::string& g : m.goldens) j.String(g);
  j.EndArray().EndObject();
  return j.Take();
}

// The manifest's windows as the goldens are built: single-threaded, so they
// are the same bytes everywhere. Errors as the CLI's window flags word them.
static Status ApplyManifestWindows(const FixtureManifest& m, builder::BuildOptions* o) {
  o->window = m.window;
  o->select = m.select;
  o->threads = 1;
  o->output_options.threads = 1;
  auto spec = builder::ParseWindowSpec(m.window);
  if (!spec.ok()) return spec.status();
  if (!m.select.empty()) {
    auto s = builder::ParseSelection(m.select);
    if (!s.ok()) return Status::InvalidArgument("--select: " + s.status().message());
  }
  auto lookback = builder::ParseDuration(m.lookback);
  if (!lookback.ok()) return Status::InvalidArgument("--lookback: " + lookback.status().message());
  o->launch_lookback_ns = *lookback;
  return Status::Ok();
}

Result<std::vector<std::string>> WriteFixtureGoldens(const std::string& dir, const FixtureManifest& m,
                                                     const std::string& out_dir) {
  auto capture = format::LoadCapture((fs::path(dir) / m.capture).string());
  if (!capture.ok()) return capture.status();
  // Shown as its file name, so the goldens do not depend on where they were built.
  auto index = builder::CaptureIndex::FromCapture(std::move(capture).value(), m.capture);
  std::string stem = fs::path(m.capture).stem().string();
  builder::BuildOptions o;
  GPUCAP_RETURN_IF_ERROR(ApplyManifestWindows(m, &o));
  o.join.trace_name = stem;
  std::vector<std::string> files;
  for (const std::string& name : m.formats) {
    auto format = builder::ParseOutputFormat(name);
    if (!format.ok()) return Status::Unsupported(m.capture + ": this gpucap does not render " + name + " traces");
    o.format = *format;
    o.output = (fs::path(out_dir) / (stem + std::string(builder::FormatExtension(*format)))).string();
    auto report = builder::BuildTraces(*index, o);
    if (!report.ok()) return report.status();
    for (const builder::WindowReport& w : report->windows) files.push_back(Basename(w.path));
  }
  auto stats = CollectStats(*index, o, nullptr);
  if (!stats.ok()) return stats.status();
  std::string stats_file = stem + ".stats.json";
  GPUCAP_RETURN_IF_ERROR(WriteText((fs::path(out_dir) / stats_file).string(),
                                   RenderTables(*stats, StatsTables(*stats, 0), TableFormat::kJson)));
  files.push_back(stats_file);
  return files;
}

Result<Fixture> MakeFixture(const builder::CaptureIndex& source, const FixtureRequest& request, const std::string& dir,
                            const builder::ProgressFn& progress) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError(dir + ": cannot create: " + ec.message());
  std::string capture_name = request.name + ".gpucap";
  std::string capture_path = (fs::path(dir) / capture_name).string();
  auto trimmed = Trim(source, request, capture_path, progress);
  if (!trimmed.ok()) return trimmed.status();
  Fixture f;
  f.warnings = trimmed->warnings;
  f.files.push_back(capture_path);

  FixtureManifest m;
  m.capture = capture_name;
  m.source = Basename(source.path());
  m.window = trimmed->window;
  m.select = trimmed->select;
  m.lookback = std::to_string(request.build.launch_lookback_ns);
  m.anonymized = request.anonymize || !request.anonymize_key.empty();
  m.formats = GoldenFormats();
  auto goldens = WriteFixtureGoldens(dir, m, dir);
  if (!goldens.ok()) return goldens.status();
  m.goldens = *goldens;
  for (const std::string& g : m.goldens) f.files.push_back((fs::path(dir) / g).string());
  std::string manifest = (fs::path(dir) / (request.name + ".fixture.json")).string();
  GPUCAP_RETURN_IF_ERROR(WriteText(manifest, FixtureManifestJson(m)));
  f.files.push_back(manifest);

  if (request.verify && !m.anonymized) {
    auto small = builder::CaptureIndex::Open(capture_path);
    if (!small.ok()) return small.status();
    GPUCAP_RETURN_IF_ERROR(VerifyTrimmed(source, request.build, **small, *trimmed));
  }
  return f;
}

}  // namespace gpucap::tools
