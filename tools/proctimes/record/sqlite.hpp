// SPDX-License-Identifier: MIT
// tools/proctimes/record/sqlite.hpp — small owners of SQLite's C handles
// (https://sqlite.org/c3ref/intro.html): a connection, a prepared statement
// and a transaction that rolls back unless committed. Failures are SQLite's
// result codes; the store turns them into record::error with its own words.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace proctimes::cli::record::sql {

struct connection_closer {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
/// A connection; closing it finalises nothing itself (statements are owned
/// by `statement`, which must go first: sqlite3_close_v2 waits for them).
using connection = std::unique_ptr<sqlite3, connection_closer>;

/// SQLite's message for the last failure on `db`, or for `rc` without one.
std::string message(sqlite3* db, int rc);

/// A prepared statement. bind() indexes start at 1, column() at 0.
class statement {
public:
    statement() = default;
    statement(const statement&) = delete;
    statement& operator=(const statement&) = delete;
    statement(statement&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
    statement& operator=(statement&& o) noexcept {
        if (this != &o) {
            sqlite3_finalize(s_);
            s_ = o.s_;
            o.s_ = nullptr;
        }
        return *this;
    }
    ~statement() { sqlite3_finalize(s_); }

    /// SQLITE_OK and `out` set, or SQLite's error.
    static int prepare(sqlite3* db, std::string_view sql, statement& out);

    [[nodiscard]] bool valid() const noexcept { return s_ != nullptr; }
    [[nodiscard]] sqlite3_stmt* get() const noexcept { return s_; }

    int bind(int i, std::int64_t v) { return sqlite3_bind_int64(s_, i, v); }
    int bind(int i, double v) { return sqlite3_bind_double(s_, i, v); }
    int bind(int i, std::string_view v) {
        return sqlite3_bind_text64(s_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    }
    int bind_blob(int i, std::string_view v) {
        return sqlite3_bind_blob64(s_, i, v.data(), v.size(), SQLITE_TRANSIENT);
    }
    int bind_null(int i) { return sqlite3_bind_null(s_, i); }
    template <class T>
    int bind(int i, const std::optional<T>& v) {
        return v ? bind(i, static_cast<std::int64_t>(*v)) : bind_null(i);
    }

    /// SQLITE_ROW, SQLITE_DONE or an error.
    int step() { return sqlite3_step(s_); }
    /// Ready to run again, bindings cleared.
    void reset() {
        sqlite3_reset(s_);
        sqlite3_clear_bindings(s_);
    }

    [[nodiscard]] bool null(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
    [[nodiscard]] std::int64_t int64(int c) const { return sqlite3_column_int64(s_, c); }
    [[nodiscard]] double real(int c) const { return sqlite3_column_double(s_, c); }
    /// Text or blob bytes as stored (any byte, NUL included).
    [[nodiscard]] std::string text(int c) const;
    [[nodiscard]] std::optional<std::int64_t> optional_int64(int c) const {
        return null(c) ? std::nullopt : std::optional<std::int64_t>(int64(c));
    }

private:
    sqlite3_stmt* s_ = nullptr;
};

/// Resets a statement when the scope ends, so no statement keeps a read
/// transaction open between calls.
class reset_on_exit {
public:
    explicit reset_on_exit(statement& s) : s_(s) {}
    reset_on_exit(const reset_on_exit&) = delete;
    reset_on_exit& operator=(const reset_on_exit&) = delete;
    ~reset_on_exit() { s_.reset(); }

private:
    statement& s_;
};

/// Runs SQL without results (pragmas, DDL, BEGIN/COMMIT).
int exec(sqlite3* db, const char* sql);

/// BEGIN IMMEDIATE ... COMMIT; rolled back when destroyed uncommitted (after
/// a failure SQLite may already have rolled it back: then nothing is done).
class transaction {
public:
    explicit transaction(sqlite3* db) : db_(db) {}
    transaction(const transaction&) = delete;
    transaction& operator=(const transaction&) = delete;
    ~transaction();
    int begin(bool immediate = true);
    int commit();

private:
    sqlite3* db_;
    bool open_ = false;
};

}  // namespace proctimes::cli::record::sql
