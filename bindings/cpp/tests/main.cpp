// SPDX-License-Identifier: MIT
// The C++ binding's test runner (harness.hpp).
#include "harness.hpp"

#include <cstring>

int main(int argc, char **argv) {
    auto &cases = cwtest::registry();
    if (argc > 1 && std::strcmp(argv[1], "--list") == 0) {
        for (const auto &c : cases)
            std::printf("%s\n", c.name.c_str());
        return 0;
    }
    int ran = 0;
    for (const auto &c : cases) {
        if (argc > 1 && c.name != argv[1])
            continue;
        std::printf("[ RUN  ] %s\n", c.name.c_str());
        std::fflush(stdout);
        c.run();
        std::printf("[  OK  ] %s\n", c.name.c_str());
        ++ran;
    }
    if (ran == 0) {
        std::fprintf(stderr, "no test case named %s\n", argc > 1 ? argv[1] : "(any)");
        return 1;
    }
    return 0;
}
