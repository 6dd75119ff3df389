# SPDX-License-Identifier: MIT
# Installs proctimes into a scratch prefix, then builds consumers against it:
# one with find_package(proctimes), one that uses add_subdirectory() on the
# source tree, and two with plain compiler command lines from pkg-config: a
# C++ program and a C11 program using the Win32 layer (<proctimes/windows.h>).
# Each consumer runs and checks a value.
# Invoked by CTest: cmake -DSOURCE_DIR=... -DWORK_DIR=... -P run.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

# No optimisation: what is checked is the installed interface (headers, CMake
# package, pkg-config file, link line), and the Debian package build
# (packaging.deb) compiles the library optimised.
step(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/lib" -G "${GENERATOR}"
     -DCMAKE_BUILD_TYPE= -DPROCTIMES_BUILD_TESTS=OFF -DPROCTIMES_PYTHON=OFF
     # The library's installed interface only: the command and its packages
     # are checked by packaging.deb.
     -DPROCTIMES_BUILD_TOOLS=OFF -DPROCTIMES_BUILD_EXAMPLES=OFF
     -DCMAKE_INSTALL_PREFIX=${prefix})
step(${CMAKE_COMMAND} --build "${WORK_DIR}/lib" -j 2)
step(${CMAKE_COMMAND} --install "${WORK_DIR}/lib")

foreach(f include/proctimes/proctimes.hpp include/proctimes/version.hpp include/proctimes/windows.h
          lib/cmake/proctimes/proctimesConfig.cmake
          lib/pkgconfig/proctimes.pc)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()

# 1. find_package
step(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/packaging/consumer" -B "${WORK_DIR}/c1" -G "${GENERATOR}"
     -DCMAKE_PREFIX_PATH=${prefix} -DCONSUME=find_package)
step(${CMAKE_COMMAND} --build "${WORK_DIR}/c1")
step("${WORK_DIR}/c1/consumer")

# 2. add_subdirectory
step(${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/packaging/consumer" -B "${WORK_DIR}/c2" -G "${GENERATOR}"
     -DCONSUME=add_subdirectory -DPROCTIMES_SOURCE_DIR=${SOURCE_DIR})
step(${CMAKE_COMMAND} --build "${WORK_DIR}/c2" -j 2)
step("${WORK_DIR}/c2/consumer")

# 3. pkg-config, plain compiler command line
find_program(PKG_CONFIG pkg-config REQUIRED)
find_program(CXX NAMES c++ g++ REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs proctimes OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not know proctimes")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
step(${CXX} -std=c++20 "${SOURCE_DIR}/tests/packaging/consumer/main.cpp" ${flags} -o "${WORK_DIR}/c3")
step("${WORK_DIR}/c3")

# 4. pkg-config, a C11 program using the Win32 layer (<proctimes/windows.h>)
find_program(CC NAMES cc gcc REQUIRED)
step(${CC} -std=c11 -Wall -Wextra -Werror "${SOURCE_DIR}/tests/packaging/consumer/main.c" ${flags} -o "${WORK_DIR}/c4")
step("${WORK_DIR}/c4")
message(STATUS "packaging: find_package, add_subdirectory, pkg-config C++ and C consumers built and ran")
