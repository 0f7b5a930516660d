// Libraries loaded at run time (CUDA driver, NCCL, libfabric, the NCCL net plugin), behind an
// interface so the checks can be unit-tested against fake symbol tables.
//
// DlopenLoader is the one implementation that touches the OS. Libraries it opens are never
// closed: NCCL and the CUDA driver keep threads and handlers that outlive any dlclose.
#pragma once

#include <memory>
#include <string>

namespace tv {

class DynamicLibrary {
 public:
  virtual ~DynamicLibrary() = default;
  // The address of `name`, or nullptr when the library does not export it.
  virtual void* symbol(const char* name) const = 0;
  // The file the loader resolved (e.g. /opt/amazon/efa/lib/libfabric.so.1).
  virtual std::string path() const = 0;

  template <class Fn>
  Fn* function(const char* name) const {
    return reinterpret_cast<Fn*>(symbol(name));
  }
};

class LibraryLoader {
 public:
  virtual ~LibraryLoader() = default;
  // `name_or_path` is a soname searched the way dlopen searches (LD_LIBRARY_PATH, the ld.so
  // cache, the default dirs) or a path. nullptr on failure, with the reason in *why.
  virtual std::shared_ptr<DynamicLibrary> open(const std::string& name_or_path,
                                               std::string* why) const = 0;
};

class DlopenLoader final : public LibraryLoader {
 public:
  std::shared_ptr<DynamicLibrary> open(const std::string& name_or_path,
                                       std::string* why) const override;
};

}  // namespace tv
