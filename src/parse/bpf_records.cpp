// SPDX-License-Identifier: MIT
#include "parse/bpf_records.hpp"

#include <cstddef>
#include <cstring>

namespace proctimes::inline v1::parse {

static_assert(sizeof(bpf_task_record) == 240, "records.h layout changed: update both sides");
static_assert(sizeof(bpf_exit_record) == 120, "records.h layout changed: update both sides");
static_assert(offsetof(::pt_exec_record, argv) == 32 && sizeof(::pt_exec_record) == 32 + PT_EXEC_ARGV_MAX,
              "records.h layout changed: update both sides");
static_assert(PT_EXEC_RECORD_MIN > sizeof(bpf_exit_record), "an exec record must never have an exit record's size");
static_assert(sizeof(::pt_tree_event) == 96, "records.h layout changed: update both sides");
static_assert(sizeof(::pt_tree_exec_event) == 96 + PT_TREE_PATH_MAX + PT_TREE_ARGV_MAX,
              "records.h layout changed: update both sides");

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

std::optional<bpf_exec_record> parse_exec_record(std::span<const std::byte> bytes) noexcept {
    constexpr std::size_t header = offsetof(::pt_exec_record, argv);
    if (bytes.size() < PT_EXEC_RECORD_MIN || bytes.size() > sizeof(::pt_exec_record)) return std::nullopt;
    ::pt_exec_record h;
    std::memcpy(static_cast<void*>(&h), bytes.data(), header);
    if (h.magic != PT_EXEC_RECORD_MAGIC) return std::nullopt;
    if (h.argv_len > bytes.size() - header || h.argv_len > h.argv_total || h.argv_len > PT_EXEC_ARGV_MAX)
        return std::nullopt;
    bpf_exec_record r;
    r.start_boottime = h.start_boottime;
    r.tgid = h.tgid;
    r.argv_total = h.argv_total;
    r.argv = {reinterpret_cast<const char*>(bytes.data() + header), h.argv_len};
    return r;
}

std::optional<bpf_tree_event> parse_tree_event(std::span<const std::byte> bytes) noexcept {
    bpf_tree_event e;
    if (bytes.size() < sizeof e.head) return std::nullopt;
    std::memcpy(static_cast<void*>(&e.head), bytes.data(), sizeof e.head);
    switch (e.head.kind) {
        case PT_TREE_FORK:
        case PT_TREE_THREAD:
        case PT_TREE_EXIT:
        case PT_TREE_FREE:
            if (bytes.size() != sizeof e.head) return std::nullopt;
            return e;
        case PT_TREE_EXEC: {
            if (bytes.size() != sizeof(::pt_tree_exec_event)) return std::nullopt;
            const auto* path = reinterpret_cast<const char*>(bytes.data() + offsetof(::pt_tree_exec_event, path));
            const void* nul = std::memchr(path, '\0', PT_TREE_PATH_MAX);
            if (!nul) return std::nullopt;
            if (e.head.argv_len > PT_TREE_ARGV_MAX || e.head.argv_len > e.head.argv_total) return std::nullopt;
            e.path = {path, static_cast<std::size_t>(static_cast<const char*>(nul) - path)};
            e.argv = {reinterpret_cast<const char*>(bytes.data() + offsetof(::pt_tree_exec_event, argv)),
                      e.head.argv_len};
            return e;
        }
        default:
            return std::nullopt;
    }
}

std::vector<std::string> split_argv(std::string_view area, std::size_t max_bytes, bool complete, bool& truncated) {
    truncated = !complete;
    if (area.size() > max_bytes) {
        area = area.substr(0, max_bytes);
        truncated = true;
    }
    std::vector<std::string> out;
    while (!area.empty()) {
        const std::size_t nul = area.find('\0');
        out.emplace_back(area.substr(0, nul));
        if (nul == std::string_view::npos) break;  // cut short: the last argument has no NUL
        area.remove_prefix(nul + 1);
    }
    return out;
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

}  // namespace proctimes::inline v1::parse
