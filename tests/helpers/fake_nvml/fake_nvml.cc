// A fake libnvidia-ml.so.1: the NVML calls trainvisor's GPU health watch and preflight make
// (health/nvml_api.h), answered for fake GPUs so that the fault paths run with the real binary.
// Driven by environment variables, read when the library loads; times are milliseconds after
// nvmlInit_v2:
//   TV_FAKE_NVML_GPUS=N                  GPUs (default 2): UUID GPU-fake-000N, PCI 00000000:0N:00.0
//   TV_FAKE_NVML_XID=GPU:XID:AFTER       one Xid event on GPU at AFTER
//   TV_FAKE_NVML_XID_FILE=PATH           one Xid event once PATH exists, read from it as GPU:XID
//                                        (a test raises the fault at the moment it chooses)
//   TV_FAKE_NVML_ECC=GPU:COUNT[:AFTER]   volatile uncorrectable ECC count from AFTER (default 0)
//   TV_FAKE_NVML_REMAP=GPU:pending|failed[:AFTER]
//   TV_FAKE_NVML_RETIRED_PENDING=GPU
//   TV_FAKE_NVML_THROTTLE=GPU:MASK[:AFTER] clock event reasons (0x40 hw_thermal ...)
//   TV_FAKE_NVML_LOST=GPU:AFTER          every query of GPU returns NVML_ERROR_GPU_IS_LOST from
//   AFTER TV_FAKE_NVML_LOG=FILE                each loading process appends "load <pid> <cmdline>",
//   each
//                                         counter read "poll <gpu>"
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

constexpr int kSuccess = 0, kInvalidArgument = 2, kTimeout = 10, kGpuIsLost = 15;
constexpr int kMaxGpus = 8;

struct Fault {
  int gpu = -1;
  long value = 0;
  long after_ms = 0;
  char word[16] = {};
};

struct Gpu {
  int index;
};

Gpu g_gpus[kMaxGpus];
int g_count = 2;
Fault g_xid, g_ecc, g_remap, g_throttle, g_lost;
int g_retired_pending = -1;
bool g_xid_sent = false;
std::chrono::steady_clock::time_point g_start;

Fault parse(const char* name, bool word) {
  Fault f;
  const char* v = std::getenv(name);
  if (!v) return f;
  if (word)
    std::sscanf(v, "%d:%15[a-z]:%ld", &f.gpu, f.word, &f.after_ms);
  else
    std::sscanf(v, "%d:%li:%ld", &f.gpu, &f.value, &f.after_ms);
  return f;
}

long elapsed_ms() {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - g_start)
                               .count());
}

bool on(const Fault& f, int gpu) { return f.gpu == gpu && elapsed_ms() >= f.after_ms; }

void log_line(const char* text) {
  const char* path = std::getenv("TV_FAKE_NVML_LOG");
  if (!path) return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", text);
    std::fclose(f);
  }
}

__attribute__((constructor)) void load() {
  if (const char* n = std::getenv("TV_FAKE_NVML_GPUS")) g_count = std::atoi(n);
  if (g_count < 0 || g_count > kMaxGpus) g_count = 2;
  for (int i = 0; i < kMaxGpus; ++i) g_gpus[i].index = i;
  g_xid = parse("TV_FAKE_NVML_XID", false);
  g_ecc = parse("TV_FAKE_NVML_ECC", false);
  g_remap = parse("TV_FAKE_NVML_REMAP", true);
  g_throttle = parse("TV_FAKE_NVML_THROTTLE", false);
  if (const char* lost = std::getenv("TV_FAKE_NVML_LOST"))
    std::sscanf(lost, "%d:%ld", &g_lost.gpu, &g_lost.after_ms);
  if (const char* r = std::getenv("TV_FAKE_NVML_RETIRED_PENDING")) g_retired_pending = std::atoi(r);
  char cmd[1024] = {};
  const int fd = ::open("/proc/self/cmdline", O_RDONLY);
  const ssize_t n = fd >= 0 ? ::read(fd, cmd, sizeof(cmd) - 1) : 0;
  if (fd >= 0) ::close(fd);
  for (ssize_t i = 0; i + 1 < n; ++i)
    if (cmd[i] == 0) cmd[i] = ' ';
  char line[1100];
  std::snprintf(line, sizeof(line), "load %d %s", static_cast<int>(::getpid()), cmd);
  log_line(line);
}

int gpu_of(void* dev) {
  for (int i = 0; i < g_count; ++i)
    if (dev == &g_gpus[i]) return i;
  return -1;
}

// The GPU's index, or -1 with *rc set (invalid handle, lost GPU).
int check(void* dev, int* rc) {
  const int g = gpu_of(dev);
  *rc = g < 0 ? kInvalidArgument : on(g_lost, g) ? kGpuIsLost : kSuccess;
  return *rc == kSuccess ? g : -1;
}

struct EventData {
  void* device;
  unsigned long long type, data;
  unsigned gi, ci;
};

}  // namespace

extern "C" {

int nvmlInit_v2() {
  g_start = std::chrono::steady_clock::now();
  return kSuccess;
}
int nvmlShutdown() { return kSuccess; }
const char* nvmlErrorString(int rc) {
  return rc == kGpuIsLost ? "GPU is lost" : rc == kTimeout ? "Timeout" : "fake NVML error";
}
int nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  std::snprintf(buf, len, "999.99-fake");
  return kSuccess;
}
int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = static_cast<unsigned>(g_count);
  return kSuccess;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** dev) {
  if (i >= static_cast<unsigned>(g_count)) return kInvalidArgument;
  *dev = &g_gpus[i];
  return kSuccess;
}
int nvmlDeviceGetUUID(void* dev, char* buf, unsigned len) {
  const int g = gpu_of(dev);
  if (g < 0) return kInvalidArgument;
  std::snprintf(buf, len, "GPU-fake-%04d", g);
  return kSuccess;
}
int nvmlDeviceGetName(void* dev, char* buf, unsigned len) {
  if (gpu_of(dev) < 0) return kInvalidArgument;
  std::snprintf(buf, len, "Fake H200");
  return kSuccess;
}
int nvmlDeviceGetPciInfo_v3(void* dev, char* info) {
  const int g = gpu_of(dev);
  if (g < 0) return kInvalidArgument;
  std::memset(info, 0, 68);
  std::snprintf(info + 36, 32, "00000000:%02X:00.0", g + 1);  // nvmlPciInfo_t.busId
  return kSuccess;
}
int nvmlDeviceGetTotalEccErrors(void* dev, int type, int counter, unsigned long long* n) {
  int rc;
  const int g = check(dev, &rc);
  if (g < 0) return rc;
  char line[32];
  std::snprintf(line, sizeof(line), "poll %d", g);
  log_line(line);
  *n = type == 1 && counter == 0 && on(g_ecc, g) ? static_cast<unsigned long long>(g_ecc.value) : 0;
  return kSuccess;
}
int nvmlDeviceGetRetiredPagesPendingStatus(void* dev, int* pending) {
  int rc;
  const int g = check(dev, &rc);
  if (g < 0) return rc;
  *pending = g == g_retired_pending ? 1 : 0;
  return kSuccess;
}
int nvmlDeviceGetRemappedRows(void* dev, unsigned* corr, unsigned* unc, unsigned* pending,
                              unsigned* failed) {
  int rc;
  const int g = check(dev, &rc);
  if (g < 0) return rc;
  *corr = *unc = 0;
  *pending = on(g_remap, g) && std::strcmp(g_remap.word, "pending") == 0;
  *failed = on(g_remap, g) && std::strcmp(g_remap.word, "failed") == 0;
  return kSuccess;
}
int nvmlDeviceGetCurrentClocksEventReasons(void* dev, unsigned long long* reasons) {
  int rc;
  const int g = check(dev, &rc);
  if (g < 0) return rc;
  *reasons = on(g_throttle, g) ? static_cast<unsigned long long>(g_throttle.value) : 0;
  return kSuccess;
}
int nvmlEventSetCreate(void** set) {
  static int the_set;
  *set = &the_set;
  return kSuccess;
}
int nvmlDeviceRegisterEvents(void* dev, unsigned long long, void*) {
  return gpu_of(dev) < 0 ? kInvalidArgument : kSuccess;
}
// The Xid of TV_FAKE_NVML_XID_FILE once that file exists (read as GPU:XID), once.
bool xid_from_file(EventData* data) {
  static bool sent = false;
  const char* path = std::getenv("TV_FAKE_NVML_XID_FILE");
  if (sent || !path) return false;
  FILE* f = std::fopen(path, "r");
  if (!f) return false;
  int gpu = -1;
  long xid = 0;
  const int n = std::fscanf(f, "%d:%li", &gpu, &xid);
  std::fclose(f);
  if (n != 2 || gpu < 0 || gpu >= g_count) return false;
  sent = true;
  *data = EventData{&g_gpus[gpu], 0x8, static_cast<unsigned long long>(xid), 0, 0};
  return true;
}

// Sleeps until the Xid is due or the timeout; returns it once.
int nvmlEventSetWait_v2(void*, EventData* data, unsigned timeout_ms) {
  if (xid_from_file(data)) return kSuccess;
  const long now = elapsed_ms();
  if (g_xid.gpu >= 0 && g_xid.gpu < g_count && !g_xid_sent &&
      g_xid.after_ms <= now + static_cast<long>(timeout_ms)) {
    if (g_xid.after_ms > now)
      std::this_thread::sleep_for(std::chrono::milliseconds(g_xid.after_ms - now));
    g_xid_sent = true;
    *data = EventData{&g_gpus[g_xid.gpu], 0x8, static_cast<unsigned long long>(g_xid.value), 0, 0};
    return kSuccess;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
  return kTimeout;
}

}  // extern "C"
