# SPDX-License-Identifier: MIT
# The command's dependencies in a Windows build: CLI11, nlohmann-json and {fmt}
# header-only (fmt with FMT_HEADER_ONLY). A cross build takes the headers
# Debian installs for Linux (libcli11-dev, nlohmann-json3-dev, libfmt-dev):
# they are plain C++, but /usr/include as a whole must not reach the mingw
# compiler (glibc's headers would shadow mingw's), so only their three
# directories are linked into one include directory of the build. A native
# Windows build finds the packages as usual.
if(CMAKE_CROSSCOMPILING)
  set(PROCTIMES_HOST_INCLUDE /usr/include CACHE PATH "Where the build machine's CLI11, nlohmann-json and fmt headers are")
  set(proctimes_deps_include ${CMAKE_BINARY_DIR}/windows-deps/include)
  file(MAKE_DIRECTORY ${proctimes_deps_include})
  foreach(dir CLI nlohmann fmt)
    if(NOT EXISTS ${PROCTIMES_HOST_INCLUDE}/${dir})
      message(FATAL_ERROR "${PROCTIMES_HOST_INCLUDE}/${dir} is missing: apt-get install libcli11-dev nlohmann-json3-dev libfmt-dev")
    endif()
    file(CREATE_LINK ${PROCTIMES_HOST_INCLUDE}/${dir} ${proctimes_deps_include}/${dir} SYMBOLIC)
  endforeach()
  foreach(target CLI11::CLI11 nlohmann_json::nlohmann_json fmt::fmt)
    if(NOT TARGET ${target})
      add_library(${target} INTERFACE IMPORTED GLOBAL)
      set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${proctimes_deps_include})
    endif()
  endforeach()
  set_property(TARGET fmt::fmt APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)
else()
  find_package(CLI11 CONFIG REQUIRED)
  find_package(nlohmann_json REQUIRED)
  find_package(fmt REQUIRED)
endif()
