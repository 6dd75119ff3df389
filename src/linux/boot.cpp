// SPDX-License-Identifier: MIT
// The boot anchor: see include/proctimes/boot.hpp for the contract.
#include "proctimes/boot.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <mutex>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>

#include "clock_ns.hpp"
#include "linux/sys.hpp"
#include "parse/procfs.hpp"
#include "report.hpp"
#include "settings.hpp"

namespace proctimes::inline v1 {
namespace {

using std::chrono::nanoseconds;

// CLOCK_REALTIME − CLOCK_BOOTTIME from the tightest of several bracketed
// samples; the result is within half the best gap (a few hundred ns) of the
// kernel's true offset.
std::int64_t measure_offset_ns() noexcept {
    std::int64_t best_gap = std::numeric_limits<std::int64_t>::max();
    std::int64_t best = 0;
    for (int i = 0; i < 9; ++i) {
        const std::int64_t b1 = detail::now_ns(CLOCK_BOOTTIME);
        const std::int64_t r = detail::now_ns(CLOCK_REALTIME);
        const std::int64_t b2 = detail::now_ns(CLOCK_BOOTTIME);
        const std::int64_t gap = b2 - b1;
        if (gap >= 0 && gap < best_gap) {
            best_gap = gap;
            best = r - (b1 + gap / 2);
        }
    }
    return best;
}

// A stored anchor from another user may differ from ours by at most this.
constexpr std::int64_t untrusted_tolerance_ns = 1'000'000;

std::string anchor_dir() { return detail::env_path("PROCTIMES_ANCHOR_DIR").value_or("/dev/shm"); }

struct stored_anchor {
    parse::anchor_record rec;
    bool trusted = false;
};

// Reads an anchor file without following links; nullopt if absent or unusable.
std::optional<stored_anchor> read_anchor(const std::string& path, const boot_id& boot) noexcept {
    detail::unique_fd fd{detail::open_read(AT_FDCWD, path.c_str(), O_NOFOLLOW)};
    if (!fd) return std::nullopt;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 256) return std::nullopt;
    char buf[257];
    const ssize_t n = detail::pread_small(fd.get(), buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    auto rec = parse::parse_anchor(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!rec || rec->boot != boot) return std::nullopt;
    stored_anchor s;
    s.rec = *rec;
    s.trusted = (st.st_uid == 0 || st.st_uid == ::geteuid()) && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
    return s;
}

// Publishes our measurement; returns false if the file already existed (then
// the caller reads it) or could not be written.
enum class publish_result { published, exists, failed };
publish_result publish_anchor(const std::string& dir, const std::string& path, const boot_id& boot,
                              std::int64_t offset) noexcept {
    char tmp[512];
    std::snprintf(tmp, sizeof tmp, "%s/.proctimes-boot-anchor.%d.%lld", dir.c_str(), static_cast<int>(::getpid()),
                  static_cast<long long>(detail::now_ns(CLOCK_MONOTONIC)));
    detail::unique_fd fd{::open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
    if (!fd) return publish_result::failed;
    ::fchmod(fd.get(), 0644);  // independent of the umask: every user must read it
    char line[160];
    const int len = std::snprintf(line, sizeof line, "proctimes-boot-anchor 1 %s %lld\n", boot.to_string().c_str(),
                                  static_cast<long long>(offset));
    const bool ok = len > 0 && ::write(fd.get(), line, static_cast<std::size_t>(len)) == len;
    fd.reset();
    publish_result r = publish_result::failed;
    if (ok) {
        // link(2) never replaces: the first publisher on this boot wins, and the
        // final name only ever holds a complete line.
        if (::link(tmp, path.c_str()) == 0)
            r = publish_result::published;
        else if (errno == EEXIST)
            r = publish_result::exists;
    }
    ::unlink(tmp);
    return r;
}

struct anchor_state {
    std::error_code error;
    bool transient = false;  // an error that a later call may not meet (EMFILE, ENOMEM)
    boot_anchor anchor;
    std::int64_t offset_ns = 0;
};

anchor_state compute_anchor() noexcept {
    anchor_state s;
    std::string text;
    if (auto ec = detail::read_file("/proc/sys/kernel/random/boot_id", text, 64)) {
        if (!detail::proc_is_mounted())
            s.error = make_error_code(errc::process_table_unavailable);
        else if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory ||
                 ec == errc::access_denied || ec == errc::not_a_regular_file)
            // A procfs without /proc/sys (subset=pid), or one that hides it.
            s.error = make_error_code(errc::boot_identity_unavailable);
        else
            s.error = ec;  // out of descriptors or memory: worth another try
        s.transient = s.error != errc::process_table_unavailable && s.error != errc::boot_identity_unavailable;
        return s;
    }
    auto id = parse::parse_boot_id(text);
    if (!id) {
        s.error = make_error_code(errc::malformed_data);
        return s;
    }
    s.anchor.id = *id;
    const std::int64_t fresh = measure_offset_ns();
    std::int64_t offset = fresh;
    anchor_source source = anchor_source::measured_private;
    try {
        const std::string dir = anchor_dir();
        const std::string path = dir + "/proctimes-boot-anchor-" + id->to_string();
        for (int attempt = 0; attempt < 2; ++attempt) {
            if (auto stored = read_anchor(path, *id)) {
                const std::int64_t v = stored->rec.realtime_minus_boottime_ns;
                if (stored->trusted) {
                    offset = v;
                    source = anchor_source::shared_trusted;
                } else if (v - fresh <= untrusted_tolerance_ns && fresh - v <= untrusted_tolerance_ns) {
                    offset = v;
                    source = anchor_source::shared_validated;
                }
                break;
            }
            const auto pr = publish_anchor(dir, path, *id, fresh);
            if (pr == publish_result::published) {
                source = anchor_source::published;
                break;
            }
            if (pr == publish_result::failed) break;
            // exists: another process won the race; read its value.
        }
    } catch (...) {
        // Out of memory for the anchor file's path: this process keeps its
        // private measurement (computed once, so that creation times never
        // move), which may differ from other processes' by a tick.
        static std::atomic<bool> once{false};
        (void)detail::report_once(once,
                                  "out of memory reading the shared boot anchor: this process uses its own "
                                  "measurement (anchor_source::measured_private)");
    }
    s.offset_ns = offset;
    s.anchor.boot = instant{nanoseconds{offset}};
    s.anchor.source = source;
    return s;
}

// Computed once; a transient failure (out of descriptors) is not kept, so the
// anchor does not stay broken for the life of the process.
const anchor_state& state() noexcept {
    static std::mutex mutex;
    static anchor_state kept;
    static std::atomic<bool> ready{false};
    if (ready.load(std::memory_order_acquire)) return kept;
    std::lock_guard lock(mutex);
    if (ready.load(std::memory_order_relaxed)) return kept;
    anchor_state s = compute_anchor();
    if (s.transient) {
        thread_local anchor_state failed;
        failed = s;
        return failed;
    }
    kept = s;
    ready.store(true, std::memory_order_release);
    return kept;
}

}  // namespace

std::chrono::nanoseconds boot_anchor::clock_step() const noexcept {
    return nanoseconds{measure_offset_ns()} - boot.time_since_epoch();
}

result<boot_anchor> get_boot_anchor() noexcept {
    const auto& s = state();
    if (s.error) return s.error;
    return s.anchor;
}

std::int64_t clock_ticks_per_second() noexcept {
    static const std::int64_t hz = [] {
        const long v = ::sysconf(_SC_CLK_TCK);
        return v > 0 ? static_cast<std::int64_t>(v) : 100;
    }();
    return hz;
}

result<instant> instant_from_start_ticks(std::uint64_t start_ticks) noexcept {
    const auto& s = state();
    if (s.error) return s.error;
    const std::int64_t hz = clock_ticks_per_second();
    // 2^63 ns is 292 years of uptime; anything above is corrupt input.
    if (start_ticks > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max() / 1'000'000'000 * hz))
        return errc::out_of_range;
    const std::int64_t since_boot = static_cast<std::int64_t>(start_ticks) * (1'000'000'000 / hz);
    return instant{nanoseconds{s.offset_ns + since_boot}};
}

}  // namespace proctimes::inline v1
