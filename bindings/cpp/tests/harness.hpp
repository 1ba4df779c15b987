// SPDX-License-Identifier: MIT
// A tiny test harness: cases register themselves; `--list` prints their
// names (the build turns each into a ctest test), a name runs that case, no
// argument runs them all. A failed CHECK prints where and exits 1.
#ifndef CW_CPP_TEST_HARNESS_HPP
#define CW_CPP_TEST_HARNESS_HPP

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace cwtest {

struct test_case {
    std::string name;
    std::function<void()> run;
};

inline std::vector<test_case> &registry() {
    static std::vector<test_case> cases;
    return cases;
}

struct registrar {
    registrar(const char *name, std::function<void()> fn) {
        registry().push_back({name, std::move(fn)});
    }
};

[[noreturn]] inline void fail(const char *file, int line, const char *what) {
    std::fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
    std::fflush(stderr);
    std::_Exit(1);
}

} // namespace cwtest

#define CWT_CAT2(a, b) a##b
#define CWT_CAT(a, b) CWT_CAT2(a, b)
#define TEST_CASE(name)                                                                            \
    static void name();                                                                            \
    static const cwtest::registrar CWT_CAT(reg_, name)(CWT_GROUP "." #name, name);                 \
    static void name()
#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            cwtest::fail(__FILE__, __LINE__, #cond);                                               \
    } while (0)

#endif
