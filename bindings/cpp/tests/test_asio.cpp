// SPDX-License-Identifier: MIT
// cw/asio.hpp: cw::async_wait with a handler, asio::use_future and (C++20)
// asio::use_awaitable; cancellation through slots; many waits on one
// descriptor; several threads running the context; a context destroyed
// with waits pending.
#define CWT_GROUP "asio"
#include "clsetup.hpp"
#include "harness.hpp"

#include <cw/asio.hpp>

#include <asio/bind_cancellation_slot.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/strand.hpp>
#include <asio/use_future.hpp>

#include <atomic>
#include <memory>

#if defined(ASIO_HAS_CO_AWAIT) && defined(__cpp_impl_coroutine)
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#define CW_TEST_COROUTINES 1
#endif

using namespace std::chrono_literals;
using cwtest::set_later;
using cwtest::user_event;

TEST_CASE(handler_runs_on_the_context) {
    asio::io_context io;
    cl::UserEvent ev = user_event();
    std::error_code got_ec = cw::errc::timeout;
    cl_int got = 0;
    std::thread::id ran_on;
    int calls = 0;
    cw::async_wait(io.get_executor(), ev, [&](std::error_code ec, cl_int status) {
        got_ec = ec;
        got = status;
        ran_on = std::this_thread::get_id();
        ++calls;
    });
    CHECK(calls == 0); // never inline
    std::thread t = set_later(ev, CL_COMPLETE, 20ms);
    io.run(); // returns once the wait is done: it held the context's work
    t.join();
    CHECK(calls == 1 && !got_ec && got == CL_COMPLETE);
    CHECK(ran_on == std::this_thread::get_id());
    // An event finished before the wait: reported by the next drain.
    io.restart();
    cw::async_wait(io.get_executor(), ev, [&](std::error_code ec, cl_int status) {
        ++calls;
        CHECK(!ec && status == CL_COMPLETE);
    });
    io.run();
    CHECK(calls == 2);
}

TEST_CASE(failures_and_bad_input_reach_the_handler) {
    asio::io_context io;
    cl::UserEvent ev = user_event();
    std::error_code failed_ec, null_ec;
    cl_int failed_status = 0;
    bool null_called = false;
    cw::async_wait(io.get_executor(), ev, [&](std::error_code ec, cl_int status) {
        failed_ec = ec;
        failed_status = status;
    });
    cw::async_wait(io.get_executor(), cl_event(nullptr), [&](std::error_code ec, cl_int) {
        null_called = true;
        null_ec = ec;
    });
    CHECK(!null_called); // posted, even for an error found at once
    std::thread t = set_later(ev, -9, 5ms);
    io.run();
    t.join();
    CHECK(failed_ec == cw::errc::command_failed && failed_status == -9);
    CHECK(null_called && null_ec == cw::errc::invalid_argument);
}

TEST_CASE(use_future) {
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::thread runner([&io] { io.run(); });
    cl::UserEvent ok = user_event(), bad = user_event();
    std::future<cl_int> f = cw::async_wait(io.get_executor(), ok, asio::use_future);
    CHECK(f.wait_for(10ms) == std::future_status::timeout);
    ok.setStatus(CL_COMPLETE);
    CHECK(f.get() == CL_COMPLETE);
#ifndef CW_TEST_TSAN
    // A failure reaches the future as an exception. Asio sets it on a
    // thread of its own, and the exception's reference count lives in
    // libstdc++, which ThreadSanitizer does not see: its suite leaves this
    // part out (the failure itself is the handler's, checked above).
    std::future<cl_int> g = cw::async_wait(io.get_executor(), bad, asio::use_future);
    bad.setStatus(-11);
    bool thrown = false;
    try {
        g.get();
    } catch (const std::system_error &e) {
        thrown = e.code() == cw::errc::command_failed;
    }
    CHECK(thrown);
#else
    bad.setStatus(-11);
#endif
    work.reset();
    runner.join();
}

TEST_CASE(cancellation_slot_aborts_one_wait) {
    asio::io_context io;
    cl::UserEvent ev = user_event();
    asio::cancellation_signal signal;
    std::error_code cancelled_ec, other_ec;
    cl_int other_status = 0;
    int cancelled_calls = 0, other_calls = 0;
    cw::async_wait(io.get_executor(), ev,
                   asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec, cl_int) {
                       cancelled_ec = ec;
                       ++cancelled_calls;
                   }));
    cw::async_wait(io.get_executor(), ev, [&](std::error_code ec, cl_int status) {
        other_ec = ec;
        other_status = status;
        ++other_calls;
    });
    asio::post(io, [&] { signal.emit(asio::cancellation_type::terminal); });
    // Run until the cancelled handler ran: the other wait is still pending.
    while (cancelled_calls == 0)
        CHECK(io.run_one() == 1);
    CHECK(cancelled_ec == asio::error::operation_aborted);
    CHECK(other_calls == 0);
    // A second emit finds nothing to cancel.
    signal.emit(asio::cancellation_type::terminal);
    ev.setStatus(CL_COMPLETE);
    io.run();
    CHECK(cancelled_calls == 1 && other_calls == 1);
    CHECK(!other_ec && other_status == CL_COMPLETE);
}

TEST_CASE(a_thousand_waits_take_no_thread) {
    asio::io_context io;
    constexpr int n = 1000;
    std::vector<cl::UserEvent> events;
    for (int i = 0; i < n; ++i)
        events.push_back(user_event());
    int threads_before = cwtest::thread_count();
    std::atomic<int> done{0}, bad{0};
    for (auto &ev : events)
        cw::async_wait(io.get_executor(), ev, [&](std::error_code ec, cl_int status) {
            if (ec || status != CL_COMPLETE)
                ++bad;
            ++done;
        });
    int threads_waiting = cwtest::thread_count();
    std::thread t([&events] {
        for (auto &ev : events)
            ev.setStatus(CL_COMPLETE);
    });
    io.run();
    t.join();
    CHECK(done == n && bad == 0);
    std::fprintf(stderr, "threads: %d before the waits, %d with %d waits pending\n", threads_before,
                 threads_waiting, n);
    CHECK(threads_waiting - threads_before < 4);
}

TEST_CASE(several_threads_run_the_context) {
    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::vector<std::thread> runners;
    for (int i = 0; i < 4; ++i)
        runners.emplace_back([&io] { io.run(); });
    constexpr int n = 200;
    std::vector<cl::UserEvent> events;
    for (int i = 0; i < n; ++i)
        events.push_back(user_event());
    std::atomic<int> done{0}, aborted{0}, started{0};
    std::vector<asio::cancellation_signal> signals(n);
    auto strand = asio::make_strand(io);
    for (int i = 0; i < n; ++i) {
        // Every other wait on a strand, with a slot its cancellation is
        // emitted on (Asio wants the emit on the handler's executor).
        if (i % 2) {
            asio::post(strand, [&, i] {
                cw::async_wait(strand, events[i],
                               asio::bind_cancellation_slot(
                                   signals[i].slot(), [&](std::error_code ec, cl_int) {
                                       ++(ec == asio::error::operation_aborted ? aborted : done);
                                   }));
                if (i % 4 == 1)
                    signals[i].emit(asio::cancellation_type::terminal);
                ++started;
            });
        } else {
            cw::async_wait(io.get_executor(), events[i], [&](std::error_code ec, cl_int status) {
                CHECK(!ec && status == CL_COMPLETE);
                ++done;
            });
            ++started;
        }
    }
    // Completed only once every wait started, so that each cancellation
    // finds its wait pending.
    while (started < n)
        std::this_thread::sleep_for(1ms);
    for (auto &ev : events)
        ev.setStatus(CL_COMPLETE);
    while (done + aborted < n)
        std::this_thread::sleep_for(1ms);
    work.reset();
    for (auto &t : runners)
        t.join();
    CHECK(aborted == n / 4 && done == n - n / 4);
}

TEST_CASE(destroyed_context_drops_pending_handlers) {
    cl::UserEvent ev = user_event();
    auto witness = std::make_shared<int>(0);
    {
        asio::io_context io;
        cw::async_wait(io.get_executor(), ev, [witness](std::error_code, cl_int) { ++*witness; });
        CHECK(witness.use_count() == 2);
        io.run_for(5ms);
    }
    CHECK(witness.use_count() == 1 && *witness == 0); // destroyed, never called
    ev.setStatus(CL_COMPLETE); // the callback touches nothing of the gone context
    CHECK(cw::wait(ev) == CL_COMPLETE);
}

#ifdef CW_TEST_COROUTINES
TEST_CASE(use_awaitable_and_awaitable_operators) {
    using namespace asio::experimental::awaitable_operators;
    asio::io_context io;
    cl::UserEvent ok = user_event(), bad = user_event(), never = user_event();
    int stage = 0;
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
            auto ex = co_await asio::this_coro::executor;
            CHECK(co_await cw::async_wait(ex, ok, asio::use_awaitable) == CL_COMPLETE);
            stage = 1;
            try {
                co_await cw::async_wait(ex, bad, asio::use_awaitable);
            } catch (const std::system_error &e) {
                if (e.code() == cw::errc::command_failed)
                    stage = 2;
            }
            // The timer wins; the wait is cancelled through its slot.
            asio::steady_timer timer(ex, 20ms);
            auto r = co_await (cw::async_wait(ex, never, asio::use_awaitable) ||
                               timer.async_wait(asio::use_awaitable));
            if (r.index() == 1)
                stage = 3;
        },
        asio::detached);
    std::thread a = set_later(ok, CL_COMPLETE, 5ms), b = set_later(bad, -2, 5ms);
    io.run(); // returns: the cancelled wait holds no work
    a.join();
    b.join();
    CHECK(stage == 3);
    never.setStatus(CL_COMPLETE);
}
#endif
