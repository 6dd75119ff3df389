// SPDX-License-Identifier: MIT
// The eBPF snapshot source against the minimal /proc walk, in one process:
//   bpf_bench --samples N
// prints, after loading the BPF program once (its cost printed apart, as
// "load"), N interleaved rounds of one full-thread snapshot from the eBPF
// source and one minimal walk (open+read+close of every process's and
// thread's stat, nothing else), one line per sample:
//   <name> <tasks> <ms>
// Exits 77 with the reason on stderr when the eBPF source cannot be used.
// bench/bpf_compare.py runs it next to psutil, ps and the CLI.
#include <chrono>
#include <cstdio>
#include <cstring>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "proctimes/snapshot.hpp"

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool numeric(const char* s) {
    if (*s < '1' || *s > '9') return false;
    while (*s)
        if (*s < '0' || *s++ > '9') return false;
    return true;
}

// One stat file read per task: the least any /proc tool must do.
std::size_t minimal_walk(int proc_fd) {
    char buf[4096], path[300];
    std::size_t files = 0;
    DIR* d = ::fdopendir(::dup(proc_fd));
    if (!d) return 0;
    ::rewinddir(d);
    while (dirent* e = ::readdir(d)) {
        if (!numeric(e->d_name)) continue;
        std::snprintf(path, sizeof path, "%s/task", e->d_name);
        const int task_fd = ::openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (task_fd < 0) continue;
        std::snprintf(path, sizeof path, "%s/stat", e->d_name);
        if (int fd = ::openat(proc_fd, path, O_RDONLY | O_CLOEXEC); fd >= 0) {
            files += ::read(fd, buf, sizeof buf) > 0;
            ::close(fd);
        }
        DIR* t = ::fdopendir(task_fd);
        if (!t) {
            ::close(task_fd);
            continue;
        }
        while (dirent* te = ::readdir(t)) {
            if (!numeric(te->d_name)) continue;
            std::snprintf(path, sizeof path, "%s/stat", te->d_name);
            if (int fd = ::openat(task_fd, path, O_RDONLY | O_CLOEXEC); fd >= 0) {
                files += ::read(fd, buf, sizeof buf) > 0;
                ::close(fd);
            }
        }
        ::closedir(t);
    }
    ::closedir(d);
    return files;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3 || std::strcmp(argv[1], "--samples") != 0) {
        std::fprintf(stderr, "usage: bpf_bench --samples N\n");
        return 2;
    }
    const int rounds = std::atoi(argv[2]);
    using proctimes::snapshot_source;
    const auto t0 = std::chrono::steady_clock::now();
    auto taker = proctimes::snapshotter::open({.source = snapshot_source::bpf, .threads = true});
    const double load_ms = ms_since(t0);
    proctimes::snapshot snap;
    if (!taker || !taker->take(snap) || snap.source != snapshot_source::bpf) {
        std::fprintf(stderr, "eBPF source unusable: %s\n", proctimes::bpf_snapshot_status().reason.c_str());
        return 77;
    }
    std::printf("load 0 %.3f\n", load_ms);
    const int proc_fd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    minimal_walk(proc_fd);  // warm-up, as the snapshot above
    for (int i = 0; i < rounds; ++i) {
        auto t = std::chrono::steady_clock::now();
        if (!taker->take(snap)) return 1;
        std::printf("bpf %zu %.4f\n", snap.threads.size(), ms_since(t));
        t = std::chrono::steady_clock::now();
        const std::size_t files = minimal_walk(proc_fd);
        std::printf("minimal %zu %.4f\n", files, ms_since(t));
    }
    return 0;
}
