# SPDX-License-Identifier: MIT
# proctimes_warnings: the warning flags of every target built here (the
# library, the command, tests, benchmarks, fuzzers, the Python module,
# examples), in one place. Link it PRIVATE, so that nothing reaches the users
# of the installed library:
#   target_link_libraries(my_target PRIVATE proctimes_warnings)
# PROCTIMES_WERROR=ON turns every warning into an error (scripts/test.sh does
# for its main build); the default is OFF, so that a newer compiler's new
# warning does not break a user's build of a release.
option(PROCTIMES_WERROR "Treat compiler warnings as errors" OFF)

add_library(proctimes_warnings INTERFACE)
target_compile_options(proctimes_warnings INTERFACE
  -Wall -Wextra -Wpedantic
  # Narrowing integer conversions are how a 64-bit count of ticks becomes a
  # wrong number; signedness changes are too common in POSIX interfaces
  # (ssize_t, pid_t, size_t) to be worth a cast each.
  -Wconversion -Wno-sign-conversion
  # Designated initializers that name only some members ({.argv = {...}},
  # {.threads = true}) are how the options structs are meant to be filled;
  # GCC 12 would warn for every member left to its default.
  -Wno-missing-field-initializers
  $<$<BOOL:${PROCTIMES_WERROR}>:-Werror>)
