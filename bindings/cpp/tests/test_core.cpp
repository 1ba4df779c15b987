// SPDX-License-Identifier: MIT
// cw.hpp: waits on cl_event and cl::Event, timeouts, error codes and
// exceptions, wait_all and wait_any over ranges, a real kernel.
#define CWT_GROUP "core"
#include "clsetup.hpp"
#include "harness.hpp"

#include <cw.hpp>

#include <array>
#include <cstring>
#include <list>

#include <unistd.h>

using namespace std::chrono_literals;
using cwtest::host;
using cwtest::set_later;
using cwtest::user_event;

TEST_CASE(waits_for_cl_event_and_cl_Event) {
    cl::UserEvent ev = user_event();
    // Read before the setter starts, so that a loaded machine holding this
    // thread back cannot make the wait look shorter than the delay.
    auto start = std::chrono::steady_clock::now();
    std::thread t = set_later(ev, CL_COMPLETE, 20ms);
    CHECK(cw::wait(ev) == CL_COMPLETE); // cl::UserEvent
    CHECK(std::chrono::steady_clock::now() - start >= 15ms);
    t.join();
    cl_event raw = ev();
    std::error_code ec = cw::make_error_code(cw::errc::timeout);
    CHECK(cw::wait(raw, ec) == CL_COMPLETE); // cl_event, error_code form
    CHECK(!ec);
    const cl::Event &base = ev;
    CHECK(cw::wait(base) == CL_COMPLETE);
    CHECK(cw::native_handle(base) == raw);
    static_assert(cw::is_event_v<cl_event> && cw::is_event_v<cl::Event> &&
                  cw::is_event_v<cl::UserEvent> && !cw::is_event_v<int>);
}

TEST_CASE(every_strategy_waits) {
    for (int s = CW_STRATEGY_DEFAULT; s < CW_STRATEGY_COUNT; ++s) {
        cl::UserEvent ev = user_event();
        std::thread t = set_later(ev, CL_COMPLETE, 2ms);
        cw::options o;
        o.strategy = static_cast<cw::strategy>(s);
        std::error_code ec;
        cl_int status = cw::wait(ev, o, ec);
        t.join();
        if (ec || status != CL_COMPLETE)
            std::fprintf(stderr, "strategy %s: %s, %d\n", cw::name(o.strategy),
                         ec.message().c_str(), status);
        CHECK(!ec && status == CL_COMPLETE);
    }
    CHECK(std::strcmp(cw::name(cw::strategy::cooperative), "cooperative") == 0);
    CHECK(std::strcmp(cw::name(cw::strategy::auto_), "auto") == 0);
    CHECK(cw::name(static_cast<cw::strategy>(CW_STRATEGY_COUNT)) == nullptr);
}

TEST_CASE(latency_flag_is_accepted) {
    // The flag changes how auto waits, never what a wait returns: with it,
    // alone or with others, the default and auto strategies and an explicit
    // one (which ignores it) give the same results as without it.
    for (cw::strategy s : {cw::strategy::default_, cw::strategy::auto_, cw::strategy::blocking}) {
        cw::options o;
        o.strategy = s;
        o.flags = cw::latency;
        cl::UserEvent ev = user_event();
        std::thread t = set_later(ev, CL_COMPLETE, 2ms);
        std::error_code ec;
        CHECK(cw::wait(ev, o, ec) == CL_COMPLETE && !ec);
        t.join();
        o.flags = cw::latency | cw::no_flush;
        CHECK(cw::wait(ev, o, ec) == CL_COMPLETE && !ec);
        cl::UserEvent unset = user_event();
        o.flags = cw::latency;
        o.with_timeout(1ms);
        cw::wait(unset, o, ec);
        CHECK(ec == cw::errc::timeout);
        unset.setStatus(CL_COMPLETE);
    }
    static_assert(cw::latency == CW_WAIT_LATENCY);
    static_assert((cw::latency & (cw::no_flush | cw::own_callback)) == 0);
}

TEST_CASE(failed_command_keeps_its_status) {
    cl::UserEvent ev = user_event();
    std::thread t = set_later(ev, -42, 5ms);
    std::error_code ec;
    cl_int status = cw::wait(ev, ec);
    t.join();
    CHECK(ec == cw::errc::command_failed);
    CHECK(status == -42);
    bool thrown = false;
    try {
        cw::wait(ev);
    } catch (const cw::error &e) {
        thrown = true;
        CHECK(e.code() == cw::errc::command_failed);
        CHECK(e.status() == -42);
        CHECK(std::strstr(e.what(), "cw::wait") != nullptr);
    }
    CHECK(thrown);
}

TEST_CASE(timeouts_from_chrono_durations) {
    cl::UserEvent ev = user_event();
    auto start = std::chrono::steady_clock::now();
    CHECK(!cw::wait_for(ev, 20ms));
    CHECK(std::chrono::steady_clock::now() - start >= 20ms);
    CHECK(!cw::wait_for(ev, 0s)); // a poll
    CHECK(!cw::wait_for(ev, -5ms));
    CHECK(!cw::wait_until(ev, std::chrono::steady_clock::now() + 5ms));
    // A timeout in the options: the error_code form, then the throwing one.
    cw::options o;
    o.with_timeout(std::chrono::nanoseconds(1500)); // rounded up to 2 us
    CHECK(o.timeout == 2us);
    std::error_code ec;
    cl_int status = cw::wait(ev, o, ec);
    CHECK(ec == cw::errc::timeout);
    CHECK(ec == std::errc::timed_out); // the generic condition
    CHECK(status == CL_SUBMITTED || status == CL_QUEUED || status == CL_RUNNING);
    bool thrown = false;
    try {
        cw::wait(ev, o);
    } catch (const cw::error &e) {
        thrown = e.code() == cw::errc::timeout;
    }
    CHECK(thrown);
    // Completed within the timeout: true, and after completion at once.
    std::thread t = set_later(ev, CL_COMPLETE, 10ms);
    CHECK(cw::wait_for(ev, 10s));
    t.join();
    CHECK(cw::wait_for(ev, 0s));
}

// An interrupt descriptor in the options: readable, it ends the wait with
// errc::interrupted (std::errc::interrupted too); the event waits again.
TEST_CASE(interrupt_descriptor_ends_a_wait) {
    cl::UserEvent ev = user_event();
    int fds[2];
    CHECK(pipe(fds) == 0);
    CHECK(write(fds[1], "x", 1) == 1);
    cw::options o;
    o.interrupt_fd = fds[0];
    std::error_code ec;
    cl_int status = cw::wait(ev, o, ec);
    CHECK(ec == cw::errc::interrupted);
    CHECK(ec == std::errc::interrupted);
    CHECK(status == CL_SUBMITTED || status == CL_QUEUED || status == CL_RUNNING);
    ev.setStatus(CL_COMPLETE);
    CHECK(cw::wait(ev, o) == CL_COMPLETE);
    close(fds[0]);
    close(fds[1]);
}

TEST_CASE(error_category_names_cw_codes) {
    std::error_code ec = cw::errc::invalid_event;
    CHECK(std::strcmp(ec.category().name(), "cw") == 0);
    CHECK(&ec.category() == &cw::category());
    CHECK(ec.value() == CW_ERR_INVALID_EVENT);
    CHECK(ec.message() == cw_strerror(CW_ERR_INVALID_EVENT));
    CHECK(!cw::to_error_code(CW_OK));
    CHECK(cw::to_error_code(CW_ERR_NO_MEMORY) == cw::errc::no_memory);
    CHECK(cw::to_error_code(CW_ERR_NO_MEMORY) == std::errc::not_enough_memory);
    CHECK(cw::to_error_code(CW_ERR_INVALID_ARGUMENT) == std::errc::invalid_argument);
    CHECK(cw::to_error_code(CW_ERR_COMMAND_FAILED) != std::errc::timed_out);
    CHECK(cw::to_error_code(-1000).message() == "unknown error");
}

TEST_CASE(bad_input_is_an_error_not_a_crash) {
    std::error_code ec;
    cw::wait(cl_event(nullptr), ec);
    CHECK(ec == cw::errc::invalid_argument);
    cl::UserEvent ev = user_event();
    cw::options o;
    o.timeout = -1us;
    cw::wait(ev, o, ec);
    CHECK(ec == cw::errc::invalid_argument);
    o = {};
    o.check_interval = std::chrono::hours(2); // beyond uint32_t microseconds
    cw::wait(ev, o, ec);
    CHECK(ec == cw::errc::invalid_argument);
    o = {};
    o.check_interval = 2s; // over CW_CHECK_INTERVAL_US_MAX: the library says no
    cw::wait(ev, o, ec);
    CHECK(ec == cw::errc::invalid_argument);
    o = {};
    o.flags = 1u << 20;
    cw::wait(ev, o, ec);
    CHECK(ec == cw::errc::invalid_argument);
    o.flags = cw::latency | (CW_WAIT_FLAGS_ALL_ + 1u); // the lowest bit above the ones cw knows
    bool thrown = false;
    try {
        cw::wait(ev, o);
    } catch (const cw::error &e) {
        thrown = e.code() == cw::errc::invalid_argument;
    }
    CHECK(thrown);
    std::vector<cl_event> none;
    cw::wait_all(none, ec);
    CHECK(ec == cw::errc::invalid_argument);
    cw::any_result r = cw::wait_any(none, ec);
    CHECK(ec == cw::errc::invalid_argument && r.index == 0);
    ev.setStatus(CL_COMPLETE);
}

TEST_CASE(wait_all_over_ranges) {
    std::vector<cl::UserEvent> events{user_event(), user_event(), user_event()};
    std::vector<std::thread> setters;
    for (std::size_t i = 0; i < events.size(); ++i)
        setters.push_back(set_later(events[i], CL_COMPLETE, std::chrono::milliseconds(5 * i)));
    std::vector<cl_int> statuses = cw::wait_all(events);
    for (auto &t : setters)
        t.join();
    CHECK(statuses == std::vector<cl_int>(3, CL_COMPLETE));
    // Raw handles in an array and a list: the same answer.
    std::array<cl_event, 3> raw{events[0](), events[1](), events[2]()};
    CHECK(cw::wait_all(raw) == statuses);
    std::list<cl::Event> listed(events.begin(), events.end());
    CHECK(cw::wait_all(listed) == statuses);
    // One failure: every event is waited for, and the failure is reported.
    std::vector<cl::UserEvent> mixed{user_event(), user_event()};
    std::thread a = set_later(mixed[0], -7, 1ms), b = set_later(mixed[1], CL_COMPLETE, 20ms);
    std::error_code ec;
    statuses = cw::wait_all(mixed, ec);
    a.join();
    b.join();
    CHECK(ec == cw::errc::command_failed);
    CHECK(statuses[0] == -7 && statuses[1] == CL_COMPLETE);
    bool thrown = false;
    try {
        cw::wait_all(mixed);
    } catch (const cw::error &e) {
        thrown = e.code() == cw::errc::command_failed && e.status() == -7;
    }
    CHECK(thrown);
    // A timeout with one still pending.
    std::vector<cl::UserEvent> pending{user_event()};
    cw::options o;
    o.with_timeout(5ms);
    statuses = cw::wait_all(pending, o, ec);
    CHECK(ec == cw::errc::timeout && statuses[0] > 0);
    pending[0].setStatus(CL_COMPLETE);
}

TEST_CASE(wait_any_over_ranges) {
    std::vector<cl::UserEvent> events{user_event(), user_event(), user_event()};
    std::thread t = set_later(events[1], CL_COMPLETE, 10ms);
    cw::any_result r = cw::wait_any(events);
    t.join();
    CHECK(r.index == 1 && r.status == CL_COMPLETE);
    // Nothing else finished: a timeout, index = size.
    std::initializer_list<cl_event> rest{events[0](), events[2]()};
    cw::options o;
    o.with_timeout(5ms);
    std::error_code ec;
    r = cw::wait_any(rest, o, ec);
    CHECK(ec == cw::errc::timeout && r.index == 2);
    // A failure counts as finished, and throws in the throwing form.
    std::thread f = set_later(events[2], -3, 5ms);
    bool thrown = false;
    try {
        cw::wait_any(rest);
    } catch (const cw::error &e) {
        thrown = e.code() == cw::errc::command_failed && e.status() == -3;
    }
    f.join();
    CHECK(thrown);
    events[0].setStatus(CL_COMPLETE);
}

TEST_CASE(waits_for_a_kernel) {
    const char *src = "kernel void twice(global int *a) { a[get_global_id(0)] *= 2; }";
    cl::Program program(host().context, src);
    CHECK(program.build() == CL_SUCCESS);
    cl::Kernel kernel(program, "twice");
    std::vector<int> data(4096);
    for (std::size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<int>(i);
    cl::Buffer buf(host().context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                   data.size() * sizeof(int), data.data());
    kernel.setArg(0, buf);
    cl::Event done;
    CHECK(host().queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(data.size()),
                                            cl::NullRange, nullptr, &done) == CL_SUCCESS);
    CHECK(cw::wait(done) == CL_COMPLETE); // flushes the queue itself
    cl::Event read;
    CHECK(host().queue.enqueueReadBuffer(buf, CL_FALSE, 0, data.size() * sizeof(int), data.data(),
                                         nullptr, &read) == CL_SUCCESS);
    CHECK(cw::wait_for(read, 10s));
    for (std::size_t i = 0; i < data.size(); ++i)
        CHECK(data[i] == static_cast<int>(2 * i));
}
