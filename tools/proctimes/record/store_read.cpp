// SPDX-License-Identifier: MIT
// Reading intervals back as frames: each interval's row, and its samples
// joined with their identities, in one read transaction (one snapshot of the
// store, whatever the writer and retain() do meanwhile).
#include <algorithm>
#include <cstdlib>
#include <limits>

#include "record/store_impl.hpp"

namespace proctimes::cli::record {
namespace {

constexpr const char* interval_columns =
    "SELECT id, taken_ns, number, interval_ns, cpus, busy, cpu_busy, load1, load5, load15, memory_total,"
    " memory_available, tasks, ended_source, records_lost, warnings, ledger_error, ledger_interval_ns,"
    " stat_interval_ns, ledger_cpus, busy_ns, live_ns, ended_ns, reaped_children_ns, irq_ns, softirq_ns, steal_ns,"
    " guest_ns, unattributed_ns, ended_without_record, children_unknown, ended_source_note, exit_stream,"
    " records_lost_any, uptime_ns";

constexpr const char* select_samples_sql =
    "SELECT p.pid, p.creation_ns, p.ppid, p.name, p.command, p.uid, p.user, p.cgroup, s.state, s.ended,"
    " s.exit_code, s.exit_signal, s.exit_ns, s.exit_source, s.interval_kernel_ns, s.interval_user_ns,"
    " s.children_kernel_ns, s.children_user_ns, s.kernel_ns, s.user_ns, s.resolution_ns, s.threads, s.rss_bytes,"
    " s.read_bytes, s.write_bytes, s.voluntary_switches, s.involuntary_switches, s.total_resolution_ns,"
    " s.cpu_source, s.sampled_before_ns, s.basis"
    " FROM sample s JOIN process p ON p.id = s.process_id WHERE s.interval_id = ?1 ORDER BY s.process_id";

constexpr std::int64_t earliest = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t latest = std::numeric_limits<std::int64_t>::max();

std::vector<double> parse_cpu_busy(const std::string& text) {
    std::vector<double> out;
    const char* p = text.c_str();
    while (*p != '\0') {
        if (*p == '[' || *p == ',' || *p == ']' || *p == ' ') {
            ++p;
            continue;
        }
        char* end = nullptr;
        const double v = std::strtod(p, &end);
        if (end == p) break;  // not a number: what was read so far
        out.push_back(v);
        p = end;
    }
    return out;
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start < text.size()) {
        auto nl = text.find('\n', start);
        if (nl == std::string::npos) nl = text.size();
        out.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    return out;
}

std::chrono::nanoseconds dur(const sql::statement& st, int c) { return std::chrono::nanoseconds(st.int64(c)); }

template <class T>
std::optional<T> opt(const sql::statement& st, int c) {
    if (st.null(c)) return std::nullopt;
    return static_cast<T>(st.int64(c));
}

top::top_frame frame_of(const sql::statement& st) {
    top::top_frame f;
    f.taken = instant_of(st.int64(1));
    f.number = static_cast<std::uint64_t>(st.int64(2));
    f.interval = dur(st, 3);
    f.cpus = static_cast<unsigned>(st.int64(4));
    f.busy = st.real(5);
    f.busy_per_cpu = parse_cpu_busy(st.text(6));
    f.load = {st.real(7), st.real(8), st.real(9)};
    f.memory_total = static_cast<std::uint64_t>(st.int64(10));
    f.memory_available = static_cast<std::uint64_t>(st.int64(11));
    f.tasks = static_cast<std::size_t>(st.int64(12));
    f.ended_source = st.text(13);
    f.records_lost = opt<std::uint64_t>(st, 14);
    f.warnings = split_lines(st.text(15));
    f.ledger_error = st.text(16);
    f.ended_source_note = st.text(31);
    f.exit_stream = st.int64(32) != 0;
    f.records_lost_any = st.int64(33) != 0;
    f.uptime = dur(st, 34);
    // NULL where a version 1 store wrote the interval: then the processes
    // kept for it (those that used CPU) are what is known (frames()).
    if (!st.null(35)) f.live_processes = static_cast<std::size_t>(st.int64(35));
    if (!st.null(17)) {
        cpu_ledger l;
        l.interval = dur(st, 17);
        l.stat_interval = dur(st, 18);
        l.cpus = static_cast<int>(st.int64(19));
        l.busy = dur(st, 20);
        l.live = dur(st, 21);
        l.ended = dur(st, 22);
        l.reaped_children = dur(st, 23);
        l.irq = dur(st, 24);
        l.softirq = dur(st, 25);
        l.steal = dur(st, 26);
        l.guest = dur(st, 27);
        l.unattributed = dur(st, 28);
        l.ended_without_record = static_cast<std::size_t>(st.int64(29));
        l.children_unknown = static_cast<std::size_t>(st.int64(30));
        f.ledger = std::move(l);
    }
    return f;
}

top::top_row row_of(const sql::statement& st, std::int64_t taken_ns) {
    top::top_row r;
    r.pid = static_cast<proctimes::pid_t>(st.int64(0));
    r.creation = instant_of(st.int64(1));
    r.ppid = static_cast<proctimes::pid_t>(st.int64(2));
    r.name = st.text(3);
    r.command = st.text(4);
    r.uid = opt<std::uint32_t>(st, 5);
    r.user_name = st.text(6);
    r.cgroup = st.text(7);
    const auto state = st.text(8);
    r.state = state.empty() ? '?' : state[0];
    r.ended = st.int64(9) != 0;
    r.exit_code = opt<int>(st, 10);
    r.exit_signal = opt<int>(st, 11);
    if (!st.null(12)) r.exit = instant_of(st.int64(12));
    const auto source = st.int64(13);
    r.exit_source = source >= 0 && source <= static_cast<std::int64_t>(exit_source::bpf_exit)
                        ? static_cast<proctimes::exit_source>(source)
                        : exit_source::none;
    r.interval_kernel = dur(st, 14);
    r.interval_user = dur(st, 15);
    r.interval_children_kernel = dur(st, 16);
    r.interval_children_user = dur(st, 17);
    r.kernel = dur(st, 18);
    r.user = dur(st, 19);
    r.resolution = dur(st, 20);
    r.threads = static_cast<std::uint32_t>(st.int64(21));
    r.rss_bytes = opt<std::uint64_t>(st, 22);
    r.read_bytes = opt<std::uint64_t>(st, 23);
    r.write_bytes = opt<std::uint64_t>(st, 24);
    r.voluntary_switches = opt<std::uint64_t>(st, 25);
    r.involuntary_switches = opt<std::uint64_t>(st, 26);
    r.total_resolution = dur(st, 27);
    if (!st.null(28)) {
        const auto source = st.int64(28);
        if (source >= 0 && source <= static_cast<std::int64_t>(cpu_source::os_times))
            r.source = static_cast<cpu_source>(source);
    }
    if (!st.null(29)) r.sampled_at = instant_of(taken_ns - st.int64(29));
    r.basis = st.text(30);
    return r;
}

}  // namespace

outcome<std::vector<top::top_frame>> store::impl::frames(std::int64_t from, std::int64_t to, bool descending,
                                                         std::size_t limit) {
    const char* what = "cannot read the store's intervals";
    // A version 1 store has no live_processes column: NULL in its place.
    std::string text = std::string(interval_columns) + (version >= 2 ? ", live_processes" : ", NULL") +
                       " FROM interval WHERE taken_ns BETWEEN ?1 AND ?2 ORDER BY taken_ns" +
                       (descending ? " DESC" : "") + (limit ? " LIMIT " + std::to_string(limit) : "");
    sql::statement intervals;
    if (int rc = sql::statement::prepare(db.get(), text, intervals); rc != SQLITE_OK) return fail(rc, what);
    if (int rc = prepare(select_samples, select_samples_sql); rc != SQLITE_OK) return fail(rc, what);
    sql::transaction t(db.get());
    // A writer's own read inside no transaction of its own: one snapshot.
    if (sqlite3_get_autocommit(db.get()) != 0)
        if (int rc = t.begin(false); rc != SQLITE_OK) return fail(rc, what);
    std::vector<top::top_frame> out;
    int rc = intervals.bind(1, from);
    if (rc == SQLITE_OK) rc = intervals.bind(2, to);
    while (rc == SQLITE_OK && (rc = intervals.step()) == SQLITE_ROW) {
        auto f = frame_of(intervals);
        sql::reset_on_exit g(select_samples);
        int src = select_samples.bind(1, intervals.int64(0));
        while (src == SQLITE_OK && (src = select_samples.step()) == SQLITE_ROW) {
            f.rows.push_back(row_of(select_samples, ns_of(f.taken)));
            src = SQLITE_OK;
        }
        if (src != SQLITE_DONE) return fail(src, what);
        if (intervals.null(35))
            f.live_processes = static_cast<std::size_t>(
                std::count_if(f.rows.begin(), f.rows.end(), [](const top::top_row& r) { return !r.ended; }));
        out.push_back(std::move(f));
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE) return fail(rc, what);
    intervals = {};
    if (int c = t.commit(); c != SQLITE_OK && sqlite3_get_autocommit(db.get()) == 0) return fail(c, what);
    return out;
}

outcome<std::vector<top::top_frame>> store::read_intervals(instant from, instant to) {
    return impl_->frames(ns_of(from), ns_of(to), false, 0);
}

namespace {
outcome<top::top_frame> first_of(outcome<std::vector<top::top_frame>> v, const store::impl& s,
                                 const std::string& none) {
    if (!v) return v.error();
    if (v->empty()) return s.fail(error_kind::not_found, none);
    return std::move(v->front());
}
}  // namespace

outcome<top::top_frame> store::interval_at(instant t) {
    auto after = impl_->frames(ns_of(t), latest, false, 1);
    if (after && after->empty()) after = impl_->frames(earliest, latest, true, 1);
    return first_of(std::move(after), *impl_, "the store " + impl_->path + " holds no intervals");
}

outcome<top::top_frame> store::previous(instant taken) {
    const auto t = ns_of(taken);
    if (t == earliest) return impl_->fail(error_kind::not_found, "no interval before " + describe(taken));
    return first_of(impl_->frames(earliest, t - 1, true, 1), *impl_,
                    "no interval before " + describe(taken) + " in the store " + impl_->path);
}

outcome<top::top_frame> store::next(instant taken) {
    const auto t = ns_of(taken);
    if (t == latest) return impl_->fail(error_kind::not_found, "no interval after " + describe(taken));
    return first_of(impl_->frames(t + 1, latest, false, 1), *impl_,
                    "no interval after " + describe(taken) + " in the store " + impl_->path);
}

outcome<store_span> store::span() {
    sql::statement st;
    int rc =
        sql::statement::prepare(impl_->db.get(), "SELECT count(*), min(taken_ns), max(taken_ns) FROM interval", st);
    if (rc == SQLITE_OK) rc = st.step();
    if (rc != SQLITE_ROW) return impl_->fail(rc, "cannot read the store's intervals");
    store_span s;
    s.intervals = static_cast<std::uint64_t>(st.int64(0));
    if (s.intervals > 0) {
        s.first = instant_of(st.int64(1));
        s.last = instant_of(st.int64(2));
    }
    return s;
}

}  // namespace proctimes::cli::record
