# SPDX-License-Identifier: MIT
# What a packaged proctimes installs beyond the library and its CMake and
# pkg-config files: the man pages, the bash completion, the Debian copyright
# and changelog; and the CPack settings that turn the "runtime" and "dev"
# install components into two Debian packages (docs/PACKAGING.md).
# Included from the top-level CMakeLists.txt when PROCTIMES_INSTALL is ON.

set(PROCTIMES_MAN_PAGES AUTO CACHE STRING "Build and install the man pages (pandoc): ON, OFF or AUTO (when pandoc is found)")
set_property(CACHE PROCTIMES_MAN_PAGES PROPERTY STRINGS ON OFF AUTO)
option(PROCTIMES_DEBIAN_DOCS "Install the Debian copyright and changelog files (for the .deb packages)" OFF)
set(PROCTIMES_DEB_MAINTAINER "The proctimes authors <proctimes@example.org>" CACHE STRING
    "Maintainer field of the Debian packages")

set(proctimes_packaging ${PROJECT_SOURCE_DIR}/packaging)
set(proctimes_doc_out ${PROJECT_BINARY_DIR}/packaging)
file(MAKE_DIRECTORY ${proctimes_doc_out})

# ---- man pages ----------------------------------------------------------------
# Each page is a docs/ page (docs/CLI.md, docs/API.md) between a few lines of
# its own (NAME, SYNOPSIS, SEE ALSO), converted by pandoc at build time: the
# manual and the documentation are one text and cannot drift apart.
if(PROCTIMES_MAN_PAGES)
  if(PROCTIMES_MAN_PAGES STREQUAL "AUTO")
    find_program(PROCTIMES_PANDOC pandoc)
  else()
    find_program(PROCTIMES_PANDOC pandoc REQUIRED)
  endif()
  find_program(PROCTIMES_GZIP gzip)
  if(PROCTIMES_PANDOC AND PROCTIMES_GZIP)
    set(proctimes_man_pages_built ON)
  elseif(NOT PROCTIMES_MAN_PAGES STREQUAL "AUTO")
    message(FATAL_ERROR "PROCTIMES_MAN_PAGES=ON needs pandoc and gzip")
  endif()
endif()

function(proctimes_man_page name section doc component header)
  set(page ${proctimes_doc_out}/${name}.${section})
  set(head ${proctimes_packaging}/man/${name}.${section}.head.md)
  set(tail ${proctimes_packaging}/man/${name}.${section}.tail.md)
  add_custom_command(OUTPUT ${page}.gz
    COMMAND ${PROCTIMES_PANDOC} -f gfm -t man --standalone
            --lua-filter ${proctimes_packaging}/man/sections.lua
            -M title=${name} -M section=${section} -M "header=${header}"
            -M "footer=proctimes ${PROJECT_VERSION}"
            # Left-aligned, not justified: the tables' narrow columns could
            # not be filled without groff warnings.
            -V adjusting=l
            ${head} ${doc} ${tail} -o ${page}
    # -n: no name or time stamp inside, so that the page is reproducible.
    COMMAND ${PROCTIMES_GZIP} -9nf ${page}
    DEPENDS ${head} ${doc} ${tail} ${proctimes_packaging}/man/sections.lua
    COMMENT "Man page ${name}(${section}) from ${doc}"
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY PROCTIMES_MAN_OUTPUTS ${page}.gz)
  install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT ${component})
endfunction()

if(proctimes_man_pages_built)
  if(PROCTIMES_BUILD_TOOLS)
    proctimes_man_page(proctimes 1 ${PROJECT_SOURCE_DIR}/docs/CLI.md runtime "proctimes manual")
  endif()
  # The library's manual is for developers: it goes with the headers.
  proctimes_man_page(proctimes 3 ${PROJECT_SOURCE_DIR}/docs/API.md dev "proctimes library")
  get_property(outputs GLOBAL PROPERTY PROCTIMES_MAN_OUTPUTS)
  add_custom_target(proctimes_man_pages ALL DEPENDS ${outputs})
endif()

# ---- shell completion ---------------------------------------------------------
if(PROCTIMES_BUILD_TOOLS)
  install(FILES ${proctimes_packaging}/bash-completion/proctimes
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT runtime)
endif()

# ---- Debian packages ----------------------------------------------------------
set(proctimes_deb_runtime proctimes)
set(proctimes_deb_dev libproctimes-dev)

# The copyright file in Debian's machine-readable format, made from LICENSE:
# its "Copyright" line and its text.
file(STRINGS ${PROJECT_SOURCE_DIR}/LICENSE license_lines)
list(POP_FRONT license_lines license_name)
string(REGEX REPLACE " License$" "" license_name "${license_name}")
set(copyright_holders "")
set(license_body "")
foreach(line IN LISTS license_lines)
  if(line MATCHES "^Copyright \\(c\\) (.*)$")
    set(copyright_holders "${CMAKE_MATCH_1}")
  elseif(line STREQUAL "")
    string(APPEND license_body " .\n")
  else()
    string(APPEND license_body " ${line}\n")
  endif()
endforeach()
string(REGEX REPLACE "^( \\.\n)+" "" license_body "${license_body}")
if(NOT copyright_holders)
  message(FATAL_ERROR "LICENSE has no 'Copyright (c) ...' line")
endif()
file(WRITE ${proctimes_doc_out}/copyright
"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: proctimes

Files: *
Copyright: ${copyright_holders}
License: ${license_name}
${license_body}")

# The changelog is kept in packaging/changelog; its newest entry must be this
# version, or the packages would contradict themselves.
file(STRINGS ${proctimes_packaging}/changelog changelog_head LIMIT_COUNT 1)
if(NOT changelog_head MATCHES "^proctimes \\(${PROJECT_VERSION}\\) ")
  message(FATAL_ERROR "packaging/changelog starts with '${changelog_head}', not version ${PROJECT_VERSION}: "
                      "add an entry for this version")
endif()

if(PROCTIMES_DEBIAN_DOCS)
  add_custom_command(OUTPUT ${proctimes_doc_out}/changelog.gz
    COMMAND ${CMAKE_COMMAND} -E copy ${proctimes_packaging}/changelog ${proctimes_doc_out}/changelog
    COMMAND gzip -9nf ${proctimes_doc_out}/changelog
    DEPENDS ${proctimes_packaging}/changelog VERBATIM)
  add_custom_target(proctimes_debian_changelog ALL DEPENDS ${proctimes_doc_out}/changelog.gz)
  foreach(component runtime dev)
    install(FILES ${proctimes_doc_out}/copyright ${proctimes_doc_out}/changelog.gz
            DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${proctimes_deb_${component}} COMPONENT ${component})
  endforeach()
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME proctimes)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The proctimes authors")
# Each package's first description line is its own summary. CPack 3.25 would
# put the project's description before it unless the summary is left at
# CPack's default text, which is then never used.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_PACKAGE_CONTACT "${PROCTIMES_DEB_MAINTAINER}")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/dist)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
# Only these two: a component added later without a package of its own
# ("Unspecified") is not shipped by accident.
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# Depends computed by dpkg-shlibdeps from the binaries; the command's own
# library is found in the package being built (a relative -l directory).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_INSTALL_LIBDIR})
# A shlibs file, so that packages built against libproctimes depend on it.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${proctimes_deb_runtime})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION utils)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
"Windows process and thread times (GetProcessTimes) on Linux
The proctimes command shows the creation and exit instants and the kernel
and user CPU times of processes and threads as Windows reports them, with
nanosecond totals wherever the kernel keeps them: show, ps, run (like
/usr/bin/time) and watch. Output as tables, JSON or CSV.
.
This package also holds the shared library libproctimes, which brings
GetProcessTimes, GetThreadTimes, cycle times and the FILETIME helpers to
C++ and C programs on Linux.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME ${proctimes_deb_dev})
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEV_DESCRIPTION
"Windows process and thread times on Linux - development files
Headers, CMake package (find_package(proctimes)), pkg-config file and the
proctimes(3) manual of libproctimes, which brings GetProcessTimes,
GetThreadTimes, cycle times and the FILETIME helpers to C++20 (std::chrono,
errors as values) and to C11 programs (<proctimes/windows.h>) on Linux.")
# The -dev package's libproctimes.so points into the runtime package: it
# depends on exactly this version of it.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${proctimes_deb_runtime} (= ${PROJECT_VERSION})")

# The runtime package ships a shared library in the loader's directories:
# dpkg's ldconfig trigger updates the cache (Debian Policy 8.1.1).
set_property(GLOBAL APPEND PROPERTY PROCTIMES_DEB_RUNTIME_CONTROL_EXTRA ${proctimes_packaging}/debian/triggers)

# Hook for parts that need maintainer scripts (e.g. a systemd unit installed
# with COMPONENT runtime into lib/systemd/system): append the script files to
# the global property PROCTIMES_DEB_RUNTIME_CONTROL_EXTRA from their own
# CMakeLists.txt. Read at the end of the configure step, so any directory can.
function(proctimes_deb_control_extra)
  get_property(extra GLOBAL PROPERTY PROCTIMES_DEB_RUNTIME_CONTROL_EXTRA)
  if(extra)
    set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA "${extra}")
  endif()
  include(CPack)
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL proctimes_deb_control_extra)
