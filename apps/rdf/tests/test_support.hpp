#pragma once
// Shared by the RDF tests: the data directory, the LUBM queries and their
// published answers, reading a file, sorting rows for comparisons.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <rdf/execute.hpp>
#include <rdf/lubm_scale.hpp>
#include <rdf/store.hpp>
#include <rdf/store_file.hpp>

namespace rdf_test {

inline const std::string data_dir = RDF_DATA;

/// XML Schema's namespace, the datatypes' prefix.
inline const std::string xsd = "http://www.w3.org/2001/XMLSchema#";

inline std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

/// The published LUBM(1,0) answers on the inferred data, query i at [i - 1],
/// from data/lubm1.answers.tsv (the one copy the scripts read too). A query
/// the file lacks aborts: a test must not compare against a made-up count.
inline std::array<std::size_t, 14> read_lubm_answers(const std::string& path) {
    std::array<std::size_t, 14> counts{};
    std::array<bool, 14> seen{};
    std::ifstream f(path);
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        std::string query;
        std::size_t rows = 0;
        int i = 0;
        if (fields >> query >> rows && std::sscanf(query.c_str(), "q%d.rq", &i) == 1 && i >= 1 && i <= 14) {
            counts[std::size_t(i - 1)] = rows;
            seen[std::size_t(i - 1)] = true;
        }
    }
    for (std::size_t i = 0; i < seen.size(); ++i)
        if (!seen[i]) {
            std::fprintf(stderr, "%s: no answer for q%02zu.rq\n", path.c_str(), i + 1);
            std::abort();
        }
    return counts;
}
inline const std::array<std::size_t, 14> lubm_counts = read_lubm_answers(data_dir + "/lubm1.answers.tsv");

inline std::vector<std::string> lubm_queries() { return rdf::lubm_queries(data_dir); }

/// LUBM(1), closed, read once per test process: from the store file ctest
/// has the CLI write (RDF_LUBM1_STORE, tests/CMakeLists.txt), else parsed.
inline const rdf::store& lubm_inferred() {
    static const rdf::store s = [] {
        if (const char* file = std::getenv("RDF_LUBM1_STORE")) return rdf::open_store(file);
        rdf::store st;
        st.load_file(data_dir + "/lubm1-inferred.nt.gz");
        return st;
    }();
    return s;
}

/// A text's lines, sorted (TSV rows compared as a multiset).
inline std::vector<std::string> sorted_lines(const std::string& text) {
    std::vector<std::string> lines;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = text.find('\n', at);
        lines.push_back(text.substr(at, end - at));
        at = end == std::string::npos ? text.size() : end + 1;
    }
    std::sort(lines.begin(), lines.end());
    return lines;
}

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
