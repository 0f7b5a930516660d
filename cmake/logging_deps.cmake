# tv_spdlog: spdlog (and its fmt) as the build wants them.
#   default: Debian's shared libspdlog + libfmt (fast to compile).
#   TRAINVISOR_PORTABLE: both header-only, so the binary needs neither libspdlog.so nor libfmt.so
#   (Ubuntu 22.04 based images have spdlog 1.9 / fmt 8, not Debian 12's 1.10 / 9).
# Debian's spdlog::spdlog_header_only still links the shared fmt::fmt, so the header-only pair is
# assembled here from the packages' own include directories and fmt::fmt-header-only.
add_library(tv_spdlog INTERFACE)
if(TRAINVISOR_PORTABLE)
  get_target_property(tv_spdlog_includes spdlog::spdlog_header_only INTERFACE_INCLUDE_DIRECTORIES)
  target_include_directories(tv_spdlog SYSTEM INTERFACE ${tv_spdlog_includes})
  target_compile_definitions(tv_spdlog INTERFACE SPDLOG_FMT_EXTERNAL)
  target_link_libraries(tv_spdlog INTERFACE fmt::fmt-header-only Threads::Threads)
else()
  target_link_libraries(tv_spdlog INTERFACE spdlog::spdlog)
endif()
