#pragma once
// mesh::vector<T>: std::vector's interface, its elements in cached shared
// memory at the same logical address on every core, for use inside shared
// objects (derive the object from mesh::sharing_aware<Object>):
//
//   struct samples : mesh::sharing_aware<samples> {
//       mesh::vector<double> values;
//   };
//   auto p = mesh::make_shared_object<samples>();
//   { auto w = mesh::write(p); w->values.push_back(1.5); w->values.set(0, 2.5); }
//   double x = mesh::read(p)->values[0];
//
// Made inside a shared object's constructor, it registers as a part of the
// object (detail/parts.hpp): each release writes back the 4 KB chunks the
// writer changed, each reader's acquire refreshes the chunks changed since
// its view was current (detail/tracked_storage.hpp). Changes are recorded by
// the mutating members: set(), push_back, a non-const operator[] or at()
// (the element's chunk), a non-const data() / begin() (every element, as the
// caller may write anywhere). Read through a reader proxy, or through a
// writer's peek(), to record nothing.
//
// Elements must be trivially copyable (they are copied between views byte by
// byte). A vector that is not inside a shared object (a local) works as a
// plain vector in shared memory, untracked.
#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <mesh/detail/checked.hpp>
#include <mesh/detail/parts.hpp>
#include <mesh/detail/tracked_storage.hpp>
#include <mesh/shared_members.hpp>

namespace mesh {

template <class T>
class vector {
    static_assert(std::is_trivially_copyable_v<T>,
                  "mesh::vector<T>: elements are copied between cores' views byte by byte, so T must be "
                  "trivially copyable. For a vector of strings or of vectors, keep all elements in one "
                  "mesh::vector and their start offsets in a second one (or use mesh::hash_map with "
                  "mesh::string keys for a dictionary)");

public:
    using value_type = T;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using reference = T&;
    using const_reference = const T&;
    using iterator = T*;
    using const_iterator = const T*;

    vector() { enlist(); }
    explicit vector(size_type n, const T& value = T{}) {
        enlist();
        resize(n, value);
    }
    vector(std::initializer_list<T> values) : vector(values.begin(), values.end()) {}
    template <std::input_iterator It>
    vector(It first, It last) {
        enlist();
        append(first, last);
    }
    explicit vector(std::span<const T> values) : vector(values.begin(), values.end()) {}
    vector(const vector& o) : vector(o.begin(), o.end()) {}
    vector(vector&& o) : storage_(std::move(o.storage_)), size_(std::exchange(o.size_, 0)) { enlist(); }
    vector& operator=(const vector& o) {
        if (this != &o) assign(o.begin(), o.end());
        return *this;
    }
    /// Copies (the buffers stay with their containers: see tracked_storage).
    vector& operator=(vector&& o) {
        if (this != &o) {
            assign(o.begin(), o.end());
            o.clear();
        }
        return *this;
    }
    vector& operator=(std::initializer_list<T> values) {
        assign(values.begin(), values.end());
        return *this;
    }

    // ---- reading (records nothing) ----
    size_type size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    size_type capacity() const noexcept { return storage_.capacity() / sizeof(T); }
    /// The most elements a vector may hold: its buffer's byte count must
    /// fit (a count beyond is refused with std::length_error, the vector unchanged).
    static constexpr size_type max_size() noexcept { return detail::tracked_storage::max_bytes / sizeof(T); }
    const T* data() const noexcept { return elements(); }
    const T& operator[](size_type i) const noexcept { return elements()[i]; }
    const T& at(size_type i) const {
        check(i);
        return elements()[i];
    }
    const T& front() const noexcept { return elements()[0]; }
    const T& back() const noexcept { return elements()[size_ - 1]; }
    const_iterator begin() const noexcept { return elements(); }
    const_iterator end() const noexcept { return elements() + size_; }
    const_iterator cbegin() const noexcept { return begin(); }
    const_iterator cend() const noexcept { return end(); }
    operator std::span<const T>() const noexcept { return {elements(), size_}; }

    // ---- writing (records the chunks it changes) ----
    void set(size_type i, const T& value) {
        check(i);
        elements()[i] = value;
        touch(i, 1);
    }
    T& operator[](size_type i) noexcept {
        touch(i, 1);
        return elements()[i];
    }
    T& at(size_type i) {
        check(i);
        return (*this)[i];
    }
    T& front() noexcept { return (*this)[0]; }
    T& back() noexcept { return (*this)[size_ - 1]; }
    /// Every element counts as changed.
    T* data() noexcept {
        touch(0, size_);
        return elements();
    }
    iterator begin() noexcept { return data(); }
    iterator end() noexcept { return elements() + size_; }

    void reserve(size_type n) {
        detail::check_count(n, max_size(), sizeof(T), "mesh::vector<T>::reserve(n)");
        if (n > capacity()) storage_.reallocate(n * sizeof(T), size_ * sizeof(T));
    }
    void push_back(const T& value) { emplace_back(value); }
    template <class... Args>
    T& emplace_back(Args&&... args) {
        if (size_ == capacity()) {
            const T made(std::forward<Args>(args)...); // the arguments may be elements, which growing frees
            grow(size_ + 1, "mesh::vector<T>::emplace_back: size() + 1");
            return place_back(made);
        }
        return place_back(std::forward<Args>(args)...);
    }
    void pop_back() noexcept { --size_; }
    void resize(size_type n, const T& value = T{}) {
        if (n > size_) {
            const T fill = value; // value may be an element, which growing frees
            if (n > capacity()) grow(n, "mesh::vector<T>::resize(n)");
            std::uninitialized_fill(elements() + size_, elements() + n, fill);
            touch(size_, n - size_);
        }
        size_ = n;
    }
    void clear() noexcept { size_ = 0; }
    template <std::input_iterator It>
    void append(It first, It last) {
        if constexpr (std::forward_iterator<It>) {
            const auto n = size_type(std::distance(first, last));
            if (n > max_size() - size_) [[unlikely]]
                detail::throw_too_many("mesh::vector<T>::append(first, last): size() + n", n, sizeof(T), max_size() - size_);
            if (size_ + n > capacity()) {
                if constexpr (std::contiguous_iterator<It>) {
                    // The range may be this vector's own elements, which growing frees.
                    const T* from = std::to_address(first);
                    const std::less_equal<const T*> le;
                    if (le(elements(), from) && !le(elements() + capacity(), from)) {
                        const std::vector<T> copy(first, last);
                        grow(size_ + n, "mesh::vector<T>::append");
                        return append(copy.begin(), copy.end());
                    }
                }
                grow(size_ + n, "mesh::vector<T>::append");
            }
            std::uninitialized_copy(first, last, elements() + size_);
            touch(size_, n);
            size_ += n;
        } else {
            for (; first != last; ++first) emplace_back(*first);
        }
    }
    template <std::input_iterator It>
    void assign(It first, It last) {
        // Room first: a refused count or allocation leaves the vector as it
        // was. (A range that does not fit is not this vector's own.) An
        // input range is taken as it comes.
        if constexpr (std::forward_iterator<It>) reserve(size_type(std::distance(first, last)));
        clear();
        append(first, last);
    }
    void assign(size_type n, const T& value) {
        const T fill = value; // value may be an element, which growing frees
        reserve(n);           // may refuse: the vector is as it was then
        clear();
        resize(n, fill);
    }
    /// Insert before pos; returns the new element.
    iterator insert(const_iterator pos, const T& value) {
        const size_type at = size_type(pos - elements());
        const T copy = value; // value may be an element
        if (size_ == capacity()) grow(size_ + 1, "mesh::vector<T>::insert: size() + 1");
        std::memmove(static_cast<void*>(elements() + at + 1), elements() + at, (size_ - at) * sizeof(T));
        ::new (elements() + at) T(copy);
        ++size_;
        touch(at, size_ - at);
        return elements() + at;
    }
    /// Erase [first, last); returns the element after them.
    iterator erase(const_iterator first, const_iterator last) {
        const size_type from = size_type(first - elements()), to = size_type(last - elements());
        std::memmove(static_cast<void*>(elements() + from), elements() + to, (size_ - to) * sizeof(T));
        size_ -= to - from;
        touch(from, size_ - from);
        return elements() + from;
    }
    iterator erase(const_iterator pos) { return erase(pos, pos + 1); }

    friend bool operator==(const vector& a, const vector& b) { return std::ranges::equal(a, b); }

private:
    template <class>
    friend struct detail::part_ops_of;
    void enlist() { detail::register_part(this, &detail::part_ops_of<vector>::table); }
    T* elements() const noexcept { return std::launder(reinterpret_cast<T*>(storage_.data())); }
    void touch(size_type first, size_type n) noexcept { storage_.touch(first * sizeof(T), n * sizeof(T)); }
    /// Room for at_least elements (refused beyond max_size(), naming `what`);
    /// doubles, up to max_size(), so that appends are amortised.
    void grow(size_type at_least, const char* what) {
        detail::check_count(at_least, max_size(), sizeof(T), what);
        const size_type doubled = capacity() > max_size() / 2 ? max_size() : 2 * capacity();
        const size_type minimum = std::max<size_type>(1, 64 / sizeof(T)); // at least a cache line
        storage_.reallocate(std::min(std::max({at_least, doubled, minimum}), max_size()) * sizeof(T),
                            size_ * sizeof(T));
    }
    template <class... Args>
    T& place_back(Args&&... args) {
        T* p = ::new (elements() + size_) T(std::forward<Args>(args)...);
        touch(size_, 1);
        ++size_;
        return *p;
    }
    void check(size_type i) const {
        if (i >= size_) [[unlikely]]
            throw std::out_of_range("mesh::vector: index " + std::to_string(i) + " of a vector of size " +
                                    std::to_string(size_));
    }

    detail::tracked_storage storage_;
    size_type size_ = 0;

public:
    // Its buffer comes from mesh::allocate and is registered with the object
    // that holds the vector, which writes back the chunks it changed: shared,
    // and kept consistent, though tracked_storage holds a raw pointer to it.
    using shared_members = mesh::trust_members<vector>;
};

} // namespace mesh
