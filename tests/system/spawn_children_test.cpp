// SPDX-License-Identifier: MIT
// child::wait's children_kernel + children_user: the wait rusage minus the
// child's own CPU, whatever the two tick-sampled splits say, so that its own
// CPU plus its children's is the wait rusage (run_tree's rusage_cpu).
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include <sys/resource.h>

#include "clock_ns.hpp"
#include "in_child.hpp"
#include "proctimes/spawn.hpp"

namespace {

using namespace std::chrono;

TEST(SpawnChildren, OwnPlusChildrenIsTheWaitRusage) {
    // In a forked child: RUSAGE_CHILDREN then grows by exactly each wait's rusage.
    auto o = test_in_child::run([]() -> std::string {
        for (int i = 0; i < 20; ++i) {
            rusage before{}, after{};
            ::getrusage(RUSAGE_CHILDREN, &before);
            auto c = proctimes::child::spawn({.argv = {"/bin/sh", "-c", "/bin/true; /bin/true; exit 0"}});
            if (!c) return "spawn: " + c.error().message();
            auto e = c->wait();
            if (!e) return "wait: " + e.error().message();
            ::getrusage(RUSAGE_CHILDREN, &after);
            const nanoseconds ru = proctimes::detail::to_ns(after.ru_utime) + proctimes::detail::to_ns(after.ru_stime) -
                                   proctimes::detail::to_ns(before.ru_utime) -
                                   proctimes::detail::to_ns(before.ru_stime);
            if (e->times_error) return "no handle: " + e->times_error.message();
            if (e->children_kernel < 0ns || e->children_user < 0ns) return "negative children's time";
            const nanoseconds sum = e->times.cpu() + e->children_kernel + e->children_user;
            // The rusage is cut to 1 µs per field; the own total is 1 ns.
            if (sum > ru + 3us || sum < ru - 3us)
                return "own " + std::to_string(e->times.cpu().count()) + " + children " +
                       std::to_string((e->children_kernel + e->children_user).count()) + " ns, rusage " +
                       std::to_string(ru.count()) + " ns";
        }
        return "";
    });
    EXPECT_TRUE(o.ok()) << o.why() << " (wait status " << o.wait_status << ")";
}

}  // namespace
