// tools/proctimes/json_record.hpp — the JSON object of one record, for
// commands that add fields of their own (run, watch). Internal to the
// proctimes_cli library: it exposes nlohmann::json, which the library links privately.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "output.hpp"

namespace proctimes::cli {

using ojson = nlohmann::ordered_json;

/// The object written by write_json for one record (threads nested when
/// opts.threads), with the fields of docs/CLI.md in their documented order.
ojson json_record(const task_record& r, const output_options& opts);

/// FILETIME ticks of an instant, or null.
ojson instant_ticks(const std::optional<instant>& t);

}  // namespace proctimes::cli
