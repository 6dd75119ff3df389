# SPDX-License-Identifier: MIT
# Sources and dependencies of `proctimes serve`, added to proctimes_cli.
find_package(PkgConfig REQUIRED)
pkg_check_modules(PROCTIMES_MHD REQUIRED IMPORTED_TARGET libmicrohttpd)
# TLS of the web config (libmicrohttpd's GnuTLS) and its bcrypt hashes (libxcrypt).
pkg_check_modules(PROCTIMES_GNUTLS REQUIRED IMPORTED_TARGET gnutls)
pkg_check_modules(PROCTIMES_CRYPT REQUIRED IMPORTED_TARGET libcrypt)
# The answer's gzip form (libdeflate: a whole buffer at once, twice as fast as zlib).
pkg_check_modules(PROCTIMES_DEFLATE REQUIRED IMPORTED_TARGET libdeflate)
find_package(yaml-cpp REQUIRED)
# The command: its options, its errors and their exit codes, how it reads
# the files it is given.
target_sources(proctimes_cli PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/command.cpp
  ${CMAKE_CURRENT_LIST_DIR}/files.cpp
)
# The collector (collect/): the scrape's orchestration (collector), exit
# records, group membership and its counters, the scrape cache, the families
# and their exposition.
target_sources(proctimes_cli PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/collect/collector.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collect/exit_drain.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collect/metrics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collect/membership.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collect/scrape_cache.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collect/reaped.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collect/member_reader.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collect/exposition.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collect/selfmetrics.cpp
  ${CMAKE_CURRENT_LIST_DIR}/collect/namedprocess.cpp
)
# process-exporter's emulation (pe/): its config, name templates, flags and
# grouping rules (its namedprocess_* families are the collector's).
target_sources(proctimes_cli PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/pe/pe_config.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pe/name_template.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pe/goflags.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pe/grouping.cpp
)
# The HTTP side (http/): the server, its listening socket, the web config
# (TLS, basic authentication, headers).
target_sources(proctimes_cli PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/http/conn_pool.cpp
  ${CMAKE_CURRENT_LIST_DIR}/http/http.cpp
  ${CMAKE_CURRENT_LIST_DIR}/http/listen.cpp
  ${CMAKE_CURRENT_LIST_DIR}/http/webconfig.cpp
  ${CMAKE_CURRENT_LIST_DIR}/http/webauth.cpp
)
target_link_libraries(proctimes_cli PRIVATE PkgConfig::PROCTIMES_MHD PkgConfig::PROCTIMES_GNUTLS
                      PkgConfig::PROCTIMES_CRYPT PkgConfig::PROCTIMES_DEFLATE yaml-cpp)

# The systemd unit, in the runtime package, with the maintainer scripts that
# register it with systemd (installed, not enabled).
if(PROCTIMES_INSTALL)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/systemd/proctimes-serve.service
          DESTINATION lib/systemd/system COMPONENT runtime)
  set_property(GLOBAL APPEND PROPERTY PROCTIMES_DEB_RUNTIME_CONTROL_EXTRA
               ${PROJECT_SOURCE_DIR}/packaging/debian/postinst
               ${PROJECT_SOURCE_DIR}/packaging/debian/prerm
               ${PROJECT_SOURCE_DIR}/packaging/debian/postrm)
endif()
