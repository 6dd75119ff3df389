# SPDX-License-Identifier: MIT
# Installs the library of this build into a scratch prefix, then builds
# consumers against it:
# one with find_package(proctimes), one that uses add_subdirectory() on the
# source tree, and two with plain compiler command lines from pkg-config: a
# C++ program and a C11 program using the Win32 layer (<proctimes/windows.h>).
# Each consumer runs and checks a value.
# Invoked by CTest: cmake -DSOURCE_DIR=... -DBUILD_DIR=... -DWORK_DIR=... -P run.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

# The library this build made, installed (its dev component: headers, the
# library, the CMake package, the pkg-config file) into a scratch prefix: the
# installed interface is what is checked, and the Debian package build
# (packaging.deb) checks the command and an install under /usr.
step(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}" --component dev)
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
