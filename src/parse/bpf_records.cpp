// SPDX-License-Identifier: MIT
#include "parse/bpf_records.hpp"

#include <cstring>

namespace proctimes::parse {

static_assert(sizeof(bpf_task_record) == 120, "records.h layout changed: update both sides");
static_assert(sizeof(bpf_exit_record) == 120, "records.h layout changed: update both sides");

bool parse_task_records(std::span<const std::byte> bytes, std::vector<bpf_task_record>& out) {
    constexpr std::size_t size = sizeof(bpf_task_record);
    const std::size_t whole = bytes.size() / size;
    const std::size_t first = out.size();
    out.resize(first + whole);
    if (whole) std::memcpy(static_cast<void*>(out.data() + first), bytes.data(), whole * size);
    return bytes.size() % size == 0;
}

std::optional<bpf_exit_record> parse_exit_record(std::span<const std::byte> bytes) noexcept {
    bpf_exit_record r;
    if (bytes.size() != sizeof r) return std::nullopt;
    std::memcpy(static_cast<void*>(&r), bytes.data(), sizeof r);
    if (r.version != PT_TASK_RECORD_VERSION) return std::nullopt;
    return r;
}

std::string_view comm_view(const char (&comm)[PT_COMM_LEN]) noexcept {
    const void* nul = std::memchr(comm, '\0', PT_COMM_LEN);
    const std::size_t n = nul ? static_cast<std::size_t>(static_cast<const char*>(nul) - comm) : PT_COMM_LEN;
    return {comm, n};
}

char task_state_letter(std::uint32_t state, std::uint32_t exit_state) noexcept {
    // include/linux/sched.h (6.x): TASK_REPORT covers the low 7 bits, whose
    // highest set bit picks the letter; TASK_IDLE (TASK_UNINTERRUPTIBLE |
    // TASK_NOLOAD) reports as 'I'; a task sleeping on an RT lock
    // (TASK_RTLOCK_WAIT) reports as uninterruptible.
    constexpr std::uint32_t task_uninterruptible = 0x0002, task_noload = 0x0400, task_rtlock_wait = 0x1000;
    constexpr std::uint32_t task_report = 0x7f;
    const std::uint32_t s = (state | exit_state);
    std::uint32_t report = s & task_report;
    if ((state & (task_uninterruptible | task_noload)) == (task_uninterruptible | task_noload) && !exit_state)
        return 'I';
    if ((state & task_rtlock_wait) && !exit_state) report = task_uninterruptible;
    static constexpr char letters[] = "RSDTtXZP";
    if (report == 0) return 'R';
    const int index = 32 - __builtin_clz(report);  // fls()
    return index < 8 ? letters[index] : '?';
}

}  // namespace proctimes::parse
