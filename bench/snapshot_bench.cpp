// SPDX-License-Identifier: MIT
// Whole-system snapshots against the least work that can produce the same
// data: a plain walk that opens, reads and closes each task's stat file once
// and does nothing else (no parsing, no allocation, no identity checks).
//
//   snapshot_bench [benchmark flags]      run the benchmarks
//   snapshot_bench --hold N               start N idle threads, print "ready",
//                                         and wait until stdin closes (used by
//                                         bench/run_snapshot.sh so that every
//                                         tool walks the same system)
//   snapshot_bench --samples N            time N single walks of each
//                                         configuration, in a random order each
//                                         round, after one warm-up walk each,
//                                         and print one line
//                                         per configuration: name, tasks,
//                                         walkers, then the N times in ms (the
//                                         comparison script interleaves these
//                                         with runs of ps and psutil)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "proctimes/snapshot.hpp"

namespace {

// ---- the minimal walk ----------------------------------------------------------

bool is_id(const char* s) {
    if (*s < '1' || *s > '9') return false;
    for (; *s; ++s)
        if (*s < '0' || *s > '9') return false;
    return true;
}

// Reads one small file relative to dirfd; true if it could be read.
bool slurp(int dirfd, const char* path, char* buf, std::size_t cap) {
    const int fd = ::openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const ssize_t n = ::read(fd, buf, cap);
    ::close(fd);
    return n > 0;
}

// Every process's stat, and with `threads` every thread's stat, read once.
// Returns the number of files read.
std::size_t minimal_walk(int proc_fd, bool threads) {
    char buf[4096];
    char path[sizeof(dirent::d_name) + 8];
    std::size_t files = 0;
    DIR* d = ::fdopendir(::dup(proc_fd));
    if (!d) return 0;
    ::rewinddir(d);
    while (dirent* e = ::readdir(d)) {
        if (!is_id(e->d_name)) continue;
        std::snprintf(path, sizeof path, "%s/stat", e->d_name);
        if (!slurp(proc_fd, path, buf, sizeof buf)) continue;
        ++files;
        if (!threads) continue;
        std::snprintf(path, sizeof path, "%s/task", e->d_name);
        const int task_fd = ::openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (task_fd < 0) continue;
        DIR* t = ::fdopendir(task_fd);
        if (!t) {
            ::close(task_fd);
            continue;
        }
        while (dirent* te = ::readdir(t)) {
            if (!is_id(te->d_name)) continue;
            std::snprintf(path, sizeof path, "%s/stat", te->d_name);
            if (slurp(task_fd, path, buf, sizeof buf)) ++files;
        }
        ::closedir(t);
    }
    ::closedir(d);
    return files;
}

void BM_MinimalWalk(benchmark::State& state) {
    const bool threads = state.range(0) != 0;
    const int proc_fd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    std::size_t files = 0;
    for (auto _ : state) {
        files = minimal_walk(proc_fd, threads);
        benchmark::DoNotOptimize(files);
    }
    ::close(proc_fd);
    state.counters["tasks"] = static_cast<double>(files);
    state.counters["per_task"] = benchmark::Counter(
        static_cast<double>(files), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_MinimalWalk)->ArgName("threads")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- snapshots -----------------------------------------------------------------------

// Args: threads (0/1), cpu (0 ticks, 1 precise_processes, 2 precise), workers (0 auto).
void BM_Snapshot(benchmark::State& state) {
    proctimes::snapshot_options o;
    o.threads = state.range(0) != 0;
    o.cpu = static_cast<proctimes::snapshot_cpu>(state.range(1));
    o.workers = static_cast<unsigned>(state.range(2));
    std::size_t tasks = 0;
    unsigned workers = 0;
    for (auto _ : state) {
        auto s = proctimes::take_snapshot(o);
        if (!s) {
            state.SkipWithError(s.error().message().c_str());
            return;
        }
        tasks = s->processes.size() + s->threads.size();
        workers = std::max(workers, s->workers);
        benchmark::DoNotOptimize(s->processes.data());
    }
    state.counters["tasks"] = static_cast<double>(tasks);
    state.counters["workers"] = workers;
    state.counters["per_task"] = benchmark::Counter(
        static_cast<double>(tasks), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Snapshot)
    ->ArgNames({"threads", "cpu", "workers"})
    ->Args({0, 0, 1})
    ->Args({0, 1, 1})
    ->Args({0, 1, 0})
    ->Args({1, 0, 1})
    ->Args({1, 1, 1})
    ->Args({1, 2, 1})
    ->Args({1, 0, 2})
    ->Args({1, 1, 2})
    ->Args({1, 2, 2})
    ->Args({1, 1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A snapshotter refilling the same snapshot: what a refreshing display pays.
void BM_SnapshotterReuse(benchmark::State& state) {
    proctimes::snapshot_options o;
    o.threads = state.range(0) != 0;
    o.workers = static_cast<unsigned>(state.range(1));
    auto taker = proctimes::snapshotter::open(o);
    if (!taker) {
        state.SkipWithError(taker.error().message().c_str());
        return;
    }
    proctimes::snapshot s;
    for (auto _ : state) {
        if (!taker->take(s)) {
            state.SkipWithError("take failed");
            return;
        }
        benchmark::DoNotOptimize(s.processes.data());
    }
    const std::size_t tasks = s.processes.size() + s.threads.size();
    state.counters["tasks"] = static_cast<double>(tasks);
    state.counters["per_task"] = benchmark::Counter(
        static_cast<double>(tasks), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    state.counters["bytes"] = static_cast<double>(s.processes.capacity() * sizeof(proctimes::snapshot_process) +
                                                  s.threads.capacity() * sizeof(proctimes::snapshot_thread));
}
BENCHMARK(BM_SnapshotterReuse)
    ->ArgNames({"threads", "workers"})
    ->Args({1, 1})
    ->Args({1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ---- --hold N ----------------------------------------------------------------------

int hold_threads(int n) {
    int gate[2];
    if (::pipe(gate) != 0) return 1;
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        // Each thread blocks in read(2) without waking until the gate closes:
        // idle threads that cost the walk, not the CPU.
        threads.emplace_back([r = gate[0]] {
            char c;
            while (::read(r, &c, 1) > 0) {
            }
        });
    }
    std::printf("ready %d %d\n", static_cast<int>(::getpid()), n);
    std::fflush(stdout);
    char c;
    while (::read(STDIN_FILENO, &c, 1) > 0) {
    }
    ::close(gate[1]);
    for (auto& t : threads) t.join();
    return 0;
}

// ---- --samples N -------------------------------------------------------------------

struct sample_config {
    const char* name;
    bool minimal;
    proctimes::snapshot_options options;
    // Take through one snapshotter kept for all rounds (the warm-up round's
    // walk is then the previous take of the first recorded one).
    bool kept = false;
};

int print_samples(int n) {
    using proctimes::snapshot_cpu;
    auto snap = [](bool threads, snapshot_cpu cpu, unsigned workers) {
        proctimes::snapshot_options o;
        o.threads = threads;
        o.cpu = cpu;
        o.workers = workers;
        return o;
    };
    auto reuse = [](proctimes::snapshot_options o) {
        o.reuse_idle_threads_for = std::chrono::seconds{10};
        return o;
    };
    const std::vector<sample_config> configs = {
        {"minimal/threads", true, snap(true, snapshot_cpu::ticks, 1)},
        {"minimal/processes", true, snap(false, snapshot_cpu::ticks, 1)},
        {"snapshot/threads/defaults", false, snap(true, snapshot_cpu::precise_processes, 0)},
        {"snapshot/threads/defaults/1", false, snap(true, snapshot_cpu::precise_processes, 1)},
        {"snapshot/threads/defaults/2", false, snap(true, snapshot_cpu::precise_processes, 2)},
        {"snapshot/threads/ticks/1", false, snap(true, snapshot_cpu::ticks, 1)},
        {"snapshot/threads/precise/1", false, snap(true, snapshot_cpu::precise, 1)},
        {"snapshot/threads/precise/2", false, snap(true, snapshot_cpu::precise, 2)},
        {"snapshot/processes/defaults/1", false, snap(false, snapshot_cpu::precise_processes, 1)},
        {"snapshot/processes/ticks/1", false, snap(false, snapshot_cpu::ticks, 1)},
        {"snapshotter/threads/reuse/1", false, reuse(snap(true, snapshot_cpu::precise_processes, 1)), true},
    };
    std::vector<std::optional<proctimes::snapshotter>> kept(configs.size());
    std::vector<std::size_t> reused(configs.size(), 0);
    for (std::size_t i = 0; i < configs.size(); ++i) {
        if (!configs[i].kept) continue;
        auto sn = proctimes::snapshotter::open(configs[i].options);
        if (!sn) {
            std::fprintf(stderr, "%s: %s\n", configs[i].name, sn.error().message().c_str());
            return 1;
        }
        kept[i].emplace(std::move(*sn));
    }
    proctimes::snapshot into;
    const int proc_fd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    std::vector<std::vector<double>> ms(configs.size());
    std::vector<std::size_t> tasks(configs.size(), 0);
    std::vector<unsigned> walkers(configs.size(), 1);
    // A new random order each round: what runs just before a walk (a parallel
    // walk, a large allocation freed) must not always favour the same one.
    std::vector<std::size_t> order(configs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::mt19937 rng{std::random_device{}()};
    for (int round = -1; round < n; ++round) {  // round -1: warm-up, not recorded
        std::shuffle(order.begin(), order.end(), rng);
        for (const std::size_t i : order) {
            const auto& c = configs[i];
            const auto t0 = std::chrono::steady_clock::now();
            if (c.minimal) {
                tasks[i] = minimal_walk(proc_fd, c.options.threads);
            } else if (kept[i]) {
                if (auto r = kept[i]->take(into); !r) {
                    std::fprintf(stderr, "%s: %s\n", c.name, r.error().message().c_str());
                    return 1;
                }
                tasks[i] = into.processes.size() + into.threads.size();
                walkers[i] = into.workers;
                reused[i] = into.reused_threads;
            } else {
                auto s = proctimes::take_snapshot(c.options);
                if (!s) {
                    std::fprintf(stderr, "%s: %s\n", c.name, s.error().message().c_str());
                    return 1;
                }
                tasks[i] = s->processes.size() + s->threads.size();
                walkers[i] = s->workers;
            }
            const auto t1 = std::chrono::steady_clock::now();
            if (round >= 0) ms[i].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
    }
    ::close(proc_fd);
    for (std::size_t i = 0; i < configs.size(); ++i) {
        std::printf("%s %zu %u %zu", configs[i].name, tasks[i], walkers[i], reused[i]);
        for (double v : ms[i]) std::printf(" %.4f", v);
        std::printf("\n");
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::strcmp(argv[1], "--hold") == 0) return hold_threads(std::atoi(argv[2]));
    if (argc == 3 && std::strcmp(argv[1], "--samples") == 0) return print_samples(std::atoi(argv[2]));
    std::fprintf(stderr, "sizeof(snapshot_process) = %zu, sizeof(snapshot_thread) = %zu\n",
                 sizeof(proctimes::snapshot_process), sizeof(proctimes::snapshot_thread));
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
