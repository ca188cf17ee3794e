#pragma once
// Shared by the RDF tests: the data directory, the LUBM queries and their
// published answers, reading a file, sorting rows for comparisons.
#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <rdf/execute.hpp>
#include <rdf/lubm_scale.hpp>

namespace rdf_test {

inline const std::string data_dir = RDF_DATA;

/// Published LUBM(1,0) answers on the inferred data.
inline constexpr std::array<std::size_t, 14> lubm_counts{4, 0, 6, 34, 719, 7790, 67, 7790, 208, 4, 224, 15, 1, 5916};

inline std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline std::vector<std::string> lubm_queries() { return rdf::lubm_queries(data_dir); }

/// The rows of a table as sorted vectors (multiset comparison).
inline std::vector<std::vector<rdf::term_id>> sorted_rows(const rdf::table& t) {
    std::vector<std::vector<rdf::term_id>> rows;
    for (std::size_t r = 0; r < t.rows(); ++r) {
        auto row = t.row(r);
        rows.emplace_back(row.begin(), row.end());
    }
    std::sort(rows.begin(), rows.end());
    return rows;
}

} // namespace rdf_test
