// The portable binary runs on glibc 2.35 (Ubuntu 22.04, the Isaac Sim and Cosmos images), but it
// is built against Debian 12's glibc 2.36 and links libstdc++ statically. GCC 12's libstdc++
// (std::random_device, random.o) calls arc4random, which glibc has only since 2.36, so the
// binary would ask for GLIBC_2.36 and the loader would refuse it on 22.04. The portable link
// wraps that one call (-Wl,--wrap=arc4random, CMakeLists.txt) and answers it with getrandom(2),
// in glibc since 2.25. scripts/check-portable.sh fails the build if any newer symbol comes back.
#include <sys/random.h>

#include <cerrno>
#include <cstdint>

extern "C" uint32_t __wrap_arc4random(void) {
  uint32_t value = 0;
  ssize_t got = 0;
  do {
    got = getrandom(&value, sizeof value, 0);
  } while (got < 0 && errno == EINTR);
  // getrandom blocks until the pool is seeded and never returns short for 4 bytes; on any other
  // failure (ENOSYS on kernels before 3.17) the value stays 0, as arc4random has no error path.
  return value;
}
