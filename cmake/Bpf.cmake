# SPDX-License-Identifier: MIT
# The eBPF source (docs/BPF.md): PROCTIMES_BPF=AUTO|ON|OFF.
#
# AUTO builds it when clang, bpftool and libbpf are all found; ON fails the
# configuration when one is missing; OFF never builds it. The BPF programs are
# compiled with clang -target bpf against a vmlinux.h generated at build time
# from the build machine's kernel BTF (/sys/kernel/btf/vmlinux, or the file
# given as PROCTIMES_BPF_BTF); CO-RE relocations make the objects run on any
# kernel with BTF. Neither vmlinux.h nor the skeletons are checked in.
#
# Sets PROCTIMES_EBPF (ON/OFF: whether it is built; tools/proctimes reads it
# for `proctimes --version`) and adds the sources to the `proctimes` target.
set(PROCTIMES_BPF AUTO CACHE STRING "Build the eBPF snapshot and exit source: AUTO, ON or OFF")
set_property(CACHE PROCTIMES_BPF PROPERTY STRINGS AUTO ON OFF)
set(PROCTIMES_BPF_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH "Kernel BTF that vmlinux.h is generated from")

set(PROCTIMES_EBPF OFF)
set(PROCTIMES_BPF_PC_LIBS "")
set(_bpf_missing "")
if(NOT PROCTIMES_BPF STREQUAL "OFF")
  find_program(PROCTIMES_BPF_CLANG NAMES clang clang-14 clang-15 clang-16)
  find_program(PROCTIMES_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(PROCTIMES_LIBBPF QUIET IMPORTED_TARGET libbpf>=0.8)
  endif()
  if(NOT PROCTIMES_BPF_CLANG)
    list(APPEND _bpf_missing "clang")
  endif()
  if(NOT PROCTIMES_BPFTOOL)
    list(APPEND _bpf_missing "bpftool")
  endif()
  if(NOT PROCTIMES_LIBBPF_FOUND)
    list(APPEND _bpf_missing "libbpf (libbpf-dev)")
  endif()
  if(NOT EXISTS "${PROCTIMES_BPF_BTF}")
    list(APPEND _bpf_missing "kernel BTF at ${PROCTIMES_BPF_BTF}")
  endif()
  if(PROCTIMES_SANITIZE STREQUAL "thread")
    # libbpf's ring buffer reader is not instrumented; TSan builds skip it.
    list(APPEND _bpf_missing "(not with PROCTIMES_SANITIZE=thread)")
  endif()
  if(_bpf_missing)
    if(PROCTIMES_BPF STREQUAL "ON")
      message(FATAL_ERROR "PROCTIMES_BPF=ON but missing: ${_bpf_missing}")
    endif()
    message(STATUS "proctimes: eBPF source not built (missing: ${_bpf_missing})")
  else()
    set(PROCTIMES_EBPF ON)
  endif()
endif()

if(PROCTIMES_EBPF)
  set(_bpf_src ${CMAKE_CURRENT_SOURCE_DIR}/src/linux/bpf)
  set(_bpf_out ${CMAKE_CURRENT_BINARY_DIR}/generated/bpf)
  file(MAKE_DIRECTORY ${_bpf_out})
  add_custom_command(OUTPUT ${_bpf_out}/vmlinux.h
    COMMAND ${PROCTIMES_BPFTOOL} btf dump file ${PROCTIMES_BPF_BTF} format c > ${_bpf_out}/vmlinux.h.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${_bpf_out}/vmlinux.h.tmp ${_bpf_out}/vmlinux.h
    COMMENT "Generating vmlinux.h from ${PROCTIMES_BPF_BTF}" VERBATIM)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
    set(_bpf_arch x86)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
    set(_bpf_arch arm64)
  else()
    set(_bpf_arch ${CMAKE_SYSTEM_PROCESSOR})
  endif()
  # The task walk (open-coded task iterator, kernel 6.7+) is built where the
  # build machine's BTF has it; the task iterator always is, and is what a
  # kernel that refuses the walk gets at run time.
  set(_bpf_progs task_iter exits tree)
  execute_process(COMMAND ${PROCTIMES_BPFTOOL} btf dump file ${PROCTIMES_BPF_BTF} format c
                  OUTPUT_VARIABLE _bpf_btf_c ERROR_QUIET RESULT_VARIABLE _bpf_btf_rc)
  string(FIND "${_bpf_btf_c}" "struct bpf_iter_task {" _bpf_has_walk)
  unset(_bpf_btf_c)
  if(_bpf_btf_rc EQUAL 0 AND NOT _bpf_has_walk EQUAL -1)
    list(APPEND _bpf_progs task_walk)
    target_compile_definitions(proctimes PRIVATE PROCTIMES_BPF_TASK_WALK=1)
  else()
    message(STATUS "proctimes: the BTF has no open-coded task iterator (Linux < 6.7): snapshots use bpf_iter/task")
  endif()
  set(_skels "")
  foreach(prog ${_bpf_progs})
    add_custom_command(OUTPUT ${_bpf_out}/${prog}.skel.h
      COMMAND ${PROCTIMES_BPF_CLANG} -g -O2 -target bpf -D__TARGET_ARCH_${_bpf_arch}
              -I${_bpf_out} -I${_bpf_src} -I${CMAKE_CURRENT_SOURCE_DIR}/src/parse -c ${_bpf_src}/${prog}.bpf.c -o ${_bpf_out}/${prog}.bpf.o
      COMMAND ${PROCTIMES_BPFTOOL} gen skeleton ${_bpf_out}/${prog}.bpf.o name proctimes_${prog} > ${_bpf_out}/${prog}.skel.h.tmp
      COMMAND ${CMAKE_COMMAND} -E rename ${_bpf_out}/${prog}.skel.h.tmp ${_bpf_out}/${prog}.skel.h
      DEPENDS ${_bpf_src}/${prog}.bpf.c ${_bpf_src}/task_record.bpf.h ${_bpf_src}/init_threads.bpf.h ${CMAKE_CURRENT_SOURCE_DIR}/src/parse/bpf_record_layout.h
              ${_bpf_out}/vmlinux.h
      COMMENT "Compiling the BPF program ${prog}" VERBATIM)
    list(APPEND _skels ${_bpf_out}/${prog}.skel.h)
  endforeach()
  add_custom_target(proctimes_bpf_skeletons DEPENDS ${_skels})
  add_dependencies(proctimes proctimes_bpf_skeletons)
  target_sources(proctimes PRIVATE src/linux/bpf/loader.cpp src/linux/bpf/snapshot_source.cpp src/linux/bpf/exit_ring_reader.cpp
                                   src/linux/bpf/tree_source.cpp)
  # The exit stream's stamps read from user space (no skeleton needed).
  target_sources(proctimes PRIVATE src/linux/bpf/exit_stamps.cpp src/linux/bpf/exit_record.cpp
                                   src/linux/bpf/snapshot_values.cpp)
  # Only the files that include a skeleton see the generated directory, so the
  # rest of the library compiles the same with and without the eBPF source.
  set_property(SOURCE src/linux/bpf/snapshot_source.cpp src/linux/bpf/exit_ring_reader.cpp src/linux/bpf/tree_source.cpp
               APPEND PROPERTY INCLUDE_DIRECTORIES ${_bpf_out})
  # libbpf is private to the library: no libbpf type appears in a public header.
  # Linked by name (not the pkg-config target) so that a static libproctimes's
  # exported CMake package and pkg-config file ask consumers for -lbpf alone.
  target_link_libraries(proctimes PRIVATE bpf)
  set(PROCTIMES_BPF_PC_LIBS " -lbpf")
else()
  target_sources(proctimes PRIVATE src/linux/bpf/unavailable.cpp)
endif()

