// SPDX-License-Identifier: MIT
// exit_stream (proctimes/ledger.hpp): the public class over the backend's
// listener (backend/backend.hpp). A moved-from or default stream has
// no listener: it answers invalid_handle, -1, no source and nothing.
#include "backend/backend.hpp"

namespace proctimes::inline v1 {

exit_stream::exit_stream() noexcept = default;
exit_stream::exit_stream(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
exit_stream::exit_stream(exit_stream&&) noexcept = default;
exit_stream& exit_stream::operator=(exit_stream&&) noexcept = default;
exit_stream::~exit_stream() = default;

result<exit_stream> exit_stream::open(exit_stream_source from) noexcept {
    return open(from, exit_stream_delivery::pushed);
}

result<exit_stream> exit_stream::open(exit_stream_source from, exit_stream_delivery delivery) noexcept {
    auto p = detail::platform_exit_backend().open_stream(from, delivery);
    if (!p) return p.error();
    if (!*p) return make_error_code(errc::not_supported);
    return exit_stream(std::move(*p));
}

result<bool> exit_stream::read(std::vector<ended_task>& out) noexcept {
    if (!impl_) return make_error_code(errc::invalid_handle);
    return impl_->read(out);
}

result<bool> exit_stream::wait(std::chrono::milliseconds timeout) noexcept {
    if (!impl_) return make_error_code(errc::invalid_handle);
    return impl_->wait(timeout);
}

int exit_stream::native_handle() const noexcept { return impl_ ? impl_->native_handle() : -1; }

std::optional<exit_stream_source> exit_stream::source() const noexcept {
    return impl_ ? std::optional{impl_->source()} : std::nullopt;
}

std::string_view to_string(exit_stream_source s) noexcept { return word_of(s); }

result<bool> exit_stream::settle(std::chrono::nanoseconds from_since_boot, std::chrono::nanoseconds to_since_boot,
                                 std::chrono::milliseconds timeout) const noexcept {
    if (!impl_) return make_error_code(errc::invalid_handle);
    return impl_->settle(from_since_boot, to_since_boot, timeout);
}

std::optional<std::uint64_t> exit_stream::lost() const noexcept {
    return impl_ ? impl_->lost() : std::optional<std::uint64_t>{};
}

}  // namespace proctimes::inline v1
