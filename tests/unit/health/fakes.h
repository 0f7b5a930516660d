// Fakes for the health module's OS seams.
#pragma once

#include <map>
#include <string>

#include "health/dynamic_library.h"

namespace tv::testing {

class FakeLibrary final : public DynamicLibrary {
 public:
  explicit FakeLibrary(std::string path) : path_(std::move(path)) {}
  template <class Fn>
  void add(const char* name, Fn* fn) {
    symbols_[name] = reinterpret_cast<void*>(fn);
  }
  void* symbol(const char* name) const override {
    auto it = symbols_.find(name);
    return it == symbols_.end() ? nullptr : it->second;
  }
  std::string path() const override { return path_; }

 private:
  std::string path_;
  std::map<std::string, void*> symbols_;
};

class FakeLoader final : public LibraryLoader {
 public:
  void add(const std::string& name, std::shared_ptr<FakeLibrary> lib) {
    libs_[name] = std::move(lib);
  }
  std::shared_ptr<DynamicLibrary> open(const std::string& name, std::string* why) const override {
    auto it = libs_.find(name);
    if (it != libs_.end()) return it->second;
    if (why) *why = name + ": cannot open shared object file: No such file or directory";
    return nullptr;
  }

 private:
  std::map<std::string, std::shared_ptr<FakeLibrary>> libs_;
};

}  // namespace tv::testing
