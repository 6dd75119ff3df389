// SPDX-License-Identifier: MIT
// process-exporter's `name:` templates: Go text/template over a fixed set of
// fields of a matched process. Parsed once, when the config is read, so that
// a template process-exporter would refuse (an unclosed action) is refused
// here too, and one that uses what proctimes cannot evaluate (a pipeline, a
// function, a method) is refused with a message instead of naming groups
// wrongly. docs/SERVE.md lists the fields and how each is written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace proctimes::cli::serve {

/// The values a template can show, for one process.
struct name_values {
    std::string_view comm;
    std::string_view exe_base;  ///< Go's filepath.Base of argv[0] (the comm without a command line)
    std::string_view exe_full;  ///< argv[0] (the comm without a command line)
    std::string_view user;
    pid_t pid = 0;
    std::string_view start_time;              ///< as go_time_string writes it
    const std::vector<std::string>* cgroups;  ///< the path of each line of its cgroup file, in order
    /// The groups of the cmdline regexes, regex by regex, each group's name ("" for an
    /// unnamed one, or the whole match) beside what it matched; of one name, the last counts.
    const std::vector<std::pair<std::string, std::string>>* matches;
};

class pe_name_template {
public:
    enum class field : std::uint8_t {
        text,
        comm,
        exe_base,
        exe_full,
        username,
        pid,
        start_time,
        cgroups,
        match,    ///< {{.Matches.NAME}}
        matches,  ///< {{.Matches}}: the whole map, as Go prints it
        stop
    };

    /// Parses TEXT; on failure returns nothing and says why in `error`.
    static std::optional<pe_name_template> parse(std::string_view text, std::string& error);

    /// The name, in one pass: a value is never read as a template again. A
    /// field Go's templates would fail on (one process-exporter does not
    /// have) ends the name there, as process-exporter's does: it keeps what
    /// was written before the failing action.
    [[nodiscard]] std::string render(const name_values& v) const;

    [[nodiscard]] bool uses(field f) const noexcept;
    [[nodiscard]] const std::string& text() const noexcept { return text_; }

private:
    struct piece {
        field f = field::text;
        std::string text;  ///< the literal text, or a match's group name
    };
    std::string text_;
    std::vector<piece> pieces_;
};

/// Go's time.Time.String() of a UTC instant given as whole seconds since the
/// epoch plus nanoseconds: "2006-01-02 15:04:05.999999999 +0000 UTC", the
/// fraction without trailing zeros and absent when it is zero.
std::string go_time_string(std::int64_t seconds, std::int64_t nanoseconds);

/// Go's fmt of a []string: "[a b c]".
std::string go_string_list(const std::vector<std::string>& v);

/// Go's fmt of a map[string]string built from `entries` in order (a later
/// value of a key replaces the earlier one): "map[k1:v1 k2:v2]", keys sorted
/// bytewise.
std::string go_string_map(const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace proctimes::cli::serve
