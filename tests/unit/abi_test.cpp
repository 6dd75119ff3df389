// SPDX-License-Identifier: MIT
// The ABI namespace (include/proctimes/export.h): every public declaration is
// in the inline namespace proctimes::v<PROCTIMES_ABI_VERSION>, named without
// it by programs, with it by the linker.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <typeinfo>

#include "proctimes/proctimes.hpp"

namespace {

// The mangled name of a type holds its namespaces: N9proctimes2v1...
std::string mangled_prefix() { return "9proctimes2v" + std::to_string(PROCTIMES_ABI_VERSION); }

}  // namespace

TEST(Abi, PublicTypesAreInTheVersionedNamespace) {
    static_assert(std::is_same_v<proctimes::errc, proctimes::v1::errc>);
    static_assert(std::is_same_v<proctimes::process, proctimes::v1::process>);
    static_assert(std::is_same_v<proctimes::task_times, proctimes::v1::task_times>);
    for (const char* name : {typeid(proctimes::errc).name(), typeid(proctimes::process).name(),
                             typeid(proctimes::snapshotter).name(), typeid(proctimes::child).name()})
        EXPECT_NE(std::string(name).find(mangled_prefix()), std::string::npos) << name;
}

TEST(Abi, TheMacroNamesTheNamespace) {
    // proctimes::v1 is the namespace PROCTIMES_ABI_VERSION names.
    EXPECT_EQ(PROCTIMES_ABI_VERSION, 1);
    EXPECT_NE(std::string(typeid(proctimes::v1::errc).name()).find(mangled_prefix() + "4errc"), std::string::npos);
}
