// SPDX-License-Identifier: MIT
/* proctimes/export.h — PROCTIMES_API, the mark of what libproctimes exports.
 *
 * libproctimes is compiled with hidden symbol visibility: only declarations
 * marked PROCTIMES_API (the public classes and functions of the C++ headers,
 * and the proctimes_* functions of <proctimes/windows.h>) are exported by the
 * shared library; its internals (proctimes::detail, the parsers, the Linux
 * backend, the Win32 layer's handle table) are not, so programs cannot come to
 * depend on them and the dynamic symbol table stays small.
 *
 * PROCTIMES_SHARED is defined (by the CMake target, or pkg-config's Cflags)
 * when the library is a shared one; for a static library PROCTIMES_API is
 * empty, so a program that links libproctimes.a into its own shared object
 * does not re-export it. On ELF the mark only matters while the library itself
 * is compiled; a program that includes the headers without PROCTIMES_SHARED
 * still links against the shared library.
 *
 * Usable from C11 and C++.
 */
#ifndef PROCTIMES_EXPORT_H
#define PROCTIMES_EXPORT_H

/* The ABI version. Every C++ declaration of the library is in the inline
 * namespace proctimes::v1: programs name it proctimes::process as before, but
 * its symbols carry the version, so that a program built against one ABI and
 * run with a library of another fails to link instead of calling functions
 * whose types changed underneath it. A release that changes the ABI moves to
 * v2 together with the shared library's SONAME. The C functions of
 * <proctimes/windows.h> are not in a namespace; their ABI is their SONAME. */
#define PROCTIMES_ABI_VERSION 1

#if defined(PROCTIMES_SHARED)
#if defined(_WIN32)
#if defined(PROCTIMES_BUILDING)
#define PROCTIMES_API __declspec(dllexport)
#else
#define PROCTIMES_API __declspec(dllimport)
#endif
#else
#define PROCTIMES_API __attribute__((visibility("default")))
#endif
#else
#define PROCTIMES_API
#endif

/* PROCTIMES_LOCAL keeps a member of an exported class out of the symbol table:
 * the private implementation types and the constructors that take them. */
#if defined(PROCTIMES_SHARED) && !defined(_WIN32)
#define PROCTIMES_LOCAL __attribute__((visibility("hidden")))
#else
#define PROCTIMES_LOCAL
#endif

#endif /* PROCTIMES_EXPORT_H */
