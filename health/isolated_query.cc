#include "health/isolated_query.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/exit_codes.h"
#include "common/file_system.h"
#include "common/json_text.h"
#include "common/parse_number.h"
#include "health/dynamic_library.h"
#include "health/subprocess.h"

namespace tv {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuDevice, index, name, cc_major, cc_minor,
                                                memory_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuInventory, driver_loaded, driver_path,
                                                driver_version, devices, error)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LibfabricInfo, loaded, path, version,
                                                installer_path, provider, rc, error, hmem,
                                                provider_name, provider_version, fabric, domains)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(UniqueIdResult, hex, library_path, version, error)

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "trainvisor" : p.string();
}

std::chrono::seconds query_timeout(const Environment& env) {
  const auto v = env.get("TRAINVISOR_CHECK_TIMEOUT");
  if (!v || v->empty()) return std::chrono::seconds(60);
  return std::chrono::seconds(parse_integer<long>(*v, 1, 3600).value_or(60));
}

namespace {

std::string describe(const std::vector<std::string>& args) {
  std::string out = "trainvisor __query";
  for (const auto& a : args) out += " " + a;
  return out;
}

nlohmann::json last_json_line(const std::string& text) {
  const auto end = text.find_last_not_of('\n');
  if (end == std::string::npos) return nullptr;
  const auto start = text.rfind('\n', end);
  return nlohmann::json::parse(text.substr(start == std::string::npos ? 0 : start + 1), nullptr,
                               false);
}

// The answer in a query child's output: its last line, a JSON object, when it exited 0.
Result<nlohmann::json> answer_of(const std::vector<std::string>& args, const std::string& text,
                                 int code, bool timed_out, std::chrono::seconds timeout) {
  if (timed_out)
    return Error{ErrorKind::kFailed, describe(args) + " hung: killed after " +
                                         std::to_string(timeout.count()) +
                                         " s (TRAINVISOR_CHECK_TIMEOUT)"};
  nlohmann::json j = last_json_line(text);
  if (code != 0 || !j.is_object())
    return Error{ErrorKind::kFailed,
                 describe(args) + " exited " + std::to_string(code) + " without an answer"};
  return j;
}

// Runs `trainvisor __query args...` to its end (or the deadline) and parses its answer.
Result<nlohmann::json> run_query(const std::vector<std::string>& args, const Environment& env) {
  char tmpl[] = "/tmp/trainvisor-query-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  if (fd < 0) return Error{ErrorKind::kFailed, describe(args) + ": cannot create a temporary file"};
  ::close(fd);
  std::vector<std::string> argv{self_exe(), "__query"};
  argv.insert(argv.end(), args.begin(), args.end());
  const auto timeout = query_timeout(env);
  ChildGroup group;
  auto pid = spawn_to_files(group, argv, env, tmpl, "");
  std::optional<ChildEnd> end;
  if (pid) end = group.wait_all(ChildGroup::Clock::now() + timeout).front();
  const std::string text = read_output_file(tmpl);
  ::unlink(tmpl);
  if (!pid) return Error{ErrorKind::kFailed, describe(args) + ": " + pid.error().message};
  return answer_of(args, text, end->code, end->timed_out, timeout);
}

template <class T>
Result<T> query_as(const std::vector<std::string>& args, const Environment& env) {
  auto j = run_query(args, env);
  if (!j) return j.error();
  try {
    return j->get<T>();
  } catch (const nlohmann::json::exception& e) {
    return Error{ErrorKind::kFailed,
                 describe(args) + " answered in an unexpected form: " + e.what()};
  }
}

// Reads the first line the child writes on `fd`, until `deadline`.
std::optional<std::string> read_line(int fd, ChildGroup::Clock::time_point deadline) {
  std::string text;
  char buf[4096];
  while (text.find('\n') == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - ChildGroup::Clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long>(left.count(), 60000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    const ssize_t got = ::read(fd, buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // the child closed it: it is gone
    text.append(buf, static_cast<size_t>(got));
  }
  return text.substr(0, text.find('\n'));
}

}  // namespace

Result<GpuInventory> isolated_query_gpus(const Environment& env) {
  return query_as<GpuInventory>({"gpu"}, env);
}

Result<GpuHealthSnapshot> isolated_query_gpu_health(const Environment& env) {
  auto j = run_query({"gpu-health"}, env);
  if (!j) return j.error();
  return snapshot_from_json(*j);
}

std::vector<std::string> gpu_health_query_argv() { return {self_exe(), "__query", "gpu-health"}; }

Result<GpuHealthSnapshot> gpu_health_answer(const std::string& output, int exit_code,
                                            bool timed_out, const Environment& env) {
  auto j = answer_of({"gpu-health"}, output, exit_code, timed_out, query_timeout(env));
  if (!j) return j.error();
  return snapshot_from_json(*j);
}

Result<LibfabricInfo> isolated_query_libfabric(const Environment& env,
                                               const std::string& provider) {
  return query_as<LibfabricInfo>({"libfabric", provider}, env);
}

Result<UniqueIdResult> isolated_load_nccl(const Environment& env, const std::string& library) {
  return query_as<UniqueIdResult>({"nccl", library}, env);
}

NcclIdHost::NcclIdHost(const Environment& env, const std::string& library) {
  const std::vector<std::string> args{"nccl-unique-id", library};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result_.error = describe(args) + ": cannot create a pipe";
    return;
  }
  auto pid = group_.spawn(
      SpawnRequest{self_exe(), {self_exe(), "__query", args[0], args[1]}, env, -1, fds[1], -1});
  ::close(fds[1]);
  const auto timeout = query_timeout(env);
  std::optional<std::string> line;
  if (pid) line = read_line(fds[0], ChildGroup::Clock::now() + timeout);
  ::close(fds[0]);
  if (!pid) {
    result_.error = describe(args) + ": " + pid.error().message;
  } else if (!line) {
    group_.kill_all();
    result_.error = describe(args) + " hung: killed after " + std::to_string(timeout.count()) +
                    " s (TRAINVISOR_CHECK_TIMEOUT)";
  } else {
    const auto j = nlohmann::json::parse(*line, nullptr, false);
    if (j.is_object())
      result_ = j.get<UniqueIdResult>();
    else
      result_.error = describe(args) + " ended without an answer";
  }
}

namespace {

void print(const nlohmann::json& j) {
  std::printf("%s\n", json_text(j, -1).c_str());
  std::fflush(stdout);
}

}  // namespace

int vendor_query_main(const std::vector<std::string>& args, const Environment& env) {
  const std::string kind = args.empty() ? "" : args[0];
  const std::string arg = args.size() > 1 ? args[1] : "";
  if (kind == "gpu" && args.size() == 1) {
    print(query_gpus(DlopenLoader{}));
  } else if (kind == "gpu-health" && args.size() == 1) {
    print(snapshot_to_json(query_gpu_health(DlopenLoader{}, env)));
  } else if (kind == "gpu-watch" && args.size() == 2 && parse_finite(arg, 0.01, 3600)) {
    return gpu_watch_main(DlopenLoader{}, env, *parse_finite(arg, 0.01, 3600));
  } else if (kind == "libfabric" && args.size() == 2) {
    print(query_libfabric(DlopenLoader{}, RealFileSystem{}, arg));
  } else if (kind == "nccl" && args.size() == 2) {
    print(load_nccl(DlopenLoader{}, arg));
  } else if (kind == "nccl-unique-id" && args.size() == 2) {
    print(make_unique_id(DlopenLoader{}, arg));
    for (;;) ::pause();  // NCCL's bootstrap root lives in this process: stay until killed
  } else {
    std::fprintf(stderr,
                 "usage: trainvisor __query gpu | gpu-health | libfabric PROVIDER | nccl LIBRARY | "
                 "nccl-unique-id LIBRARY | gpu-watch SECONDS\n");
    return exit_code_of(ErrorKind::kUsage);
  }
  return exit_code::kOk;
}

}  // namespace tv
