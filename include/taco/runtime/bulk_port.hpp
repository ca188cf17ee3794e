#pragma once
// The running core's way to its platform's bulk transport
// (taco::bulk_endpoint), for large carried buffers (runtime/bulk.hpp).
// The defaults are a platform without one: no shared address space and no
// staging memory, so every carried buffer goes as pieces through the channel.
// One indirect call per carried buffer of kilobytes: noise next to its copy.
#include <cstddef>

#include <taco/core_id.hpp>
#include <taco/platform/bulk_endpoint.hpp>

namespace taco::detail {

class bulk_port {
public:
    virtual std::byte* bulk_stage(core_id, std::size_t) { return nullptr; }
    virtual void bulk_release(std::byte*) {}

    /// taco::bulk_endpoint's shares_address_space(), read once per run: a
    /// field, as remote_words is.
    bool shared_address_space = false;

protected:
    ~bulk_port() = default;
};

} // namespace taco::detail
