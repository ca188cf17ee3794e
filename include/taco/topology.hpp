#pragma once
// Multicast trees over the members of an object group (CCI paper, section
// II.B; k-ary trees as in OC-Bcast, broadcast paper). The tree is laid over
// ranks 0..n-1 (rank = position in the member list) and numbered in
// pre-order, so every subtree holds a contiguous range of ranks: merging a
// node's own value and then its children's subtrees in order combines all
// values in rank order, whatever the arity.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace taco {

struct topology {
    enum class shape : std::uint8_t { flat, kary, binomial };
    shape kind = shape::binomial;
    std::uint32_t arity = 2; // for kary

    /// The root sends to every member itself (depth 1, root does all the work).
    static constexpr topology flat() noexcept { return {shape::flat, 0}; }
    /// Every node has up to k children (depth ~ log_k n).
    static constexpr topology kary(std::uint32_t k) noexcept { return {shape::kary, k}; }
    /// Binomial tree (depth log2 n, the root has log2 n children).
    static constexpr topology binomial() noexcept { return {shape::binomial, 0}; }
};

namespace detail {

/// children[r] = the children ranks of rank r, in increasing rank order.
inline std::vector<std::vector<std::uint32_t>> tree_layout(std::uint32_t n, topology t) {
    if (t.kind == topology::shape::kary && t.arity < 1)
        throw std::invalid_argument("taco::topology::kary: the arity must be at least 1");
    std::vector<std::vector<std::uint32_t>> children(n);
    switch (t.kind) {
    case topology::shape::flat:
        for (std::uint32_t r = 1; r < n; ++r) children[0].push_back(r);
        break;
    case topology::shape::binomial:
        // children of r: r + 2^j for 2^j below r's lowest set bit (all j for
        // the root); the subtree of r + 2^j is [r + 2^j, r + 2^(j+1)).
        for (std::uint32_t r = 0; r < n; ++r) {
            const std::uint64_t limit = r == 0 ? (std::uint64_t(1) << 32) : (r & (~r + 1));
            for (std::uint64_t step = 1; step < limit && r + step < n; step <<= 1)
                children[r].push_back(std::uint32_t(r + step));
        }
        break;
    case topology::shape::kary: {
        // Heap-shaped tree (position p has children k*p+1 .. k*p+k), renumbered
        // in pre-order.
        const std::uint64_t k = t.arity;
        std::vector<std::uint32_t> rank_of(n);
        std::uint32_t next = 0;
        std::vector<std::uint64_t> stack{0};
        while (!stack.empty()) {
            const std::uint64_t p = stack.back();
            stack.pop_back();
            rank_of[p] = next++;
            for (std::uint64_t c = k * p + k; c >= k * p + 1; --c)
                if (c < n) stack.push_back(c);
        }
        for (std::uint64_t p = 0; p < n; ++p)
            for (std::uint64_t c = k * p + 1; c <= k * p + k && c < n; ++c)
                children[rank_of[p]].push_back(rank_of[c]);
        break;
    }
    }
    return children;
}

/// Each rank's subtree size (children have higher ranks than their parent).
inline std::vector<std::uint32_t> subtree_sizes(const std::vector<std::vector<std::uint32_t>>& children) {
    std::vector<std::uint32_t> sizes(children.size(), 1);
    for (std::size_t r = children.size(); r-- > 0;)
        for (std::uint32_t c : children[r]) sizes[r] += sizes[c];
    return sizes;
}

/// The positions of `kids` (children in rank order) in sending order: the
/// largest subtree first, equal ones in rank order. A binomial node's
/// children come smallest first, a k-ary node's largest first.
inline std::vector<std::uint32_t> largest_first(const std::vector<std::uint32_t>& kids,
                                                const std::vector<std::uint32_t>& sizes) {
    std::vector<std::uint32_t> order(kids.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return sizes[kids[a]] > sizes[kids[b]]; });
    return order;
}

} // namespace detail
} // namespace taco
