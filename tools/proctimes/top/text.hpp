// SPDX-License-Identifier: MIT
// tools/proctimes/top/text.hpp — process names and command lines made safe to
// draw: they are whatever bytes a program chose, and a terminal interprets
// control bytes and escape sequences. Control characters (C0, DEL, C1) and
// the invisible format characters that reorder or hide text are written as
// escapes (\x1b, \u202e), bytes that are not UTF-8 as \xNN, and, when the
// terminal's locale is not UTF-8, every other non-ASCII character as '?'.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace proctimes::cli::top {

/// `raw` with nothing a terminal could interpret: see the file comment.
std::string safe_text(std::string_view raw, bool utf8);

/// Display columns of text made by safe_text (wide characters count two).
int display_width(std::string_view safe);

/// The longest prefix of `safe` that fits in `width` columns; `used` gets its width.
std::string_view fit_width(std::string_view safe, int width, int* used = nullptr);

}  // namespace proctimes::cli::top
