// SPDX-License-Identifier: MIT
// proctimes/result.hpp — a value or an error, never both, never an exception
// from the core.
#pragma once

#include <optional>
#include <system_error>
#include <type_traits>
#include <utility>

#include "proctimes/error.hpp"

namespace proctimes::inline v1 {

/// Holds either a T or a non-zero std::error_code.
///
/// Accessing the value of an error result through value() throws
/// std::system_error (the one place the library throws: at the caller's
/// explicit request). operator* and operator-> do not check.
template <class T>
class [[nodiscard]] result {
public:
    using value_type = T;

    result(const T& v) : value_(v) {}        // NOLINT(google-explicit-constructor)
    result(T&& v) : value_(std::move(v)) {}  // NOLINT(google-explicit-constructor)
    result(std::error_code ec) noexcept
        : error_(ec)  // NOLINT(google-explicit-constructor)
    {
        if (!error_) error_ = make_error_code(errc::invalid_argument);
    }
    result(errc e) noexcept : result(make_error_code(e)) {}  // NOLINT(google-explicit-constructor)

    [[nodiscard]] bool has_value() const noexcept { return value_.has_value(); }
    explicit operator bool() const noexcept { return has_value(); }

    [[nodiscard]] std::error_code error() const noexcept { return error_; }

    T& value() & {
        check();
        return *value_;
    }
    const T& value() const& {
        check();
        return *value_;
    }
    T&& value() && {
        check();
        return std::move(*value_);
    }

    T& operator*() & noexcept { return *value_; }
    const T& operator*() const& noexcept { return *value_; }
    T&& operator*() && noexcept { return std::move(*value_); }
    T* operator->() noexcept { return &*value_; }
    const T* operator->() const noexcept { return &*value_; }

    template <class U>
    T value_or(U&& fallback) const& {
        return has_value() ? *value_ : static_cast<T>(std::forward<U>(fallback));
    }

private:
    void check() const {
        if (!value_) throw std::system_error(error_);
    }
    std::optional<T> value_;
    std::error_code error_;
};

/// result<void>: success or an error.
template <>
class [[nodiscard]] result<void> {
public:
    result() noexcept = default;
    result(std::error_code ec) noexcept : error_(ec) {}      // NOLINT(google-explicit-constructor)
    result(errc e) noexcept : error_(make_error_code(e)) {}  // NOLINT(google-explicit-constructor)
    [[nodiscard]] bool has_value() const noexcept { return !error_; }
    explicit operator bool() const noexcept { return has_value(); }
    [[nodiscard]] std::error_code error() const noexcept { return error_; }
    void value() const {
        if (error_) throw std::system_error(error_);
    }

private:
    std::error_code error_;
};

}  // namespace proctimes::inline v1
