#include "health/gpu_watch.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "common/json_field.h"
#include "common/json_text.h"
#include "common/parse_number.h"
#include "health/nvml_api.h"

namespace tv {
namespace {

using Clock = std::chrono::steady_clock;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::optional<unsigned> visible_entry(const std::string& token,
                                      const std::vector<std::string>& uuids) {
  if (token.rfind("GPU-", 0) == 0) {
    for (unsigned i = 0; i < uuids.size(); ++i)
      if (uuids[i].rfind(token, 0) == 0) return i;
    return std::nullopt;
  }
  auto index = parse_integer<unsigned>(token, 0, 1u << 20);
  if (index && *index < uuids.size()) return index;
  return std::nullopt;
}

bool lost(nvml::Return r) { return r == nvml::kErrorGpuIsLost; }

// One device's counters; a query the device does not support leaves its field unset.
GpuReading read_device(const nvml::Api& api, nvml::Device dev) {
  GpuReading r;
  if (api.nvmlDeviceGetTotalEccErrors) {
    unsigned long long n = 0;
    const auto rc =
        api.nvmlDeviceGetTotalEccErrors(dev, nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc, &n);
    if (rc == nvml::kSuccess) r.ecc_uncorrected = n;
    r.lost |= lost(rc);
  }
  if (api.nvmlDeviceGetRetiredPagesPendingStatus) {
    int pending = 0;
    const auto rc = api.nvmlDeviceGetRetiredPagesPendingStatus(dev, &pending);
    if (rc == nvml::kSuccess) r.retired_pages_pending = pending == nvml::kFeatureEnabled;
    r.lost |= lost(rc);
  }
  if (api.nvmlDeviceGetRemappedRows) {
    unsigned corrected = 0, uncorrected = 0, pending = 0, failed = 0;
    const auto rc = api.nvmlDeviceGetRemappedRows(dev, &corrected, &uncorrected, &pending, &failed);
    if (rc == nvml::kSuccess) {
      r.remap_pending = pending != 0;
      r.remap_failed = failed != 0;
    }
    r.lost |= lost(rc);
  }
  if (api.nvmlDeviceGetCurrentClocksEventReasons) {
    unsigned long long reasons = 0;
    const auto rc = api.nvmlDeviceGetCurrentClocksEventReasons(dev, &reasons);
    if (rc == nvml::kSuccess) r.clock_event_reasons = reasons;
    r.lost |= lost(rc);
  }
  return r;
}

GpuIdentity identify(const nvml::Api& api, nvml::Device dev, unsigned index) {
  GpuIdentity g;
  g.index = static_cast<int>(index);
  char text[128] = {};
  if (api.nvmlDeviceGetUUID(dev, text, sizeof(text) - 1) == nvml::kSuccess) g.uuid = text;
  std::fill(std::begin(text), std::end(text), '\0');
  if (api.nvmlDeviceGetName && api.nvmlDeviceGetName(dev, text, sizeof(text) - 1) == nvml::kSuccess)
    g.name = text;
  nvml::PciInfo pci{};
  if (api.nvmlDeviceGetPciInfo && api.nvmlDeviceGetPciInfo(dev, &pci) == nvml::kSuccess) {
    pci.bus_id[sizeof(pci.bus_id) - 1] = '\0';
    g.pci_bus_id = pci.bus_id;
  }
  return g;
}

struct Devices {
  nvml::Api api;
  std::string error;
  std::string driver_version;
  std::vector<GpuIdentity> gpus;
  std::vector<nvml::Device> handles;
};

Devices open_devices(const LibraryLoader& loader, const Environment& env) {
  Devices d;
  std::string why;
  d.api = nvml::load(loader, &why);
  if (!d.api.lib) {
    d.error = "libnvidia-ml.so.1 could not be loaded (" + why + ")";
    return d;
  }
  if (auto rc = d.api.nvmlInit(); rc != nvml::kSuccess) {
    d.error = "nvmlInit failed: " + nvml::error_string(d.api, rc);
    return d;
  }
  char version[96] = {};
  if (d.api.nvmlSystemGetDriverVersion &&
      d.api.nvmlSystemGetDriverVersion(version, sizeof(version) - 1) == nvml::kSuccess)
    d.driver_version = version;
  unsigned count = 0;
  if (auto rc = d.api.nvmlDeviceGetCount(&count); rc != nvml::kSuccess) {
    d.error = "nvmlDeviceGetCount failed: " + nvml::error_string(d.api, rc);
    return d;
  }
  std::vector<nvml::Device> all(count, nullptr);
  std::vector<GpuIdentity> ids(count);
  std::vector<std::string> uuids(count);
  for (unsigned i = 0; i < count; ++i) {
    if (d.api.nvmlDeviceGetHandleByIndex(i, &all[i]) == nvml::kSuccess)
      ids[i] = identify(d.api, all[i], i);
    ids[i].index = static_cast<int>(i);
    uuids[i] = ids[i].uuid;
  }
  for (unsigned i : visible_gpus(env.get("CUDA_VISIBLE_DEVICES"), uuids)) {
    if (!all[i]) continue;
    d.handles.push_back(all[i]);
    d.gpus.push_back(ids[i]);
  }
  if (d.gpus.empty())
    d.error = "no GPU visible to NVML (" + std::to_string(count) +
              " in all; CUDA_VISIBLE_DEVICES=" + env.get("CUDA_VISIBLE_DEVICES").value_or("unset") +
              ")";
  return d;
}

void print(const nlohmann::json& j, bool* ok) {
  std::printf("%s\n", json_text(j, -1).c_str());
  if (std::fflush(stdout) != 0) *ok = false;
}

template <class T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  j[key] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

template <class T>
std::optional<T> take(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return std::nullopt;
  return json_field(j, key, T{});
}

// The watch itself: events, the counters every interval, a line for each change.
class Watch {
 public:
  Watch(Devices d, double interval_s)
      : d_(std::move(d)), interval_(std::chrono::duration<double>(interval_s)) {}

  int run() {
    const bool events = register_events();
    print({{"event", "watching"},
           {"driver_version", d_.driver_version},
           {"library", d_.api.lib->path()},
           {"interval_s", interval_.count()},
           {"xid_events", events},
           {"gpus", gpus_json()}},
          &ok_);
    for (std::size_t i = 0; i < d_.gpus.size(); ++i) {
      baseline_.push_back(read_device(d_.api, d_.handles[i]));
      print({{"event", "reading"},
             {"gpu", identity_json(d_.gpus[i])},
             {"reading", reading_json(baseline_[i])}},
            &ok_);
    }
    active_.resize(d_.gpus.size());
    poll();
    auto next_poll = Clock::now() + std::chrono::duration_cast<Clock::duration>(interval_);
    while (ok_) {
      wait_for_event(next_poll);
      if (Clock::now() >= next_poll) {
        poll();
        next_poll = Clock::now() + std::chrono::duration_cast<Clock::duration>(interval_);
      }
    }
    return 1;  // stdout is gone: the Supervisor is
  }

 private:
  bool register_events() {
    if (!d_.api.nvmlEventSetCreate || !d_.api.nvmlDeviceRegisterEvents || !d_.api.nvmlEventSetWait)
      return false;
    if (d_.api.nvmlEventSetCreate(&set_) != nvml::kSuccess) return false;
    bool any = false;
    for (auto h : d_.handles)
      any |=
          d_.api.nvmlDeviceRegisterEvents(h, nvml::kEventXidCriticalError, set_) == nvml::kSuccess;
    return events_ = any;
  }

  // Blocks until an event or `until`; without events (or after an error from the wait) it sleeps.
  void wait_for_event(Clock::time_point until) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) return;
    if (!events_) return std::this_thread::sleep_for(left);
    nvml::EventData data{};
    const auto rc = d_.api.nvmlEventSetWait(set_, &data, static_cast<unsigned>(left.count()));
    if (rc == nvml::kSuccess && (data.event_type & nvml::kEventXidCriticalError))
      return report_xid(data);
    if (rc == nvml::kSuccess || rc == nvml::kErrorTimeout) return;
    // A lost GPU or a broken event set: the counters say which GPU; stop waiting on events that
    // return at once (no busy loop).
    print({{"event", "note"},
           {"message", "nvmlEventSetWait failed: " + nvml::error_string(d_.api, rc) +
                           "; reading the counters only"}},
          &ok_);
    events_ = false;
    poll();
  }

  void report_xid(const nvml::EventData& data) {
    const auto it = std::find(d_.handles.begin(), d_.handles.end(), data.device);
    if (it == d_.handles.end()) return;  // a GPU this job does not use (or 999: none named)
    const XidInfo x = xid_info(static_cast<unsigned>(data.event_data));
    print({{"event", "xid"},
           {"gpu", identity_json(d_.gpus[static_cast<std::size_t>(it - d_.handles.begin())])},
           {"xid", x.xid},
           {"fatal", x.fatal},
           {"meaning", x.meaning}},
          &ok_);
  }

  void poll() {
    for (std::size_t i = 0; i < d_.gpus.size() && ok_; ++i) {
      std::map<std::string, GpuCondition> now;
      for (auto& c : training_conditions(read_device(d_.api, d_.handles[i]), baseline_[i]))
        now.emplace(c.name, c);
      for (const auto& [name, c] : now)
        if (!active_[i].count(name)) report(i, c, true);
      for (const auto& name : active_[i])
        if (!now.count(name)) report(i, GpuCondition{name, false, "cleared"}, false);
      active_[i].clear();
      for (const auto& kv : now) active_[i].insert(kv.first);
    }
  }

  void report(std::size_t i, const GpuCondition& c, bool active) {
    print({{"event", "condition"},
           {"gpu", identity_json(d_.gpus[i])},
           {"condition", c.name},
           {"active", active},
           {"fatal", c.fatal},
           {"message", c.message}},
          &ok_);
  }

  nlohmann::json gpus_json() const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& g : d_.gpus) out.push_back(identity_json(g));
    return out;
  }

  Devices d_;
  std::chrono::duration<double> interval_;
  nvml::EventSet set_ = nullptr;
  bool events_ = false;
  bool ok_ = true;
  std::vector<GpuReading> baseline_;
  std::vector<std::set<std::string>> active_;
};

}  // namespace

std::vector<unsigned> visible_gpus(const std::optional<std::string>& cvd,
                                   const std::vector<std::string>& uuids) {
  std::vector<unsigned> out;
  if (!cvd) {
    for (unsigned i = 0; i < uuids.size(); ++i) out.push_back(i);
    return out;
  }
  std::size_t start = 0;
  while (start <= cvd->size()) {
    const auto comma = cvd->find(',', start);
    const std::string token =
        trim(cvd->substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? cvd->size() + 1 : comma + 1;
    if (token.rfind("MIG-", 0) == 0) continue;
    const auto index = visible_entry(token, uuids);
    if (!index) break;  // CUDA ignores the rest of the list from the first invalid entry
    if (std::find(out.begin(), out.end(), *index) == out.end()) out.push_back(*index);
  }
  return out;
}

nlohmann::json identity_json(const GpuIdentity& g) {
  return {{"index", g.index}, {"uuid", g.uuid}, {"pci_bus_id", g.pci_bus_id}, {"name", g.name}};
}

nlohmann::json reading_json(const GpuReading& r) {
  nlohmann::json j = {{"lost", r.lost}};
  put(j, "ecc_uncorrected", r.ecc_uncorrected);
  put(j, "retired_pages_pending", r.retired_pages_pending);
  put(j, "remap_pending", r.remap_pending);
  put(j, "remap_failed", r.remap_failed);
  put(j, "clock_event_reasons", r.clock_event_reasons);
  return j;
}

GpuHealthSnapshot query_gpu_health(const LibraryLoader& loader, const Environment& env) {
  GpuHealthSnapshot s;
  Devices d = open_devices(loader, env);
  s.error = d.error;
  s.driver_version = d.driver_version;
  if (!d.api.lib) return s;
  s.loaded = true;
  s.library_path = d.api.lib->path();
  s.gpus = d.gpus;
  for (auto h : d.handles) s.readings.push_back(read_device(d.api, h));
  return s;
}

nlohmann::json snapshot_to_json(const GpuHealthSnapshot& s) {
  nlohmann::json gpus = nlohmann::json::array();
  for (std::size_t i = 0; i < s.gpus.size(); ++i) {
    auto g = identity_json(s.gpus[i]);
    g["reading"] = reading_json(s.readings.at(i));
    gpus.push_back(g);
  }
  return {{"loaded", s.loaded},
          {"error", s.error},
          {"library_path", s.library_path},
          {"driver_version", s.driver_version},
          {"gpus", gpus}};
}

GpuHealthSnapshot snapshot_from_json(const nlohmann::json& j) {
  GpuHealthSnapshot s;
  s.loaded = json_field(j, "loaded", false);
  s.error = json_field(j, "error", std::string());
  s.library_path = json_field(j, "library_path", std::string());
  s.driver_version = json_field(j, "driver_version", std::string());
  if (!j.is_object() || !j.contains("gpus") || !j["gpus"].is_array()) return s;
  for (const auto& g : j["gpus"]) {
    GpuIdentity id{json_field(g, "index", 0), json_field(g, "uuid", std::string()),
                   json_field(g, "pci_bus_id", std::string()),
                   json_field(g, "name", std::string())};
    const nlohmann::json r = g.is_object() && g.contains("reading") ? g["reading"] : nullptr;
    GpuReading reading;
    reading.lost = json_field(r, "lost", false);
    reading.ecc_uncorrected = take<unsigned long long>(r, "ecc_uncorrected");
    reading.retired_pages_pending = take<bool>(r, "retired_pages_pending");
    reading.remap_pending = take<bool>(r, "remap_pending");
    reading.remap_failed = take<bool>(r, "remap_failed");
    reading.clock_event_reasons = take<unsigned long long>(r, "clock_event_reasons");
    s.gpus.push_back(id);
    s.readings.push_back(reading);
  }
  return s;
}

int gpu_watch_main(const LibraryLoader& loader, const Environment& env, double interval_s) {
  Devices d = open_devices(loader, env);
  if (!d.error.empty()) {
    bool ok = true;
    print({{"event", "unavailable"}, {"reason", d.error}}, &ok);
    return 0;
  }
  return Watch(std::move(d), interval_s).run();
}

}  // namespace tv
