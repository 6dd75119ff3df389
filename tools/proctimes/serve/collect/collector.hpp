// SPDX-License-Identifier: MIT
// The exporter's state: one snapshot per scrape, the exit records in between,
// per-process and per-group counters that only ever grow, and the CPU ledger.
// Thread-safe: scrapes are serialised by one mutex; a background thread keeps
// the exit-record socket drained between scrapes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "proctimes/ledger.hpp"
#include "proctimes/resources.hpp"
#include "proctimes/snapshot.hpp"
#include "serve/collect/exposition.hpp"
#include "serve/collect/reaped.hpp"
#include "serve/error.hpp"
#include "serve/pe/grouping.hpp"
#include "serve/serve.hpp"

namespace proctimes::cli::serve {

class collector {
public:
    /// Opens the snapshotter (and, if permitted and asked for, the exit
    /// stream). Errors: the classifier's (classifier::make), and
    /// error_kind::runtime when the process table cannot be read.
    static outcome<std::unique_ptr<collector>> open(const serve_options& opts);
    /// open(), with the error's message in `error`.
    static std::unique_ptr<collector> make(const serve_options& opts, std::string& error);
    ~collector();

    /// Takes a snapshot, updates every counter, and renders the result.
    /// Two scrapes closer than 100 ms share one collection.
    std::string scrape(format f);

    /// The exit stream's source ("bpf" or "taskstats") when ends are read, else why not.
    [[nodiscard]] std::string exit_source() const;

private:
    collector() = default;
    void drain_loop();
    void collect();
    std::vector<family> families() const;

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
        /// when its proportional memory was last read: what an idle
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

    struct proc_state {
        std::string group;                          ///< "" when excluded
        task_name name;                             ///< the name the group was decided on (exec changes it)
        std::chrono::nanoseconds user{}, system{};  ///< exported so far (monotone)
        /// What of user + system was added to `group`: the group changes when
        /// the process renames itself, and only this part is the group's.
        std::chrono::nanoseconds in_group{};
        std::chrono::nanoseconds last_interval{};  ///< CPU in the last interval (top-N order)
        std::uint64_t start_ticks = 0;
        double start_seconds = 0;
        pid_t pid = 0;
        pid_t parent = 0;  ///< when first seen
        bool seen = false;
        /// The rules could not read its command line (it was ending): it is
        /// classified again at its next sight.
        bool undecided = false;
        /// With rules that need them: the facts its group was decided on,
        /// which a child that forks without exec'ing shares.
        std::shared_ptr<const process_facts> facts;
        task_name facts_name;  ///< its comm when `facts` were read
        /// As a reaping parent, with taskstats records: what they and earlier
        /// readings held beyond its children's growth (<= 0), for the next
        /// interval (reaped.hpp).
        std::chrono::nanoseconds reaped_carry{};
        pe_proc pe;  ///< with --namedprocess
    };
    struct group_state {
        std::chrono::nanoseconds user{}, system{}, estimated{};
        std::uint64_t ended = 0;
        std::uint64_t procs = 0, threads = 0;
        double oldest = 0;  ///< seconds since the epoch; 0: none
        pe_group pe;        ///< with --namedprocess
    };

    /// Decides the group of every process of cur_ that needs it (new ones; in
    /// process-exporter's way with its rules: a group once given is kept
    /// until the process ends, unmatched ones join their parent's group
    /// under -children) and returns each one's state (membership.cpp).
    std::vector<proc_state*> assign_groups();
    /// Credits the processes only exit records know (started and ended
    /// between two collections): to the group the rules give them, else
    /// (-children) their parent's; what nothing attributes goes to the
    /// unattributed counters (membership.cpp). Returns where each went.
    std::unordered_map<const ended_process*, destination> credit_unseen();
    /// With taskstats records, which lack each task's last stretch of run
    /// time: credits what the live parents' children times grew by beyond
    /// what the records and earlier readings hold, where the children went
    /// (reaped.hpp; membership.cpp).
    void credit_reaped(const std::unordered_map<const ended_process*, destination>& unseen_went);
    /// --namedprocess: reads the process's files and adds to its group (namedprocess.cpp).
    void update_namedprocess(const snapshot_process& p, proc_state& st, group_state& g);
    /// What to read of the process, and what the read may take from its
    /// last one instead of reading again: its files when it has not run
    /// since, the threads that have not (into idle_buf_), with the CPU
    /// totals of this snapshot.
    resource_options pe_read_options(const snapshot_process& p, const pe_proc& pe, bool read_threads);
    /// Keeps what was read (with the CPU totals it is valid for) for the next read.
    void pe_remember(const snapshot_process& p, pe_proc& pe, const result<process_resources>& r, bool read_threads,
                     const resource_options& asked);
    void namedprocess_families(std::vector<family>& out) const;

    serve_options opts_;
    std::unique_ptr<classifier> classify_;
    snapshotter snap_;
    snapshot prev_, cur_;
    bool have_prev_ = false;
    std::optional<system_cpu_times> stat_prev_;
    std::map<std::pair<pid_t, std::uint64_t>, proc_state> procs_;
    std::map<std::string, group_state> groups_;
    /// CPU of ended processes no group could be given (a rule needs their
    /// command line, which their exit record does not carry).
    std::chrono::nanoseconds unattributed_user_{}, unattributed_system_{};
    std::uint64_t unattributed_procs_ = 0;
    std::optional<cpu_ledger> ledger_;

    // Exit records, filled by the drain thread.
    std::optional<exit_stream> exits_;
    std::string exit_why_;
    mutable std::mutex exits_mu_;
    std::vector<ended_task> pending_;
    std::uint64_t lost_ = 0, dropped_ = 0;
    std::atomic<bool> stop_{false};
    std::thread drainer_;

    // Scrape state.
    std::mutex mu_;
    std::chrono::steady_clock::time_point last_collect_{};
    std::uint64_t collections_ = 0, failures_ = 0;
    double last_duration_ = 0;
    std::size_t tasks_read_ = 0, threads_read_ = 0;
    /// process-exporter's error counters: members whose stat or status could
    /// not be read, and those read only in part (or that ended mid-read).
    std::uint64_t pe_procread_errors_ = 0, pe_partial_errors_ = 0;
    std::vector<resource_thread> idle_buf_;
    std::string cached_[2];
};

}  // namespace proctimes::cli::serve
