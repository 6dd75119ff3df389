// SPDX-License-Identifier: MIT
// `serve --namedprocess`: what process-exporter's families keep of each
// member and each group, and the reader that reads a member through
// read_process_resources (once per collection, only what can have changed)
// and adds it to its group.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proctimes/resources.hpp"
#include "proctimes/snapshot.hpp"
#include "serve/serve.hpp"

namespace proctimes::cli::serve {

/// process-exporter's counters, per process (last read) or per group (monotone total).
struct pe_counters {
    std::uint64_t read_bytes = 0, write_bytes = 0, major_faults = 0, minor_faults = 0;
    std::uint64_t voluntary = 0, nonvoluntary = 0;
};
/// One thread's last values (context switches of every process; the
/// rest with --threads, for the thread_* families).
struct pe_thread {
    std::uint64_t start_ticks = 0;
    pe_counters c;
    std::chrono::nanoseconds user{}, system{};
    std::string wchan;  ///< as last read (a thread that has not run still waits there)
};
/// Thread-name totals of a group (--threads): process-exporter's thread_* families.
struct pe_thread_name {
    std::uint64_t count = 0;  ///< threads now
    std::chrono::nanoseconds user{}, system{};
    pe_counters c;
};
struct pe_proc {
    pe_counters last;  ///< faults and I/O of the process as last read
    bool have = false, have_io = false;
    /// CPU total (1 ns) when the threads were last read: unchanged means no thread ran.
    std::chrono::nanoseconds cpu_at_read{-1};
    std::map<pid_t, pe_thread> threads;
    /// The last read, the process's exact CPU total (ns) before it, and
    /// when its proportional memory was last read (which stands in pe.files
    /// until the next read is due): what an idle
    /// process's next read takes instead of reading again
    /// (resource_options::previous).
    std::optional<process_resources> files;
    std::chrono::nanoseconds files_cpu{-1};
    std::chrono::steady_clock::time_point smaps_at{};
    /// Its threads as last read, sorted by id, and each one's exact CPU
    /// total (ns, -1 when unknown) when read (resource_options::idle_threads).
    std::vector<resource_thread> thread_files_last;
    std::vector<std::int64_t> thread_cpu_last;
};
struct pe_group {
    pe_counters total;
    std::uint64_t resident = 0, virtual_bytes = 0, swapped = 0, pss = 0, swap_pss = 0, open_fds = 0;
    double worst_fd_ratio = 0;
    std::uint64_t states[5] = {};  ///< Running, Sleeping, Waiting, Zombie, Other
    std::map<std::string, pe_thread_name> threads;
    std::map<std::string, std::uint64_t> wchans;  ///< threads waiting in each kernel function now
};

class member_reader {
public:
    explicit member_reader(const serve_options& opts = {}) : opts_(opts) {}
    /// Reads member `p` of snapshot `snap` and adds it to its group (the
    /// gauges of this collection, the counters by what they grew).
    void update(const snapshot& snap, const snapshot_process& p, pe_proc& pe, pe_group& gp);
    /// Called before a collection's first update: whether the machine has
    /// swap space now (with none, every member's swap is known to be 0).
    void begin_collection();
    /// process-exporter's error counters: members whose stat or status could
    /// not be read, and those read only in part (or that ended mid-read).
    [[nodiscard]] std::uint64_t procread_errors() const noexcept { return procread_errors_; }
    [[nodiscard]] std::uint64_t partial_errors() const noexcept { return partial_errors_; }

private:
    /// What to read of the process, and what the read may take from its
    /// last one instead of reading again: its files when it has not run
    /// since, the threads that have not (into idle_buf_), with the CPU
    /// totals of this snapshot; and the threads that ran whose counters the
    /// snapshot read (into known_buf_), of which only the wait channel is read;
    /// and what the snapshot read of the process itself (into known_).
    resource_options read_options(const snapshot& cur, const snapshot_process& p, const pe_proc& pe, bool read_threads);
    /// Whether the member's proportional memory is to be read now (at most
    /// every 10 s: smaps_rollup walks every mapping of the process; never
    /// for a kernel thread, which has none).
    [[nodiscard]] bool pss_due(const snapshot_process& p, const pe_proc& pe) const;
    /// Keeps what was read (with the CPU totals it is valid for) for the next read.
    void remember(const snapshot& cur, const snapshot_process& p, pe_proc& pe, const result<process_resources>& r,
                  bool read_threads, const resource_options& asked);

    serve_options opts_;
    std::uint64_t procread_errors_ = 0, partial_errors_ = 0;
    std::vector<resource_thread> idle_buf_, known_buf_;
    /// What the snapshot read of the process with its CPU (its switches and
    /// I/O), and its swap on a machine with none (resource_options::known).
    resource_known known_;
    bool no_swap_ = false;
};

}  // namespace proctimes::cli::serve
