// SPDX-License-Identifier: MIT
// The errors of `proctimes serve`, as values: what went wrong (a kind) and
// the message the user sees. Each kind has one exit status, in one table
// (docs/SERVE.md, "Exit status").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace proctimes::cli::serve {

enum class error_kind {
    usage,    ///< an option, its value, or two options that cannot go together
    config,   ///< a process-exporter config, rule, regex or web config that cannot be used
    tls,      ///< a web config's TLS settings: files, versions, suites or a key GnuTLS refuses
    listen,   ///< the address cannot be listened on, the port file written, or the server started
    runtime,  ///< the process table cannot be read (--proc-root), or the collection failed
};

struct error_kind_row {
    error_kind kind;
    int exit_status;
    std::string_view meaning;
};

/// The one table of exit statuses: a bad configuration is 2 (nothing was
/// started), a system that refuses what a good one asks is 1.
inline constexpr error_kind_row error_kinds[] = {
    {error_kind::usage, 2, "usage error"},         {error_kind::config, 2, "bad configuration"},
    {error_kind::tls, 2, "bad TLS configuration"}, {error_kind::listen, 1, "cannot listen"},
    {error_kind::runtime, 1, "cannot collect"},
};

constexpr const error_kind_row& row_of(error_kind k) { return error_kinds[static_cast<std::size_t>(k)]; }

constexpr bool rows_in_order() {
    for (std::size_t i = 0; i < std::size(error_kinds); ++i)
        if (static_cast<std::size_t>(error_kinds[i].kind) != i) return false;
    return true;
}
static_assert(rows_in_order(), "error_kinds lists every kind once, in the enum's order");

/// The exit status of a command that failed with `k`.
constexpr int exit_status(error_kind k) { return row_of(k).exit_status; }

struct error {
    error_kind kind = error_kind::runtime;
    std::string message;  ///< shown after "proctimes: serve: "
};

/// A T or the error that kept it from being made.
template <class T>
class [[nodiscard]] outcome {
public:
    outcome(T v) : v_(std::in_place_index<0>, std::move(v)) {}             // NOLINT(google-explicit-constructor)
    outcome(serve::error e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT(google-explicit-constructor)
    outcome(error_kind k, std::string m) : v_(std::in_place_index<1>, serve::error{k, std::move(m)}) {}

    [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }
    T& operator*() & { return std::get<0>(v_); }
    const T& operator*() const& { return std::get<0>(v_); }
    T&& operator*() && { return std::get<0>(std::move(v_)); }
    T* operator->() { return &std::get<0>(v_); }
    const T* operator->() const { return &std::get<0>(v_); }
    [[nodiscard]] const serve::error& error() const { return std::get<1>(v_); }

private:
    std::variant<T, serve::error> v_;
};

/// Success, or an error.
using status = outcome<std::monostate>;
inline status ok() { return std::monostate{}; }

}  // namespace proctimes::cli::serve
