// SPDX-License-Identifier: MIT
// A process for the tests of `proctimes top` to find on the screen: it names
// itself (any bytes, escape sequences included: PR_SET_NAME), optionally
// burns CPU, optionally starts more threads that burn or sleep likewise, and
// ends by itself after a while so that a failed test leaves nothing behind.
//   top_test_child [--name NAME] [--burn] [--threads N] [--seconds S]
#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    const char* name = nullptr;
    bool burn = false;
    int threads = 0;
    int seconds = 30;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
            name = argv[++i];
        } else if (std::strcmp(argv[i], "--burn") == 0) {
            burn = true;
        } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = std::atoi(argv[++i]);
        } else if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = std::atoi(argv[++i]);
        } else {
            return 2;
        }
    }
    if (name != nullptr) ::prctl(PR_SET_NAME, name, 0, 0, 0);
    std::atomic<bool> stop{false};
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(std::max(threads, 0)));
    // Every thread burns or sleeps, the main one until the end, the others until it is reached.
    const auto work = [burn](const std::atomic<bool>& done) {
        volatile unsigned long sink = 0;
        while (!done.load()) {
            if (burn) {
                for (int k = 0; k < 1'000'000; ++k) sink = sink + static_cast<unsigned long>(k);
            } else {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        }
    };
    for (int t = 0; t < threads; ++t) pool.emplace_back([&work, &stop] { work(stop); });
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    std::atomic<bool> main_done{false};
    std::thread timer([&main_done, end] {
        while (std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        main_done = true;
    });
    work(main_done);
    timer.join();
    stop = true;
    for (auto& t : pool) t.join();
    return 0;
}
