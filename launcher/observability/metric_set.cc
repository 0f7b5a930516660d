#include "launcher/observability/metric_set.h"

#include <spdlog/fmt/fmt.h>

namespace tv {
namespace {

void append_escaped(std::string& out, const std::string& value) {
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
}

void append_sample(std::string& out, const std::string& name, const MetricSample& s) {
  out += name;
  if (!s.labels.empty()) {
    out += '{';
    for (std::size_t i = 0; i < s.labels.size(); ++i) {
      if (i) out += ',';
      out += s.labels[i].first;
      out += "=\"";
      append_escaped(out, s.labels[i].second);
      out += '"';
    }
    out += '}';
  }
  out += fmt::format(" {}\n", s.value);
}

}  // namespace

std::string prometheus_text(const MetricSet& set) {
  std::string out;
  for (const auto& f : set) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, f.help, f.name,
                       f.counter ? "counter" : "gauge");
    for (const auto& s : f.samples) append_sample(out, f.name, s);
  }
  return out;
}

void MetricSetWriter::family(std::string name, bool counter, std::string help) {
  set_.push_back({std::move(name), counter, std::move(help), {}});
}

void MetricSetWriter::sample(double value,
                             std::vector<std::pair<std::string, std::string>> labels) {
  set_.back().samples.push_back({std::move(labels), value});
}

void MetricSetWriter::single(std::string name, bool counter, std::string help, double value) {
  family(std::move(name), counter, std::move(help));
  sample(value);
}

}  // namespace tv
