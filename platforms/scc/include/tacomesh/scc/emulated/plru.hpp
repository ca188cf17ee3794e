#pragma once
// The pseudo-LRU replacement of the SCC's 4-way caches (Xipx thesis,
// Appendix B.1; the L1 uses the same policy, B.3): three bits per set,
// t (which half was used less recently), l (which way of 0/1), r (which
// of 2/3). Shared by the L2 that carries DCM data (hardware.hpp) and the
// tag-only caches that price plain loads and stores (memory_model.hpp), so
// that the flush routine's four reads evict the same way in both.
#include <cstddef>
#include <cstdint>

namespace tacomesh::scc::emulated::detail {

struct plru4 {
    static constexpr std::uint8_t bit_t = 4, bit_l = 2, bit_r = 1;

    static constexpr std::size_t victim(std::uint8_t s) noexcept {
        return !(s & bit_t) ? (s & bit_l ? 1 : 0) : (s & bit_r ? 3 : 2);
    }
    static constexpr void touch(std::uint8_t& s, std::size_t way) noexcept {
        if (way < 2) s = std::uint8_t(bit_t | (way == 0 ? bit_l : 0) | (s & bit_r));
        else s = std::uint8_t((s & bit_l) | (way == 2 ? bit_r : 0));
    }
};

} // namespace tacomesh::scc::emulated::detail
