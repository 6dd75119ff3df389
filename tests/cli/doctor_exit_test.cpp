// SPDX-License-Identifier: MIT
// `proctimes doctor` shows the exit machinery's failure counts
// (exit_records_status(failures)): "none" while there are none.
#include <gtest/gtest.h>

#include <string>

#include "proctimes/exit.hpp"
#include "run_cli.hpp"

TEST(DoctorExit, ShowsTheExitMonitorsFailureCounts) {
    proctimes::exit_failures f;
    (void)proctimes::exit_records_status(f);
    const auto r = cli_testing::run_cli({"doctor"});
    EXPECT_EQ(r.code, 0) << r.err;
    const auto at = r.out.find("exit monitor failures: ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
    if (f.total() == 0)
        EXPECT_EQ(line, "exit monitor failures: none");
    else
        EXPECT_NE(line, "exit monitor failures: none") << "counted: " << f.total();
}
