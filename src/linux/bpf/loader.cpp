// SPDX-License-Identifier: MIT
#include "linux/bpf/loader.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <unistd.h>

#include "settings.hpp"

#include <bpf/libbpf.h>

namespace proctimes::inline v1::detail::bpf {

namespace {

int print_to_stderr(enum libbpf_print_level, const char* format, va_list args) {
    return std::vfprintf(stderr, format, args);
}
int print_nothing(enum libbpf_print_level, const char*, va_list) { return 0; }

}  // namespace

void quiet_libbpf() noexcept {
    static std::once_flag once;
    std::call_once(once, [] {
        libbpf_set_print(detail::env_flag("PROCTIMES_BPF_DEBUG") == detail::flag_value::on ? print_to_stderr
                                                                                           : print_nothing);
    });
}

std::string precheck() {
    if (::access("/sys/kernel/btf/vmlinux", R_OK) != 0) return "the kernel has no BTF (/sys/kernel/btf/vmlinux)";
    // The programs report the initial pid namespace's ids; in another
    // namespace they would not be the caller's pids. PROC_PID_INIT_INO.
    char link[64];
    const ssize_t n = ::readlink("/proc/self/ns/pid", link, sizeof link - 1);
    if (n <= 0) return "cannot tell the pid namespace (/proc/self/ns/pid)";
    link[n] = '\0';
    if (std::strcmp(link, "pid:[4026531836]") != 0) return "not in the initial pid namespace";
    return {};
}

std::string load_failure(const char* what, int err) {
    std::string r = std::string(what) + ": " + std::strerror(err);
    if (err == EPERM || err == EACCES) r += " (needs CAP_BPF and CAP_PERFMON, or root)";
    return r;
}

}  // namespace proctimes::inline v1::detail::bpf
