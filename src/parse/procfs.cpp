#include "parse/procfs.hpp"

#include <charconv>
#include <cstring>

namespace proctimes::parse {
namespace {

template <class T>
bool number(std::string_view s, T& out) noexcept {
    if (s.empty()) return false;
    const char* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, out);
    return ec == std::errc{} && p == end;
}

// Splits off the next space-separated field.
std::string_view next_field(std::string_view& rest) noexcept {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const auto sp = rest.find_first_of(" \n");
    std::string_view f = rest.substr(0, sp);
    rest.remove_prefix(sp == std::string_view::npos ? rest.size() : sp);
    return f;
}

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
    return s;
}

int hex_digit(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

std::optional<std::int64_t> parse_id(std::string_view text) noexcept {
    std::int64_t v = 0;
    if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
    if (!number(text, v)) return std::nullopt;
    return v;
}

std::optional<dirent_record> next_dirent(std::string_view& buf) noexcept {
    // struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
    constexpr std::size_t name_offset = 19;
    if (buf.size() < name_offset) return std::nullopt;
    std::uint16_t reclen = 0;
    std::memcpy(&reclen, buf.data() + 16, sizeof reclen);
    if (reclen < name_offset + 1 || reclen > buf.size()) return std::nullopt;
    dirent_record r;
    r.type = static_cast<unsigned char>(buf[18]);
    const std::string_view rec = buf.substr(name_offset, reclen - name_offset);
    const auto nul = rec.find('\0');
    if (nul == std::string_view::npos) return std::nullopt;
    r.name = rec.substr(0, nul);
    buf.remove_prefix(reclen);
    return r;
}

std::optional<stat_record> parse_stat(std::string_view text) noexcept {
    stat_record r;
    const auto open = text.find('(');
    const auto close = text.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
    auto pid = parse_id(trim(text.substr(0, open)));  // digits only: no sign
    if (!pid) return std::nullopt;
    r.pid = *pid;
    r.comm = text.substr(open + 1, close - open - 1);

    std::string_view rest = text.substr(close + 1);
    // Fields 3.. follow; field n is at index n-3.
    std::string_view f[20];
    for (auto& x : f) {
        x = next_field(rest);
        if (x.empty()) return std::nullopt;
    }
    if (f[0].size() != 1) return std::nullopt;
    r.state = f[0][0];
    if (!number(f[1], r.ppid) || !number(f[6], r.flags) || !number(f[11], r.utime) || !number(f[12], r.stime) ||
        !number(f[13], r.cutime) || !number(f[14], r.cstime) || !number(f[17], r.num_threads) ||
        !number(f[19], r.starttime))
        return std::nullopt;
    // Fields 23..51 are not used; field 52 (exit_code) exists since Linux 3.5.
    for (int field = 23; field < 52; ++field) {
        if (next_field(rest).empty()) return r;  // an older kernel: fewer fields
    }
    const std::string_view code = next_field(rest);
    if (!code.empty()) {
        std::int64_t v = 0;
        if (!number(code, v) || v < 0) return std::nullopt;
        r.exit_code = v;
    }
    return r;
}

std::optional<exit_status> decode_wait_status(std::int64_t status) noexcept {
    if (status < 0 || status > 0xFFFF) return std::nullopt;
    const int s = static_cast<int>(status);
    const int sig = s & 0x7F;
    exit_status e;
    if (sig == 0) {
        e.code = (s >> 8) & 0xFF;  // WIFEXITED, WEXITSTATUS
        return e;
    }
    if (sig == 0x7F || (s >> 8) != 0) return std::nullopt;  // stopped or continued, not an end
    e.signal = sig;                                           // WIFSIGNALED, WTERMSIG
    e.core_dumped = (s & 0x80) != 0;                          // WCOREDUMP
    return e;
}

std::optional<schedstat_record> parse_schedstat(std::string_view text) noexcept {
    schedstat_record r;
    std::string_view rest = text;
    if (!number(next_field(rest), r.run_ns)) return std::nullopt;
    if (!number(next_field(rest), r.wait_ns)) return std::nullopt;
    if (!number(next_field(rest), r.timeslices)) return std::nullopt;
    return r;
}

std::optional<status_record> parse_status(std::string_view text) noexcept {
    status_record r;
    bool have_name = false;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view key = line.substr(0, colon);
        std::string_view val = line.substr(colon + 1);
        if (key == "Name") {
            // The kernel escapes the name, so it never holds a raw newline; keep
            // inner spaces, drop the leading tab.
            while (!val.empty() && (val.front() == '\t' || val.front() == ' ')) val.remove_prefix(1);
            r.name = val;
            have_name = true;
        } else if (key == "Tgid") {
            if (!number(trim(val), r.tgid)) return std::nullopt;
        } else if (key == "Pid") {
            if (!number(trim(val), r.pid)) return std::nullopt;
        } else if (key == "PPid") {
            if (!number(trim(val), r.ppid)) return std::nullopt;
        } else if (key == "Uid") {
            std::string_view v = trim(val);
            const auto t1 = v.find_first_of(" \t");
            if (t1 == std::string_view::npos) return std::nullopt;
            if (!number(v.substr(0, t1), r.uid_real)) return std::nullopt;
            v = trim(v.substr(t1 + 1));
            const auto t2 = v.find_first_of(" \t");
            if (!number(v.substr(0, t2), r.uid_effective)) return std::nullopt;
        }
    }
    if (!have_name || r.tgid < 0 || r.pid < 0) return std::nullopt;
    return r;
}

std::optional<std::uint64_t> parse_proc_stat_btime(std::string_view text) noexcept {
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (line.substr(0, 6) == "btime ") {
            std::uint64_t v = 0;
            if (number(trim(line.substr(6)), v)) return v;
            return std::nullopt;
        }
    }
    return std::nullopt;
}

std::optional<boot_id> parse_boot_id(std::string_view text) noexcept {
    text = trim(text);
    if (text.size() != 36) return std::nullopt;
    boot_id id;
    std::size_t n = 0;
    for (std::size_t i = 0; i < text.size();) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (text[i] != '-') return std::nullopt;
            ++i;
            continue;
        }
        const int hi = hex_digit(text[i]);
        const int lo = hex_digit(text[i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        id.bytes[n++] = static_cast<std::uint8_t>(hi * 16 + lo);
        i += 2;
    }
    if (n != 16) return std::nullopt;
    return id;
}

std::optional<anchor_record> parse_anchor(std::string_view text) noexcept {
    anchor_record r;
    std::string_view rest = text;
    if (next_field(rest) != "proctimes-boot-anchor") return std::nullopt;
    if (next_field(rest) != "1") return std::nullopt;
    auto id = parse_boot_id(next_field(rest));
    if (!id) return std::nullopt;
    r.boot = *id;
    if (!number(next_field(rest), r.realtime_minus_boottime_ns)) return std::nullopt;
    if (rest != "\n") return std::nullopt;
    return r;
}

}  // namespace proctimes::parse
