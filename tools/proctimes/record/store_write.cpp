// SPDX-License-Identifier: MIT
// Writing an interval: one transaction holding the interval's row, the
// identities not yet stored, and one sample per process kept.
#include <algorithm>
#include <cstdio>

#include "record/store_impl.hpp"

namespace proctimes::cli::record {
namespace {

constexpr const char* insert_interval_sql =
    "INSERT INTO interval (taken_ns, number, interval_ns, cpus, busy, cpu_busy, load1, load5, load15, memory_total,"
    " memory_available, tasks, processes, ended_source, records_lost, warnings, ledger_error, ledger_interval_ns,"
    " stat_interval_ns, ledger_cpus, busy_ns, live_ns, ended_ns, reaped_children_ns, irq_ns, softirq_ns, steal_ns,"
    " guest_ns, unattributed_ns, ended_without_record, ended_processes, children_unknown, ended_source_note,"
    " exit_stream, records_lost_any, uptime_ns, live_processes)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,"
    " ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37)";
constexpr const char* insert_sample_sql =
    "INSERT OR IGNORE INTO sample (interval_id, process_id, state, ended, exit_code, exit_signal, exit_ns, exit_source,"
    " interval_kernel_ns, interval_user_ns, children_kernel_ns, children_user_ns, kernel_ns, user_ns, resolution_ns,"
    " threads, rss_bytes, read_bytes, write_bytes, voluntary_switches, involuntary_switches, total_resolution_ns,"
    " cpu_source, sampled_before_ns, basis)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,"
    " ?23, ?24, ?25)";
constexpr const char* insert_process_sql =
    "INSERT INTO process (pid, creation_ns, ppid, name, command, uid, user, cgroup)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
constexpr const char* find_process_sql =
    "SELECT id, ppid, name, command, uid, user, cgroup FROM process WHERE pid = ?1 AND creation_ns = ?2";

// sample.cpu_source and sample.exit_source hold these enums' values: fixed
// by schema version 1 (docs/STORE.md). A change here is a new schema version.
static_assert(static_cast<int>(cpu_source::rusage) == 0 && static_cast<int>(cpu_source::cpu_clock_and_stat) == 1 &&
              static_cast<int>(cpu_source::schedstat_and_stat) == 2 && static_cast<int>(cpu_source::stat_ticks) == 3 &&
              static_cast<int>(cpu_source::wait_rusage) == 4 && static_cast<int>(cpu_source::exit_record) == 5 &&
              static_cast<int>(cpu_source::thread_clock_and_rusage) == 6 &&
              static_cast<int>(cpu_source::bpf_task) == 7 && static_cast<int>(cpu_source::bpf_exit) == 8 &&
              static_cast<int>(cpu_source::os_times) == 9);
static_assert(static_cast<int>(exit_source::none) == 0 && static_cast<int>(exit_source::observed) == 1 &&
              static_cast<int>(exit_source::exit_record) == 2 && static_cast<int>(exit_source::bpf_exit) == 3);

/// The identities cached before the writer forgets them all and looks them
/// up again: a bound on its memory (processes whose end it never saw stay
/// cached), ten times the processes of a busy machine.
constexpr std::size_t identity_cache_limit = 50'000;

std::string cpu_busy_json(const std::vector<double>& v) {
    std::string out = "[";
    char buf[32];
    for (std::size_t i = 0; i < v.size(); ++i) {
        // %.17g: the double reads back exactly.
        std::snprintf(buf, sizeof buf, "%s%.17g", i ? "," : "", v[i]);
        out += buf;
    }
    return out + "]";
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) {
        if (!out.empty()) out += '\n';
        out += l;
    }
    return out;
}

identity identity_of(const top::top_row& r) {
    identity id;
    id.pid = r.pid;
    id.creation_ns = ns_of(r.creation);
    id.ppid = r.ppid;
    id.name = r.name;
    id.command = r.command;
    if (r.uid) id.uid = *r.uid;
    id.user = r.user_name;
    id.cgroup = r.cgroup;
    return id;
}

std::int64_t ns(std::chrono::nanoseconds d) { return d.count(); }

int bind_interval(sql::statement& st, const top::top_frame& f, std::size_t kept) {
    int rc = SQLITE_OK;
    auto b = [&](int i, auto v) {
        if (rc == SQLITE_OK) rc = st.bind(i, v);
    };
    b(1, ns_of(f.taken));
    b(2, static_cast<std::int64_t>(f.number));
    b(3, ns(f.interval));
    b(4, static_cast<std::int64_t>(f.cpus));
    b(5, f.busy);
    b(6, std::string_view(cpu_busy_json(f.busy_per_cpu)));
    b(7, f.load[0]);
    b(8, f.load[1]);
    b(9, f.load[2]);
    b(10, static_cast<std::int64_t>(f.memory_total));
    b(11, static_cast<std::int64_t>(f.memory_available));
    b(12, static_cast<std::int64_t>(f.tasks));
    b(13, static_cast<std::int64_t>(kept));
    b(14, std::string_view(f.ended_source));
    b(15, f.records_lost);
    b(16, std::string_view(joined(f.warnings)));
    b(17, std::string_view(f.ledger_error));
    b(33, std::string_view(f.ended_source_note));
    b(34, std::int64_t{f.exit_stream ? 1 : 0});
    b(35, std::int64_t{f.records_lost_any ? 1 : 0});
    b(36, ns(f.uptime));
    b(37, static_cast<std::int64_t>(f.live_processes));
    if (f.ledger) {
        const auto& l = *f.ledger;
        b(18, ns(l.interval));
        b(19, ns(l.stat_interval));
        b(20, static_cast<std::int64_t>(l.cpus));
        b(21, ns(l.busy));
        b(22, ns(l.live));
        b(23, ns(l.ended));
        b(24, ns(l.reaped_children));
        b(25, ns(l.irq));
        b(26, ns(l.softirq));
        b(27, ns(l.steal));
        b(28, ns(l.guest));
        b(29, ns(l.unattributed));
        b(30, static_cast<std::int64_t>(l.ended_without_record));
        b(31, static_cast<std::int64_t>(l.processes.size()));
        b(32, static_cast<std::int64_t>(l.children_unknown));
    }  // else the ledger's columns stay NULL
    return rc;
}

int bind_sample(sql::statement& st, std::int64_t interval_id, std::int64_t process_id, const top::top_row& r,
                std::int64_t taken_ns) {
    int rc = SQLITE_OK;
    auto b = [&](int i, auto v) {
        if (rc == SQLITE_OK) rc = st.bind(i, v);
    };
    b(1, interval_id);
    b(2, process_id);
    b(3, std::string_view(&r.state, 1));
    b(4, std::int64_t{r.ended ? 1 : 0});
    b(5, r.exit_code);
    b(6, r.exit_signal);
    if (r.exit) b(7, ns_of(*r.exit));
    b(8, static_cast<std::int64_t>(r.exit_source));
    b(9, ns(r.interval_kernel));
    b(10, ns(r.interval_user));
    b(11, ns(r.interval_children_kernel));
    b(12, ns(r.interval_children_user));
    b(13, ns(r.kernel));
    b(14, ns(r.user));
    b(15, ns(r.resolution));
    b(16, static_cast<std::int64_t>(r.threads));
    b(17, r.rss_bytes);
    b(18, r.read_bytes);
    b(19, r.write_bytes);
    b(20, r.voluntary_switches);
    b(21, r.involuntary_switches);
    b(22, ns(r.total_resolution));
    if (r.source) b(23, static_cast<std::int64_t>(*r.source));
    if (r.sampled_at) b(24, taken_ns - ns_of(*r.sampled_at));  // a few bytes, not eight
    b(25, std::string_view(r.basis));
    return rc;
}

/// Whether a row is kept: it used CPU in the interval, or its children did,
/// or it ended in it.
bool kept(const top::top_row& r) {
    return r.ended || r.interval_cpu().count() != 0 || r.interval_children_cpu().count() != 0;
}

}  // namespace

status store::write_interval(const top::top_frame& f) {
    auto& s = *impl_;
    std::size_t count = 0;
    for (const auto& r : f.rows) count += kept(r) ? 1 : 0;
    const std::string what = "the interval taken at " + describe(f.taken) + " (frame " + std::to_string(f.number) +
                             ", " + std::to_string(count) + " processes) was not written";
    if (!s.writer) return s.fail(error_kind::read_only, what + ": the store " + s.path + " is open for reading");

    auto failed = [&](int rc) {
        // The transaction is undone: so are the identities it inserted.
        s.identities.clear();
        s.identities_cached = 0;
        return s.fail(rc, what);
    };
    for (auto [st, text] :
         {std::pair{&s.insert_interval, insert_interval_sql}, std::pair{&s.insert_sample, insert_sample_sql},
          std::pair{&s.insert_process, insert_process_sql}, std::pair{&s.find_process, find_process_sql}})
        if (int rc = s.prepare(*st, text); rc != SQLITE_OK) return failed(rc);
    if (s.identities_cached > identity_cache_limit) {
        s.identities.clear();
        s.identities_cached = 0;
    }

    sqlite3* db = s.db.get();
    sql::transaction t(db);
    if (int rc = t.begin(); rc != SQLITE_OK) return failed(rc);
    {
        // An interval taken at the same instant is replaced, with the
        // identities only it referred to.
        const auto deleted =
            s.delete_intervals("(SELECT id FROM interval WHERE taken_ns = " + std::to_string(ns_of(f.taken)) + ")");
        if (!deleted) return failed(deleted.error().sqlite_code);
    }
    {
        sql::reset_on_exit guard(s.insert_interval);
        int rc = bind_interval(s.insert_interval, f, count);
        if (rc == SQLITE_OK) rc = s.insert_interval.step();
        if (rc != SQLITE_DONE) return failed(rc);
    }
    const std::int64_t interval_id = sqlite3_last_insert_rowid(db);
    std::size_t inserted = 0;
    for (const auto& r : f.rows) {
        if (!kept(r)) continue;
        auto id = identity_of(r);
        const std::pair key{id.pid, id.creation_ns};
        auto known = s.identities.find(key);
        std::int64_t process_id = -1;
        if (known != s.identities.end())
            for (const auto& [k, pid] : known->second)
                if (k == id) process_id = pid;
        const bool cached = process_id >= 0;
        if (process_id < 0) {
            // Not cached: stored by an earlier run, or new.
            sql::reset_on_exit g(s.find_process);
            int rc = s.find_process.bind(1, id.pid);
            if (rc == SQLITE_OK) rc = s.find_process.bind(2, id.creation_ns);
            while (rc == SQLITE_OK && (rc = s.find_process.step()) == SQLITE_ROW) {
                identity stored = id;
                stored.ppid = s.find_process.int64(1);
                stored.name = s.find_process.text(2);
                stored.command = s.find_process.text(3);
                stored.uid = s.find_process.optional_int64(4);
                stored.user = s.find_process.text(5);
                stored.cgroup = s.find_process.text(6);
                if (stored == id) process_id = s.find_process.int64(0);
                rc = SQLITE_OK;
            }
            if (rc != SQLITE_DONE) return failed(rc);
        }
        if (process_id < 0) {
            sql::reset_on_exit g(s.insert_process);
            auto& st = s.insert_process;
            int rc = st.bind(1, id.pid);
            if (rc == SQLITE_OK) rc = st.bind(2, id.creation_ns);
            if (rc == SQLITE_OK) rc = st.bind(3, id.ppid);
            if (rc == SQLITE_OK) rc = st.bind(4, std::string_view(id.name));
            if (rc == SQLITE_OK) rc = st.bind(5, std::string_view(id.command));
            if (rc == SQLITE_OK) rc = st.bind(6, id.uid);
            if (rc == SQLITE_OK) rc = st.bind(7, std::string_view(id.user));
            if (rc == SQLITE_OK) rc = st.bind(8, std::string_view(id.cgroup));
            if (rc == SQLITE_OK) rc = st.step();
            if (rc != SQLITE_DONE) return failed(rc);
            process_id = sqlite3_last_insert_rowid(db);
        }
        // A process that ended is not seen again: only the living are cached.
        if (r.ended && cached) {
            auto& v = known->second;
            v.erase(std::remove_if(v.begin(), v.end(), [&](const auto& k) { return k.second == process_id; }), v.end());
            --s.identities_cached;
            if (v.empty()) s.identities.erase(known);
        } else if (!r.ended && !cached) {
            s.identities[key].emplace_back(std::move(id), process_id);
            ++s.identities_cached;
        }
        sql::reset_on_exit g(s.insert_sample);
        int rc = bind_sample(s.insert_sample, interval_id, process_id, r, ns_of(f.taken));
        if (rc == SQLITE_OK) rc = s.insert_sample.step();
        if (rc != SQLITE_DONE) return failed(rc);
        inserted += static_cast<std::size_t>(sqlite3_changes64(db));
    }
    if (inserted != count) {
        // A process listed twice in the frame is stored once.
        const std::string fix = "UPDATE interval SET processes = " + std::to_string(inserted) +
                                " WHERE id = " + std::to_string(interval_id);
        if (int rc = sql::exec(db, fix.c_str()); rc != SQLITE_OK) return failed(rc);
    }
    if (int rc = t.commit(); rc != SQLITE_OK) return failed(rc);
    return ok();
}

}  // namespace proctimes::cli::record
