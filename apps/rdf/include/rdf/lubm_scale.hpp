#pragma once
// LUBM(N) without the Java generator: N copies of a LUBM(1) file, copy u
// renamed University0 -> University<1000 u> in every IRI (its people,
// departments, courses), while its references to other universities (where
// degrees come from) stay. Queries over a whole class grow N-fold; those
// naming University0's entities keep their answers. For the tests and
// benchmarks that need more than LUBM(1). And the 14 LUBM queries.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <rdf/ntriples.hpp>

namespace rdf {

inline std::string lubm_copies(std::string_view lubm1, unsigned n) {
    constexpr std::string_view name = "University0";
    std::string out;
    out.reserve(lubm1.size() * n + lubm1.size() / 8 * n);
    out.append(lubm1);
    for (unsigned u = 1; u < n; ++u) {
        const std::string renamed = "University" + std::to_string(u * 1000);
        std::size_t at = 0;
        for (std::size_t hit; (hit = lubm1.find(name, at)) != std::string_view::npos; at = hit + name.size()) {
            // University0's own IRIs: www.University0.edu and its
            // departments; University01 and the like are others.
            const std::size_t after = hit + name.size();
            const bool own = after < lubm1.size() && (lubm1[after] == '.' || lubm1[after] == '>');
            out.append(lubm1.substr(at, hit - at));
            out.append(own ? std::string_view(renamed) : name);
        }
        out.append(lubm1.substr(at));
    }
    return out;
}

/// The LUBM queries Q1..Q14 as `dir`/queries/qNN.rq hold them.
inline std::vector<std::string> lubm_queries(const std::string& dir) {
    std::vector<std::string> out;
    for (int i = 1; i <= 14; ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "/queries/q%02d.rq", i);
        out.push_back(read_text_file(dir + name));
    }
    return out;
}

} // namespace rdf
