// SPDX-License-Identifier: MIT
#include "win32_layer/cmdline.hpp"

#include <cstring>

namespace proctimes::inline v1::win32 {

std::vector<std::string> split_command_line(std::string_view line) {
    std::vector<std::string> args;
    std::size_t i = 0;
    const std::size_t n = line.size();
    auto blank = [](char c) { return c == ' ' || c == '\t'; };

    // The program name: quotes group, nothing escapes.
    while (i < n && blank(line[i])) ++i;
    if (i >= n) return args;
    {
        std::string prog;
        bool quoted = false;
        for (; i < n; ++i) {
            const char c = line[i];
            if (c == '"') {
                quoted = !quoted;
            } else if (!quoted && blank(c)) {
                break;
            } else {
                prog.push_back(c);
            }
        }
        args.push_back(std::move(prog));
    }

    // The arguments.
    for (;;) {
        while (i < n && blank(line[i])) ++i;
        if (i >= n) break;
        std::string arg;
        bool quoted = false;
        while (i < n) {
            const char c = line[i];
            if (c == '\\') {
                std::size_t slashes = 0;
                while (i < n && line[i] == '\\') {
                    ++slashes;
                    ++i;
                }
                if (i < n && line[i] == '"') {
                    arg.append(slashes / 2, '\\');
                    if (slashes % 2 == 1) {
                        arg.push_back('"');
                        ++i;
                    }
                    // even: the quote is handled by the next iteration
                } else {
                    arg.append(slashes, '\\');
                }
                continue;
            }
            if (c == '"') {
                if (quoted && i + 1 < n && line[i + 1] == '"') {
                    arg.push_back('"');  // "" inside quotes: a literal quote
                    i += 2;
                    continue;
                }
                quoted = !quoted;
                ++i;
                continue;
            }
            if (!quoted && blank(c)) break;
            arg.push_back(c);
            ++i;
        }
        args.push_back(std::move(arg));
    }
    return args;
}

std::optional<std::vector<std::string>> parse_environment_block(const char* block, std::size_t max_bytes) {
    std::vector<std::string> out;
    std::size_t used = 0;
    const char* p = block;
    for (;;) {
        const std::size_t room = max_bytes - used;
        const std::size_t len = ::strnlen(p, room);
        if (len == room) return std::nullopt;
        if (len == 0) return out;
        out.emplace_back(p, len);
        used += len + 1;
        p += len + 1;
        if (used >= max_bytes) return std::nullopt;
    }
}

}  // namespace proctimes::inline v1::win32
