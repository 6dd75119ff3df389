// SPDX-License-Identifier: MIT
// tools/proctimes/record/store.hpp — the store `proctimes record` writes and
// replay and `proctimes report` read: one SQLite database (WAL mode) holding,
// for every interval, the frame `proctimes top` showed (top/frame.hpp): the
// machine's totals, the ledger line, and one row per process that used CPU in
// the interval or ended in it. Identities (pid, creation, name, command line,
// user, cgroup) are written once per process and referenced by id. The
// schema, its units and example queries: docs/STORE.md.
//
//   auto s = store::open_writer("/var/lib/proctimes/record.db");   // refuses a second writer
//   if (!s) { print(s.error().message); return 1; }
//   auto w = s->write_interval(frame);                             // whole or absent
//   if (!w) print(w.error().message);                              // says which interval was lost; go on
//   (void)s->retain(std::chrono::hours(24 * 7), 0);                // between writes
//
//   auto r = store::open_reader(path);                             // any number, while the writer writes
//   auto frames = r->read_intervals(from, to);
//
// One writer: open_writer takes an advisory lock (flock(2)) on PATH-lock,
// held for the writer's life and released by the kernel when its process
// ends, however it ends; a second writer is refused with the holder's pid.
// Readers take no lock of ours. A store object is used by one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "record/error.hpp"
#include "top/frame.hpp"

namespace proctimes::cli::record {

/// The schema this build writes and reads (PRAGMA user_version). A store with
/// a higher version is refused, for reading and for writing; a version 1
/// store is read as it is, and a writer upgrades it in place.
inline constexpr int schema_version = 2;
/// PRAGMA application_id of a proctimes store ("PTRS").
inline constexpr std::int32_t application_id = 0x50545253;

/// Where `proctimes record` keeps its store unless told otherwise.
inline constexpr const char* default_store_path = "/var/lib/proctimes/record.db";
/// The mode a new store is created with (less the umask): its owner writes,
/// its group reads. PATH-wal and PATH-shm get the same.
inline constexpr unsigned store_mode = 0640;

struct open_options {
    /// How long a statement waits for a lock SQLite holds (a checkpoint, a
    /// reader's start) before it fails with error_kind::busy.
    std::chrono::milliseconds busy_timeout{5000};
};

/// What retain() removed.
struct retain_result {
    std::uint64_t intervals_deleted = 0;
    std::uint64_t processes_deleted = 0;              ///< identities no longer referenced
    std::uint64_t bytes_before = 0, bytes_after = 0;  ///< used_bytes() before and after
};

/// The first and last interval of a store.
struct store_span {
    std::uint64_t intervals = 0;
    instant first{}, last{};  ///< when the first and last were taken (empty store: epoch)
};

enum class group_by { program, user, cgroup };

/// One group of a report: CPU its processes used in the window, in ns.
struct report_row {
    std::string key;                                              ///< program (comm), user name, or cgroup path
    std::chrono::nanoseconds kernel{}, user{};                    ///< the processes' own, in the intervals
    std::chrono::nanoseconds children_kernel{}, children_user{};  ///< of children they reaped in them
    std::uint64_t processes = 0;                                  ///< distinct processes (identities)
    std::uint64_t ended = 0;                                      ///< of those, ended in the window
    [[nodiscard]] std::chrono::nanoseconds cpu() const { return kernel + user + children_kernel + children_user; }
};

/// What used the CPU in a window: the intervals taken in [from, to].
struct report {
    std::uint64_t intervals = 0;
    instant first{}, last{};                ///< the first and last interval taken in the window
    std::chrono::nanoseconds span{};        ///< sum of the intervals' lengths
    std::chrono::nanoseconds busy{};        ///< the ledgers' busy CPU (intervals with a ledger)
    std::chrono::nanoseconds attributed{};  ///< every row's CPU (sum of all groups' cpu())
    std::vector<report_row> rows;           ///< largest cpu() first; at most `top` of them
};

class store {
public:
    /// Opens the store at `path` for writing, creating it (and its schema)
    /// when it does not exist or is empty. Errors: path (a directory, a FIFO
    /// or anything but a regular file; a folder that does not exist;
    /// permission), locked (another writer: its pid in the message), schema
    /// (not a proctimes store; a newer schema), corrupt, io.
    static outcome<store> open_writer(const std::string& path, const open_options& o = {});
    /// Opens an existing store for reading (SQLite read-only). Errors as
    /// above but locked; not_found when nothing is at `path`.
    static outcome<store> open_reader(const std::string& path, const open_options& o = {});

    store(store&&) noexcept;
    store& operator=(store&&) noexcept;
    ~store();

    [[nodiscard]] const std::string& path() const noexcept;
    [[nodiscard]] bool writer() const noexcept;

    /// Writes one frame as one interval, in one transaction: all of it or
    /// nothing. Rows kept: processes with CPU in the interval (their own or
    /// their reaped children's) and processes that ended in it; thread rows
    /// are not kept. A frame taken at the same instant as a stored interval
    /// replaces it. Errors: full (nothing of the interval is kept; the
    /// store stays usable and a later write succeeds once there is room),
    /// busy, corrupt, io, read_only. The message says which interval was lost.
    status write_interval(const top::top_frame& f);

    /// Every interval taken in [from, to], oldest first, rows with identity.
    outcome<std::vector<top::top_frame>> read_intervals(instant from, instant to);
    /// The interval covering `t`: the first taken at or after `t`, else the
    /// last one. not_found on an empty store.
    outcome<top::top_frame> interval_at(instant t);
    /// The interval before (after) the one taken at `taken`, for stepping;
    /// not_found at either end.
    outcome<top::top_frame> previous(instant taken);
    outcome<top::top_frame> next(instant taken);
    /// How many intervals, and the first and last.
    outcome<store_span> span();

    /// Deletes the oldest intervals while the oldest is older than
    /// newest − `max_age` (0: no age limit), then while the data takes more
    /// than `max_bytes` (0: no size limit), and the identities no interval
    /// refers to any more; then gives the freed pages back to the file system.
    /// Works in short transactions of a few intervals each, so readers and
    /// the writer's next interval never wait long. Writer only.
    outcome<retain_result> retain(std::chrono::nanoseconds max_age, std::uint64_t max_bytes);

    /// CPU per group over the intervals taken in [from, to]; `top` 0: all groups.
    outcome<record::report> report(instant from, instant to, group_by by, std::size_t top);

    /// Bytes the database's pages in use take (page_count − freelist_count,
    /// times page_size): the file's size but for free pages and the WAL.
    outcome<std::uint64_t> used_bytes();

    struct impl;

private:
    explicit store(std::unique_ptr<impl> p) noexcept;
    static outcome<store> open(const std::string& path, const open_options& o, bool writer);
    std::unique_ptr<impl> impl_;
};

/// "2026-11-28T03:00:00.123Z": how the store's messages name an instant.
std::string describe(instant t);

}  // namespace proctimes::cli::record
