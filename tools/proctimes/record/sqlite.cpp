// SPDX-License-Identifier: MIT
#include "record/sqlite.hpp"

namespace proctimes::cli::record::sql {

std::string message(sqlite3* db, int rc) {
    if (db != nullptr && sqlite3_extended_errcode(db) == rc) return sqlite3_errmsg(db);
    return sqlite3_errstr(rc);
}

int statement::prepare(sqlite3* db, std::string_view sql, statement& out) {
    sqlite3_stmt* s = nullptr;
    const int rc =
        sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &s, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(s);
        return rc;
    }
    out = statement();
    out.s_ = s;
    return SQLITE_OK;
}

std::string statement::text(int c) const {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(s_, c));
    const int n = sqlite3_column_bytes(s_, c);
    return p == nullptr || n <= 0 ? std::string() : std::string(p, static_cast<std::size_t>(n));
}

int exec(sqlite3* db, const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); }

int transaction::begin(bool immediate) {
    const int rc = exec(db_, immediate ? "BEGIN IMMEDIATE" : "BEGIN");
    open_ = rc == SQLITE_OK;
    return rc;
}

int transaction::commit() {
    const int rc = exec(db_, "COMMIT");
    // A failed COMMIT (SQLITE_BUSY aside) has rolled back, or leaves the
    // transaction for the destructor to roll back.
    if (rc == SQLITE_OK) open_ = false;
    return rc;
}

transaction::~transaction() {
    if (open_ && sqlite3_get_autocommit(db_) == 0) exec(db_, "ROLLBACK");
}

}  // namespace proctimes::cli::record::sql
