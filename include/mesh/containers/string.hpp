#pragma once
// mesh::string: a string whose characters are in cached shared memory, for
// use inside shared objects, tracked like mesh::vector (it is one, of chars,
// kept NUL-terminated). Converts to std::string_view; compares with
// anything that does.
//
//   struct station : mesh::sharing_aware<station> {
//       mesh::string name;
//   };
//   { auto w = mesh::write(p); w->name = "Cottbus"; w->name += " Hbf"; }
//   std::string_view n = mesh::read(p)->name;
#include <algorithm>
#include <compare>
#include <cstddef>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <mesh/containers/vector.hpp>
#include <mesh/shared_members.hpp>

namespace mesh {

class string {
public:
    using value_type = char;
    using size_type = std::size_t;
    static constexpr size_type npos = std::string_view::npos;

    string() = default;
    string(std::string_view s) { assign(s); }
    string(const char* s) : string(std::string_view(s)) {}
    string(const std::string& s) : string(std::string_view(s)) {}
    string& operator=(std::string_view s) {
        assign(s);
        return *this;
    }
    string& operator=(const char* s) { return *this = std::string_view(s); }
    string& operator=(const std::string& s) { return *this = std::string_view(s); }

    size_type size() const noexcept { return chars_.empty() ? 0 : chars_.size() - 1; }
    size_type length() const noexcept { return size(); }
    bool empty() const noexcept { return size() == 0; }
    size_type capacity() const noexcept { return chars_.capacity() ? chars_.capacity() - 1 : 0; }
    /// The most characters: the NUL takes one of the buffer's.
    static constexpr size_type max_size() noexcept { return vector<char>::max_size() - 1; }
    const char* data() const noexcept { return chars_.empty() ? "" : chars_.data(); }
    const char* c_str() const noexcept { return data(); }
    std::string_view view() const noexcept { return {data(), size()}; }
    operator std::string_view() const noexcept { return view(); }
    std::string str() const { return std::string(view()); }
    char operator[](size_type i) const noexcept { return data()[i]; }
    const char* begin() const noexcept { return data(); }
    const char* end() const noexcept { return data() + size(); }
    size_type find(std::string_view s, size_type from = 0) const noexcept { return view().find(s, from); }
    bool starts_with(std::string_view s) const noexcept { return view().starts_with(s); }
    bool ends_with(std::string_view s) const noexcept { return view().ends_with(s); }

    void set(size_type i, char c) {
        if (i >= size())
            throw std::out_of_range("mesh::string: index " + std::to_string(i) + " of a string of size " +
                                    std::to_string(size()));
        chars_.set(i, c);
    }
    void reserve(size_type n) {
        detail::check_count(n, max_size(), 1, "mesh::string::reserve(n)");
        chars_.reserve(n + 1);
    }
    void clear() noexcept { chars_.clear(); }
    void assign(std::string_view s) {
        // Room first: a refused size leaves the string as it was. (A view
        // that does not fit is not this string's own characters.)
        detail::check_count(s.size(), max_size(), 1, "mesh::string::assign(s)");
        make_room(s.size());
        chars_.clear();
        append(s);
    }
    string& append(std::string_view s) {
        if (s.empty()) return *this;
        if (s.size() > max_size() - size()) [[unlikely]]
            detail::throw_too_many("mesh::string::append(s): size() + s.size()", s.size(), 1, max_size() - size());
        if (size() + s.size() + 1 > chars_.capacity()) {
            if (holds(s.data())) return append(std::string(s)); // growing frees s: a copy first
            make_room(size() + s.size());
        }
        if (!chars_.empty()) chars_.pop_back(); // the NUL
        chars_.append(s.begin(), s.end());       // no reallocation now: nothing can fail from here
        chars_.push_back('\0');
        return *this;
    }
    void push_back(char c) { append(std::string_view(&c, 1)); }
    string& operator+=(std::string_view s) { return append(s); }
    string& operator+=(char c) {
        push_back(c);
        return *this;
    }
    void resize(size_type n, char c = '\0') {
        if (n <= size()) {
            if (n == 0) return clear();
            chars_.resize(n + 1);
            chars_.set(n, '\0');
        } else {
            detail::check_count(n, max_size(), 1, "mesh::string::resize(n)");
            make_room(n);
            if (!chars_.empty()) chars_.pop_back(); // the NUL (an empty string has none)
            chars_.resize(n, c);
            chars_.push_back('\0');
        }
    }

    // Hidden friends on views: found only when a mesh::string takes part,
    // and either side (mesh::string, std::string, const char*) converts.
    friend bool operator==(std::string_view a, std::string_view b) noexcept { return a == b; }
    friend auto operator<=>(std::string_view a, std::string_view b) noexcept { return a <=> b; }
    friend std::ostream& operator<<(std::ostream& os, const string& s) { return os << s.view(); }

private:
    /// Room for n characters and the NUL before anything changes, so that a
    /// refused allocation leaves the string as it was; doubles (appends are
    /// amortised), a cache line at least (what the allocator hands out
    /// anyway). n is at most max_size().
    void make_room(size_type n) {
        if (n + 1 <= chars_.capacity()) return;
        const size_type doubled = std::max<size_type>(2 * chars_.capacity(), 64);
        chars_.reserve(std::min(std::max(n + 1, doubled), vector<char>::max_size()));
    }
    bool holds(const char* p) const noexcept {
        const std::less_equal<const char*> le;
        return chars_.capacity() && le(chars_.data(), p) && !le(chars_.data() + chars_.capacity(), p);
    }

    vector<char> chars_; ///< size() + 1 characters, the last '\0'; empty while the string is

public:
    using shared_members = mesh::members<&string::chars_>;
};

} // namespace mesh
