// SPDX-License-Identifier: MIT
// The full-screen view on a scripted feed: frames made up here (a few
// processes, one with threads, one that ends each frame, names full of escape
// sequences and invalid UTF-8), so the tmux tests can assert what the screen
// draws independently of the machine, and make the feed fail on demand.
//   top_screen_driver [--interval SECS] [--fail-after N] [--crash-after N] [--no-signals]
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include "top/row_fields.hpp"
#include "top/screen.hpp"

namespace {

using namespace std::chrono_literals;
using proctimes::cli::top::top_frame;
using proctimes::cli::top::top_row;

class scripted_feed final : public proctimes::cli::top::frame_feed {
public:
    scripted_feed(int fail_after, int crash_after) : fail_after_(fail_after), crash_after_(crash_after) {}

    proctimes::result<top_frame> next(std::chrono::nanoseconds interval) override {
        ++number_;
        if (fail_after_ > 0 && number_ > static_cast<std::uint64_t>(fail_after_))
            return std::make_error_code(std::errc::io_error);
        // A fault, as a reader that crashes would make.
        if (crash_after_ > 0 && number_ > static_cast<std::uint64_t>(crash_after_)) std::raise(SIGSEGV);
        top_frame f;
        f.number = number_;
        f.interval = number_ == 1 ? 0ns : interval;
        f.taken = proctimes::instant(std::chrono::seconds(1'800'000'000) + interval * static_cast<int>(number_));
        f.cpus = 2;
        f.busy_per_cpu = {0.50, 0.25};
        f.busy = 0.375;
        f.ended_source = "scripted feed";
        f.load = {0.5, 0.25, 0.125};
        f.memory_total = 8ULL << 30;
        f.memory_available = 6ULL << 30;
        if (number_ > 1) {
            proctimes::cpu_ledger l;
            l.interval = interval;
            l.busy = interval * 3 / 4;
            l.live = interval / 2;
            l.ended = interval / 8;
            l.unattributed = interval / 8;
            f.ledger = l;
        }
        f.rows.push_back(row(1, 0, "init", "/sbin/init", 1ms));
        f.rows.push_back(row(100, 1, "shell", "-bash", 2ms));
        top_row busy = row(200, 100, "burner", "burner --hard", 400ms);
        for (int t = 0; t < 3; ++t) {
            top_row th = row(200, 100, "worker" + std::to_string(t), "", std::chrono::milliseconds(100 * t));
            th.tid = t == 0 ? 200 : 300 + t;
            busy.thread_rows.push_back(th);
        }
        busy.threads = 3;
        f.rows.push_back(busy);
        f.rows.push_back(row(201, 100, "\x1b[31mevil\x1b]0;title\x07", "", 3ms));
        f.rows.push_back(row(202, 100, "bad\xff\xfeutf8", "", 0ms));
        top_row gone = row(203, 100, "short", "short --lived", 50ms);
        gone.ended = true;
        gone.state = 'X';
        gone.exit_code = 7;
        gone.exit = f.taken - 10ms;
        f.rows.push_back(gone);
        for (const auto& r : f.rows) f.tasks += r.threads;
        return f;
    }

private:
    static top_row row(int pid, int ppid, std::string name, std::string command, std::chrono::milliseconds cpu) {
        top_row r;
        r.pid = pid;
        r.ppid = ppid;
        r.name = std::move(name);
        r.command = std::move(command);
        proctimes::cli::top::user_name_of(r) = "tester";
        r.uid = 1000;
        r.state = 'S';
        r.interval_user = cpu;
        r.kernel = 1s;
        proctimes::cli::top::user_time_of(r) = 2s;
        r.resolution = 1ns;
        r.threads = 1;
        r.rss_bytes = 4ULL << 20;
        r.creation = proctimes::instant(std::chrono::seconds(1'799'999'000 + pid));
        r.cgroup = "/user.slice";
        return r;
    }
    int fail_after_;
    int crash_after_;
    std::uint64_t number_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    proctimes::cli::top::screen_options opts;
    int fail_after = 0;
    int crash_after = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--interval" && i + 1 < argc) {
            opts.interval = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::duration<double>(std::strtod(argv[++i], nullptr)));
        } else if (a == "--fail-after" && i + 1 < argc) {
            fail_after = std::atoi(argv[++i]);
        } else if (a == "--crash-after" && i + 1 < argc) {
            crash_after = std::atoi(argv[++i]);
        } else if (a == "--no-signals") {
            opts.allow_signals = false;
        } else {
            std::cerr
                << "usage: top_screen_driver [--interval SECS] [--fail-after N] [--crash-after N] [--no-signals]\n";
            return 2;
        }
    }
    scripted_feed feed(fail_after, crash_after);
    return proctimes::cli::top::run_screen(feed, opts, std::cerr);
}
