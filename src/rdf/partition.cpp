#include <rdf/partition.hpp>

#include <metis.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <rdf/store.hpp>

namespace rdf {

std::vector<std::uint16_t> partition_entities(const store_view& v, std::uint32_t parts) {
    const std::size_t n = v.dict.size();
    std::vector<std::uint16_t> out(n, 0);
    if (parts <= 1 || n == 0) return out;
    if (parts > 65535) throw std::invalid_argument("rdf: at most 65535 METIS parts");
    const term_id type = v.dict.find(std::string("<") + std::string(rdf_type) + ">");
    auto resource = [&](term_id t) { return !v.dict.key(t).starts_with('"'); };
    // Symmetric adjacency (CSR), from SPO and OSP: s -> o and o -> s.
    std::vector<idx_t> xadj(n + 1, 0);
    std::vector<idx_t> adj;
    const permutation_view& spo = v[order::spo];
    const permutation_view& osp = v[order::osp];
    for (std::size_t t = 0; t < n; ++t) {
        const std::size_t start = adj.size();
        if (resource(term_id(t))) {
            const index_range out_edges = spo.of(term_id(t));
            for (std::uint32_t i = out_edges.begin; i < out_edges.end; ++i)
                if (spo.second[i] != type && spo.third[i] != t && resource(spo.third[i])) adj.push_back(idx_t(spo.third[i]));
            const index_range in_edges = osp.of(term_id(t));
            for (std::uint32_t i = in_edges.begin; i < in_edges.end; ++i)
                if (osp.third[i] != type && osp.second[i] != t) adj.push_back(idx_t(osp.second[i]));
        }
        std::sort(adj.begin() + std::ptrdiff_t(start), adj.end());
        adj.erase(std::unique(adj.begin() + std::ptrdiff_t(start), adj.end()), adj.end());
        xadj[t + 1] = idx_t(adj.size());
    }
    idx_t nv = idx_t(n), ncon = 1, np = idx_t(parts), cut = 0;
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 1; // the same buckets every run
    std::vector<idx_t> part(n, 0);
    if (adj.empty()) adj.push_back(0); // METIS wants a non-null array
    const int rc = METIS_PartGraphKway(&nv, &ncon, xadj.data(), adj.data(), nullptr, nullptr, nullptr, &np, nullptr,
                                       nullptr, options, &cut, part.data());
    if (rc != METIS_OK) throw std::runtime_error("rdf: METIS_PartGraphKway failed (" + std::to_string(rc) + ")");
    // A term without edges (a literal, an unlinked resource) goes with the
    // id before it, not where METIS balanced it: then a part's ids come in
    // long runs (the ones around a department's people), which the workers
    // step over in the sorted index instead of reading (part_runs).
    for (std::size_t t = 0; t < n; ++t)
        out[t] = xadj[t + 1] > xadj[t] ? std::uint16_t(part[t]) : t ? out[t - 1] : std::uint16_t(part[t]);
    return out;
}

std::vector<std::uint32_t> assign_parts(const std::vector<std::uint64_t>& weight, std::uint32_t cores) {
    std::vector<std::uint32_t> by_weight(weight.size());
    std::iota(by_weight.begin(), by_weight.end(), 0u);
    std::stable_sort(by_weight.begin(), by_weight.end(), [&](auto a, auto b) { return weight[a] > weight[b]; });
    std::vector<std::uint64_t> load(cores, 0);
    std::vector<std::uint32_t> core_of(weight.size(), 0);
    for (std::uint32_t p : by_weight) {
        const auto c = std::uint32_t(std::min_element(load.begin(), load.end()) - load.begin());
        core_of[p] = c;
        load[c] += weight[p];
    }
    return core_of;
}

} // namespace rdf
