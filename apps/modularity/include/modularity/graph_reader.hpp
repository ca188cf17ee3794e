#pragma once
// Graph files in, graph_data out: METIS/DIMACS `.graph`, edge lists `.el`
// (directed lines symmetrised: w(u,v) = a(u,v) + a(v,u)), Pajek `.net`;
// each plain or gzip-compressed (zlib reads both). A malformed file is a
// graph_error naming the file and line, never a crash or a graph that is
// silently different from the file: METIS adjacency must be symmetric and
// match its header, ids must be in range, weights finite and >= 0 and
// within 2^450 of each other (graph_data.hpp: the range of the weights).
//
//   modularity::graph_data g = modularity::read_graph("karate.graph.gz");
//   auto h = modularity::parse_graph(text, modularity::graph_format::pajek, "in-memory.net");
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <modularity/graph_data.hpp>

// zlib's file handle (gzFile is a pointer to it): declared, so that this
// header needs no zlib.h; src/modularity/graph_reader.cpp calls zlib.
struct gzFile_s;

namespace modularity {

enum class graph_format { metis, edge_list, pajek };

/// What is wrong with a graph file, and where: "FILE:LINE: what".
class graph_error : public std::runtime_error {
public:
    graph_error(std::string file, std::size_t line, const std::string& what)
        : std::runtime_error(file + (line ? ":" + std::to_string(line) : std::string()) + ": " + what),
          file_(std::move(file)), line_(line) {}
    const std::string& file() const noexcept { return file_; }
    /// 0: the file as a whole (cannot open, ends early, ...).
    std::size_t line() const noexcept { return line_; }

private:
    std::string file_;
    std::size_t line_;
};

struct read_options {
    /// Refuse graphs with more vertices (a header or id that large in a
    /// small file is more likely an error than a graph; the fuzzer lowers it).
    std::uint64_t max_vertices = std::numeric_limits<vertex>::max() - 1;
    /// The memory a declared vertex count may need (a header, *Vertices),
    /// checked before anything is allocated for it; 0: what the machine
    /// has, its RAM and swap or the process's address-space limit.
    std::uint64_t memory_bytes = 0;
    /// Called now and then with the bytes read so far (of the file as stored).
    std::function<void(std::uint64_t)> progress;
};

/// The format a file name says (.graph/.metis, .el/.edges/.txt, .net/.pajek,
/// each optionally + .gz), or an error naming the accepted ones.
graph_format format_from_name(std::string_view path);

/// A --format name: metis (or graph), el (edge-list, edgelist), pajek (net).
graph_format parse_format(std::string_view name);

namespace detail {

/// Lines of a file, plain or gzip, read in 256 KB blocks; a line may be
/// longer than a block (a hub's METIS line).
class file_lines {
public:
    explicit file_lines(const std::string& path);
    ~file_lines();
    file_lines(const file_lines&) = delete;
    file_lines& operator=(const file_lines&) = delete;

    bool next(std::string_view& line);
    std::uint64_t bytes_read() const noexcept;

private:
    void fill();

    std::string path_;
    gzFile_s* file_;
    std::string buf_;
    std::size_t pos_ = 0;
    bool eof_ = false;
};

} // namespace detail

/// Parse a graph from text in memory; `name` is used in messages.
graph_data parse_graph(std::string_view text, graph_format format, const std::string& name = "<memory>",
                       const read_options& options = {});

/// Read a graph file (plain or gzip); the format from the name unless given.
graph_data read_graph(const std::string& path, std::optional<graph_format> format = std::nullopt,
                      const read_options& options = {});

} // namespace modularity
