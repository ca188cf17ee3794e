#pragma once
// Other RDF syntaxes than N-Triples, for ontologies (LUBM's univ-bench.owl
// is RDF/XML): parsed by raptor2 into the same staging as ntriples.hpp (a
// dictionary_builder and a triple list), so the store adds them the same
// way. Data files go through serd (ntriples.hpp), which is faster. raptor
// is called from src/rdf/rdf_xml.cpp only.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rdf/dictionary.hpp>
#include <rdf/ntriples.hpp>
#include <rdf/term.hpp>

namespace rdf {

/// The raptor syntax for a file name: rdfxml for .owl/.rdf/.xml, turtle
/// for .ttl, ntriples for .nt; empty if the name does not say.
std::string raptor_syntax_for(std::string_view path);

/// Staged triples of one file in raptor's syntax `syntax`.
class raptor_reader {
public:
    raptor_reader(std::string file, std::string syntax, std::string blank_prefix)
        : file_(std::move(file)), syntax_(std::move(syntax)), blank_prefix_(std::move(blank_prefix)) {}

    void parse(const std::string& text);

    dictionary_builder& dictionary() noexcept { return dict_; }
    std::vector<triple>& triples() noexcept { return triples_; }

private:
    // raptor's callbacks (rdf_xml.cpp): a member, so they reach the reader's
    // state, and only declared here, so that this header needs no raptor2.h.
    struct raptor_sink;

    // Give a Turtle error raptor reported without its place the place it is
    // at in `text`, where that can be found from the message.
    void locate_turtle_error(const std::string& text);

    std::string file_, syntax_, blank_prefix_;
    dictionary_builder dict_;
    std::vector<triple> triples_;
    std::string key_, error_, failure_;
    std::uint64_t error_line_ = 0, error_column_ = 0;
};

} // namespace rdf
