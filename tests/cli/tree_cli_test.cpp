// SPDX-License-Identifier: MIT
// `run --tree` options and output files, in-process: the options that need
// --tree, --top's strict parse, files that are not regular refused before the
// command starts, and the atomic writer (run/tree/files.hpp).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "run/tree/files.hpp"
#include "run_cli.hpp"

namespace {

namespace fs = std::filesystem;
using cli_testing::run_cli;
using proctimes::cli::tree::check_output_file;
using proctimes::cli::tree::write_file_atomically;

struct temp_dir {
    fs::path path;
    temp_dir() {
        char t[] = "/tmp/proctimes-tree-cli-XXXXXX";
        path = ::mkdtemp(t);
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    [[nodiscard]] std::string operator/(const std::string& name) const { return (path / name).string(); }
};

std::string read_all(const std::string& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

TEST(TreeCli, OptionsThatNeedTreeAreUsageErrors) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"run", "--trace", "/tmp/x.json", "--", "true"},
             {"run", "--svg", "/tmp/x.svg", "--", "true"},
             {"run", "--top", "3", "--", "true"},
             {"run", "--tree", "--threads", "--", "true"},
             {"run", "--tree", "--top", "0", "--", "true"},
             {"run", "--tree", "--top", "nan", "--", "true"},
             {"run", "--tree", "--top", "-1", "--", "true"},
             {"run", "--tree", "--top", "1e3", "--", "true"},
             {"run", "--tree", "--top", "99999999999999999999", "--", "true"},
             {"run", "--tree", "--format", "xml", "--", "true"},
         }) {
        const auto r = run_cli(args);
        EXPECT_EQ(r.code, 2) << args[1] << " " << args[2] << ": " << r.err;
        EXPECT_EQ(r.out, "");
    }
    const auto top = run_cli({"run", "--tree", "--top", "0", "--", "true"});
    EXPECT_NE(top.err.find("'0' is not a whole number from 1 to 4294967295"), std::string::npos) << top.err;
}

TEST(TreeCli, FilesThatAreNotRegularAreRefusedBeforeTheCommandStarts) {
    temp_dir d;
    ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0600), 0);
    fs::create_directory(d / "dir");
    fs::create_symlink(d / "target", d / "link");
    const std::string marker = d / "ran";
    for (const auto& [option, path, what] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"--trace", d / "fifo", "is a FIFO"},
             {"--svg", d / "dir", "is a directory"},
             {"--trace", d / "link", "is a symbolic link"},
             {"--svg", "/dev/null", "is a device"},
             {"--trace", d / "no/such/dir/t.json", "cannot create a file beside"},
         }) {
        const auto r = run_cli({"run", "--tree", option, path, "--", "touch", marker});
        EXPECT_EQ(r.code, 125) << path << ": " << r.err;
        EXPECT_NE(r.err.find("proctimes: run: " + option + ": "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(marker)) << "the command ran although " << path << " was refused";
    }
    EXPECT_FALSE(fs::exists(d / "target"));
    struct stat st {};
    ASSERT_EQ(::stat((d / "fifo").c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    // Nothing left beside them.
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.path)) ++entries;
    EXPECT_EQ(entries, 3u);
}

TEST(TreeCli, OneFileNamedTwiceIsAUsageErrorBeforeTheCommandStarts) {
    temp_dir d;
    const std::string marker = d / "ran";
    const std::string f = d / "same";
    fs::create_directory(d / "sub");
    ASSERT_EQ(::symlink(d.path.c_str(), (d / "alias").c_str()), 0);
    for (const auto& files : std::vector<std::vector<std::string>>{
             {"-o", f, "--trace", f},
             {"--trace", f, "--svg", f},
             {"-o", f, "--svg", f},
             {"-o", f, "--trace", d / "sub/../same"},    // the same name by another path
             {"--trace", f, "--svg", d / "alias/same"},  // through a link to its directory
         }) {
        std::vector<std::string> args{"run", "--tree"};
        args.insert(args.end(), files.begin(), files.end());
        args.insert(args.end(), {"--", "touch", marker});
        const auto r = run_cli(args);
        EXPECT_EQ(r.code, 2) << files[0] << " " << files[2] << ": " << r.err;
        EXPECT_NE(r.err.find("name the same file"), std::string::npos) << r.err;
        EXPECT_FALSE(fs::exists(marker)) << "the command ran although its report would be lost";
        EXPECT_FALSE(fs::exists(f)) << "nothing written";
    }
    // An existing file reached through a hard link is the same file too.
    { std::ofstream(d / "a") << "x"; }
    ASSERT_EQ(::link((d / "a").c_str(), (d / "b").c_str()), 0);
    const auto r = run_cli({"run", "--tree", "-o", d / "a", "--svg", d / "b", "--", "touch", marker});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_FALSE(fs::exists(marker));
    // Distinct files are written, each whole.
    const auto ok = run_cli({"run", "--tree", "-f", "json", "-o", d / "r.json", "--trace", d / "t.json", "--svg",
                             d / "t.svg", "--", "touch", marker});
    EXPECT_EQ(ok.code, 0) << ok.err;
    EXPECT_NE(read_all(d / "r.json").find("\"processes\""), std::string::npos);
    EXPECT_NE(read_all(d / "t.json").find("traceEvents"), std::string::npos);
    EXPECT_NE(read_all(d / "t.svg").find("<svg"), std::string::npos);
}

TEST(TreeCli, AReportThatCannotBeWrittenSaysWhy) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"run", "--tree", "-f", "json", "-o", "/dev/full", "--", "true"},
             {"run", "--tree", "-f", "csv", "-o", "/dev/full", "--", "true"},
             {"run", "--tree", "-o", "/dev/full", "--", "true"},
             {"run", "--threads", "-f", "json", "-o", "/dev/full", "--", "true"},
             {"run", "-f", "json", "-o", "/dev/full", "--", "true"},
         }) {
        const auto r = run_cli(args);
        EXPECT_EQ(r.code, 125) << args[1] << " " << args[2] << ": " << r.err;
        EXPECT_NE(r.err.find("error writing the report to '/dev/full': No space left on device"), std::string::npos)
            << args[1] << " " << args[2] << " " << args[3] << ": " << r.err;
    }
}

TEST(TreeFiles, WrittenWholeReplacingARegularFile) {
    temp_dir d;
    const std::string p = d / "out.svg";
    EXPECT_EQ(check_output_file(p), "");
    EXPECT_FALSE(fs::exists(p)) << "the check leaves nothing behind";
    EXPECT_EQ(write_file_atomically(p, "first\n"), "");
    EXPECT_EQ(read_all(p), "first\n");
    const std::string big(3 << 20, 'x');
    EXPECT_EQ(write_file_atomically(p, big), "");
    EXPECT_EQ(read_all(p), big);
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.path)) ++entries;
    EXPECT_EQ(entries, 1u) << "no temporary file left";
    // A FIFO planted after the check is still not written through.
    const std::string f = d / "late";
    ASSERT_EQ(::mkfifo(f.c_str(), 0600), 0);
    EXPECT_NE(write_file_atomically(f, "x").find("is a FIFO"), std::string::npos);
    ASSERT_EQ(::stat(f.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    EXPECT_EQ(check_output_file(""), "an empty file name");
}

TEST(TreeFiles, AFullDiskIsAnError) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
    // The temporary file cannot be made in /dev (not writable as a user) or,
    // as root, is made on devtmpfs: either way the write of /dev/full itself
    // is refused as a device.
    EXPECT_NE(check_output_file("/dev/full"), "");
}

}  // namespace
