// SPDX-License-Identifier: MIT
#include "parse/procfs.hpp"

#include <bit>
#include <charconv>
#include <cstring>

namespace proctimes::inline v1::parse {
namespace {

template <class T>
bool number(std::string_view s, T& out) noexcept {
    if (s.empty()) return false;
    const char* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, out);
    return ec == std::errc{} && p == end;
}

// Splits off the next space-separated field; a newline ends the fields. A
// plain byte loop: find_first_of(" \n") would cost one memchr over the set per
// input byte.
std::string_view next_field(std::string_view& rest) noexcept {
    const char* p = rest.data();
    const char* const end = p + rest.size();
    while (p != end && *p == ' ') ++p;
    const char* q = p;
    while (q != end && *q != ' ' && *q != '\n') ++q;
    rest = std::string_view(q, static_cast<std::size_t>(end - q));
    return std::string_view(p, static_cast<std::size_t>(q - p));
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

namespace {

// Stores `v`, field `field` (3..52) of a stat line, into `r`; false when the
// field is used and is not a valid value.
bool store_stat_field(stat_record& r, int field, std::string_view v) noexcept {
    switch (field) {
        case 3:
            r.state = v[0];
            return v.size() == 1;
        case 4:
            return number(v, r.ppid);
        case 9:
            return number(v, r.flags);
        case 10:
            return number(v, r.minflt);
        case 12:
            return number(v, r.majflt);
        case 14:
            return number(v, r.utime);
        case 15:
            return number(v, r.stime);
        case 16:
            return number(v, r.cutime);
        case 17:
            return number(v, r.cstime);
        case 20:
            return number(v, r.num_threads);
        case 22:
            return number(v, r.starttime);
        case 23: {
            std::uint64_t n = 0;
            if (!number(v, n)) return false;
            r.vsize = n;
            return true;
        }
        case 24: {
            std::uint64_t n = 0;
            if (!number(v, n)) return false;
            r.rss_pages = n;
            return true;
        }
        case 52: {
            // exit_code, printed since Linux 3.5.
            std::int64_t code = 0;
            if (!number(v, code) || code < 0) return false;
            r.exit_code = code;
            return true;
        }
        default:
            return true;
    }
}

// pid and comm: comm spans from the first '(' to the LAST ')', so a name may
// hold anything. Returns the offset of that ')', or npos.
std::size_t stat_head(std::string_view text, stat_record& r) noexcept {
    if (text.empty()) return std::string_view::npos;
    const auto open = text.find('(');
    // The last ')' is a few bytes after the name and ~300 before the end:
    // memrchr scans those in a few vector steps, rfind byte by byte.
    const void* last = ::memrchr(text.data(), ')', text.size());
    if (open == std::string_view::npos || last == nullptr) return std::string_view::npos;
    const auto close = static_cast<std::size_t>(static_cast<const char*>(last) - text.data());
    if (close < open) return std::string_view::npos;
    auto pid = parse_id(trim(text.substr(0, open)));  // digits only: no sign
    if (!pid) return std::string_view::npos;
    r.pid = *pid;
    r.comm = text.substr(open + 1, close - open - 1);
    return close;
}

// Fields 3..52 field by field: any run of spaces separates, a newline ends.
std::optional<stat_record> stat_fields_general(stat_record r, std::string_view tail) noexcept {
    int field = 3;
    for (; field <= 52; ++field) {
        const std::string_view v = next_field(tail);
        if (v.empty()) break;  // no more fields
        if (!store_stat_field(r, field, v)) return std::nullopt;
    }
    if (field <= 22) return std::nullopt;  // fields 3..22 are required
    return r;
}

// Offsets of the first `max` spaces of [s, s + n), found eight bytes at a time
// (no branch per byte: the field lengths are unpredictable).
std::size_t find_spaces(const char* s, std::size_t n, std::uint16_t* out, std::size_t max) noexcept {
    constexpr std::uint64_t low7 = 0x7F7F7F7F7F7F7F7FULL;
    constexpr std::uint64_t spaces = 0x2020202020202020ULL;
    std::size_t k = 0;
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, s + i, sizeof w);
        if constexpr (std::endian::native == std::endian::big) w = __builtin_bswap64(w);
        const std::uint64_t x = w ^ spaces;                   // a space becomes 0x00
        std::uint64_t m = ~(((x & low7) + low7) | x | low7);  // 0x80 where x's byte is 0, exactly
        while (m != 0) {
            out[k++] = static_cast<std::uint16_t>(i + (static_cast<unsigned>(__builtin_ctzll(m)) >> 3));
            if (k == max) return k;
            m &= m - 1;
        }
    }
    for (; i < n; ++i) {
        if (s[i] == ' ') {
            out[k++] = static_cast<std::uint16_t>(i);
            if (k == max) return k;
        }
    }
    return k;
}

}  // namespace

std::optional<stat_record> parse_stat(std::string_view text) noexcept {
    // Runs on every handle query and for every task of a snapshot. The kernel
    // prints single spaces between fields and one final newline; such a line
    // is split at its spaces in one pass. Anything else (absent from the
    // kernel's output, present in fuzzers' and fixtures') takes the general
    // field-by-field path, which gives the same answer for canonical lines.
    stat_record r;
    const std::size_t close = stat_head(text, r);
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view tail = text.substr(close + 1);
    if (const auto nl = tail.find('\n'); nl != std::string_view::npos) tail = tail.substr(0, nl);
    if (tail.size() > 4096) return stat_fields_general(r, text.substr(close + 1));

    // sep[j] is the space before field j + 3; sep[nsep] is the end.
    std::uint16_t sep[51];
    const std::size_t nsep = find_spaces(tail.data(), tail.size(), sep, 51);
    bool canonical = nsep >= 20 && sep[0] == 0 && sep[nsep - 1] + 1u < tail.size();
    for (std::size_t j = 1; canonical && j < nsep; ++j) canonical = sep[j] > sep[j - 1] + 1u;
    if (!canonical) return stat_fields_general(r, text.substr(close + 1));
    const std::size_t fields = nsep < 50 ? nsep : 50;  // fields 3 .. fields + 2
    for (const int field : {3, 4, 9, 10, 12, 14, 15, 16, 17, 20, 22, 23, 24, 52}) {
        const auto j = static_cast<std::size_t>(field - 3);
        if (j >= fields) break;
        const std::size_t from = sep[j] + 1u;
        const std::size_t to = j + 1 < nsep ? sep[j + 1] : tail.size();
        if (!store_stat_field(r, field, tail.substr(from, to - from))) return std::nullopt;
    }
    return r;
}

std::optional<stat_record> parse_stat_general(std::string_view text) noexcept {
    stat_record r;
    const std::size_t close = stat_head(text, r);
    if (close == std::string_view::npos) return std::nullopt;
    return stat_fields_general(r, text.substr(close + 1));
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
    e.signal = sig;                                         // WIFSIGNALED, WTERMSIG
    e.core_dumped = (s & 0x80) != 0;                        // WCOREDUMP
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
        } else if (key == "NSpid") {
            // One id per pid namespace, from the outermost: "NSpid:\t1234\t5".
            int levels = 0;
            for (std::string_view v = trim(val); !v.empty(); v = trim(v)) {
                const auto end = v.find_first_of(" \t");
                std::int64_t id = 0;
                if (!number(v.substr(0, end), id)) return std::nullopt;
                ++levels;
                v.remove_prefix(end == std::string_view::npos ? v.size() : end);
            }
            r.nspid_levels = levels;
        } else if (key == "VmSwap") {
            // "    123 kB"
            std::string_view v = trim(val);
            std::uint64_t kb = 0;
            if (v.size() < 3 || v.substr(v.size() - 3) != " kB" || !number(trim(v.substr(0, v.size() - 3)), kb) ||
                kb > UINT64_MAX / 1024)
                return std::nullopt;
            r.vm_swap_bytes = kb * 1024;
        } else if (key == "voluntary_ctxt_switches") {
            std::uint64_t n = 0;
            if (!number(trim(val), n)) return std::nullopt;
            r.voluntary_switches = n;
        } else if (key == "nonvoluntary_ctxt_switches") {
            std::uint64_t n = 0;
            if (!number(trim(val), n)) return std::nullopt;
            r.nonvoluntary_switches = n;
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

}  // namespace proctimes::inline v1::parse
