// SPDX-License-Identifier: MIT
// The keys of the full-screen view on its state, without a terminal
// (tools/proctimes/top/keys.cpp): sort, filter, search, grouping, threads,
// interval, signals' prompt and confirmation.
#include <gtest/gtest.h>

#include <curses.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>

#include "top/row_fields.hpp"
#include "top/screen_state.hpp"

namespace {

using namespace std::chrono_literals;
using proctimes::cli::top::column;
using proctimes::cli::top::grouping;
using proctimes::cli::top::handle_key;
using proctimes::cli::top::input_mode;
using proctimes::cli::top::screen_state;
using proctimes::cli::top::top_row;
using proctimes::cli::top::view_mode;

top_row row(int pid, const std::string& name, std::chrono::milliseconds cpu) {
    top_row r;
    r.pid = pid;
    r.ppid = 1;
    r.name = name;
    proctimes::cli::top::user_name_of(r) = "root";
    r.state = 'S';
    r.interval_user = cpu;
    r.threads = 1;
    return r;
}

screen_state state() {
    screen_state s;
    s.interval = 2s;
    s.frame.interval = 1s;
    s.frame.rows = {row(10, "alpha", 30ms), row(20, "beta", 20ms), row(30, "gamma", 10ms)};
    s.have_frame = true;
    s.page = 10;
    proctimes::cli::top::rearrange(s);
    return s;
}

void type(screen_state& s, const std::string& text) {
    for (char c : text) handle_key(s, static_cast<unsigned char>(c));
}

TEST(TopKeys, SortCyclesAndInverts) {
    screen_state s = state();
    ASSERT_EQ(s.rows.front().key.pid, 10);
    handle_key(s, '<');  // cpu -> state
    EXPECT_EQ(s.view.sort, column::state);
    handle_key(s, '>');
    handle_key(s, '>');
    EXPECT_EQ(s.view.sort, column::kernel);
    handle_key(s, '<');
    EXPECT_EQ(s.view.sort, column::cpu);
    handle_key(s, 'I');
    EXPECT_FALSE(s.view.descending);
    EXPECT_EQ(s.rows.front().key.pid, 30);
    for (int i = 0; i < 10; ++i) handle_key(s, KEY_F(6));  // all the way round
    EXPECT_EQ(s.view.sort, column::cpu);
}

TEST(TopKeys, FilterAsTypedThenEscapeClears) {
    screen_state s = state();
    handle_key(s, '\\');
    EXPECT_EQ(s.input, input_mode::filter);
    type(s, "bet");
    ASSERT_EQ(s.rows.size(), 1U);
    EXPECT_EQ(s.rows[0].key.pid, 20);
    handle_key(s, KEY_BACKSPACE);
    handle_key(s, KEY_BACKSPACE);
    handle_key(s, KEY_BACKSPACE);
    EXPECT_EQ(s.rows.size(), 3U);
    type(s, "gam");
    handle_key(s, '\r');
    EXPECT_EQ(s.input, input_mode::none);
    EXPECT_EQ(s.view.filter, "gam");
    EXPECT_EQ(s.rows.size(), 1U);
    handle_key(s, 27);  // Esc: the filter goes
    EXPECT_TRUE(s.view.filter.empty());
    EXPECT_EQ(s.rows.size(), 3U);
}

TEST(TopKeys, SearchMovesTheSelectionAndNFindsTheNext) {
    screen_state s = state();
    s.frame.rows.push_back(row(40, "gamma2", 0ms));
    proctimes::cli::top::rearrange(s);
    handle_key(s, '/');
    type(s, "gam");
    EXPECT_EQ(s.rows[s.view.cursor].key.pid, 30);
    handle_key(s, '\r');
    handle_key(s, 'n');
    EXPECT_EQ(s.rows[s.view.cursor].key.pid, 40);
    handle_key(s, 'n');  // wraps round
    EXPECT_EQ(s.rows[s.view.cursor].key.pid, 30);
    EXPECT_EQ(s.rows.size(), 4U);  // a search narrows nothing
}

TEST(TopKeys, GroupingCyclesAndTreeToggles) {
    screen_state s = state();
    handle_key(s, 'g');
    EXPECT_EQ(s.view.mode, view_mode::grouped);
    EXPECT_EQ(s.view.group, grouping::program);
    handle_key(s, 'g');
    EXPECT_EQ(s.view.group, grouping::user);
    ASSERT_EQ(s.rows.size(), 1U);
    EXPECT_EQ(s.rows[0].members, 3U);
    handle_key(s, 'g');
    EXPECT_EQ(s.view.group, grouping::cgroup);
    handle_key(s, 'g');
    EXPECT_EQ(s.view.mode, view_mode::flat);
    handle_key(s, 't');
    EXPECT_EQ(s.view.mode, view_mode::tree);
    handle_key(s, 't');
    EXPECT_EQ(s.view.mode, view_mode::flat);
}

TEST(TopKeys, ThreadsOfTheSelectedProcessAndBack) {
    screen_state s = state();
    top_row t = row(20, "worker", 5ms);
    t.tid = 21;
    s.frame.rows[1].thread_rows = {row(20, "beta", 1ms), t};
    s.frame.rows[1].thread_rows[0].tid = 20;
    proctimes::cli::top::rearrange(s);
    handle_key(s, KEY_DOWN);
    ASSERT_EQ(s.view.selected->pid, 20);
    handle_key(s, 'H');
    EXPECT_EQ(s.view.mode, view_mode::threads);
    ASSERT_EQ(s.rows.size(), 2U);
    EXPECT_EQ(*s.rows[0].key.tid, 21);
    handle_key(s, 'H');
    EXPECT_EQ(s.view.mode, view_mode::flat);
    EXPECT_EQ(s.rows.size(), 3U);
}

TEST(TopKeys, IntervalStepsAndTypedBounds) {
    screen_state s = state();
    handle_key(s, '+');
    EXPECT_EQ(s.interval, 1s);
    handle_key(s, '-');
    handle_key(s, '-');
    EXPECT_EQ(s.interval, 3s);
    for (int i = 0; i < 20; ++i) handle_key(s, '+');
    EXPECT_EQ(s.interval, 100ms);
    handle_key(s, 'd');
    type(s, "0.05");
    handle_key(s, '\r');
    EXPECT_EQ(s.interval, 100ms);  // refused
    EXPECT_NE(s.message.find("0.1 to 3600"), std::string::npos);
    handle_key(s, 'd');
    type(s, "1.5");
    handle_key(s, '\r');
    EXPECT_EQ(s.interval, 1500ms);
}

TEST(TopKeys, SignalsNeedAConfirmationAndCanBeTurnedOff) {
    screen_state s = state();
    // The selected row is this test's own process, so that a signal would reach it.
    s.frame.rows[0].pid = ::getpid();
    proctimes::cli::top::rearrange(s);
    handle_key(s, KEY_HOME);
    handle_key(s, 'k');
    ASSERT_EQ(s.input, input_mode::signal);
    type(s, "sigusr1");
    handle_key(s, '\r');
    ASSERT_EQ(s.input, input_mode::confirm_signal);
    EXPECT_EQ(s.signal_chosen, SIGUSR1);
    handle_key(s, 'n');  // refused: nothing sent (SIGUSR1 would end this test)
    EXPECT_EQ(s.message, "no signal sent");
    handle_key(s, 'k');
    type(s, "99");
    handle_key(s, '\r');
    EXPECT_EQ(s.message, "no such signal");
    handle_key(s, 'k');
    type(s, "0");
    handle_key(s, '\r');
    EXPECT_EQ(s.message, "no such signal");
    s.allow_signals = false;
    handle_key(s, 'k');
    EXPECT_EQ(s.input, input_mode::none);
    EXPECT_NE(s.message.find("turned off"), std::string::npos);
}

TEST(TopKeys, HelpClosesOnAnyKeyAndQQuits) {
    screen_state s = state();
    handle_key(s, '?');
    EXPECT_TRUE(s.help);
    handle_key(s, 'q');  // closes the help only
    EXPECT_FALSE(s.help);
    EXPECT_FALSE(s.quit);
    handle_key(s, 'p');
    EXPECT_TRUE(s.paused);
    handle_key(s, ' ');
    EXPECT_FALSE(s.paused);
    handle_key(s, '\r');
    EXPECT_TRUE(s.detail);
    handle_key(s, 27);
    EXPECT_FALSE(s.detail);
    handle_key(s, 'q');
    EXPECT_TRUE(s.quit);
}

}  // namespace
