// SPDX-License-Identifier: MIT
// Skips a test, saying why, where the eBPF source cannot run: not built, no
// kernel BTF, not permitted (CAP_BPF + CAP_PERFMON or root), another pid
// namespace.
#pragma once

#include <gtest/gtest.h>

#include "proctimes/snapshot.hpp"

#define PROCTIMES_REQUIRE_BPF_SNAPSHOT()                                                         \
    do {                                                                                         \
        const auto bpf_status_ = proctimes::bpf_snapshot_status();                               \
        if (!bpf_status_.usable) GTEST_SKIP() << "eBPF source unusable: " << bpf_status_.reason; \
    } while (0)
