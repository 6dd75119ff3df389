// SPDX-License-Identifier: MIT
// The windows backend's snapshot source (backend/backend.hpp): one
// NtQuerySystemInformation(SystemProcessInformation) call returns every
// process with its threads, creation FILETIMEs and CPU times, consistent to
// the moment of the call. The entries are in the kernel's order; they are put
// in pid (and tid) order here.
#include <windows.h>
// After windows.h, which it needs:
#include <winternl.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "proctimes/boot.hpp"
#include "windows/ntdll.hpp"
#include "windows/task.hpp"

namespace proctimes::inline v1::detail {

namespace win {

std::string utf8(const wchar_t* s, int n);  // src/windows/names.cpp

namespace {

constexpr ULONG system_process_information = 5;  // SystemProcessInformation

// The documented layouts (winternl.h). A thread entry's first three
// LARGE_INTEGERs, "Reserved1" there, are its kernel time, user time and
// creation time, in that order (the layout the kernel has kept since NT 4.0,
// the one Wine implements).
static_assert(sizeof(SYSTEM_THREAD_INFORMATION) == 80, "the x64 layout of SYSTEM_THREAD_INFORMATION");
static_assert(sizeof(SYSTEM_PROCESS_INFORMATION) == 256, "the x64 layout of SYSTEM_PROCESS_INFORMATION");

std::uint64_t value(const LARGE_INTEGER& v) noexcept { return static_cast<std::uint64_t>(v.QuadPart); }
std::chrono::nanoseconds span_of(const LARGE_INTEGER& v) noexcept {
    return std::chrono::nanoseconds{static_cast<std::int64_t>(value(v)) * 100};
}
instant instant_of(const LARGE_INTEGER& v) noexcept {
    return time_from_filetime(filetime{value(v)}).value_or(instant{});
}

class nt_source final : public snapshot_source {
public:
    explicit nt_source(const snapshot_options& o) : threads_(o.threads) {}

    result<void> stamp(snapshot& out) noexcept override {
        auto anchor = get_boot_anchor();
        if (!anchor) return anchor.error();
        FILETIME f{};
        ::GetSystemTimePreciseAsFileTime(&f);
        out.taken = to_instant(f);
        out.since_boot = out.taken.time_since_epoch();  // the scale of start ticks here
        out.boot = anchor->id;
        out.source = proctimes::snapshot_source::windows;
        return {};
    }

    [[nodiscard]] bool exact_process_totals() const noexcept override { return false; }

    result<void> take(snapshot& out, const snapshot*) noexcept override {
        const auto query = nt_query_system_information();
        if (!query) return make_error_code(errc::not_supported);
        const auto started = std::chrono::steady_clock::now();
        try {
            if (auto r = read(query); !r) return r;
            fill(out);
        } catch (...) {
            return make_error_code(std::errc::not_enough_memory);
        }
        out.walk_duration = std::chrono::steady_clock::now() - started;
        return {};
    }

private:
    result<void> read(nt_query_system_information_fn query) {
        if (buf_.empty()) buf_.resize(std::size_t{256} * 1024);
        for (int attempt = 0; attempt < 16; ++attempt) {
            ULONG needed = 0;
            const nt_status st =
                query(system_process_information, buf_.data(), static_cast<ULONG>(buf_.size()), &needed);
            if (st >= 0) return {};
            if (st != status_info_length_mismatch) return make_error_code(errc::access_denied);
            // Processes start between the calls: room for more than asked.
            buf_.resize(std::max<std::size_t>(needed, buf_.size()) + std::size_t{64} * 1024);
        }
        return make_error_code(std::errc::not_enough_memory);
    }

    void fill(snapshot& out) {
        out.processes.clear();
        out.threads.clear();
        out.failures.clear();
        out.vanished = 0;
        out.reused_threads = 0;
        out.workers = 1;
        out.has_threads = threads_;
        // Every entry, then in pid order.
        entries_.clear();
        for (std::size_t off = 0; off + sizeof(SYSTEM_PROCESS_INFORMATION) <= buf_.size();) {
            const auto* p = reinterpret_cast<const SYSTEM_PROCESS_INFORMATION*>(buf_.data() + off);  // NOLINT
            const auto pid = static_cast<pid_t>(reinterpret_cast<ULONG_PTR>(p->UniqueProcessId));
            if (pid != 0) entries_.push_back(p);  // 0: the System Idle Process, the CPUs' idle time
            if (p->NextEntryOffset == 0) break;
            off += p->NextEntryOffset;
        }
        auto pid_of = [](const SYSTEM_PROCESS_INFORMATION* p) {
            return static_cast<pid_t>(reinterpret_cast<ULONG_PTR>(p->UniqueProcessId));
        };
        std::sort(entries_.begin(), entries_.end(), [&](auto* a, auto* b) { return pid_of(a) < pid_of(b); });
        const cpu_precision prec = os_precision();
        out.processes.reserve(entries_.size());
        for (const SYSTEM_PROCESS_INFORMATION* p : entries_) {
            snapshot_process sp;
            const pid_t pid = pid_of(p);
            sp.identity = identity_of(pid, value(p->CreateTime));
            sp.parent_pid = static_cast<pid_t>(reinterpret_cast<ULONG_PTR>(p->InheritedFromUniqueProcessId));
            sp.thread_count = static_cast<std::int32_t>(p->NumberOfThreads);
            if (p->ImageName.Buffer && p->ImageName.Length > 0)
                sp.name.assign(win::utf8(p->ImageName.Buffer, p->ImageName.Length / 2));
            sp.times.creation = instant_of(p->CreateTime);
            sp.times.kernel = span_of(p->KernelTime);
            sp.times.user = span_of(p->UserTime);
            sp.times.precision = prec;
            sp.times.sampled_at = out.taken;
            if (threads_) add_threads(out, sp, p, prec);
            out.processes.push_back(sp);
        }
    }

    void add_threads(snapshot& out, snapshot_process& sp, const SYSTEM_PROCESS_INFORMATION* p,
                     const cpu_precision& prec) {
        const auto* first = reinterpret_cast<const SYSTEM_THREAD_INFORMATION*>(p + 1);  // NOLINT
        const std::byte* end = buf_.data() + buf_.size();
        sp.first_thread = out.threads.size();
        for (ULONG i = 0; i < p->NumberOfThreads; ++i) {
            const SYSTEM_THREAD_INFORMATION* t = first + i;
            if (reinterpret_cast<const std::byte*>(t + 1) > end) break;  // NOLINT
            snapshot_thread st;
            const auto tid = static_cast<pid_t>(reinterpret_cast<ULONG_PTR>(t->ClientId.UniqueThread));
            st.identity = identity_of(tid, value(t->Reserved1[2]));
            st.pid = sp.identity.id;
            st.times.creation = instant_of(t->Reserved1[2]);
            st.times.kernel = span_of(t->Reserved1[0]);
            st.times.user = span_of(t->Reserved1[1]);
            st.times.precision = prec;
            st.times.sampled_at = out.taken;
            out.threads.push_back(st);
        }
        sp.thread_entries = out.threads.size() - sp.first_thread;
        std::sort(out.threads.begin() + static_cast<std::ptrdiff_t>(sp.first_thread), out.threads.end(),
                  [](const snapshot_thread& a, const snapshot_thread& b) { return a.identity.id < b.identity.id; });
    }

    bool threads_;
    std::vector<std::byte> buf_;
    std::vector<const SYSTEM_PROCESS_INFORMATION*> entries_;
};

}  // namespace

}  // namespace win

result<std::unique_ptr<snapshot_source>> open_snapshot_source(const snapshot_options& options) noexcept {
    if (options.source == proctimes::snapshot_source::bpf) return make_error_code(errc::not_supported);
    std::unique_ptr<snapshot_source> s(new (std::nothrow) win::nt_source(options));
    if (!s) return make_error_code(std::errc::not_enough_memory);
    return s;
}

}  // namespace proctimes::inline v1::detail
