// SPDX-License-Identifier: MIT
// The quoting rules of CommandLineToArgvW, as Microsoft documents them
// ("Parsing C command-line arguments"): arguments are separated by spaces or
// tabs; a double quote starts or ends a quoted part; 2n backslashes before a
// quote are n backslashes and the quote is special, 2n+1 backslashes before
// a quote are n backslashes and a literal quote; backslashes elsewhere are
// literal. The program name (argv[0]) is read differently: everything up to
// the next quote when it starts with one, else up to the first blank.
#include "windows/cmdline.hpp"

#include <windows.h>

namespace proctimes::inline v1::detail::win {

namespace {

bool needs_quotes(const std::wstring& a) { return a.empty() || a.find_first_of(L" \t\n\v\"") != std::wstring::npos; }

void append_argument(std::wstring& out, const std::wstring& a) {
    if (!needs_quotes(a)) {
        out += a;
        return;
    }
    out += L'"';
    std::size_t backslashes = 0;
    for (wchar_t c : a) {
        if (c == L'\\') {
            ++backslashes;
            continue;
        }
        if (c == L'"') {
            out.append(2 * backslashes + 1, L'\\');  // each doubled, and the quote escaped
        } else {
            out.append(backslashes, L'\\');  // literal before anything else
        }
        backslashes = 0;
        out += c;
    }
    out.append(2 * backslashes, L'\\');  // doubled before the closing quote
    out += L'"';
}

}  // namespace

result<std::wstring> command_line(const std::vector<std::wstring>& argv) {
    if (argv.empty() || argv[0].empty()) return make_error_code(errc::invalid_argument);
    std::wstring out;
    for (const auto& a : argv)
        if (a.find(L'\0') != std::wstring::npos) return make_error_code(errc::invalid_argument);
    const std::wstring& program = argv[0];
    if (program.find(L'"') != std::wstring::npos) return make_error_code(errc::invalid_argument);
    if (program.find_first_of(L" \t") != std::wstring::npos) {
        out += L'"';
        out += program;
        out += L'"';
    } else {
        out += program;
    }
    for (std::size_t i = 1; i < argv.size(); ++i) {
        out += L' ';
        append_argument(out, argv[i]);
    }
    return out;
}

result<std::wstring> wide(const std::string& s) {
    if (s.empty()) return std::wstring{};
    if (s.find('\0') != std::string::npos) return make_error_code(errc::invalid_argument);
    const int n =
        ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), nullptr, 0);
    if (n <= 0) return make_error_code(errc::invalid_argument);
    std::wstring w(static_cast<std::size_t>(n), L'\0');
    ::MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s.data(), static_cast<int>(s.size()), w.data(), n);
    return w;
}

}  // namespace proctimes::inline v1::detail::win
