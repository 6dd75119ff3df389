// SPDX-License-Identifier: MIT
// FIFOs, sockets, devices and directories where the library expects a regular
// file: the boot anchor in a shared directory, a --proc-root tree. Nothing may
// block on them (another user may have planted them), nothing may read them.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd.hpp"
#include "proctimes/proctimes.hpp"

namespace fs = std::filesystem;
using namespace proctimes;

namespace {

// Runs `body` in a forked child that SIGALRM kills after `seconds`: true when
// the body returned 0 in time. A call that blocks fails the test instead of
// hanging it.
bool finishes_in_time(const std::function<int()>& body, unsigned seconds = 20) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::alarm(seconds);
        ::_exit(body());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) ADD_FAILURE() << "blocked: killed by signal " << WTERMSIG(status);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

struct scratch_dir {
    fs::path path;
    explicit scratch_dir(const std::string& tag)
        : path(fs::temp_directory_path() / ("proctimes-" + tag + "-" + std::to_string(::getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
        fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                  fs::perms::others_read | fs::perms::others_exec);
    }
    ~scratch_dir() { fs::remove_all(path); }
};

// A unix socket bound at `path` (kept open by the returned descriptor).
int bind_socket(const fs::path& path) {
    const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(s);
        return -1;
    }
    return s;
}

}  // namespace

TEST(SpecialFiles, OpenReadRefusesAnythingButARegularFileWithoutBlocking) {
    scratch_dir d("special");
    const fs::path fifo = d.path / "fifo";
    const fs::path held = d.path / "held-fifo";
    const fs::path sock = d.path / "socket";
    const fs::path file = d.path / "file";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    ASSERT_EQ(::mkfifo(held.c_str(), 0644), 0);
    const int s = bind_socket(sock);
    ASSERT_GE(s, 0);
    {
        std::FILE* f = std::fopen(file.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs("x\n", f);
        std::fclose(f);
    }
    // A FIFO with a writer that never writes: a blocking read would wait forever.
    const int writer = ::open(held.c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(writer, 0);
    EXPECT_TRUE(finishes_in_time([&] {
        int bad = 0;
        for (const char* p : {fifo.c_str(), held.c_str(), sock.c_str(), "/dev/null", "/dev/zero", d.path.c_str()}) {
            errno = 0;
            const int fd = detail::open_read(AT_FDCWD, p);
            if (fd >= 0 || errno != detail::not_regular_file_errno) {
                std::fprintf(stderr, "%s: fd %d errno %d\n", p, fd, errno);
                ++bad;
            }
            std::string text;
            if (detail::read_file(p, text) != errc::not_a_regular_file) ++bad;
        }
        // The regular file and procfs files are read as before.
        std::string text;
        if (detail::read_file(file.c_str(), text) || text != "x\n") ++bad;
        if (detail::read_file("/proc/self/stat", text) || text.empty()) ++bad;
        const int dir = detail::open_read(AT_FDCWD, d.path.c_str(), O_DIRECTORY);
        if (dir < 0) ++bad;
        return bad;
    }));
    ::close(writer);
    ::close(s);
    EXPECT_EQ(make_error_code(errc::not_a_regular_file), std::errc::no_such_device_or_address);
    EXPECT_EQ(detail::file_error(EPERM), errc::access_denied);
    EXPECT_EQ(detail::file_error(EACCES), errc::access_denied);
    EXPECT_EQ(detail::file_error(EMFILE), std::errc::too_many_files_open);
}

TEST(SpecialFiles, SpecialFilesInAProcRootAreFailuresNotHangs) {
    // A copy of the captured tree with a FIFO (no writer), a FIFO with an
    // idle writer and a socket where stat, status and loadavg files were.
    scratch_dir d("procroot");
    const fs::path root = d.path / "proc";
    fs::copy(std::string(PROCTIMES_FIXTURES) + "/proc", root, fs::copy_options::recursive);
    fs::remove(root / "1" / "stat");
    ASSERT_EQ(::mkfifo((root / "1" / "stat").c_str(), 0644), 0);
    fs::remove(root / "57" / "task" / "57" / "stat");
    ASSERT_EQ(::mkfifo((root / "57" / "task" / "57" / "stat").c_str(), 0644), 0);
    const int writer = ::open((root / "57" / "task" / "57" / "stat").c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_GE(writer, 0);
    fs::remove(root / "loadavg");
    const int s = bind_socket(root / "loadavg");
    ASSERT_GE(s, 0);
    snapshot_options o;
    o.proc_root = root.string();
    o.threads = true;
    ASSERT_TRUE(finishes_in_time([&] { return take_snapshot(o) ? 0 : 1; }));
    auto snap = take_snapshot(o);
    ASSERT_TRUE(snap) << snap.error().message();
    EXPECT_EQ(snap->find(1), nullptr);
    const auto bad = make_error_code(errc::not_a_regular_file);
    bool saw_process = false, saw_thread = false;
    for (const auto& f : snap->failures) {
        if (f.pid == 1 && f.item == snapshot_item::process && f.error == bad) saw_process = true;
        if (f.pid == 57 && f.tid == 57 && f.item == snapshot_item::thread && f.error == bad) saw_thread = true;
    }
    EXPECT_TRUE(saw_process) << "pid 1's stat is a FIFO: a failure, said so";
    EXPECT_TRUE(saw_thread) << "thread 57's stat is a FIFO with a writer: a failure, said so";
    EXPECT_NE(snap->find(2), nullptr) << "the rest of the tree is read";
    ::close(writer);
    ::close(s);
}
