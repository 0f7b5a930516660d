// The figures of /metrics as data: families of samples, each with its labels. One set is both the
// Prometheus text of /metrics (`prometheus_text`) and the OTLP push (otlp_encode.h), so the two
// carry the same series with the same values. Pure.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tv {

struct MetricSample {
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
};

struct MetricFamily {
  std::string name;
  bool counter = false;  // a counter (monotonic since trainvisor started), else a gauge
  std::string help;
  std::vector<MetricSample> samples;  // a family with none still has its HELP and TYPE lines
};

using MetricSet = std::vector<MetricFamily>;

// Prometheus text exposition format 0.0.4; label values escaped (backslash, quote, newline).
std::string prometheus_text(const MetricSet& set);

// Builds a set family by family, sample by sample.
class MetricSetWriter {
 public:
  void family(std::string name, bool counter, std::string help);
  void sample(double value, std::vector<std::pair<std::string, std::string>> labels = {});
  void single(std::string name, bool counter, std::string help, double value);
  MetricSet take() { return std::move(set_); }

 private:
  MetricSet set_;
};

}  // namespace tv
