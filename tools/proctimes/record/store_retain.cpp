// SPDX-License-Identifier: MIT
// Retention (the oldest intervals go, in short transactions) and reports
// (CPU per group over a window).
#include "record/store_impl.hpp"

namespace proctimes::cli::record {
namespace {

/// Intervals deleted per transaction, at most, and samples: each transaction
/// holds the write lock for a few milliseconds (about 10 ms a 4,096 samples),
/// so the writer's next interval never waits long.
constexpr int retain_batch = 32;
constexpr std::int64_t retain_batch_samples = 4096;
/// Free pages given back to the file system per transaction.
constexpr int vacuum_batch = 256;

outcome<std::int64_t> single_int(store::impl& s, const std::string& text, const char* what) {
    sql::statement st;
    int rc = sql::statement::prepare(s.db.get(), text, st);
    if (rc == SQLITE_OK) rc = st.step();
    if (rc != SQLITE_ROW) return s.fail(rc, what);
    return st.int64(0);
}

/// Deletes up to retain_batch of the oldest intervals (fewer when they hold
/// more than retain_batch_samples samples; at least one) taken before `cutoff`
/// (all but the newest one when `cutoff` is empty), with their samples and
/// the identities nothing refers to any more. Returns how many intervals went.
outcome<std::int64_t> delete_oldest(store::impl& s, std::optional<std::int64_t> cutoff, retain_result& out) {
    const char* what = "cannot delete old intervals";
    sqlite3* db = s.db.get();
    sql::transaction t(db);
    if (int rc = t.begin(); rc != SQLITE_OK) return s.fail(rc, what);
    std::string select = "SELECT id, processes FROM interval";
    select += cutoff ? " WHERE taken_ns < " + std::to_string(*cutoff)
                     : " WHERE taken_ns < (SELECT max(taken_ns) FROM interval)";
    select += " ORDER BY taken_ns LIMIT " + std::to_string(retain_batch);
    std::string ids;
    std::int64_t n = 0, samples = 0;
    {
        sql::statement st;
        int rc = sql::statement::prepare(db, select, st);
        while (rc == SQLITE_OK && samples < retain_batch_samples && (rc = st.step()) == SQLITE_ROW) {
            ids += (n++ ? "," : "") + std::to_string(st.int64(0));
            samples += st.int64(1);
            rc = SQLITE_OK;
        }
        if (rc != SQLITE_DONE && rc != SQLITE_OK) return s.fail(rc, what);
    }
    if (n == 0) return n;
    auto processes = s.delete_intervals("(" + ids + ")");
    if (!processes) return processes.error();
    if (int rc = t.commit(); rc != SQLITE_OK) return s.fail(rc, what);
    out.intervals_deleted += static_cast<std::uint64_t>(n);
    out.processes_deleted += static_cast<std::uint64_t>(*processes);
    return n;
}

}  // namespace

outcome<std::int64_t> store::impl::delete_intervals(const std::string& list) {
    const char* what = "cannot delete intervals";
    sqlite3* h = db.get();
    // Identities referred to by these intervals only, then the intervals.
    const std::string gone = "DELETE FROM process WHERE id IN (SELECT process_id FROM sample WHERE interval_id IN " +
                             list + ") AND NOT EXISTS (SELECT 1 FROM sample x WHERE x.process_id = process.id AND" +
                             " x.interval_id NOT IN " + list + ")";
    if (int rc = sql::exec(h, gone.c_str()); rc != SQLITE_OK) return fail(rc, what);
    const auto processes = sqlite3_changes64(h);
    const std::string rest =
        "DELETE FROM sample WHERE interval_id IN " + list + "; DELETE FROM interval WHERE id IN " + list;
    if (int rc = sql::exec(h, rest.c_str()); rc != SQLITE_OK) return fail(rc, what);
    if (processes > 0) {
        // Deleted ids must not be written again from the cache.
        identities.clear();
        identities_cached = 0;
    }
    return processes;
}

outcome<std::uint64_t> store::used_bytes() {
    auto& s = *impl_;
    const char* what = "cannot measure the store";
    auto pages = single_int(s, "PRAGMA page_count", what);
    if (!pages) return pages.error();
    auto free_pages = single_int(s, "PRAGMA freelist_count", what);
    if (!free_pages) return free_pages.error();
    auto size = single_int(s, "PRAGMA page_size", what);
    if (!size) return size.error();
    return static_cast<std::uint64_t>((*pages - *free_pages) * *size);
}

outcome<retain_result> store::retain(std::chrono::nanoseconds max_age, std::uint64_t max_bytes) {
    auto& s = *impl_;
    if (!s.writer)
        return s.fail(error_kind::read_only,
                      "cannot delete old intervals: the store " + s.path + " is open for reading");
    retain_result out;
    auto before = used_bytes();
    if (!before) return before.error();
    out.bytes_before = *before;
    if (max_age.count() > 0) {
        auto newest = single_int(s, "SELECT coalesce(max(taken_ns), 0) FROM interval", "cannot delete old intervals");
        if (!newest) return newest.error();
        const std::int64_t cutoff = *newest - max_age.count();
        for (;;) {
            auto n = delete_oldest(s, cutoff, out);
            if (!n) return n.error();
            if (*n == 0) break;
        }
    }
    if (max_bytes > 0) {
        for (;;) {
            auto used = used_bytes();
            if (!used) return used.error();
            if (*used <= max_bytes) break;
            auto n = delete_oldest(s, std::nullopt, out);  // the newest interval stays
            if (!n) return n.error();
            if (*n == 0) break;
        }
    }
    // Free pages back to the file system, a few at a time.
    for (;;) {
        auto free_pages = single_int(s, "PRAGMA freelist_count", "cannot shrink the store");
        if (!free_pages) return free_pages.error();
        if (*free_pages == 0) break;
        const std::string vacuum = "PRAGMA incremental_vacuum(" + std::to_string(vacuum_batch) + ")";
        if (int rc = sql::exec(s.db.get(), vacuum.c_str()); rc != SQLITE_OK)
            return s.fail(rc, "cannot shrink the store");
        auto after = single_int(s, "PRAGMA freelist_count", "cannot shrink the store");
        if (!after) return after.error();
        if (*after >= *free_pages) break;  // auto_vacuum is off (a store made elsewhere)
    }
    // Copies the WAL into the database where no reader holds it back.
    sqlite3_wal_checkpoint_v2(s.db.get(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    auto after = used_bytes();
    if (!after) return after.error();
    out.bytes_after = *after;
    return out;
}

outcome<record::report> store::report(instant from, instant to, group_by by, std::size_t top) {
    auto& s = *impl_;
    const char* what = "cannot make the report";
    const char* key = by == group_by::program ? "p.name" : by == group_by::user ? "p.user" : "p.cgroup";
    sql::transaction t(s.db.get());
    if (int rc = t.begin(false); rc != SQLITE_OK) return s.fail(rc, what);
    record::report out;
    {
        sql::statement st;
        int rc = sql::statement::prepare(s.db.get(),
                                         "SELECT count(*), min(taken_ns), max(taken_ns), coalesce(sum(interval_ns), 0),"
                                         " coalesce(sum(busy_ns), 0) FROM interval WHERE taken_ns BETWEEN ?1 AND ?2",
                                         st);
        if (rc == SQLITE_OK) rc = st.bind(1, ns_of(from));
        if (rc == SQLITE_OK) rc = st.bind(2, ns_of(to));
        if (rc == SQLITE_OK) rc = st.step();
        if (rc != SQLITE_ROW) return s.fail(rc, what);
        out.intervals = static_cast<std::uint64_t>(st.int64(0));
        if (out.intervals > 0) {
            out.first = instant_of(st.int64(1));
            out.last = instant_of(st.int64(2));
        }
        out.span = std::chrono::nanoseconds(st.int64(3));
        out.busy = std::chrono::nanoseconds(st.int64(4));
    }
    // A process is its pid and creation: the store keeps a row for each set
    // of attributes it was seen with (an exec, a command line read only from
    // its end record), and counts it once.
    std::string text = std::string("SELECT ") + key +
                       " AS k, sum(s.interval_kernel_ns), sum(s.interval_user_ns), sum(s.children_kernel_ns),"
                       " sum(s.children_user_ns), count(DISTINCT p.pid || ':' || p.creation_ns),"
                       " count(DISTINCT CASE WHEN s.ended THEN p.pid || ':' || p.creation_ns END),"
                       " sum(s.interval_kernel_ns + s.interval_user_ns + s.children_kernel_ns + s.children_user_ns)"
                       " AS cpu FROM interval i JOIN sample s ON s.interval_id = i.id"
                       " JOIN process p ON p.id = s.process_id WHERE i.taken_ns BETWEEN ?1 AND ?2"
                       " GROUP BY k ORDER BY cpu DESC, k";
    sql::statement st;
    int rc = sql::statement::prepare(s.db.get(), text, st);
    if (rc == SQLITE_OK) rc = st.bind(1, ns_of(from));
    if (rc == SQLITE_OK) rc = st.bind(2, ns_of(to));
    while (rc == SQLITE_OK && (rc = st.step()) == SQLITE_ROW) {
        report_row r;
        r.key = st.text(0);
        r.kernel = std::chrono::nanoseconds(st.int64(1));
        r.user = std::chrono::nanoseconds(st.int64(2));
        r.children_kernel = std::chrono::nanoseconds(st.int64(3));
        r.children_user = std::chrono::nanoseconds(st.int64(4));
        r.processes = static_cast<std::uint64_t>(st.int64(5));
        r.ended = static_cast<std::uint64_t>(st.int64(6));
        out.attributed += r.cpu();
        if (top == 0 || out.rows.size() < top) out.rows.push_back(std::move(r));
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE) return s.fail(rc, what);
    st = {};
    if (int c = t.commit(); c != SQLITE_OK && sqlite3_get_autocommit(s.db.get()) == 0) return s.fail(c, what);
    return out;
}

}  // namespace proctimes::cli::record
