// SPDX-License-Identifier: MIT
#include <cstdio>
#include <string>

#include "proctimes/error.hpp"
#include "proctimes/times.hpp"

namespace proctimes::inline v1 {
namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "proctimes"; }

    std::string message(int v) const override {
        switch (static_cast<errc>(v)) {
            case errc::no_such_process:
                return "no such process (it does not exist, or has exited and been reaped)";
            case errc::no_such_thread:
                return "no such thread (it does not exist, or has exited)";
            case errc::access_denied:
                return "access denied: the system hides this process from the caller (/proc's hidepid, an LSM)";
            case errc::process_table_unavailable:
                return "the system's process table cannot be read (/proc is not mounted or is not procfs)";
            case errc::not_a_process:
                return "the id names a thread, not a process";
            case errc::invalid_argument:
                return "invalid argument";
            case errc::malformed_data:
                return "what the system gave did not have the expected format (a /proc file)";
            case errc::not_supported:
                return "not supported by this system or its kernel";
            case errc::out_of_range:
                return "time value out of range";
            case errc::invalid_handle:
                return "invalid (empty) handle";
            case errc::foreign_namespace:
                return "another pid namespace than the one needed: /proc shows another than the caller's (mount a "
                       "procfs of this namespace on /proc), or exit records, which name tasks by the initial "
                       "namespace's ids, were asked for outside it";
            case errc::boot_identity_unavailable:
                return "the boot's identity cannot be read (/proc/sys/kernel/random/boot_id: is /proc mounted with "
                       "subset=pid?): creation times and identities need it";
            case errc::not_a_regular_file:
                return "not a regular file (a FIFO, socket, device or directory where a file was expected): not read";
        }
        return "unknown proctimes error " + std::to_string(v);
    }

    std::error_condition default_error_condition(int v) const noexcept override {
        switch (static_cast<errc>(v)) {
            case errc::no_such_process:
            case errc::no_such_thread:
                return std::errc::no_such_process;
            case errc::access_denied:
                return std::errc::permission_denied;
            case errc::process_table_unavailable:
                return std::errc::no_such_file_or_directory;
            case errc::not_a_process:
            case errc::invalid_argument:
                return std::errc::invalid_argument;
            case errc::malformed_data:
                return std::errc::bad_message;
            case errc::not_supported:
                return std::errc::not_supported;
            case errc::out_of_range:
                return std::errc::result_out_of_range;
            case errc::invalid_handle:
                return std::errc::bad_file_descriptor;
            case errc::foreign_namespace:
            case errc::boot_identity_unavailable:
                return std::errc::no_such_file_or_directory;
            case errc::not_a_regular_file:
                return std::errc::no_such_device_or_address;
        }
        return {v, *this};
    }
};

}  // namespace

const std::error_category& error_category() noexcept {
    static const category c;
    return c;
}

std::string_view to_string(cpu_source s) noexcept { return word_of(s); }

std::string_view to_string(task_state s) noexcept { return word_of(s); }

std::string boot_id::to_string() const {
    char out[37];
    std::snprintf(out, sizeof out, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", bytes[0],
                  bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10],
                  bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]);
    return out;
}

}  // namespace proctimes::inline v1
