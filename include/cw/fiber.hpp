// SPDX-License-Identifier: MIT
// cw for Boost.Fiber (C++17): waits that park the calling fiber, not its
// thread, so the thread's other fibers run meanwhile.
//
// cw::fiber::wait, wait_all and wait_any take the same arguments and return
// the same as cw::wait, cw::wait_all and cw::wait_any (cw.hpp), but always
// wait with CW_STRATEGY_COOPERATIVE (a CL_COMPLETE callback, and the parker
// below to sleep): the other strategies would block the thread (the
// driver's clWaitForEvents, polling, a condition variable). options::parker
// and options::strategy are therefore ignored; the other options apply.
//
// The parker (cw/parker.h) is a boost::fibers mutex, condition variable and
// token: park() waits on the condition variable, which suspends the fiber
// and lets the scheduler run others; unpark(), called by the CL_COMPLETE
// callback on a driver thread, notifies it under the mutex (a Boost.Fiber
// condition variable may be notified from a thread that runs no fiber:
// Boost.Fiber's own CUDA waits do so). Timeouts and cw's failed-command
// checks reach park() as deadlines on CLOCK_MONOTONIC, which is
// std::chrono::steady_clock on Linux.
//
// Threads: call from any fiber (the thread's main context included); a
// fiber that migrates between threads (work stealing) is fine, since the
// parker lives on the waiting fiber's stack. The first callback wait on a
// platform in a process holds the thread while cw probes the driver
// (cw_wait(3), "What cw learns of the driver"); later waits only park.
#ifndef CW_FIBER_HPP
#define CW_FIBER_HPP

#include <cw.hpp>

#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/mutex.hpp>

#include <chrono>
#include <mutex>
#include <system_error>

namespace cw {
namespace fiber {

// A cw_parker that suspends the calling fiber. One fiber parks on it at a
// time (cw/parker.h); use it for one wait or one fiber's waits.
class parker {
  public:
    parker() noexcept {
        holder_.base.ops = &ops_;
        holder_.self = this;
    }
    parker(const parker &) = delete;
    parker &operator=(const parker &) = delete;

    cw_parker *get() noexcept {
        return &holder_.base;
    }

  private:
    // Standard layout with cw_parker first, so that cw's cw_parker* converts
    // back to the holder.
    struct holder {
        cw_parker base;
        parker *self;
    };

    static parker &of(cw_parker *p) noexcept {
        return *reinterpret_cast<holder *>(p)->self;
    }

    static int park(cw_parker *p, uint64_t deadline_ns) {
        parker &self = of(p);
        std::unique_lock<boost::fibers::mutex> lock(self.mutex_);
        if (deadline_ns == CW_DEADLINE_NONE) {
            self.cv_.wait(lock, [&self] { return self.token_; });
        } else {
            uint64_t now = cw_now_ns();
            auto left = std::chrono::nanoseconds(deadline_ns > now ? deadline_ns - now : 0);
            if (!self.cv_.wait_for(lock, left, [&self] { return self.token_; }))
                return CW_ERR_TIMEOUT;
        }
        self.token_ = false;
        return CW_OK;
    }

    static void unpark(cw_parker *p) {
        parker &self = of(p);
        // Notified under the mutex: once it is released, the waiter may take
        // the token, return and free the parker (cw/parker.h), so the unlock
        // is the last access.
        std::lock_guard<boost::fibers::mutex> lock(self.mutex_);
        self.token_ = true;
        self.cv_.notify_one();
    }

    inline static const cw_parker_ops ops_{&parker::park, &parker::unpark};

    holder holder_;
    boost::fibers::mutex mutex_;
    boost::fibers::condition_variable cv_;
    bool token_ = false;
};

namespace detail {
inline options cooperative(options o, parker &p) noexcept {
    o.strategy = strategy::cooperative;
    o.parker = p.get();
    return o;
}
} // namespace detail

template <class E, class = std::enable_if_t<is_event_v<E>>>
cl_int wait(const E &event, const options &o, std::error_code &ec) noexcept {
    parker p;
    return cw::wait(event, detail::cooperative(o, p), ec);
}

template <class E, class = std::enable_if_t<is_event_v<E>>>
cl_int wait(const E &event, std::error_code &ec) noexcept {
    return fiber::wait(event, options{}, ec);
}

template <class E, class = std::enable_if_t<is_event_v<E>>>
cl_int wait(const E &event, const options &o = {}) {
    parker p;
    return cw::wait(event, detail::cooperative(o, p));
}

template <class E, class Rep, class Period, class = std::enable_if_t<is_event_v<E>>>
bool wait_for(const E &event, std::chrono::duration<Rep, Period> d, const options &o = {}) {
    parker p;
    return cw::wait_for(event, d, detail::cooperative(o, p));
}

template <class Range>
std::vector<cl_int> wait_all(const Range &events, const options &o, std::error_code &ec) {
    parker p;
    return cw::wait_all(events, detail::cooperative(o, p), ec);
}

template <class Range> std::vector<cl_int> wait_all(const Range &events, const options &o = {}) {
    parker p;
    return cw::wait_all(events, detail::cooperative(o, p));
}

template <class Range>
any_result wait_any(const Range &events, const options &o, std::error_code &ec) {
    parker p;
    return cw::wait_any(events, detail::cooperative(o, p), ec);
}

template <class Range> any_result wait_any(const Range &events, const options &o = {}) {
    parker p;
    return cw::wait_any(events, detail::cooperative(o, p));
}

} // namespace fiber
} // namespace cw

#endif
