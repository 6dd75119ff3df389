// SPDX-License-Identifier: MIT
// /proc/<pid>/stat: whatever the bytes, the parser returns fields or nullopt,
// never reads outside the input, comm is exactly the text between the first
// '(' and the last ')', and the fast path for canonical lines answers exactly
// as the general field-by-field parse does.
#include <cstdint>
#include <string_view>

#include "check.hpp"
#include "parse/procfs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto r = proctimes::parse::parse_stat(text);
    auto ref = proctimes::parse::parse_stat_general(text);
    FUZZ_CHECK(r.has_value() == ref.has_value());
    if (!r) return 0;
    FUZZ_CHECK(r->pid == ref->pid && r->comm == ref->comm && r->state == ref->state && r->ppid == ref->ppid &&
               r->flags == ref->flags && r->utime == ref->utime && r->stime == ref->stime && r->cutime == ref->cutime &&
               r->cstime == ref->cstime && r->num_threads == ref->num_threads && r->starttime == ref->starttime &&
               r->exit_code == ref->exit_code && r->minflt == ref->minflt && r->majflt == ref->majflt &&
               r->vsize == ref->vsize && r->rss_pages == ref->rss_pages);
    FUZZ_CHECK(r->comm.data() >= text.data());
    FUZZ_CHECK(r->comm.data() + r->comm.size() <= text.data() + text.size());
    FUZZ_CHECK(text.find('(') + 1 == static_cast<std::size_t>(r->comm.data() - text.data()));
    FUZZ_CHECK(text.rfind(')') == static_cast<std::size_t>(r->comm.data() - text.data()) + r->comm.size());
    FUZZ_CHECK(r->pid >= 0);
    // Parsing is a pure function of the text.
    auto again = proctimes::parse::parse_stat(text);
    FUZZ_CHECK(again && again->starttime == r->starttime && again->utime == r->utime && again->comm == r->comm);
    return 0;
}
