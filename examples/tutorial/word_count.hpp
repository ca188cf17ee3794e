#pragma once
// Tutorial steps 3-5 (docs/tutorial.md): a word count ported from standard
// containers to a MESH shared object. It names no platform: the same header
// serves threads, core processes and MPI ranks.
#include <mesh/mesh.hpp>
#include <taco/taco.hpp>

#include <cstdint>
#include <string>
#include <string_view>

// Before, shared by threads under a mutex:
//   struct word_count {
//       std::unordered_map<std::string, std::uint64_t> counts;
//       std::uint64_t total = 0;
//       void add(std::string_view word) { ++counts[std::string(word)]; ++total; }
//       std::uint64_t count(std::string_view word) const;
//   };
struct word_count : mesh::sharing_aware<word_count> {
    mesh::hash_map<mesh::string, std::uint64_t> counts;
    std::uint64_t total = 0;

    void add(std::string_view word) {
        ++*counts.try_emplace(word, 0).first;
        ++total;
    }
    std::uint64_t count(std::string_view word) const {
        const std::uint64_t* n = counts.find(word);
        return n ? *n : 0;
    }
};
using word_count_ptr = mesh::sharing_ptr<word_count>;

// Every change goes to core 0, which owns the table: one writer at a time,
// as the mutex made it. The writer proxy's release makes the words visible.
inline void add_words(word_count_ptr t, std::string text) {
    auto w = mesh::write(t);
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find(' ', start);
        if (end == std::string::npos) end = text.size();
        if (end > start) w->add(std::string_view(text).substr(start, end - start));
        start = end + 1;
    }
}

// A read through the calling core's own view (a reader proxy: refreshed
// first if the table changed since this core last read it).
inline std::uint64_t count_here(word_count_ptr t, std::string word) { return mesh::read(t)->count(word); }
inline std::uint64_t total_here(word_count_ptr t) { return mesh::read(t)->total; }
