// SPDX-License-Identifier: MIT
// What every BPF part of proctimes shares: quiet libbpf logging, the checks
// made before loading anything, and the one-line reasons a load failed.
#pragma once

#include <cerrno>
#include <string>

namespace proctimes::inline v1::detail::bpf {

/// Routes libbpf's log to nowhere, unless PROCTIMES_BPF_DEBUG is set in the
/// environment (then to stderr). Done once per process.
void quiet_libbpf() noexcept;

/// Empty when a BPF program may be tried here; else why not: no kernel BTF,
/// not the initial pid namespace (BPF reports the initial namespace's ids).
std::string precheck();

/// A one-line reason for a load or attach that failed with `err`.
std::string load_failure(const char* what, int err);

}  // namespace proctimes::inline v1::detail::bpf
