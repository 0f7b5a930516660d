// report_html (launcher/observability/report_render.h): one page, no script, nothing fetched.
#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "common/escape.h"
#include "launcher/observability/report_render.h"

namespace tv {
namespace {

constexpr double kWidth = 1000;  // the SVGs' width
constexpr double kLabels = 130;  // their left column
constexpr double kRow = 30;      // a timeline row
constexpr double kBarRow = 24;   // a bar row

const char* const kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1060px}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px}"
    "table{border-collapse:collapse}th,td{padding:2px 10px;text-align:left;font-size:13px}"
    "th{font-weight:normal;color:#555}td{font-variant-numeric:tabular-nums}"
    "code{font-size:12px;word-break:break-all}"
    "svg text{font-size:12px;fill:#333}"
    ".running,.succeeded{fill:#3a9b4f}.failed{fill:#d33c32}.hung{fill:#e8912d}"
    "rect.running,rect.succeeded,rect.failed,rect.hung,rect.stopped{stroke:#fff;stroke-width:2}"
    ".stopped{fill:#888}.gap{fill:#f3d4d1}.box{fill:none;stroke:#555}"
    ".bar{fill:#c9583f}.bar.productive{fill:#3a9b4f}.bar.outside{fill:#8a7fb8}"
    ".formula{font-family:monospace;background:#f4f4f4;padding:6px 10px;display:inline-block}"
    "li{margin:4px 0;font-size:13px}svg text.exit{font-size:10px;fill:#a32}"
    "svg text.tick{font-size:10px}"
    ".exception{font-family:monospace;font-size:12px;color:#a32}";

std::string num(double v) { return fmt::format("{:.1f}", v); }

std::string figures_table(const JobReport& r) {
  std::string out = "<section id=\"figures\"><h2>Figures</h2><table>\n";
  for (const auto& f : report_figures(r))
    out += fmt::format("<tr><th>{}</th><td data-figure=\"{}\" data-label=\"{}\">{}</td></tr>\n",
                       escape_html(f.label), escape_html(f.id), escape_html(f.label),
                       escape_html(f.value));
  return out + "</table></section>\n";
}

double timeline_span(const JobReport& r) {
  double span = 1;
  for (const auto& c : r.timeline) span = std::max(span, c.end);
  return span;
}

std::string rect(double x, double y, double w, double h, const std::string& cls,
                 const std::string& title) {
  return fmt::format(
      "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>\n",
      escape_html(cls), num(x), num(y), num(std::max(w, 1.0)), num(h), escape_html(title));
}

// The digits of a second the axis needs for ticks `step` seconds apart to differ.
int axis_decimals(double step) {
  if (step >= 1) return 0;
  return step >= 0.1 ? 1 : (step >= 0.01 ? 2 : 3);
}

// Six ticks, each the wall-clock time in UTC (ISO 8601), its offset from the job's first start in
// its title.
std::string axis(double t0, double span, double scale, double bottom) {
  std::string out;
  const int decimals = axis_decimals(span / 5);
  for (int i = 0; i <= 5; ++i) {
    const double t = span * i / 5, x = kLabels + t * scale;
    out += fmt::format(
        "<line x1=\"{0}\" x2=\"{0}\" y1=\"0\" y2=\"{1}\" stroke=\"#ddd\"/><text class=\"tick\" "
        "x=\"{0}\" y=\"{2}\" text-anchor=\"middle\">{3}<title>{4} from the first start</title>"
        "</text>\n",
        num(x), num(bottom), num(bottom + 14), escape_html(iso8601_utc(t0 + t, decimals)),
        escape_html(report_seconds(t)));
  }
  return out;
}

// "exit 75", "killed", "" (no code known): under the container's label.
std::string exit_label(const ReportContainer& c) {
  if (!c.ended) return "killed";
  return c.exit_code ? "exit " + std::to_string(*c.exit_code) : "";
}

std::string container_row(const ReportContainer& c, double y, double scale, double t0) {
  std::string out =
      fmt::format("<text x=\"4\" y=\"{}\">container {}</text>\n", num(y + 13), c.index);
  if (const std::string code = exit_label(c); !code.empty())
    out += fmt::format("<text class=\"exit\" data-exit=\"{}\" x=\"4\" y=\"{}\">{}</text>\n",
                       c.index, num(y + 25), escape_html(code));
  for (const auto& g : c.generations)
    out += rect(kLabels + g.start * scale, y + 6, (g.end - g.start) * scale, kRow - 12, g.outcome,
                fmt::format("generation {}: {} ({} to {})", g.number, g.outcome,
                            report_seconds(g.start), report_seconds(g.end)));
  out += rect(kLabels + c.start * scale, y + 4, (c.end - c.start) * scale, kRow - 8, "box",
              fmt::format("container {}: {} to {}: {}", c.index, iso8601_utc(t0 + c.start),
                          iso8601_utc(t0 + c.end), report_container_end(c)));
  return out;
}

std::string timeline_svg(const JobReport& r) {
  // The right margin holds half of the last tick's label (a date and time at 10 px).
  const double span = timeline_span(r), scale = (kWidth - kLabels - 80) / span;
  const double height = kRow * static_cast<double>(r.timeline.size());
  std::string out = fmt::format(
      "<section id=\"timeline\"><h2>Timeline</h2><p>Each container from its start to its last "
      "heartbeat, its generations inside it (green: ran or succeeded, red: failed, orange: hung, "
      "grey: stopped), how it ended under its name (exit code), the time between containers "
      "shaded; times in UTC.</p>\n<svg width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\">\n",
      num(kWidth), num(height + 24), num(kWidth), num(height + 24));
  for (const auto& g : r.gaps)
    out += rect(kLabels + g.start * scale, 0, (g.end - g.start) * scale, height, "gap",
                fmt::format("between containers: {}", report_seconds(g.end - g.start)));
  out += axis(r.first_started_unix, span, scale, height);
  for (std::size_t i = 0; i < r.timeline.size(); ++i)
    out += container_row(r.timeline[i], kRow * static_cast<double>(i), scale, r.first_started_unix);
  return out + "</svg></section>\n";
}

struct Bar {
  std::string id, label;
  double seconds;
};

std::vector<Bar> bars_of(const JobReport& r) {
  std::vector<Bar> bars{{"productive", "productive", r.productive}};
  for (std::size_t i = 0; i < kBadputCount; ++i)
    if (r.badput[i] > 0) {
      const std::string name = badput_name(static_cast<Badput>(i));
      bars.push_back({"badput_" + name, name, r.badput[i]});
    }
  if (r.outside > 0) bars.push_back({"badput_outside", "outside", r.outside});
  return bars;
}

std::string bars_svg(const JobReport& r) {
  const auto bars = bars_of(r);
  const double top = std::max(1.0, std::max_element(bars.begin(), bars.end(), [](auto& a, auto& b) {
                                     return a.seconds < b.seconds;
                                   })->seconds);
  const double scale = (kWidth - kLabels - 140) / top;
  std::string out = fmt::format(
      "<section id=\"bars\"><h2>Goodput and badput by cause</h2>\n<svg width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\">\n",
      num(kWidth), num(kBarRow * bars.size()), num(kWidth), num(kBarRow * bars.size()));
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const double y = kBarRow * static_cast<double>(i);
    const double share = r.wall > 0 ? b.seconds / r.wall : 0;
    out += fmt::format("<text x=\"4\" y=\"{}\">{}</text>\n", num(y + 16), escape_html(b.label));
    out += fmt::format(
        "<rect class=\"bar {}\" data-bar=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
        b.id == "productive" ? "productive" : (b.id == "badput_outside" ? "outside" : ""),
        escape_html(b.id), num(kLabels), num(y + 4), num(std::max(1.0, b.seconds * scale)),
        num(kBarRow - 8));
    out += fmt::format("<text x=\"{}\" y=\"{}\">{} ({:.1f} %)</text>\n",
                       num(kLabels + b.seconds * scale + 6), num(y + 16),
                       escape_html(report_seconds(b.seconds)), share * 100);
  }
  return out + "</svg></section>\n";
}

const char* const kAdviceText =
    "<section id=\"checkpoints\"><h2>Checkpoint interval against Young/Daly</h2>\n"
    "<p class=\"formula\">Young: T = sqrt(2 &#215; C &#215; MTBF) &#160;&#160; Daly: T = sqrt(2CM) "
    "&#215; (1 + sqrt(C/2M)/3 + (C/2M)/9) &#8722; C &#160;&#160; MTBF = wall / failures</p>\n"
    "<p>C is the mean checkpoint write time, the observed interval the mean time between "
    "checkpoints (every container's, weighted by its checkpoints). The model of what an interval "
    "T costs over the wall time W with F failures: <span class=\"formula\">waste(T) = W &#215; C "
    "/ T + F &#215; T / 2</span> (each save costs C; a failure loses half an interval of work on "
    "average). Young's T minimizes it; <em>saved</em> is waste(observed) &#8722; waste(Young), "
    "in the figures below.</p></section>\n";

// The container's exit code, after the item of its last generation (or of its ending).
std::string exit_of(const ReportContainer& c) {
  if (!c.ended || !c.exit_code || *c.exit_code == 0) return "";
  return fmt::format(" <span class=\"exit\" data-exit=\"{}\">(container exit {})</span>", c.index,
                     *c.exit_code);
}

std::string evidence_item(const ReportContainer& c, const ReportGeneration& g) {
  std::string out = fmt::format("<li>container {}, generation {}: <strong>{}</strong>", c.index,
                                g.number, escape_html(g.outcome));
  if (!g.summary.empty()) out += " &#8212; " + escape_html(g.summary);
  if (&g == &c.generations.back()) out += exit_of(c);
  for (const auto& e : g.evidence) {
    out += "<br><code class=\"evidence\">" + escape_html(e.path) + "</code>";
    if (!e.exception.empty())
      out += " <span class=\"exception\">" + escape_html(e.exception) + "</span>";
  }
  return out + "</li>\n";
}

std::string failures_list(const JobReport& r) {
  std::string out = "<section id=\"failures\"><h2>Failures and their evidence</h2><ul>\n";
  bool any = false;
  for (const auto& c : r.timeline) {
    for (const auto& g : c.generations)
      if (g.outcome == "failed" || g.outcome == "hung") out += evidence_item(c, g), any = true;
    if (!c.end_failure.empty() && c.generations.empty())
      out += fmt::format("<li>container {}: <strong>failed</strong> &#8212; {}{}</li>\n", c.index,
                         escape_html(c.end_failure), exit_of(c)),
          any = true;
    if (!c.failure_file.empty())
      out += fmt::format("<li>container {}: failure file <code class=\"evidence\">{}</code></li>\n",
                         c.index, escape_html(c.failure_file)),
          any = true;
  }
  for (const auto& m : r.poisoned)
    out += "<li>poisoned checkpoint <code class=\"evidence\">" + escape_html(m.path) +
           "</code>: " + escape_html(m.reason) + "</li>\n",
        any = true;
  if (!any) out += "<li>none</li>\n";
  return out + "</ul></section>\n";
}

}  // namespace

std::string report_html(const JobReport& r) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
      "'unsafe-inline'\">\n<title>trainvisor report: ";
  out += escape_html(r.job_id);
  out += "</title>\n<style>";
  out += kStyle;
  out += "</style></head><body>\n<h1>Where the hours went</h1>\n<p>job <code id=\"job\">";
  out += escape_html(r.job_id);
  out += fmt::format("</code>, {} container(s){}, first start <time>{}</time></p>\n", r.containers,
                     r.folded > 0 ? fmt::format(" ({} folded into the totals)", r.folded) : "",
                     iso8601_utc(r.first_started_unix));
  out += timeline_svg(r);
  out += bars_svg(r);
  out += kAdviceText;
  out += failures_list(r);
  out += figures_table(r);
  out += "</body></html>\n";
  return out;
}

}  // namespace tv
