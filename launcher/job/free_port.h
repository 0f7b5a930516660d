// A TCP port that is free now: the kernel's choice for a bind to port 0 on `bind_addr`, released
// at once. Used for every restart's fresh MASTER_PORT, on one node as on many.
#pragma once

#include <string>

namespace tv {

// 0 when the kernel gives none (bad address, no ports left).
int kernel_free_port(const std::string& bind_addr);

}  // namespace tv
