// SPDX-License-Identifier: MIT
// The BPF record parsers (src/parse/bpf_records.hpp): the task iterator's
// stream, one ring-buffer exit or exec record, one event of the tree source and its
// argument area, comm fields and state letters, on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "parse/bpf_records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace proctimes::parse;
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);

    std::vector<bpf_task_record> out;
    const bool whole = parse_task_records(bytes, out);
    FUZZ_CHECK(whole == (size % sizeof(bpf_task_record) == 0));
    FUZZ_CHECK(out.size() == size / sizeof(bpf_task_record));
    for (const auto& r : out) {
        FUZZ_CHECK(comm_view(r.comm).size() <= PT_COMM_LEN);
        FUZZ_CHECK(std::string_view("RSDTtXZPI?").find(task_state_letter(r.state, r.exit_state)) !=
                   std::string_view::npos);
    }
    if (!out.empty())  // the records are the input's bytes, in order
        FUZZ_CHECK(std::memcmp(out.data(), data, out.size() * sizeof(bpf_task_record)) == 0);

    if (auto e = parse_exit_record(bytes)) {
        FUZZ_CHECK(size == sizeof(bpf_exit_record));
        FUZZ_CHECK(e->version == PT_TASK_RECORD_VERSION);
    }

    if (auto x = parse_exec_record(bytes)) {
        // Never an exit record; its area lies inside the sample, within the
        // claimed total and the copy limit.
        FUZZ_CHECK(size >= PT_EXEC_RECORD_MIN && size <= sizeof(pt_exec_record) && size != sizeof(bpf_exit_record));
        FUZZ_CHECK(!parse_exit_record(bytes));
        const auto* base = reinterpret_cast<const char*>(data);
        FUZZ_CHECK(x->argv.data() == base + offsetof(pt_exec_record, argv));
        FUZZ_CHECK(offsetof(pt_exec_record, argv) + x->argv.size() <= size);
        FUZZ_CHECK(x->argv.size() <= x->argv_total && x->argv.size() <= PT_EXEC_ARGV_MAX);
        FUZZ_CHECK(x->whole() == (x->argv.size() == x->argv_total));
    }

    if (auto t = parse_tree_event(bytes)) {
        FUZZ_CHECK(t->head.kind >= PT_TREE_FORK && t->head.kind <= PT_TREE_FREE);
        if (t->head.kind == PT_TREE_EXEC) {
            FUZZ_CHECK(size == sizeof(pt_tree_exec_event));
            FUZZ_CHECK(t->path.size() < PT_TREE_PATH_MAX && t->argv.size() == t->head.argv_len);
            FUZZ_CHECK(t->argv.size() <= t->head.argv_total && t->argv.size() <= PT_TREE_ARGV_MAX);
            // The arguments, cut anywhere, never exceed the bytes allowed
            // (each argument counts its NUL, a cut last one its bytes).
            for (std::size_t max : {std::size_t{0}, std::size_t{1}, std::size_t{7}, t->argv.size()}) {
                bool cut = false;
                const auto args = split_argv(t->argv, max, true, cut);
                std::size_t used = 0;
                for (const auto& a : args) used += a.size() + 1;
                FUZZ_CHECK(used <= max + 1);
                FUZZ_CHECK(cut == (t->argv.size() > max));
            }
        } else {
            FUZZ_CHECK(size == sizeof(pt_tree_event));
        }
    }
    return 0;
}
