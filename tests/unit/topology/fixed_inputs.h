// Test doubles of the topology's two OS seams (launcher/topology/gpu_count.h: GpuCounter,
// launcher/topology/host_address.h: HostAddress): a fixed GPU count and a fixed own address.
#pragma once

#include <string>
#include <utility>

#include "common/exit_codes.h"
#include "launcher/topology/gpu_count.h"
#include "launcher/topology/host_address.h"

namespace tv {

class FixedGpuCounter final : public GpuCounter {
 public:
  explicit FixedGpuCounter(int n, std::string why = "fixed") : n_(n), why_(std::move(why)) {}
  int count() const override { return n_; }
  std::string describe() const override { return why_; }

 private:
  int n_;
  std::string why_;
};

// A fixed address, or an error when `addr` is empty.
class FixedHostAddress final : public HostAddress {
 public:
  explicit FixedHostAddress(std::string addr) : addr_(std::move(addr)) {}
  Result<std::string> ipv4() const override {
    if (addr_.empty()) return Error{ErrorKind::kConfig, "this node's own address: none (test)"};
    return addr_;
  }
  std::string describe() const override { return "fixed address"; }

 private:
  std::string addr_;
};

}  // namespace tv
