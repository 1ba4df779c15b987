// SPDX-License-Identifier: MIT
// cw for C++17: waits on cl_event and on any OpenCL C++ event wrapper, with
// std::chrono timeouts, std::error_code and exceptions. Header-only over the C
// API (cw.h); link the library as a C program does (cw::cw, cw-opencl.pc).
//
// Threads, lifetimes and error codes are those of the C calls each function
// names (cw/wait.h, cw/waitmany.h): any thread may wait on any event, the
// event must stay valid for the call, and what cw keeps of an event
// afterwards is described at cw_event_forget.
#ifndef CW_HPP
#define CW_HPP

#include <cw.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace cw {

// cw_error as a std::error_code enum: compare a std::error_code with these.
enum class errc {
    invalid_argument = CW_ERR_INVALID_ARGUMENT,
    invalid_event = CW_ERR_INVALID_EVENT,
    timeout = CW_ERR_TIMEOUT,
    command_failed = CW_ERR_COMMAND_FAILED,
    opencl = CW_ERR_OPENCL,
    no_memory = CW_ERR_NO_MEMORY,
    unsupported = CW_ERR_UNSUPPORTED,
    no_resources = CW_ERR_NO_RESOURCES,
    interrupted = CW_ERR_INTERRUPTED,
};

} // namespace cw

namespace std {
template <> struct is_error_code_enum<cw::errc> : true_type {};
} // namespace std

namespace cw {

namespace detail {
class category_impl final : public std::error_category {
  public:
    const char *name() const noexcept override {
        return "cw";
    }
    std::string message(int code) const override {
        return cw_strerror(code);
    }
    // So that generic checks (ec == std::errc::timed_out) also work.
    std::error_condition default_error_condition(int code) const noexcept override {
        switch (code) {
        case CW_ERR_INVALID_ARGUMENT:
            return std::errc::invalid_argument;
        case CW_ERR_TIMEOUT:
            return std::errc::timed_out;
        case CW_ERR_NO_MEMORY:
            return std::errc::not_enough_memory;
        case CW_ERR_UNSUPPORTED:
            return std::errc::operation_not_supported;
        case CW_ERR_INTERRUPTED:
            return std::errc::interrupted;
        default:
            return std::error_condition(code, *this);
        }
    }
};
} // namespace detail

// The category of cw's codes ("cw"); one object per program (an inline
// variable's static), so comparisons work across translation units.
inline const std::error_category &category() noexcept {
    static const detail::category_impl instance;
    return instance;
}

inline std::error_code make_error_code(errc e) noexcept {
    return std::error_code(static_cast<int>(e), category());
}

// A cw return code (0 or a negative cw_error) as a std::error_code; 0 is
// success (a default-constructed, false error_code).
inline std::error_code to_error_code(int rc) noexcept {
    return rc == CW_OK ? std::error_code() : std::error_code(rc, category());
}

// What the throwing overloads throw: the cw code, and the OpenCL status the
// C call handed back (the command's negative execution status with
// errc::command_failed, the OpenCL error with invalid_event and opencl).
class error : public std::system_error {
  public:
    error(std::error_code code, cl_int status, const char *what)
        : std::system_error(code, what), status_(status) {}
    cl_int status() const noexcept {
        return status_;
    }

  private:
    cl_int status_;
};

enum class strategy : int {
    default_ = CW_STRATEGY_DEFAULT,
    blocking = CW_STRATEGY_BLOCKING,
    cooperative = CW_STRATEGY_COOPERATIVE,
    poll = CW_STRATEGY_POLL,
    cooperative_wake_locked = CW_STRATEGY_COOPERATIVE_WAKE_LOCKED,
    cooperative_noyield = CW_STRATEGY_COOPERATIVE_NOYIELD,
    pthread = CW_STRATEGY_PTHREAD,
    spin_park = CW_STRATEGY_SPIN_PARK,
    backoff_poll = CW_STRATEGY_BACKOFF_POLL,
    auto_ = CW_STRATEGY_AUTO,
};

// Flags for options::flags (cw/wait.h says what each does).
inline constexpr unsigned no_flush = CW_WAIT_NO_FLUSH;
inline constexpr unsigned own_callback = CW_WAIT_OWN_CALLBACK;
// The default and auto strategies prefer a short time from the command's end
// to the wait's return over a small CPU cost; same results and error codes.
inline constexpr unsigned latency = CW_WAIT_LATENCY;

// cw_wait_options with chrono durations. Every default is the C default:
// cw's default strategy, flush, no timeout, default check interval and spin,
// a futex parker of the calling thread. Durations are rounded up to whole
// microseconds; a negative one is errc::invalid_argument.
struct options {
    cw::strategy strategy = cw::strategy::default_;
    unsigned flags = 0;
    std::chrono::microseconds timeout{0}; // 0: none
    std::chrono::microseconds check_interval{0};
    std::chrono::microseconds spin{0};
    cw_parker *parker = nullptr;
    // A descriptor that ends the wait with errc::interrupted once readable
    // (CW_WAIT_INTERRUPT_FD, which cw/wait.h describes); -1: none.
    int interrupt_fd = -1;

    // Set the timeout from any duration (rounded up: a wait never ends
    // before it); returns *this for chaining.
    template <class Rep, class Period> options &with_timeout(std::chrono::duration<Rep, Period> d) {
        timeout = std::chrono::ceil<std::chrono::microseconds>(d);
        // 0 means "no timeout" to cw: a positive duration under 1 us is 1 us.
        if (timeout.count() == 0 && d.count() > 0)
            timeout = std::chrono::microseconds(1);
        return *this;
    }
};

namespace detail {
// A duration that does not fit the C field is made invalid rather than
// silently truncated.
inline bool to_u32(std::chrono::microseconds d, uint32_t &out) noexcept {
    if (d.count() < 0 || d.count() > std::numeric_limits<uint32_t>::max())
        return false;
    out = static_cast<uint32_t>(d.count());
    return true;
}

inline bool to_c(const options &o, cw_wait_options &c) noexcept {
    c = cw_wait_options{};
    c.strategy = static_cast<cw_strategy>(o.strategy);
    c.flags = o.flags;
    c.timeout_us = static_cast<int64_t>(o.timeout.count());
    c.parker = o.parker;
    if (o.interrupt_fd >= 0) {
        c.flags |= CW_WAIT_INTERRUPT_FD;
        c.interrupt_fd = o.interrupt_fd;
    }
    return to_u32(o.check_interval, c.check_interval_us) && to_u32(o.spin, c.spin_us);
}

// The cl_event of a cl_event, or of any wrapper whose get() yields one
// (Khronos' cl::Event and cl::UserEvent, Boost.Compute's event).
inline cl_event handle(cl_event e) noexcept {
    return e;
}
template <class E, class = std::enable_if_t<
                       std::is_convertible_v<decltype(std::declval<const E &>().get()), cl_event>>>
cl_event handle(const E &e) noexcept(noexcept(e.get())) {
    return e.get();
}

template <class Range> std::vector<cl_event> handles(const Range &events) {
    std::vector<cl_event> out;
    using std::begin;
    using std::end;
    for (auto it = begin(events); it != end(events); ++it)
        out.push_back(handle(*it));
    return out;
}

[[noreturn]] inline void raise(int rc, cl_int status, const char *what) {
    throw error(to_error_code(rc), status, what);
}
} // namespace detail

// True for cl_event and for the wrappers detail::handle accepts.
template <class E, class = void> struct is_event : std::false_type {};
template <class E>
struct is_event<E, std::void_t<decltype(detail::handle(std::declval<const E &>()))>>
    : std::true_type {};
template <class E> inline constexpr bool is_event_v = is_event<E>::value;

// The cl_event under `e` (itself for a cl_event).
template <class E, class = std::enable_if_t<is_event_v<E>>> cl_event native_handle(const E &e) {
    return detail::handle(e);
}

// ---- One event (cw_wait) ----

// Wait for `event`. Returns the execution status cw_wait handed back and
// sets `ec` to the cw code (cleared on success): CL_COMPLETE with no error;
// the command's negative status with errc::command_failed; the last status
// read with errc::timeout (o.timeout); the OpenCL error with invalid_event
// or opencl.
template <class E, class = std::enable_if_t<is_event_v<E>>>
cl_int wait(const E &event, const options &o, std::error_code &ec) noexcept {
    cw_wait_options c;
    if (!detail::to_c(o, c)) {
        ec = make_error_code(errc::invalid_argument);
        return CL_SUCCESS;
    }
    cl_int status = CL_SUCCESS;
    ec = to_error_code(cw_wait(detail::handle(event), &c, &status));
    return status;
}

template <class E, class = std::enable_if_t<is_event_v<E>>>
cl_int wait(const E &event, std::error_code &ec) noexcept {
    return cw::wait(event, options{}, ec);
}

// Throwing form: returns CL_COMPLETE, or throws cw::error (a timeout in
// `o` included: e.code() == cw::errc::timeout).
template <class E, class = std::enable_if_t<is_event_v<E>>>
cl_int wait(const E &event, const options &o = {}) {
    std::error_code ec;
    cl_int status = cw::wait(event, o, ec);
    if (ec)
        detail::raise(ec.value(), status, "cw::wait");
    return status;
}

// Wait at most `d`: true when the command completed, false when `d` passed
// first; any other outcome throws cw::error (a failed command included).
template <class E, class Rep, class Period, class = std::enable_if_t<is_event_v<E>>>
bool wait_for(const E &event, std::chrono::duration<Rep, Period> d, options o = {}) {
    if (d <= d.zero())
        o.flags |= CW_WAIT_POLL; // one look, not "no timeout"
    else
        o.with_timeout(d);
    std::error_code ec;
    cl_int status = cw::wait(event, o, ec);
    if (ec == errc::timeout)
        return false;
    if (ec)
        detail::raise(ec.value(), status, "cw::wait_for");
    return true;
}

// As wait_for, until a point of any clock.
template <class E, class Clock, class Dur, class = std::enable_if_t<is_event_v<E>>>
bool wait_until(const E &event, std::chrono::time_point<Clock, Dur> t, options o = {}) {
    return cw::wait_for(event, t - Clock::now(), std::move(o));
}

// ---- Several events (cw_wait_all, cw_wait_any) ----
// `events` is any range (vector, array, initializer_list, ...) of cl_event
// or of event wrappers. The handles are copied into one std::vector, the
// only allocation (std::bad_alloc is the one exception the error_code
// forms can throw).

// Wait until every event finished. Returns each event's status (see
// cw_wait_all: CL_COMPLETE, a failed command's negative status, the OpenCL
// error, or with errc::timeout the last status read); `ec` as cw_wait_all's
// return, errc::command_failed when every event finished and one failed.
template <class Range>
std::vector<cl_int> wait_all(const Range &events, const options &o, std::error_code &ec) {
    std::vector<cl_event> h = detail::handles(events);
    std::vector<cl_int> statuses(h.size(), CL_SUCCESS);
    cw_wait_options c;
    if (!detail::to_c(o, c)) {
        ec = make_error_code(errc::invalid_argument);
        return statuses;
    }
    ec = to_error_code(cw_wait_all(h.data(), h.size(), &c, statuses.data()));
    return statuses;
}

template <class Range> std::vector<cl_int> wait_all(const Range &events, std::error_code &ec) {
    return cw::wait_all(events, options{}, ec);
}

// Throwing form: throws cw::error on any failure; its status() is the first
// negative status among the events (the failed command's, or the OpenCL
// error), or CL_SUCCESS where none is negative (timeout, bad input).
template <class Range> std::vector<cl_int> wait_all(const Range &events, const options &o = {}) {
    std::error_code ec;
    std::vector<cl_int> statuses = cw::wait_all(events, o, ec);
    if (ec) {
        cl_int first = CL_SUCCESS;
        for (cl_int s : statuses)
            if (s < 0) {
                first = s;
                break;
            }
        detail::raise(ec.value(), first, "cw::wait_all");
    }
    return statuses;
}

// Which event cw_wait_any found finished, and its status.
struct any_result {
    std::size_t index;
    cl_int status;
};

// Wait until at least one event finished; `ec` as cw_wait_any's return
// (errc::command_failed: events[index] failed, which counts as finished).
// index is the size of the range on timeout and bad input.
template <class Range>
any_result wait_any(const Range &events, const options &o, std::error_code &ec) {
    std::vector<cl_event> h = detail::handles(events);
    any_result r{h.size(), CL_SUCCESS};
    cw_wait_options c;
    if (!detail::to_c(o, c)) {
        ec = make_error_code(errc::invalid_argument);
        return r;
    }
    ec = to_error_code(cw_wait_any(h.data(), h.size(), &c, &r.index, &r.status));
    return r;
}

template <class Range> any_result wait_any(const Range &events, std::error_code &ec) {
    return cw::wait_any(events, options{}, ec);
}

// Throwing form: returns the first completed event; a failed one, a timeout
// and the rest throw cw::error with the status cw_wait_any handed back.
template <class Range> any_result wait_any(const Range &events, const options &o = {}) {
    std::error_code ec;
    any_result r = cw::wait_any(events, o, ec);
    if (ec)
        detail::raise(ec.value(), r.status, "cw::wait_any");
    return r;
}

// Drop what cw keeps of `event` (cw_event_forget).
template <class E, class = std::enable_if_t<is_event_v<E>>> void forget(const E &event) noexcept {
    cw_event_forget(detail::handle(event));
}

// Stable short name of a strategy ("default", "cooperative", ...); nullptr
// outside the enum.
inline const char *name(strategy s) noexcept {
    return cw_strategy_name(static_cast<cw_strategy>(s));
}

} // namespace cw

#endif
