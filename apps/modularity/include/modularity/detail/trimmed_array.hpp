#pragma once
// A coarse level's edge arrays (local_moving.hpp's basic_level_graph),
// written in one pass: reserved at an upper bound of their size (the fine
// level's edge count), then trimmed to what was written. aggregate() used to
// count each coarse vertex's edges in a pass of its own, so that the arrays
// were allocated once at their size (grown by push_back they ended up to 2x
// too large, and held 3x their size while the last doubling copied); that
// pass read every fine edge again, a third of aggregate's instructions.
//
// Why malloc and realloc, not std::vector: a reservation costs no memory
// until it is written (pages of a fresh mapping, or of the heap's top, are
// only made resident when touched), and realloc gives the unwritten tail
// back without copying what was written (glibc shrinks a mapped block with
// mremap and splits a heap block). A vector can only shrink by copying into
// a new block, which holds the level twice meanwhile; reserved and left
// untrimmed, vectors took the run's peak 0.4-3 MiB higher (glibc then
// reuses the tails' pages for later blocks), trimmed 0.05-1.0 MiB.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>

namespace modularity::detail {

template <class T>
class trimmed_array {
    static_assert(std::is_trivially_copyable_v<T>, "trimmed_array: values are moved by realloc, byte by byte");

public:
    trimmed_array() = default;
    trimmed_array(const trimmed_array& other) {
        std::copy_n(other.data_, other.size_, write(other.size_));
        trim(other.size_);
    }
    trimmed_array(trimmed_array&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    trimmed_array& operator=(trimmed_array other) noexcept {
        std::swap(data_, other.data_);
        std::swap(size_, other.size_);
        return *this;
    }
    ~trimmed_array() { std::free(data_); }

    /// Room for up to n values, written through the pointer returned, then
    /// kept by trim(count written). The values held before are dropped.
    T* write(std::size_t n) {
        std::free(std::exchange(data_, nullptr));
        size_ = 0;
        if (n == 0) return nullptr;
        data_ = static_cast<T*>(std::malloc(n * sizeof(T)));
        if (!data_) throw std::bad_alloc();
        return data_;
    }
    /// Keep the first n values written (n at most what write() reserved).
    void trim(std::size_t n) {
        if (n == 0) {
            std::free(std::exchange(data_, nullptr));
        } else if (T* kept = static_cast<T*>(std::realloc(data_, n * sizeof(T)))) {
            data_ = kept; // a shrinking realloc that fails leaves the block as it was: keep that
        }
        size_ = n;
    }

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    T& operator[](std::size_t i) noexcept { return data_[i]; }
    const T& operator[](std::size_t i) const noexcept { return data_[i]; }
    T* begin() noexcept { return data_; }
    T* end() noexcept { return data_ + size_; }
    const T* begin() const noexcept { return data_; }
    const T* end() const noexcept { return data_ + size_; }

    friend bool operator==(const trimmed_array& a, const trimmed_array& b) noexcept {
        return std::equal(a.begin(), a.end(), b.begin(), b.end());
    }

private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace modularity::detail
