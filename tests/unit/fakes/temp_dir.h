// TempDir: a directory of the test's own under the system's temporary directory (mkdtemp: mode
// 0700, a fresh name), removed with everything in it when the TempDir goes. Unit tests that need
// real files (descriptors, pipes, rank directories) use it; the others use FakeFileSystem.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace tv::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "tv-test") {
    std::string templ = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(templ.data()) == nullptr)
      throw std::runtime_error("mkdtemp " + templ + " failed");
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;  // a test may have made a file read-only or removed the directory
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tv::testing
