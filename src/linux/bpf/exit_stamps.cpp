// SPDX-License-Identifier: MIT
#include "linux/bpf/exit_stamps.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <bpf/bpf.h>

namespace proctimes::inline v1::detail {

bool any_exit_stamp(int map_fd, const std::function<bool(const pt_exit_stamp&)>& wanted,
                    std::vector<exit_stamp_key>* found) {
    constexpr std::uint32_t chunk = 1024;
    std::vector<std::uint64_t> keys(chunk);
    std::vector<pt_exit_stamp> stamps(chunk);
    std::uint64_t in = 0, out = 0;
    for (bool first = true;; first = false) {
        std::uint32_t count = chunk;
        const int err =
            bpf_map_lookup_batch(map_fd, first ? nullptr : &in, &out, keys.data(), stamps.data(), &count, nullptr);
        const int why = err != 0 ? errno : 0;
        if (err != 0 && why != ENOENT && first) break;  // no batch lookup here: key by key below
        for (std::uint32_t i = 0; i < count && i < chunk; ++i) {
            if (!wanted(stamps[i])) continue;
            if (!found) return true;
            found->push_back({keys[i], stamps[i].exit_boottime});
        }
        if (err != 0 && why != ENOENT && found) found->clear();            // not all known
        if (err != 0) return why != ENOENT || (found && !found->empty());  // ENOENT: the whole map was read
        in = out;
    }
    std::uint64_t key = 0, next = 0;
    std::uint64_t* prev = nullptr;
    for (std::size_t n = 0; n < (std::size_t{1} << 18) && bpf_map_get_next_key(map_fd, prev, &next) == 0; ++n) {
        key = next;
        prev = &key;
        pt_exit_stamp st{};
        if (bpf_map_lookup_elem(map_fd, &key, &st) != 0 || !wanted(st)) continue;
        if (!found) return true;
        found->push_back({key, st.exit_boottime});
    }
    return found && !found->empty();
}

bool exit_stamp_pending(int map_fd, const exit_stamp_key& s) {
    pt_exit_stamp st{};
    std::uint64_t key = s.key;
    return bpf_map_lookup_elem(map_fd, &key, &st) == 0 && st.exit_boottime == s.exit_boottime;
}

bool wait_out_exit_stamps(std::initializer_list<int> fds, const std::function<bool(int)>& readable,
                          const std::function<bool(const pt_exit_stamp&)>& wanted,
                          std::chrono::steady_clock::time_point deadline, const std::function<void()>& pause) {
    std::vector<std::pair<int, exit_stamp_key>> waiting;
    std::vector<exit_stamp_key> found;
    while (true) {
        waiting.clear();
        bool any = false;
        for (const int fd : fds) {
            if (!readable(fd)) continue;
            found.clear();
            if (!any_exit_stamp(fd, wanted, &found)) continue;
            any = true;  // `found` is empty when the map could not be read whole: a pause, then a full read
            for (const exit_stamp_key& k : found) waiting.emplace_back(fd, k);
        }
        if (!any) return true;
        do {
            if (std::chrono::steady_clock::now() >= deadline) return false;
            pause();
            std::erase_if(waiting, [](const auto& w) { return !exit_stamp_pending(w.first, w.second); });
        } while (!waiting.empty());
    }
}

stamp_sweep sweep_exit_stamps(int map_fd, std::uint64_t now, const std::function<bool(const pt_exit_stamp&)>& listed,
                              std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t>& gone_since) {
    constexpr std::uint64_t grace = stamp_grace_ns;
    stamp_sweep out;
    std::uint64_t key = 0, next = 0;
    std::uint64_t* prev = nullptr;
    std::vector<std::pair<std::uint64_t, pt_exit_stamp>> gone;
    std::vector<std::uint64_t> stale;
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> still_gone;  // of gone_since, those still held
    while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
        key = next;
        prev = &key;
        pt_exit_stamp st{};
        if (bpf_map_lookup_elem(map_fd, &key, &st) != 0) continue;  // freed meanwhile
        if (st.exit_boottime == 0) {                                // consumed, its delete failed: no loss
            if (st.start_boottime + grace <= now) stale.push_back(key);
            continue;
        }
        if (st.exit_boottime + grace > now) {
            out.next_due = std::min<std::uint64_t>(out.next_due, st.exit_boottime + grace);
            continue;
        }
        if (listed(st)) continue;  // a zombie, or still exiting
        const std::pair<std::uint64_t, std::uint64_t> id{key, st.exit_boottime};
        const auto seen = gone_since.find(id);
        const std::uint64_t since = seen != gone_since.end() ? seen->second : now;
        if (since + grace > now) {  // released lately: its free can still come
            still_gone.emplace(id, since);
            out.next_due = std::min<std::uint64_t>(out.next_due, since + grace);
            continue;
        }
        gone.emplace_back(key, st);
    }
    gone_since = std::move(still_gone);
    for (auto& [k, st] : gone)
        if (bpf_map_delete_elem(map_fd, &k) == 0) out.lost.push_back(st);
    out.deleted = out.lost.size();
    for (std::uint64_t k : stale)
        if (bpf_map_delete_elem(map_fd, &k) == 0) ++out.deleted;
    return out;
}

void sweep_exec_marks(int map_fd, std::vector<std::pair<std::uint32_t, std::uint64_t>>& gone_before,
                      const std::function<bool(const pt_exit_stamp&)>& listed) {
    std::uint32_t key = 0, next = 0;
    std::uint32_t* prev = nullptr;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> gone;
    while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
        key = next;
        prev = &key;
        std::uint64_t start = 0;
        if (bpf_map_lookup_elem(map_fd, &key, &start) != 0) continue;
        pt_exit_stamp st{};
        st.tgid = key;
        st.pid = key;
        st.start_boottime = start;
        if (!listed(st)) gone.emplace_back(key, start);
    }
    for (const auto& g : gone)
        if (std::binary_search(gone_before.begin(), gone_before.end(), g)) (void)bpf_map_delete_elem(map_fd, &g.first);
    std::sort(gone.begin(), gone.end());
    gone_before = std::move(gone);
}

}  // namespace proctimes::inline v1::detail
