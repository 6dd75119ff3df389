// SPDX-License-Identifier: MIT
// tools/proctimes/tree/files.hpp — the files `run --tree` writes (--trace,
// --svg): checked before the command starts, written whole or not at all.
#pragma once

#include <string>
#include <string_view>

namespace proctimes::cli::tree {

/// Whether `path` can be written by write_file_atomically: an error message,
/// or empty. An existing `path` must be a regular file (a FIFO, device,
/// directory or symbolic link is refused, never opened), and a file can be
/// created in its directory (one is, and removed).
std::string check_output_file(const std::string& path);

/// Writes `contents` to a new file beside `path` (mkostemp: never a planted
/// file or link), mode 0644, then renames it over `path`: readers see the old
/// file or the whole new one. The check of check_output_file is made again
/// just before the rename. An error message, or empty.
std::string write_file_atomically(const std::string& path, std::string_view contents);

/// Whether `a` and `b` name the same file: the same name, the same existing
/// file (device and inode; on Windows, the same volume and file index), or
/// the same name in the same directory once links are resolved.
bool same_file(const std::string& a, const std::string& b);

}  // namespace proctimes::cli::tree
