// SPDX-License-Identifier: MIT
// Compiled only in a stub build (-DPROCTIMES_PLATFORM=stub): the public task
// API over the stub backend answers errc::not_supported, while the portable
// checks in front of the hooks still answer as documented.
#include <gtest/gtest.h>

#include <vector>

#include <unistd.h>

#include "proctimes/boot.hpp"
#include "proctimes/cycles.hpp"
#include "proctimes/error.hpp"
#include "proctimes/exit.hpp"
#include "proctimes/ledger.hpp"
#include "proctimes/machine.hpp"
#include "proctimes/process.hpp"
#include "proctimes/resources.hpp"
#include "proctimes/spawn.hpp"
#include "proctimes/tree.hpp"

namespace {

using namespace proctimes;

TEST(StubBackend, OpeningATaskIsNotSupported) {
    auto p = process::open(::getpid());
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), make_error_code(errc::not_supported));
    EXPECT_EQ(p.error(), std::errc::not_supported);  // the portable meaning
    auto self = process::open_self();
    ASSERT_FALSE(self);
    EXPECT_EQ(self.error(), make_error_code(errc::not_supported));
    auto t = thread::open(::getpid());
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error(), make_error_code(errc::not_supported));
    auto t2 = thread::open(::getpid(), 1);
    ASSERT_FALSE(t2);
    EXPECT_EQ(t2.error(), make_error_code(errc::not_supported));
}

TEST(StubBackend, CallingProcessTimesAreNotSupported) {
    auto p = this_process::times();
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error(), make_error_code(errc::not_supported));
    auto t = this_thread::times();
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error(), make_error_code(errc::not_supported));
    EXPECT_EQ(this_process::id(), ::getpid());
}

TEST(StubBackend, PortableChecksComeFirst) {
    auto bad = process::open(0);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error(), make_error_code(errc::invalid_argument));
    auto neg = thread::open(-5);
    ASSERT_FALSE(neg);
    EXPECT_EQ(neg.error(), make_error_code(errc::invalid_argument));
    process empty;
    auto times = empty.times();
    ASSERT_FALSE(times);
    EXPECT_EQ(times.error(), make_error_code(errc::invalid_handle));
    EXPECT_EQ(empty.id(), 0);
}

TEST(StubBackend, SpawnWaitsBootAndCountersAreNotSupported) {
    spawn_options o;
    auto none = child::spawn(o);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error(), make_error_code(errc::invalid_argument));  // checked before the backend
    o.argv = {"true"};
    auto c = child::spawn(o);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error(), make_error_code(errc::not_supported));
    process empty;
    auto w = wait_for_exit(empty);
    ASSERT_FALSE(w);
    EXPECT_EQ(w.error(), make_error_code(errc::invalid_handle));
    auto anchor = get_boot_anchor();
    ASSERT_FALSE(anchor);
    EXPECT_EQ(anchor.error(), make_error_code(errc::not_supported));
    auto created = instant_from_start_ticks(100);
    ASSERT_FALSE(created);
    EXPECT_EQ(created.error(), make_error_code(errc::not_supported));
    EXPECT_EQ(exit_records_status(), make_error_code(errc::not_supported));
    EXPECT_FALSE(hardware_cycle_counter_status());
    EXPECT_EQ(get_tsc_rate().source, tsc_rate_source::nominal);
}

// The exit switches are portable: the stub keeps what a program sets and
// reads the same defaults, while the listener, the exit stream and the system
// CPU times are not supported. These symbols exist in a stub library (its
// link with --no-undefined proves it); before, the stub had no exit_stream.
TEST(StubBackend, ExitSwitchesStreamAndSystemTimes) {
    set_exit_monitor_enabled(false);
    EXPECT_FALSE(exit_monitor_enabled());
    set_exit_monitor_enabled(true);
    EXPECT_TRUE(exit_monitor_enabled());
    set_exit_records_enabled(true);
    EXPECT_TRUE(exit_records_enabled());
    EXPECT_EQ(exit_records_status(), make_error_code(errc::not_supported));  // no listener here
    set_exit_records_bpf(true);
    EXPECT_FALSE(exit_records_use_bpf());
    set_exit_records_enabled(false);
    EXPECT_FALSE(exit_records_enabled());
    auto s = exit_stream::open();
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error(), make_error_code(errc::not_supported));
    exit_stream none;
    std::vector<ended_task> out;
    auto r = none.read(out);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), make_error_code(errc::invalid_handle));
    EXPECT_EQ(none.native_handle(), -1);
    EXPECT_FALSE(none.source()) << "a moved-from stream reads no source";
    EXPECT_FALSE(none.lost());
    auto cpu = read_system_cpu_times();
    ASSERT_FALSE(cpu);
    EXPECT_EQ(cpu.error(), make_error_code(errc::not_supported));
    const auto machine = read_machine_status();
    ASSERT_FALSE(machine);
    EXPECT_EQ(machine.error(), make_error_code(errc::not_supported));
}

TEST(StubBackend, RunTreeIsNotSupported) {
    auto none = run_tree({});
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error(), make_error_code(errc::invalid_argument));
    auto r = run_tree({.argv = {"true"}});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error(), make_error_code(errc::not_supported));
    EXPECT_EQ(to_string(tree_source::none), "none");
}

}  // namespace

TEST(StubBackend, ResourcesAreNotSupportedAfterTheArgumentCheck) {
    EXPECT_EQ(read_process_resources(::getpid()).error(), make_error_code(errc::not_supported));
    EXPECT_EQ(read_process_resources(0).error(), make_error_code(errc::invalid_argument));
    EXPECT_EQ(read_boot_time_seconds().error(), make_error_code(errc::not_supported));
}
