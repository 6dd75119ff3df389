# SPDX-License-Identifier: MIT
# Cross-building proctimes for 64-bit Windows on Debian with mingw-w64, the
# posix thread flavour (std::thread, std::mutex over winpthreads):
#   apt-get install g++-mingw-w64-x86-64-posix wine64 wine
#   cmake --preset windows   (CMakePresets.json; docs/WINDOWS.md)
# Executables link libgcc, libstdc++ and winpthreads statically, so that they
# run under Wine (or on Windows) without copying the compiler's DLLs. Tests
# run through tests/windows/wine_run.sh (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(PROCTIMES_MINGW_PREFIX x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${PROCTIMES_MINGW_PREFIX}-gcc-posix)
set(CMAKE_CXX_COMPILER ${PROCTIMES_MINGW_PREFIX}-g++-posix)
set(CMAKE_RC_COMPILER ${PROCTIMES_MINGW_PREFIX}-windres)

set(CMAKE_FIND_ROOT_PATH /usr/${PROCTIMES_MINGW_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# -static: libgcc, libstdc++ and libwinpthread-1 inside every executable.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc -static-libstdc++")

# Runs a cross-built executable (ctest, gtest_discover_tests) under Wine.
get_filename_component(PROCTIMES_TOOLCHAIN_ROOT "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set(CMAKE_CROSSCOMPILING_EMULATOR "${PROCTIMES_TOOLCHAIN_ROOT}/tests/windows/wine_run.sh")
