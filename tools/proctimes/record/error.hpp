// SPDX-License-Identifier: MIT
// tools/proctimes/record/error.hpp — the errors of the recording store, as
// values: what went wrong (a kind a caller can act on) and a message that
// names the store and says what was lost, for the user.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace proctimes::cli::record {

enum class error_kind {
    path,       ///< the store's path cannot be used: a directory, a FIFO, a missing folder, no permission
    locked,     ///< another writer holds the store
    schema,     ///< not a proctimes store, or one written by a newer schema
    corrupt,    ///< SQLite found the file malformed (SQLITE_CORRUPT, SQLITE_NOTADB)
    full,       ///< the disk (or the file system's quota) is full: the write was undone
    busy,       ///< the database stayed locked past the busy timeout
    not_found,  ///< no interval where one was asked for (an empty store, a time outside it)
    read_only,  ///< a write through a store opened for reading
    io,         ///< any other failure of SQLite or of the system
};

struct error {
    error_kind kind = error_kind::io;
    std::string message;  ///< one sentence, naming the store
    int sqlite_code = 0;  ///< SQLite's extended result code, where SQLite said it (0 otherwise)
};

/// A T or the error that kept it from being made.
template <class T>
class [[nodiscard]] outcome {
public:
    outcome(T v) : v_(std::in_place_index<0>, std::move(v)) {}              // NOLINT(google-explicit-constructor)
    outcome(record::error e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT(google-explicit-constructor)

    [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }
    T& operator*() & { return std::get<0>(v_); }
    const T& operator*() const& { return std::get<0>(v_); }
    T&& operator*() && { return std::get<0>(std::move(v_)); }
    T* operator->() { return &std::get<0>(v_); }
    const T* operator->() const { return &std::get<0>(v_); }
    [[nodiscard]] const record::error& error() const { return std::get<1>(v_); }

private:
    std::variant<T, record::error> v_;
};

/// Success, or an error.
using status = outcome<std::monostate>;
inline status ok() { return std::monostate{}; }

}  // namespace proctimes::cli::record
