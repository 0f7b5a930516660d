#include "health/dynamic_library.h"

#include <dlfcn.h>
#include <link.h>

namespace tv {
namespace {

class DlopenLibrary final : public DynamicLibrary {
 public:
  explicit DlopenLibrary(void* handle) : handle_(handle) {}
  void* symbol(const char* name) const override { return dlsym(handle_, name); }
  std::string path() const override {
    link_map* map = nullptr;
    if (dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr)
      return {};
    return map->l_name;
  }

 private:
  void* handle_;  // never dlclose'd (see the header)
};

}  // namespace

std::shared_ptr<DynamicLibrary> DlopenLoader::open(const std::string& name_or_path,
                                                   std::string* why) const {
  void* handle = dlopen(name_or_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    if (why) {
      const char* err = dlerror();
      *why = err ? err : ("dlopen(" + name_or_path + ") failed");
    }
    return nullptr;
  }
  return std::make_shared<DlopenLibrary>(handle);
}

}  // namespace tv
