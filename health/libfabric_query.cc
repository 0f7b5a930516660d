// query_libfabric and libfabric_check (see efa_check.h): fi_getinfo through a dlopen'd libfabric.
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <cstring>
#include <filesystem>

#include "health/efa_check.h"

namespace tv {
namespace {

constexpr const char* kInstallerLib = "/opt/amazon/efa/lib/libfabric.so.1";

struct FabricApi {
  uint32_t (*version)() = nullptr;
  int (*getinfo)(uint32_t, const char*, const char*, uint64_t, const fi_info*, fi_info**) = nullptr;
  void (*freeinfo)(fi_info*) = nullptr;
  fi_info* (*dupinfo)(const fi_info*) = nullptr;
  const char* (*strerror)(int) = nullptr;
};

std::shared_ptr<DynamicLibrary> open_libfabric(const LibraryLoader& loader, const FileSystem& fs,
                                               std::string* why) {
  if (auto lib = loader.open("libfabric.so.1", why)) return lib;
  if (!fs.exists(kInstallerLib)) return nullptr;
  return loader.open(kInstallerLib, why);
}

std::string ver(uint32_t v) {
  return std::to_string(FI_MAJOR(v)) + "." + std::to_string(FI_MINOR(v));
}

int ask(const FabricApi& api, const std::string& provider, bool hmem, fi_info** out) {
  fi_info* hints = api.dupinfo(nullptr);
  if (!hints) return -FI_ENOMEM;
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | (hmem ? FI_HMEM : 0);
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | (hmem ? FI_MR_HMEM : 0);
  hints->fabric_attr->prov_name = strdup(provider.c_str());
  const int rc = api.getinfo(api.version(), nullptr, nullptr, 0, hints, out);
  api.freeinfo(hints);  // frees prov_name too
  return rc;
}

void read_answers(const fi_info* list, LibfabricInfo& info) {
  for (const fi_info* i = list; i; i = i->next) {
    if (info.provider_name.empty() && i->fabric_attr) {
      info.provider_name = i->fabric_attr->prov_name ? i->fabric_attr->prov_name : "";
      info.provider_version = std::to_string(FI_MAJOR(i->fabric_attr->prov_version)) + "." +
                              std::to_string(FI_MINOR(i->fabric_attr->prov_version));
      info.fabric = i->fabric_attr->name ? i->fabric_attr->name : "";
    }
    if (i->domain_attr && i->domain_attr->name) {
      std::string d = i->domain_attr->name;
      if (std::find(info.domains.begin(), info.domains.end(), d) == info.domains.end())
        info.domains.push_back(d);
    }
  }
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec1, ec2;
  return std::filesystem::equivalent(a, b, ec1) && !ec1 && !ec2;
}

}  // namespace

LibfabricInfo query_libfabric(const LibraryLoader& loader, const FileSystem& fs,
                              const std::string& provider) {
  LibfabricInfo info;
  info.provider = provider;
  if (fs.exists(kInstallerLib)) info.installer_path = kInstallerLib;
  std::string why;
  auto lib = open_libfabric(loader, fs, &why);
  if (!lib) {
    info.error = "libfabric.so.1 could not be loaded (" + why + ")";
    return info;
  }
  FabricApi api{
      lib->function<uint32_t()>("fi_version"),
      lib->function<int(uint32_t, const char*, const char*, uint64_t, const fi_info*, fi_info**)>(
          "fi_getinfo"),
      lib->function<void(fi_info*)>("fi_freeinfo"),
      lib->function<fi_info*(const fi_info*)>("fi_dupinfo"),
      lib->function<const char*(int)>("fi_strerror")};
  info.path = lib->path();
  if (!api.version || !api.getinfo || !api.freeinfo || !api.dupinfo) {
    info.error = info.path + " lacks fi_getinfo/fi_dupinfo/fi_freeinfo/fi_version";
    return info;
  }
  info.loaded = true;
  info.version = ver(api.version());
  fi_info* list = nullptr;
  info.hmem = true;
  info.rc = ask(api, provider, true, &list);
  if (info.rc == -FI_ENODATA) {
    info.hmem = false;
    info.rc = ask(api, provider, false, &list);
  }
  if (info.rc != 0) {
    info.hmem = false;
    info.error =
        api.strerror ? api.strerror(-info.rc) : ("fi_getinfo error " + std::to_string(info.rc));
    return info;
  }
  read_answers(list, info);
  api.freeinfo(list);
  return info;
}

namespace {

nlohmann::json info_json(const LibfabricInfo& i) {
  return {{"loaded", i.loaded},
          {"path", i.path},
          {"version", i.version},
          {"installer_path", i.installer_path},
          {"provider", i.provider},
          {"rc", i.rc},
          {"error", i.error},
          {"hmem", i.hmem},
          {"provider_name", i.provider_name},
          {"provider_version", i.provider_version},
          {"fabric", i.fabric},
          {"domains", i.domains}};
}

std::string explain_failure(const LibfabricInfo& i) {
  std::string msg = "fi_getinfo(" + i.provider + ", FI_EP_RDM) in " + i.path + " (libfabric " +
                    i.version + ") returned " + std::to_string(i.rc) + " (" + i.error + ")";
  if (i.rc == -FI_ENODATA)
    msg +=
        ": this libfabric has no usable " + i.provider +
        " provider here. Usually the EFA devices' /dev/infiniband/uverbs* nodes are not in the "
        "container, or this libfabric is not the EFA installer's (/opt/amazon/efa/lib): a second "
        "libfabric earlier on the library path, or one built without the efa provider";
  return msg;
}

}  // namespace

CheckResult libfabric_check(const LibfabricInfo& i, bool efa_present, TransportRule required) {
  CheckResult r{"libfabric", Outcome::kPass, "", info_json(i)};
  const bool needed = efa_present || required == TransportRule::kEfa;
  const Outcome bad = needed ? Outcome::kFail : Outcome::kSkip;
  if (!i.loaded) {
    r.outcome = bad;
    r.message =
        i.error + (needed ? ": the aws-ofi-nccl plugin needs it (the EFA installer puts it in "
                            "/opt/amazon/efa/lib)"
                          : "");
    return r;
  }
  if (i.rc != 0) {
    r.outcome = bad;
    r.message = explain_failure(i) + (needed ? "" : " (no EFA device here, so this is expected)");
    return r;
  }
  r.message = "libfabric " + i.version + " at " + i.path + ": provider " + i.provider_name + " " +
              i.provider_version + ", " + std::to_string(i.domains.size()) + " domain(s)" +
              (i.hmem ? ", FI_HMEM (GPU memory) supported" : ", no FI_HMEM");
  if (!i.installer_path.empty() && !same_file(i.path, i.installer_path)) {
    r.outcome = Outcome::kWarn;
    r.message += "; but the EFA installer's " + i.installer_path +
                 " is not the one loaded: a second libfabric is earlier on the library path (put "
                 "/opt/amazon/efa/lib first in LD_LIBRARY_PATH)";
  }
  if (i.provider == "efa" && !i.hmem && r.outcome == Outcome::kPass) {
    r.outcome = Outcome::kWarn;
    r.message += ": GPUDirect RDMA will not be used";
  }
  return r;
}

}  // namespace tv
