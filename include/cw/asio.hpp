// SPDX-License-Identifier: MIT
// cw for standalone Asio (1.22 or later, C++17): cw::async_wait(executor,
// event, token) completes with (std::error_code, cl_int status) through any
// completion token: a handler, asio::use_future, asio::use_awaitable.
//
// How it waits: one cw notifier (cw/notify.h) per Asio execution context,
// its descriptor on a posix::stream_descriptor. Each wait is one watch on
// the notifier, so a thousand waits take no thread and one descriptor; the
// descriptor is polled only while waits are pending. Its readiness handler
// drains the notifier and posts each finished wait's handler to the
// handler's associated executor (never inline in async_wait).
//
// Completion: ec is cleared and status is CL_COMPLETE when the command
// completed; cw::errc::command_failed with its negative execution status;
// cw::errc::invalid_event or opencl with the OpenCL error; no_memory,
// no_resources; asio::error::operation_aborted when cancelled.
//
// Cancellation: per operation, through the handler's associated
// cancellation slot (asio::bind_cancellation_slot, awaitable operators,
// parallel groups). Every type (terminal, partial, total) is honoured, since
// abandoning a wait changes nothing; the handler then gets
// operation_aborted, and no result of that wait comes later. Emit the
// signal on the handler's executor, as Asio requires of every operation.
//
// Lifetimes: the event may be released once async_wait returns (the watch
// holds a reference until it is drained). Pending waits keep their
// executors' work, so io_context::run() does not return under them. When
// the context is destroyed, pending handlers are destroyed without being
// called, as Asio does with its own operations.
//
// Threads: any thread may call async_wait and emit cancellations; the
// context may be run by several threads. The descriptor's handler runs on
// the executor of the first async_wait in its context (a strand there
// serialises nothing but the drains).
#ifndef CW_ASIO_HPP
#define CW_ASIO_HPP

#include <cw.hpp>

#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/any_io_executor.hpp>
#include <asio/error.hpp>
#include <asio/execution.hpp>
#include <asio/execution_context.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>
#include <asio/posix/stream_descriptor.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace cw {
namespace detail {

// A pending wait, type-erased so that one service serves every handler type.
class asio_op {
  public:
    virtual ~asio_op() = default;
    // Post the handler with this outcome and delete the operation.
    virtual void complete(std::error_code ec, cl_int status) = 0;
};

template <class Handler, class IoExecutor> class asio_op_impl final : public asio_op {
  public:
    using executor_type = asio::associated_executor_t<Handler, IoExecutor>;

    asio_op_impl(Handler &&h, const IoExecutor &io_ex)
        : handler_(std::move(h)),
          work_(asio::make_work_guard(asio::get_associated_executor(handler_, io_ex))) {}

    void complete(std::error_code ec, cl_int status) override {
        executor_type ex = work_.get_executor();
        auto slot = asio::get_associated_cancellation_slot(handler_);
        // Posted, so that the handler never runs inside async_wait, inside a
        // drain holding the service's lock, or inside the cancellation
        // handler that the slot's clear() would destroy under itself.
        asio::post(ex, [h = std::move(handler_), slot, ec, status]() mutable {
            if (slot.is_connected())
                slot.clear();
            std::move(h)(ec, status);
        });
        delete this; // the post holds the executor's work from here on
    }

  private:
    Handler handler_;
    asio::executor_work_guard<executor_type> work_;
};

// One notifier per execution context, and the waits pending on it.
class asio_service final : public asio::execution_context::service {
  public:
    inline static asio::execution_context::id id;

    explicit asio_service(asio::execution_context &ctx) : asio::execution_context::service(ctx) {
        create_rc_ = cw_notifier_create(0, &notifier_);
    }
    ~asio_service() override {
        shutdown();
    }

    // Watch `event` for `op` under `tag` (from new_tag()).
    template <class IoExecutor>
    void start(asio_op *op, const IoExecutor &io_ex, cl_event event, uint64_t tag) {
        std::unique_lock<std::mutex> lock(mutex_);
        if (!notifier_) {
            lock.unlock();
            op->complete(to_error_code(create_rc_), CL_SUCCESS);
            return;
        }
        cl_int err = CL_SUCCESS;
        int rc = cw_notifier_watch(notifier_, event, tag, &err);
        if (rc != CW_OK) {
            lock.unlock();
            op->complete(to_error_code(rc), err);
            return;
        }
        ops_.emplace(tag, op);
        if (!descriptor_)
            // Untracked: the pending operations hold the context's work,
            // the descriptor's own poll must not.
            descriptor_.emplace(asio::prefer(asio::any_io_executor(io_ex),
                                             asio::execution::outstanding_work.untracked),
                                cw_notifier_fd(notifier_));
        arm_locked();
    }

    // A tag never used before in this context. The cancellation handler is
    // installed with it before the watch starts, so that it is in place
    // before the operation can complete.
    uint64_t new_tag() noexcept {
        return next_tag_.fetch_add(1, std::memory_order_relaxed);
    }

    void cancel(uint64_t tag) {
        asio_op *op = nullptr;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = ops_.find(tag);
            if (it == ops_.end() || cw_notifier_cancel(notifier_, tag) != CW_OK)
                return; // finished already: its handler is on its way
            op = it->second;
            ops_.erase(it);
        }
        op->complete(asio::error::operation_aborted, CL_SUCCESS);
    }

  private:
    void shutdown() override {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto &entry : ops_)
            destroy_without_call(entry.second);
        ops_.clear();
        if (descriptor_) {
            // The descriptor is the notifier's: cw closes it.
            descriptor_->release();
            descriptor_.reset();
        }
        if (notifier_) {
            cw_notifier_destroy(notifier_);
            notifier_ = nullptr;
            create_rc_ = CW_ERR_INVALID_ARGUMENT; // a wait after shutdown
        }
    }

    static void destroy_without_call(asio_op *op) {
        delete op;
    }

    // Poll the descriptor while waits are pending; one poll at a time.
    void arm_locked() {
        if (armed_ || ops_.empty() || !descriptor_)
            return;
        armed_ = true;
        descriptor_->async_wait(asio::posix::descriptor_base::wait_read,
                                [this](std::error_code ec) { on_readable(ec); });
    }

    void on_readable(std::error_code ec) {
        struct done {
            asio_op *op;
            int rc;
            cl_int status;
        };
        std::vector<done> finished;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            armed_ = false;
            if (ec == asio::error::operation_aborted || !notifier_)
                return;
            cw_notifier_result results[64];
            // More than 64 results leave the descriptor readable: the next
            // poll comes back at once for the rest.
            std::size_t k = cw_notifier_drain(notifier_, results, 64);
            for (std::size_t i = 0; i < k; ++i) {
                auto it = ops_.find(results[i].tag);
                if (it == ops_.end())
                    continue;
                finished.push_back({it->second, results[i].rc, results[i].status});
                ops_.erase(it);
            }
            arm_locked();
        }
        for (const done &d : finished)
            d.op->complete(to_error_code(d.rc), d.status);
    }

    std::mutex mutex_;
    cw_notifier *notifier_ = nullptr;
    int create_rc_ = CW_OK;
    std::optional<asio::posix::stream_descriptor> descriptor_;
    bool armed_ = false;
    std::atomic<uint64_t> next_tag_{1};
    std::unordered_map<uint64_t, asio_op *> ops_;
};

// Installed in the handler's cancellation slot.
struct asio_canceller {
    asio_service *service;
    uint64_t tag;
    void operator()(asio::cancellation_type type) const {
        if ((type & (asio::cancellation_type::terminal | asio::cancellation_type::partial |
                     asio::cancellation_type::total)) != asio::cancellation_type::none)
            service->cancel(tag);
    }
};

template <class IoExecutor> struct asio_initiate_wait {
    IoExecutor io_ex;
    using executor_type = IoExecutor;
    const executor_type &get_executor() const noexcept {
        return io_ex;
    }

    template <class Handler> void operator()(Handler &&handler, cl_event event) const {
        asio::execution_context &ctx = asio::query(io_ex, asio::execution::context);
        asio_service &svc = asio::use_service<asio_service>(ctx);
        uint64_t tag = svc.new_tag();
        auto slot = asio::get_associated_cancellation_slot(handler);
        if (slot.is_connected())
            slot.template emplace<asio_canceller>(asio_canceller{&svc, tag});
        using op_type = asio_op_impl<std::decay_t<Handler>, IoExecutor>;
        svc.start(new op_type(std::forward<Handler>(handler), io_ex), io_ex, event, tag);
    }
};

} // namespace detail

// Wait asynchronously for `event` (a cl_event or an event wrapper, see
// cw::is_event) on `ex`'s execution context. The completion signature is
// void(std::error_code, cl_int); with asio::use_future the future holds the
// status (or a std::system_error), with asio::use_awaitable co_await
// returns it (or throws std::system_error).
template <class Executor, class E, class Token = asio::default_completion_token_t<Executor>,
          class = std::enable_if_t<is_event_v<E>>>
auto async_wait(const Executor &ex, const E &event, Token &&token = Token()) {
    return asio::async_initiate<Token, void(std::error_code, cl_int)>(
        detail::asio_initiate_wait<Executor>{ex}, token, native_handle(event));
}

} // namespace cw

#endif
