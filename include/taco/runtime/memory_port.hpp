#pragma once
// The running core's way to its platform's memory (memory_endpoint), for
// MESH. Reached through taco::detail::runtime(), so MESH never names a
// platform; a platform without shared memory reports it when first used.
// These calls copy or look up whole ranges, so one indirect call is noise
// next to them; the per-access lookup of core-private memory is an add of
// private_offset, taken once per proxy, with no call at all.
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

#include <taco/platform/memory_endpoint.hpp>
#include <taco/platform/on_chip_memory.hpp>
#include <taco/platform/remote_memory.hpp>
#include <taco/platform/versioned_memory.hpp>

namespace taco::detail {

class memory_port {
public:
    virtual std::span<std::byte> region(memory_mode) const { none(); }
    virtual std::span<std::byte> private_region() const { none(); }
    virtual void invalidate(const void*, std::size_t) { none(); }
    virtual void write_back(const void*, std::size_t) { none(); }
    virtual bool coherent() const { return true; }
    /// taco::on_chip_memory_endpoint's pieces; none where the platform has none.
    virtual std::span<const std::span<std::byte>> on_chip_regions() const { return {}; }
    /// taco::remote_memory_endpoint's word operations (only where remote_words).
    virtual std::uint64_t word(word_op, void*, std::size_t, std::uint64_t) { none(); }
    /// taco::versioned_memory_endpoint's seqlock sides (only where versioned_copies).
    virtual std::uint64_t refresh_versioned(void*, void*, std::size_t, std::uint64_t) { none(); }
    virtual std::uint64_t publish_versioned(void*, const void*, std::size_t) { none(); }

    /// This core's instance of a core-private logical address is at p + private_offset.
    std::ptrdiff_t private_offset = 0;
    /// Non-cached memory is a view per core (taco::remote_memory_endpoint):
    /// MESH's shared words go through word(). A field, not a virtual call:
    /// it is read on every acquire, and elsewhere it is false.
    bool remote_words = false;
    /// The platform does a seqlock's release and acquire of one range in
    /// one exchange each (taco::versioned_memory_endpoint), for this run.
    bool versioned_copies = false;

protected:
    ~memory_port() = default;

private:
    [[noreturn]] static void none() {
        throw std::logic_error("taco: this platform provides no shared memory (its endpoint does not model "
                               "taco::memory_endpoint), so MESH cannot run on it");
    }
};

} // namespace taco::detail
