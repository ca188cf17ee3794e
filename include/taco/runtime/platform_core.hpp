#pragma once
// The one place where a concrete platform meets the runtime: the core's
// channel and memory operations, forwarded to the platform's endpoint. The
// calls into the endpoint are static (poll inlines dispatch into the
// platform's receive loop); the runtime reaches them through one virtual
// call per send step and per poll round.
#include <chrono>
#include <cstddef>
#include <span>

#include <taco/platform/bulk_endpoint.hpp>
#include <taco/platform/platform.hpp>
#include <taco/platform/preemption_endpoint.hpp>
#include <taco/platform/versioned_memory.hpp>
#include <taco/runtime/core.hpp>
#include <taco/runtime/message.hpp>

namespace taco::detail {

template <platform P>
class platform_core final : public core {
public:
    using endpoint_type = typename P::endpoint;

    platform_core(endpoint_type& ep, policy scheduling, const scheduling_tiers& tiers = {})
        : core(ep.id(), ep.core_count(), scheduling, tiers), ep_(ep) {
        if constexpr (memory_endpoint<endpoint_type>) private_offset = ep.private_offset();
        remote_words = remote_memory_endpoint<endpoint_type>;
        if constexpr (versioned_memory_endpoint<endpoint_type>) versioned_copies = ep.versioned_copies();
        if constexpr (bulk_endpoint<endpoint_type>) shared_address_space = ep.shares_address_space();
    }
    ~platform_core() override { release_state(); }

    /// The platform's endpoint of this core (tests that look behind the platform).
    endpoint_type& endpoint() noexcept { return ep_; }

    void signal_urgent(core_id dest) override { ep_.signal_urgent(dest); }
    void pause() override { ep_.pause(); }

    std::span<std::byte> region(memory_mode m) const override {
        if constexpr (memory_endpoint<endpoint_type>) return ep_.region(m);
        else return memory_port::region(m);
    }
    std::span<std::byte> private_region() const override {
        if constexpr (memory_endpoint<endpoint_type>) return ep_.private_region();
        else return memory_port::private_region();
    }
    void invalidate(const void* p, std::size_t n) override {
        if constexpr (memory_endpoint<endpoint_type>) ep_.invalidate(p, n);
        else memory_port::invalidate(p, n);
    }
    void write_back(const void* p, std::size_t n) override {
        if constexpr (memory_endpoint<endpoint_type>) ep_.write_back(p, n);
        else memory_port::write_back(p, n);
    }
    bool coherent() const override {
        if constexpr (memory_endpoint<endpoint_type>) return ep_.coherent();
        else return memory_port::coherent();
    }
    std::uint64_t word(word_op op, void* w, std::size_t bytes, std::uint64_t operand) override {
        if constexpr (remote_memory_endpoint<endpoint_type>) return ep_.word(op, w, bytes, operand);
        else return memory_port::word(op, w, bytes, operand);
    }
    std::uint64_t refresh_versioned(void* version, void* p, std::size_t n, std::uint64_t seen) override {
        if constexpr (versioned_memory_endpoint<endpoint_type>) return ep_.refresh_versioned(version, p, n, seen);
        else return memory_port::refresh_versioned(version, p, n, seen);
    }
    std::uint64_t publish_versioned(void* version, const void* p, std::size_t n) override {
        if constexpr (versioned_memory_endpoint<endpoint_type>) return ep_.publish_versioned(version, p, n);
        else return memory_port::publish_versioned(version, p, n);
    }
    std::span<const std::span<std::byte>> on_chip_regions() const override {
        if constexpr (on_chip_memory_endpoint<endpoint_type>) return ep_.on_chip_regions();
        else return memory_port::on_chip_regions();
    }

    std::byte* bulk_stage(core_id dest, std::size_t n) override {
        if constexpr (bulk_endpoint<endpoint_type>) return ep_.bulk_stage(dest, n);
        else return bulk_port::bulk_stage(dest, n);
    }
    void bulk_release(std::byte* p) override {
        if constexpr (bulk_endpoint<endpoint_type>) ep_.bulk_release(p);
        else bulk_port::bulk_release(p);
    }
    bool bulk_send(core_id dest, std::span<const std::byte> bytes) override {
        if constexpr (bulk_message_endpoint<endpoint_type>) return ep_.bulk_send(dest, bytes);
        else return bulk_port::bulk_send(dest, bytes);
    }
    void bulk_receive(core_id source, std::vector<std::byte>& into, std::size_t n) override {
        if constexpr (bulk_message_endpoint<endpoint_type>) ep_.bulk_receive(source, into, n);
        else bulk_port::bulk_receive(source, into, n);
    }

protected:
    std::byte* try_acquire(core_id dest) override { return ep_.try_acquire(dest); }
    void publish(core_id dest, std::size_t length) override { ep_.publish(dest, length); }
    std::size_t poll_channels() override {
        return ep_.poll([](std::byte* m) { dispatch(m); }); // a lambda, so the platform inlines it
    }
    void idle(std::chrono::nanoseconds limit) override { ep_.idle(limit); }
    bool take_urgent() override { return ep_.take_urgent(); }
    void allow_interrupts(bool on) override {
        if constexpr (preemption_endpoint<endpoint_type>) ep_.allow_preemption(on);
    }
    void waiting_for(core_id peer, std::size_t backlog) override {
        if constexpr (backpressure_endpoint<endpoint_type>) ep_.waiting_for(peer, backlog);
    }
    std::size_t poll_channels_but(core_id peer, std::size_t backlog) override {
        if constexpr (backpressure_endpoint<endpoint_type>) {
            if (!ep_.must_poll(peer, backlog)) return ep_.poll_except([](std::byte* m) { dispatch(m); }, peer);
        }
        return poll_channels();
    }

private:
    endpoint_type& ep_;
};

} // namespace taco::detail
