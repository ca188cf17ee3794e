#pragma once
// RangeSpace (MESH paper, sections II.B and III.C): the index space 0..n-1,
// growable, with the mappings that depend on it as observers. A mapping
// keeps a reserve (values for indices the space does not have yet); the
// space tells its observers to grow only when the smallest reserve runs
// out, so adding an index usually costs nothing but the space's own write.
//
// The observer array is memory the space owns beyond its own bytes (the
// paper's reason for SharingAware): a mesh::vector, so it is refreshed and
// written back with the space, and an array it outgrew stays for readers
// refreshing from before (containers/vector.hpp).
//
//   auto space = mesh::make_shared_object<mesh::range_space>(n);
//   auto weight = mesh::make_mapping<mesh::chunked_map<std::uint32_t, double>>(space, 1.0);
//   { auto w = mesh::write(space); auto first = w.add(10); }   // weight has values for them
//
// make_mapping makes a mapping with a value for each index of the space and
// registers it (writer_proxy::observe registers one made otherwise); any
// shared type whose writer proxy has grow_to(n, args...) and size() can
// be an observer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include <mesh/containers/vector.hpp>
#include <mesh/detail/control_block.hpp>
#include <mesh/memory.hpp>
#include <mesh/proxy.hpp>
#include <mesh/shared_object.hpp>
#include <mesh/sharing_aware.hpp>
#include <mesh/sharing_ptr.hpp>
#include <taco/image_ptr.hpp>

namespace mesh {

class range_space : public sharing_aware<range_space> {
public:
    using index = std::uint32_t;

    /// The most indices: index is 32-bit, and end() is an index too.
    static constexpr std::size_t max_size() noexcept { return std::numeric_limits<index>::max(); }

    explicit range_space(std::size_t n = 0) : size_(at_most_max(n)) {}
    range_space(const range_space&) = delete;
    range_space& operator=(const range_space&) = delete;

    /// Forward iterator over the indices (hand-written: clang 14's ranges
    /// do not compile with libstdc++ 12's iota_view).
    class iterator {
    public:
        using value_type = index;
        using difference_type = std::ptrdiff_t;
        iterator() = default;
        explicit iterator(index i) noexcept : i_(i) {}
        index operator*() const noexcept { return i_; }
        iterator& operator++() noexcept {
            ++i_;
            return *this;
        }
        iterator operator++(int) noexcept { return iterator(i_++); }
        friend bool operator==(iterator, iterator) = default;

    private:
        index i_ = 0;
    };

    std::size_t size() const noexcept { return size_; }
    /// The indices, 0..size()-1, in order.
    iterator begin() const noexcept { return iterator(0); }
    iterator end() const noexcept { return iterator(index(size_)); }

    /// Indices the space can add before it must tell its observers.
    std::size_t reserve() const noexcept { return reserve_; }
    std::size_t observers() const noexcept { return observers_.size(); }
    /// How often the observers were told to grow (each time the reserve ran out).
    std::uint64_t growth_rounds() const noexcept { return rounds_; }

    /// Write access: add indices, register observers.
    class writer_proxy {
    public:
        explicit writer_proxy(const sharing_ptr<range_space>& p) : w_(p) {}
        std::size_t size() const noexcept { return w_.peek().size(); }
        std::size_t reserve() const noexcept { return w_.peek().reserve(); }
        /// Add k indices; returns the first. Observers grow first if their
        /// reserve runs out, so the new indices have values when it returns.
        index add(std::size_t k = 1) { return w_->add(k); }
        /// Make `m` grow with this space (its writer proxy's grow_to(n) and
        /// size()); it grows at once to the space's size if it is smaller.
        template <class Map>
        void observe(const sharing_ptr<Map>& m) {
            w_->observe(m);
        }

    private:
        writer<range_space> w_;
    };

    /// Read access: size and the indices.
    class reader_proxy {
    public:
        explicit reader_proxy(const sharing_ptr<range_space>& p) : r_(p) {}
        std::size_t size() const noexcept { return r_->size(); }
        auto begin() const noexcept { return r_->begin(); }
        auto end() const noexcept { return r_->end(); }
        std::uint64_t growth_rounds() const noexcept { return r_->growth_rounds(); }

    private:
        reader<range_space> r_;
    };

private:
    /// An observer: a sharing pointer, erased, and how to grow it. The
    /// function is image-relative: the list is shared memory, read by cores
    /// that may load the program elsewhere (cluster ranks).
    using grow_fn = std::size_t (*)(void* object, detail::control_block* block, std::size_t at_least);
    struct observer {
        void* object;
        detail::control_block* block;
        taco::image_ptr<grow_fn> grow_table;
        std::size_t grow(std::size_t at_least) const { return grow_table.get_nonnull()(object, block, at_least); }
    };

    template <class Map>
    static std::size_t grow_map(void* object, detail::control_block* block, std::size_t at_least) {
        auto w = mesh::write(sharing_ptr<Map>::from(static_cast<Map*>(object), block));
        if (w.size() < at_least) w.grow_to(at_least);
        return w.size();
    }

    /// Before any member is made, so that a refused n leaves nothing behind.
    static std::size_t at_most_max(std::size_t n) {
        if (n > max_size())
            throw std::length_error("mesh::range_space(n): n = " + std::to_string(n) + " is more than max_size() = " +
                                    std::to_string(max_size()) + " (its indices are 32-bit)");
        return n;
    }

    index add(std::size_t k) {
        const std::size_t first = size_;
        if (k > max_size() - first)
            throw std::length_error("mesh::range_space::add(k): k = " + std::to_string(k) + " more indices than the " +
                                    std::to_string(first) + " it has would be more than max_size() = " +
                                    std::to_string(max_size()) + " (its indices are 32-bit)");
        // Observers first: one that cannot grow leaves the size as it was.
        if (first + k > reserve_) grow_observers(first + k);
        size_ = first + k;
        return index(first);
    }

    /// The reserve ran out: every observer grows to 1.5 times the size (a
    /// mapping may round up, e.g. to whole chunks), and the new reserve is
    /// the smallest capacity.
    void grow_observers(std::size_t size) {
        ++rounds_;
        // Not past what the space may ever hold: a mapping keyed by index
        // need not hold more (and a uint32 key could not).
        const std::size_t want = std::min(size + size / 2, max_size());
        std::size_t smallest = std::numeric_limits<std::size_t>::max();
        for (const observer& o : observers_) smallest = std::min(smallest, o.grow(want));
        reserve_ = smallest;
    }

    template <class Map>
    void observe(const sharing_ptr<Map>& m) {
        const observer& o =
            observers_.emplace_back(observer{m.unsafe_object(), m.block(), taco::image_ptr<grow_fn>(&grow_map<Map>)});
        reserve_ = std::min(reserve_, o.grow(size_));
    }

    std::size_t size_ = 0;
    std::size_t reserve_ = std::numeric_limits<std::size_t>::max(); ///< no observer: unlimited
    vector<observer> observers_;
    std::uint64_t rounds_ = 0;

public:
    using shared_members = mesh::members<&range_space::size_, &range_space::reserve_, &range_space::observers_,
                                         &range_space::rounds_>;
};

/// Make a mapping over `space`: Map{space's size, args...} under controller
/// C, registered as an observer, so that it grows with the space.
template <class Map, class C = controllers::timestamp, class... Args>
sharing_ptr<Map> make_mapping(const sharing_ptr<range_space>& space, Args&&... args) {
    auto m = make_shared_object<Map, C>(mesh::read(space).size(), std::forward<Args>(args)...);
    mesh::write(space).observe(m);
    return m;
}

} // namespace mesh
