// SPDX-License-Identifier: MIT
// cw/fiber.hpp: a fiber waiting on an event parks itself only; the thread's
// other fibers keep running. Timeouts, failures, wait_all and wait_any.
#define CWT_GROUP "fiber"
#include "clsetup.hpp"
#include "harness.hpp"

#include <cw/fiber.hpp>

#include <boost/fiber/fiber.hpp>
#include <boost/fiber/operations.hpp>

#include <atomic>

using namespace std::chrono_literals;
using cwtest::set_later;
using cwtest::user_event;

// Run `waiter` in one fiber and a counting fiber beside it on this thread;
// returns how often the counter ran while the waiter was parked. The waits
// below last 100 ms or more, so that a count of 5 or more holds on a loaded
// machine, where a wait that blocked the thread would let the counter run
// once at most.
template <class Waiter> long run_beside_counter(Waiter waiter) {
    std::atomic<bool> waiting{true};
    long counted = 0;
    boost::fibers::fiber w([&] {
        waiter();
        waiting = false;
    });
    boost::fibers::fiber c([&] {
        while (waiting) {
            ++counted;
            boost::this_fiber::sleep_for(1ms);
        }
    });
    w.join();
    c.join();
    return counted;
}

TEST_CASE(other_fibers_run_while_one_waits) {
    cl::UserEvent ev = user_event();
    std::thread t = set_later(ev, CL_COMPLETE, 200ms);
    cl_int status = 0;
    long counted = run_beside_counter([&] { status = cw::fiber::wait(ev); });
    t.join();
    CHECK(status == CL_COMPLETE);
    std::fprintf(stderr, "the other fiber ran %ld times during the 200 ms wait\n", counted);
    CHECK(counted >= 5); // a blocked thread would have let it run once
}

TEST_CASE(timeout_and_failure) {
    cl::UserEvent ev = user_event();
    bool timed_out = false;
    std::error_code ec;
    cl_int status = 0;
    long counted = run_beside_counter([&] {
        auto start = std::chrono::steady_clock::now();
        timed_out =
            !cw::fiber::wait_for(ev, 100ms) && std::chrono::steady_clock::now() - start >= 100ms;
        std::thread t = set_later(ev, -6, 20ms);
        status = cw::fiber::wait(ev, ec);
        t.join();
    });
    CHECK(timed_out);
    CHECK(ec == cw::errc::command_failed && status == -6);
    CHECK(counted >= 5);
}

TEST_CASE(wait_all_and_any_park_the_fiber) {
    std::vector<cl::UserEvent> events{user_event(), user_event(), user_event()};
    cw::any_result first{};
    std::vector<cl_int> all;
    long counted = run_beside_counter([&] {
        std::thread t = set_later(events[2], CL_COMPLETE, 60ms);
        first = cw::fiber::wait_any(events);
        t.join();
        std::thread u = set_later(events[0], CL_COMPLETE, 20ms);
        std::thread v = set_later(events[1], CL_COMPLETE, 60ms);
        all = cw::fiber::wait_all(events);
        u.join();
        v.join();
    });
    CHECK(first.index == 2 && first.status == CL_COMPLETE);
    CHECK(all == std::vector<cl_int>(3, CL_COMPLETE));
    CHECK(counted >= 5);
}

TEST_CASE(strategy_in_options_is_overridden) {
    // blocking would hold the thread in clWaitForEvents: the counter shows
    // the fiber wait still parks.
    cl::UserEvent ev = user_event();
    std::thread t = set_later(ev, CL_COMPLETE, 150ms);
    cw::options o;
    o.strategy = cw::strategy::blocking;
    long counted = run_beside_counter([&] { CHECK(cw::fiber::wait(ev, o) == CL_COMPLETE); });
    t.join();
    CHECK(counted >= 5);
}
