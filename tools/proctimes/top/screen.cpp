// SPDX-License-Identifier: MIT
// The full-screen view's loop (screen.hpp): the terminal taken over with
// ncurses and given back as it was found on every way out (q, a signal, the
// feed failing, the terminal closing); frames asked of the feed once per
// interval, the keyboard polled in between so that keys are answered at once.
#include "top/screen.hpp"

#include <curses.h>
#include <fcntl.h>
#include <langinfo.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <clocale>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <ostream>
#include <string>

#include "record/when.hpp"
#include "top/fatal.hpp"
#include "top/screen_state.hpp"

namespace proctimes::cli::top {

namespace {

using std::chrono::nanoseconds;
using clock_type = std::chrono::steady_clock;

volatile std::sig_atomic_t ending_signal = 0;
// The write end of the pipe the loop waits on: a signal taken by another
// thread of the process (the feed's) wakes the loop too.
volatile std::sig_atomic_t ending_pipe = -1;

extern "C" void on_ending_signal(int sig) {
    ending_signal = sig;
    const int saved = errno;
    const char byte = 1;
    if (ending_pipe >= 0 && ::write(ending_pipe, &byte, 1) < 0) {
        // Full (a byte is already waiting) or closed: the flag says it all.
    }
    errno = saved;
}

// SIGTERM, SIGHUP and SIGINT end the run through the loop (which restores the
// terminal). They are blocked but while the loop waits in ppoll(), so that
// one arriving while a frame is read or drawn ends the wait at once instead
// of slipping in before it. Their previous mask and handlers come back when
// this ends (the mask first: one still pending is taken by the handler here).
class ending_signals {
public:
    ending_signals() {
        ending_signal = 0;
        if (::pipe2(pipe_.data(), O_NONBLOCK | O_CLOEXEC) == 0) {
            ending_pipe = pipe_[1];
        } else {
            pipe_ = {-1, -1};
        }
        struct sigaction sa {};
        sa.sa_handler = on_ending_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = 0;
        sigset_t block;
        sigemptyset(&block);
        for (std::size_t i = 0; i < signals_.size(); ++i) {
            ::sigaction(signals_[i], &sa, &old_[i]);
            sigaddset(&block, signals_[i]);
        }
        ::pthread_sigmask(SIG_BLOCK, &block, &old_mask_);
        wait_mask_ = old_mask_;
        for (int sig : signals_) sigdelset(&wait_mask_, sig);
    }
    ~ending_signals() {
        ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
        for (std::size_t i = 0; i < signals_.size(); ++i) ::sigaction(signals_[i], &old_[i], nullptr);
        ending_pipe = -1;
        for (int fd : pipe_)
            if (fd >= 0) ::close(fd);
    }
    ending_signals(const ending_signals&) = delete;
    ending_signals& operator=(const ending_signals&) = delete;
    /// The mask to wait with: the caller's, with these signals let through.
    [[nodiscard]] const sigset_t* wait_mask() const { return &wait_mask_; }
    /// Readable once one of them has been taken (-1: no pipe could be made).
    [[nodiscard]] int wake_fd() const { return pipe_[0]; }

private:
    static constexpr std::array<int, 3> signals_{SIGTERM, SIGHUP, SIGINT};
    std::array<struct sigaction, 3> old_{};
    sigset_t old_mask_{};
    sigset_t wait_mask_{};
    std::array<int, 2> pipe_{-1, -1};
};

// The terminal in ncurses' hands while this lives.
class curses_terminal {
public:
    explicit curses_terminal(std::string& why) {
        screen_ = newterm(nullptr, stdout, stdin);
        if (screen_ == nullptr) {
            const char* term = std::getenv("TERM");
            why = std::string("the terminal type '") + (term != nullptr ? term : "") + "' is unknown to ncurses";
            return;
        }
        set_term(screen_);
        cbreak();
        noecho();
        nonl();
        keypad(stdscr, TRUE);
        nodelay(stdscr, TRUE);
        set_escdelay(25);
        curs_set(0);
        mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED
#if defined(BUTTON5_PRESSED)
                      | BUTTON5_PRESSED
#endif
                  ,
                  nullptr);
        mouseinterval(0);
    }
    ~curses_terminal() {
        if (screen_ == nullptr) return;
        endwin();
        delscreen(screen_);
    }
    curses_terminal(const curses_terminal&) = delete;
    curses_terminal& operator=(const curses_terminal&) = delete;
    [[nodiscard]] bool ok() const { return screen_ != nullptr; }

private:
    SCREEN* screen_ = nullptr;
};

bool want_colour() {
    const char* no = std::getenv("NO_COLOR");
    if (no != nullptr && *no != '\0') return false;  // https://no-color.org
    return has_colors() == TRUE;
}

void start_colours() {
    start_color();
    use_default_colors();
    init_pair(pair_title, COLOR_CYAN, -1);
    init_pair(pair_bar, COLOR_GREEN, -1);
    init_pair(pair_heading, COLOR_BLACK, COLOR_GREEN);
    init_pair(pair_ended, COLOR_RED, -1);
    init_pair(pair_label, COLOR_CYAN, -1);
    init_pair(pair_warn, COLOR_YELLOW, -1);
    init_pair(pair_select, COLOR_BLACK, COLOR_CYAN);
}

// How long ppoll() waits: until the next frame is due, or (paused) without end.
std::optional<timespec> wait_for(clock_type::time_point now, clock_type::time_point deadline, bool paused) {
    if (paused) return std::nullopt;
    const auto left = deadline <= now ? nanoseconds{0} : std::chrono::duration_cast<nanoseconds>(deadline - now);
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(left.count() / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(left.count() % 1'000'000'000);
    return ts;
}

// A new frame on the screen: arranged by the view, the cursor kept.
void show_frame(screen_state& s, top_frame frame) {
    s.frame = std::move(frame);
    s.have_frame = true;
    if (!s.frame.warnings.empty()) s.message = s.frame.warnings.front();
    if (s.view.mode == view_mode::grouped && s.view.group == grouping::cgroup) s.cgroups.fill(s.frame);
    s.rows = arrange(s.frame, s.view);
    const auto followed = s.view.selected;
    place_cursor(s.view, s.rows, s.page, s.follow);
    if (s.follow && followed &&
        std::none_of(s.rows.begin(), s.rows.end(), [&](const display_row& d) { return d.key == *followed; })) {
        // The followed process is no longer listed: following stops, and says so.
        s.follow = false;
        s.message =
            "process " + std::to_string(followed->tid.value_or(followed->pid)) + " is no longer listed; not following";
    }
}

// The keys' request to move through a recording: a step or a jump. A failure
// is said on the bottom line; the interval shown stays.
void move_replay(screen_state& s, frame_feed& feed) {
    std::optional<result<top_frame>> moved;
    if (s.replay_jump) {
        const instant now = std::chrono::time_point_cast<nanoseconds>(std::chrono::system_clock::now());
        const auto t = record::parse_instant(*s.replay_jump, now);
        if (!t.ok()) {
            s.message = t.why();
        } else {
            moved = feed.seek(t.value());
        }
    } else {
        moved = feed.step(s.replay_step);
    }
    s.replay_step = 0;
    s.replay_jump.reset();
    if (!moved) return;
    if (!*moved) {
        const std::string why = feed.failure_text();
        s.message = why.empty() ? moved->error().message() : why;
        return;
    }
    show_frame(s, std::move(**moved));
}

}  // namespace

int run_screen(frame_feed& feed, const screen_options& opts, std::ostream& err) {
    if (::isatty(STDIN_FILENO) == 0 || ::isatty(STDOUT_FILENO) == 0) {
        err << "proctimes top: the full-screen view needs a terminal on standard input and output; "
               "for scripts and pipes use batch mode: proctimes top -b -n 1\n";
        return 2;
    }
    // Only the character type: numbers are formatted by {fmt}, whatever LC_NUMERIC says.
    std::setlocale(LC_CTYPE, "");
    const bool utf8 = std::strcmp(nl_langinfo(CODESET), "UTF-8") == 0;

    screen_state s;
    s.interval = opts.interval;
    s.allow_signals = opts.allow_signals && feed.live();
    s.replay = !feed.live();
    s.view.utf8 = utf8;
    s.view.all_threads = opts.threads;
    if (opts.follow) {
        s.follow = true;
        s.view.selected = row_key{*opts.follow, std::nullopt, {}};
    }

    std::string failure;
    int status = 0;
    {
        const ending_signals signals;
        fatal_signals faults;  // the terminal's settings taken before ncurses changes them
        const curses_terminal term(failure);
        if (!term.ok()) {
            err << "proctimes top: " << failure << "; use batch mode: proctimes top -b\n";
            return 2;
        }
        faults.arm();
        s.colour = want_colour();
        if (s.colour) start_colours();
        draw_screen(s);

        auto last_frame = clock_type::now();
        auto deadline = last_frame;  // the first frame at once
        bool feed_woke = false;
        bool replay_started = false;
        while (!s.quit) {
            if (ending_signal != 0) {
                status = 128 + static_cast<int>(ending_signal);
                break;
            }
            if (!s.paused && clock_type::now() >= deadline) {
                // The feed's interval runs from the start of one walk to the
                // start of the next: the next frame is due `interval` after
                // this one was asked for.
                const auto asked = clock_type::now();
                auto frame = feed.next(s.interval);
                if (!frame) {
                    const std::string why = feed.failure_text();
                    failure = "the frame feed failed: " + (why.empty() ? frame.error().message() : why);
                    status = 1;
                    break;
                }
                show_frame(s, std::move(*frame));
                // A recording opens paused on its first interval: the keys step through it.
                if (s.replay && !replay_started) s.paused = true;
                replay_started = true;
                last_frame = asked;
                deadline = last_frame + s.interval;
                feed_woke = false;
                draw_screen(s);
                // No `continue`: the keyboard is read before the next frame
                // even when walks take longer than the interval.
            }
            std::array<pollfd, 3> fds{};
            fds[0] = {STDIN_FILENO, POLLIN, 0};
            fds[1] = {signals.wake_fd(), POLLIN, 0};  // ppoll ignores a negative descriptor
            nfds_t n = 2;
            // The feed's descriptor (the exit stream's) wakes the loop while
            // records wait; pump() takes them, so that a storm of ends
            // between frames does not overflow the kernel's buffer. Should it
            // stay readable after a pump, it is left out until the next frame
            // is taken (a descriptor that stays readable would spin the loop).
            if (feed.wait_handle() >= 0 && !feed_woke) {
                fds[2] = {feed.wait_handle(), POLLIN, 0};
                n = 3;
            }
            const auto wait = wait_for(clock_type::now(), deadline, s.paused);
            const int ready = ::ppoll(fds.data(), n, wait ? &*wait : nullptr, signals.wait_mask());
            if (ready < 0 && errno != EINTR) {
                failure = std::string("waiting for the terminal failed: ") + std::strerror(errno);
                status = 1;
                break;
            }
            if (ready > 0 && n == 3 && fds[2].revents != 0) {
                feed.pump();
                pollfd again{feed.wait_handle(), POLLIN, 0};
                if (::poll(&again, 1, 0) != 0) feed_woke = true;
            }
            if (ending_signal != 0) continue;  // the loop's top ends the run
            if (ready > 0 && (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
                status = 129;  // the terminal is gone, as a hangup would say
                break;
            }
            const auto before = s.interval;
            const bool was_paused = s.paused;
            bool changed = false;
            for (int key = getch(); key != ERR; key = getch()) {
                handle_key(s, key);
                changed = true;
                if (s.quit) break;
            }
            if (s.replay_step != 0 || s.replay_jump) {
                move_replay(s, feed);
                changed = true;
                last_frame = clock_type::now();
                deadline = last_frame + s.interval;
            }
            if (s.interval != before) deadline = last_frame + s.interval;
            // Resuming after a pause: a frame at once, over the whole pause.
            if (was_paused && !s.paused) deadline = clock_type::now();
            if (changed) draw_screen(s);
        }
    }
    // The terminal is the caller's again: say why the run failed.
    if (!failure.empty()) err << "proctimes top: " << failure << '\n';
    return status;
}

}  // namespace proctimes::cli::top
