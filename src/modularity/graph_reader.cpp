#include <modularity/graph_reader.hpp>

#include <zlib.h>

#include <taco/platform/host_memory.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <modularity/graph_data.hpp>

namespace modularity {

graph_format format_from_name(std::string_view path) {
    std::string_view s = path;
    if (s.ends_with(".gz")) s.remove_suffix(3);
    const auto dot = s.rfind('.');
    std::string ext(dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1));
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (ext == "graph" || ext == "metis") return graph_format::metis;
    if (ext == "el" || ext == "edges" || ext == "txt" || ext == "tsv") return graph_format::edge_list;
    if (ext == "net" || ext == "pajek") return graph_format::pajek;
    throw graph_error(std::string(path), 0,
                      "cannot tell the format from the name: use .graph or .metis (METIS), .el, .edges, .txt or "
                      ".tsv (edge list), .net or .pajek (Pajek), optionally + .gz, or give the format explicitly");
}

graph_format parse_format(std::string_view name) {
    if (name == "metis" || name == "graph") return graph_format::metis;
    if (name == "el" || name == "edge-list" || name == "edgelist") return graph_format::edge_list;
    if (name == "pajek" || name == "net") return graph_format::pajek;
    throw std::invalid_argument("unknown graph format '" + std::string(name) + "' (metis, el, pajek)");
}

namespace detail {

file_lines::file_lines(const std::string& path) : path_(path), file_(::gzopen(path.c_str(), "rb")) {
    if (!file_) throw graph_error(path, 0, std::string("cannot open: ") + std::strerror(errno ? errno : ENOMEM));
    ::gzbuffer(file_, 1 << 17);
}
file_lines::~file_lines() { ::gzclose(file_); }

bool file_lines::next(std::string_view& line) {
    for (;;) {
        const auto nl = std::string_view(buf_).substr(pos_).find('\n');
        if (nl != std::string_view::npos) {
            line = std::string_view(buf_).substr(pos_, nl);
            pos_ += nl + 1;
            return true;
        }
        if (eof_) {
            if (pos_ == buf_.size()) return false;
            line = std::string_view(buf_).substr(pos_);
            pos_ = buf_.size();
            return true;
        }
        buf_.erase(0, pos_);
        pos_ = 0;
        fill();
    }
}

std::uint64_t file_lines::bytes_read() const noexcept { return std::uint64_t(::gzoffset(file_)); }

void file_lines::fill() {
    constexpr std::size_t block = 1 << 18;
    const std::size_t had = buf_.size();
    buf_.resize(had + block);
    const int got = ::gzread(file_, buf_.data() + had, unsigned(block));
    if (got < 0) {
        int code = 0;
        const char* msg = ::gzerror(file_, &code);
        throw graph_error(path_, 0, code == Z_ERRNO ? std::string("read error: ") + std::strerror(errno)
                                                     : std::string("corrupt gzip data: ") + msg);
    }
    buf_.resize(had + std::size_t(got));
    if (got == 0) {
        int code = 0;
        const char* msg = ::gzerror(file_, &code);
        if (code != Z_OK) throw graph_error(path_, 0, std::string("corrupt or truncated gzip data: ") + msg);
        eof_ = true;
    }
}

namespace {

/// Lines of a text in memory (the fuzzer's input, tests).
class memory_lines {
public:
    explicit memory_lines(std::string_view text) : rest_(text) {}
    bool next(std::string_view& line) {
        if (rest_.empty()) return false;
        const auto nl = rest_.find('\n');
        line = rest_.substr(0, nl);
        rest_ = nl == std::string_view::npos ? std::string_view() : rest_.substr(nl + 1);
        return true;
    }
    std::uint64_t bytes_read() const noexcept { return 0; }

private:
    std::string_view rest_;
};

/// Line-numbered lines with the line end ('\r\n' too) removed.
template <class Source>
class numbered_lines {
public:
    numbered_lines(Source& src, std::string file, const read_options& o) : src_(src), file_(std::move(file)), opt_(o) {}
    bool next(std::string_view& line) {
        if (!src_.next(line)) return false;
        ++number_;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (opt_.progress && (number_ & 0xffff) == 0) opt_.progress(src_.bytes_read());
        return true;
    }
    std::size_t number() const noexcept { return number_; }
    [[noreturn]] void fail(const std::string& what) const { throw graph_error(file_, number_, what); }
    [[noreturn]] void fail_file(const std::string& what) const { throw graph_error(file_, 0, what); }
    const std::string& file() const noexcept { return file_; }
    const read_options& options() const noexcept { return opt_; }

private:
    Source& src_;
    std::string file_;
    const read_options& opt_;
    std::size_t number_ = 0;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/// Whitespace-separated fields of a line.
class fields {
public:
    explicit fields(std::string_view s) : s_(s) {}
    bool next(std::string_view& f) {
        while (i_ < s_.size() && is_space(s_[i_])) ++i_;
        if (i_ == s_.size()) return false;
        const std::size_t b = i_;
        while (i_ < s_.size() && !is_space(s_[i_])) ++i_;
        f = s_.substr(b, i_ - b);
        return true;
    }
    /// A Pajek label: "quoted, with spaces" or one field.
    bool next_label(std::string_view& f) {
        while (i_ < s_.size() && is_space(s_[i_])) ++i_;
        if (i_ < s_.size() && s_[i_] == '"') {
            const auto close = s_.find('"', i_ + 1);
            if (close == std::string_view::npos) return false;
            f = s_.substr(i_ + 1, close - i_ - 1);
            i_ = close + 1;
            return true;
        }
        return next(f);
    }
    bool unterminated_quote() const {
        std::size_t j = i_;
        while (j < s_.size() && is_space(s_[j])) ++j;
        return j < s_.size() && s_[j] == '"' && s_.find('"', j + 1) == std::string_view::npos;
    }

private:
    std::string_view s_;
    std::size_t i_ = 0;
};

std::string shown(std::string_view f) {
    constexpr std::size_t max = 40;
    std::string s(f.substr(0, max));
    for (char& c : s)
        if (static_cast<unsigned char>(c) < 32 || static_cast<unsigned char>(c) > 126) c = '?';
    return "'" + s + (f.size() > max ? "...'" : "'");
}

template <class Lines>
std::uint64_t to_count(const Lines& in, std::string_view f, const char* what) {
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    if (ec != std::errc() || p != f.data() + f.size())
        in.fail(std::string(what) + " " + shown(f) + " is not a non-negative integer");
    return v;
}

/// A 1-based vertex id in 1..n, as 0-based.
template <class Lines>
vertex to_vertex(const Lines& in, std::string_view f, std::uint64_t n, const char* what) {
    const std::uint64_t v = to_count(in, f, what);
    if (v < 1 || v > n)
        in.fail(std::string(what) + " " + shown(f) + " is out of range: the vertices are 1.." + std::to_string(n));
    return vertex(v - 1);
}

template <class Lines>
double to_weight(const Lines& in, std::string_view f) {
    double w = 0;
    const char* b = f.data();
    if (!f.empty() && f.front() == '+') ++b;
    const auto [p, ec] = std::from_chars(b, f.data() + f.size(), w);
    if (ec == std::errc::result_out_of_range) in.fail("weight " + shown(f) + " is out of range");
    if (ec != std::errc() || p != f.data() + f.size()) in.fail("weight " + shown(f) + " is not a number");
    if (!std::isfinite(w)) in.fail("weight " + shown(f) + " is not finite");
    if (w < 0) in.fail("weight " + shown(f) + " is negative (modularity needs non-negative weights)");
    return w;
}

template <class Lines>
void check_vertex_count(const Lines& in, std::uint64_t n) {
    if (n > in.options().max_vertices)
        in.fail(std::to_string(n) + " vertices: more than this reader accepts (" +
                std::to_string(in.options().max_vertices) + ")");
}

/// What the machine can back: its RAM and swap, or the process's
/// address-space limit (RLIMIT_AS) where that is lower.
std::uint64_t machine_memory_bytes() noexcept { return taco::detail::host_memory_bytes(); }

/// Bytes per vertex the reader holds at once while it builds the adjacency
/// array (edge_collector::build: a 64-bit degree, the offset and the fill
/// position), whether or not the file lists any edge of the vertex.
constexpr std::uint64_t bytes_per_vertex = sizeof(std::uint64_t) + 2 * sizeof(edge);

/// A declared count of `n` vertices (a header, *Vertices) is refused here,
/// before anything is allocated for it, when what reading needs is more
/// than the machine has: a 40-byte file that declares two billion vertices
/// once allocated until the OOM killer ended it. `what`: what needs the bytes.
template <class Lines>
void check_memory(const Lines& in, std::uint64_t count, std::uint64_t bytes_each, const std::string& what) {
    const std::uint64_t have = in.options().memory_bytes ? in.options().memory_bytes : machine_memory_bytes();
    constexpr std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t need = count > most / bytes_each ? most : count * bytes_each;
    if (need > have)
        in.fail(what + " need at least " +
                (need == most ? std::string("more than 2^64") : std::to_string(need)) +
                " bytes (" + std::to_string(bytes_each) + " per vertex), more than this machine has: " +
                std::to_string(have) + " bytes (its RAM and swap, or the process's address-space limit, RLIMIT_AS)");
}
template <class Lines>
void check_vertex_memory(const Lines& in, std::uint64_t n) {
    check_memory(in, n + 1, bytes_per_vertex, std::to_string(n) + " vertices");
}

// ---- METIS / DIMACS-10 --------------------------------------------------

template <class Lines>
graph_data parse_metis(Lines& in) {
    std::string_view line;
    auto next_content = [&]() {
        while (in.next(line))
            if (line.empty() || line.front() != '%') return true;
        return false;
    };
    // Header: n m [fmt [ncon]]; fmt's digits: vertex sizes, vertex weights, edge weights.
    do {
        if (!in.next(line)) in.fail_file("empty file: expected a METIS header 'n m [fmt [ncon]]'");
    } while (line.empty() || line.front() == '%' || line.find_first_not_of(" \t") == std::string_view::npos);
    fields h(line);
    std::string_view f;
    h.next(f);
    const std::uint64_t n = to_count(in, f, "vertex count");
    if (!h.next(f)) in.fail("header has no edge count: expected 'n m [fmt [ncon]]'");
    const std::uint64_t m = to_count(in, f, "edge count");
    bool sizes = false, vweights = false, eweights = false;
    std::uint64_t ncon = 0;
    if (h.next(f)) {
        if (f.size() > 3 || f.find_first_not_of("01") != std::string_view::npos)
            in.fail("format field " + shown(f) + " is not up to three digits 0/1 (e.g. 001: edge weights)");
        const std::string fmt = std::string(3 - f.size(), '0') + std::string(f);
        sizes = fmt[0] == '1';
        vweights = fmt[1] == '1';
        eweights = fmt[2] == '1';
        ncon = vweights ? 1 : 0;
        if (h.next(f)) {
            if (!vweights) in.fail("ncon given but the format field has no vertex weights");
            ncon = to_count(in, f, "ncon");
            if (ncon == 0) in.fail("ncon is 0");
        }
        if (h.next(f)) in.fail("header has more than 'n m fmt ncon': " + shown(f));
    }
    check_vertex_count(in, n);
    check_vertex_memory(in, n);

    struct half { // 16 bytes: its line is its vertex's, line_of[from]
        vertex from, to;
        double w;
    };
    std::vector<half> halves;
    // Each edge is listed twice; reserved at the header's count rather than
    // grown by doubling, which held up to 3x the list while it copied. A
    // header may lie (the fuzzer's 20-byte file declared 10^16 edges and
    // asked for 2 GiB), so at most 2^24 entries (256 MiB of address space,
    // touched only as the list fills): bigger lists grow from there.
    halves.reserve(std::min<std::uint64_t>(2 * m, std::uint64_t(1) << 24));
    std::vector<std::size_t> line_of; // vertex -> its line, for messages
    for (std::uint64_t v = 0; v < n; ++v) {
        if (!next_content())
            in.fail_file("ends after " + std::to_string(v) + " of the header's " + std::to_string(n) + " vertex lines");
        line_of.push_back(in.number());
        fields fs(line);
        for (std::uint64_t k = 0; k < (sizes ? 1 : 0) + ncon; ++k)
            if (!fs.next(f)) in.fail("vertex " + std::to_string(v + 1) + ": missing vertex size or weight");
            else to_weight(in, f);
        while (fs.next(f)) {
            const vertex u = to_vertex(in, f, n, "neighbour");
            double w = 1;
            if (eweights) {
                std::string_view wf;
                if (!fs.next(wf)) in.fail("neighbour " + shown(f) + " has no edge weight (format says 001)");
                w = to_weight(in, wf);
            }
            halves.push_back({vertex(v), u, w});
        }
    }
    while (next_content())
        if (line.find_first_not_of(" \t") != std::string_view::npos)
            in.fail("more vertex lines than the header's " + std::to_string(n));

    // Symmetric: each edge listed by both ends with the same weight, once.
    std::sort(halves.begin(), halves.end(), [](const half& a, const half& b) {
        return std::make_tuple(std::min(a.from, a.to), std::max(a.from, a.to), a.from) <
               std::make_tuple(std::min(b.from, b.to), std::max(b.from, b.to), b.from);
    });
    auto fail_at = [&](std::size_t l, const std::string& what) { throw graph_error(in.file(), l, what); };
    auto id = [](vertex v) { return std::to_string(std::uint64_t(v) + 1); };
    edge_collector edges{vertex(n)};
    edges.reserve(halves.size() / 2 + 1);
    std::uint64_t count = 0;
    for (std::size_t i = 0; i < halves.size();) {
        const half& a = halves[i];
        std::size_t j = i + 1;
        while (j < halves.size() && std::min(halves[j].from, halves[j].to) == std::min(a.from, a.to) &&
               std::max(halves[j].from, halves[j].to) == std::max(a.from, a.to))
            ++j;
        if (a.from == a.to) {
            if (j - i > 1) fail_at(line_of[a.from], "vertex " + id(a.from) + " lists itself twice");
        } else if (j - i == 1) {
            fail_at(line_of[a.from], "vertex " + id(a.from) + " lists neighbour " + id(a.to) + ", but vertex " + id(a.to) +
                                " (line " + std::to_string(line_of[a.to]) + ") does not list " + id(a.from) +
                                ": METIS adjacency must be symmetric");
        } else if (j - i > 2 || halves[i + 1].from == a.from) {
            const half& b = halves[i + 1].from == a.from ? halves[i + 1] : halves[i + 2];
            fail_at(line_of[b.from], "vertex " + id(b.from) + " lists neighbour " + id(b.to) + " twice");
        } else if (a.w != halves[i + 1].w) {
            fail_at(line_of[halves[i + 1].from], "edge " + id(a.from) + "-" + id(a.to) + " has weight " +
                                            std::to_string(halves[i + 1].w) + " here but " + std::to_string(a.w) +
                                            " on line " + std::to_string(line_of[a.from]));
        }
        edges.add(a.from, a.to, a.w);
        ++count;
        i = j;
    }
    if (count != m)
        in.fail_file("the header says " + std::to_string(m) + " edges, the vertex lines list " + std::to_string(count));
    halves = std::vector<half>(); // freed before the adjacency is built (= {} would keep the capacity)
    return std::move(edges).build(eweights);
}

// ---- edge lists ------------------------------------------------------------

template <class Lines>
graph_data parse_edge_list(Lines& in) {
    std::unordered_map<std::string, vertex> ids;
    std::vector<std::string> names;
    edge_collector edges;
    bool weighted = false;
    auto id_of = [&](std::string_view f) {
        auto [it, added] = ids.try_emplace(std::string(f), vertex(names.size()));
        if (added) {
            check_vertex_count(in, names.size() + 1);
            names.emplace_back(f);
        }
        return it->second;
    };
    std::string_view line, from, to, w, extra;
    while (in.next(line)) {
        fields fs(line);
        if (!fs.next(from) || from.front() == '#' || from.front() == '%') continue;
        if (!fs.next(to)) in.fail("expected 'FROM TO [WEIGHT]', found one field " + shown(from));
        double weight = 1;
        if (fs.next(w)) {
            weight = to_weight(in, w);
            weighted = true;
        }
        if (fs.next(extra)) in.fail("expected 'FROM TO [WEIGHT]', found more fields: " + shown(extra));
        const vertex a = id_of(from), b = id_of(to);
        edges.add(a, b, weight);
    }
    if (names.empty()) in.fail_file("no edges: expected lines 'FROM TO [WEIGHT]'");
    graph_data g = std::move(edges).build(weighted);
    g.names = std::move(names);
    return g;
}

// ---- Pajek -------------------------------------------------------------

template <class Lines>
graph_data parse_pajek(Lines& in) {
    enum class section { none, vertices, edges, edges_list, other } at = section::none;
    std::uint64_t n = 0;
    bool have_vertices = false, weighted = false;
    std::vector<std::pair<vertex, std::string>> labels;
    vertex last_labelled = 0;
    edge_collector edges;
    std::string_view line, f;
    while (in.next(line)) {
        fields fs(line);
        if (!fs.next(f) || f.front() == '%') continue;
        if (f.front() == '*') {
            std::string key(f.substr(1));
            std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return char(std::tolower(c)); });
            if (key == "network") {
                at = section::other;
            } else if (key == "vertices") {
                if (have_vertices) in.fail("a second *Vertices section");
                if (!fs.next(f)) in.fail("*Vertices without a count");
                n = to_count(in, f, "vertex count");
                check_vertex_count(in, n);
                check_vertex_memory(in, n);
                have_vertices = true;
                edges.ensure_vertices(vertex(n));
                at = section::vertices;
            } else if (key == "edges" || key == "arcs" || key == "edgeslist" || key == "arcslist") {
                if (!have_vertices) in.fail("*" + key + " before *Vertices");
                at = key.ends_with("list") ? section::edges_list : section::edges;
            } else if (key == "matrix") {
                in.fail("*Matrix sections are not supported: write the network as *Edges or *Arcs");
            } else {
                in.fail("*" + key + ": not a section of a Pajek network (this reader knows *Network, *Vertices, "
                                    "*Edges, *Arcs, *Edgeslist, *Arcslist)");
            }
            continue;
        }
        switch (at) {
        case section::none:
            in.fail("expected *Vertices before " + shown(f));
        case section::other:
            break;
        case section::vertices: {
            const vertex v = to_vertex(in, f, n, "vertex");
            std::string_view label;
            if (fs.unterminated_quote()) in.fail("label has no closing quote");
            if (fs.next_label(label)) {
                // The names reach up to the largest labelled vertex: refused
                // here, before the edges are built, if they cannot fit.
                if (v >= last_labelled)
                    check_memory(in, std::uint64_t(v) + 1, sizeof(std::string),
                                 "a label on vertex " + std::to_string(std::uint64_t(v) + 1) + ": names for " +
                                     std::to_string(std::uint64_t(v) + 1) + " vertices");
                labels.emplace_back(v, std::string(label));
                last_labelled = std::max(last_labelled, v);
            }
            break;
        }
        case section::edges: {
            const vertex u = to_vertex(in, f, n, "vertex");
            if (!fs.next(f)) in.fail("expected 'FROM TO [WEIGHT]'");
            const vertex v = to_vertex(in, f, n, "vertex");
            double w = 1;
            if (fs.next(f)) {
                w = to_weight(in, f);
                weighted = true;
            }
            edges.add(u, v, w);
            break;
        }
        case section::edges_list: {
            const vertex u = to_vertex(in, f, n, "vertex");
            while (fs.next(f)) edges.add(u, to_vertex(in, f, n, "vertex"), 1);
            break;
        }
        }
    }
    if (!have_vertices) in.fail_file("no *Vertices section: not a Pajek network");
    graph_data g = std::move(edges).build(weighted);
    if (!labels.empty()) {
        // Names up to the largest labelled vertex only: graph_data::name
        // numbers the others, so *Vertices 2000000000 with a few labels
        // makes no two billion strings.
        const std::size_t named = std::size_t(last_labelled) + 1;
        g.names.resize(named);
        for (vertex v = 0; v < named; ++v) g.names[v] = std::to_string(std::uint64_t(v) + 1);
        for (auto& [v, s] : labels) g.names[v] = std::move(s);
    }
    return g;
}

template <class Lines>
graph_data parse(Lines& in, graph_format format) {
    try {
        switch (format) {
        case graph_format::metis: return parse_metis(in);
        case graph_format::edge_list: return parse_edge_list(in);
        case graph_format::pajek: return parse_pajek(in);
        }
    } catch (const std::bad_alloc&) {
        in.fail_file("out of memory at line " + std::to_string(in.number()));
    } catch (const std::length_error& e) {
        in.fail_file(e.what());
    } catch (const std::overflow_error& e) {
        in.fail_file(e.what());
    } catch (const std::range_error& e) { // check_weight_spread
        in.fail_file(e.what());
    }
    in.fail_file("unknown format");
}

} // namespace
} // namespace detail

graph_data parse_graph(std::string_view text, graph_format format, const std::string& name,
                       const read_options& options) {
    detail::memory_lines src(text);
    detail::numbered_lines in(src, name, options);
    return detail::parse(in, format);
}

graph_data read_graph(const std::string& path, std::optional<graph_format> format, const read_options& options) {
    const graph_format f = format ? *format : format_from_name(path);
    detail::file_lines src(path);
    detail::numbered_lines in(src, path, options);
    return detail::parse(in, f);
}

} // namespace modularity
