#pragma once
// The running core's way to its platform's bulk transport
// (taco::bulk_endpoint, taco::bulk_message_endpoint), for large carried
// buffers (runtime/bulk.hpp).
// The defaults are a platform without one: no shared address space and no
// staging memory, so every carried buffer goes as pieces through the channel.
// One indirect call per carried buffer of kilobytes: noise next to its copy.
#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

#include <taco/core_id.hpp>
#include <taco/platform/bulk_endpoint.hpp>
#include <taco/platform/bulk_message_endpoint.hpp>

namespace taco::detail {

class bulk_port {
public:
    virtual std::byte* bulk_stage(core_id, std::size_t) { return nullptr; }
    virtual void bulk_release(std::byte*) {}
    /// taco::bulk_message_endpoint's two sides.
    virtual bool bulk_send(core_id, std::span<const std::byte>) { return false; }
    virtual void bulk_receive(core_id, std::vector<std::byte>&, std::size_t) {
        throw std::logic_error("taco: bytes sent as a bulk message on a platform without bulk messages");
    }

    /// taco::bulk_endpoint's shares_address_space(), read once per run: a
    /// field, as remote_words is.
    bool shared_address_space = false;

protected:
    ~bulk_port() = default;
};

} // namespace taco::detail
