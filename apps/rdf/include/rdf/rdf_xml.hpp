#pragma once
// Other RDF syntaxes than N-Triples, for ontologies (LUBM's univ-bench.owl
// is RDF/XML): parsed by raptor2 into the same staging as ntriples.hpp (a
// dictionary_builder and a triple list), so the store adds them the same
// way. Data files go through serd (ntriples.hpp), which is faster.
#include <raptor2.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rdf/dictionary.hpp>
#include <rdf/ntriples.hpp>
#include <rdf/term.hpp>

namespace rdf {

/// The raptor syntax for a file name: rdfxml for .owl/.rdf/.xml, turtle
/// for .ttl, ntriples for .nt; empty if the name does not say.
inline std::string raptor_syntax_for(std::string_view path) {
    if (path.ends_with(".gz")) path.remove_suffix(3);
    for (auto [suffix, syntax] : {std::pair{".owl", "rdfxml"}, {".rdf", "rdfxml"}, {".xml", "rdfxml"},
                                  {".ttl", "turtle"}, {".nt", "ntriples"}})
        if (path.ends_with(suffix)) return syntax;
    return {};
}

/// Staged triples of one file in raptor's syntax `syntax`.
class raptor_reader {
public:
    raptor_reader(std::string file, std::string syntax, std::string blank_prefix)
        : file_(std::move(file)), syntax_(std::move(syntax)), blank_prefix_(std::move(blank_prefix)) {}

    void parse(const std::string& text) {
        std::unique_ptr<raptor_world, decltype(&raptor_free_world)> world(raptor_new_world(), &raptor_free_world);
        if (!world) throw load_error(file_, 0, 0, "raptor: cannot start");
        raptor_world_set_log_handler(world.get(), this, &on_log);
        std::unique_ptr<raptor_parser, decltype(&raptor_free_parser)> parser(
            raptor_new_parser(world.get(), syntax_.c_str()), &raptor_free_parser);
        if (!parser) throw load_error(file_, 0, 0, "raptor has no parser for syntax '" + syntax_ + "'");
        raptor_parser_set_statement_handler(parser.get(), this, &on_statement);
        // Relative IRIs (rdf:ID="Chair") resolve against the file's own IRI,
        // as they do for every other tool that reads the file by name.
        std::unique_ptr<unsigned char, decltype(&raptor_free_memory)> base_string(
            raptor_uri_filename_to_uri_string(file_.c_str()), &raptor_free_memory);
        std::unique_ptr<raptor_uri, decltype(&raptor_free_uri)> base(
            raptor_new_uri(world.get(), base_string ? base_string.get() : reinterpret_cast<const unsigned char*>("file:///")),
            &raptor_free_uri);
        if (raptor_parser_parse_start(parser.get(), base.get()) ||
            raptor_parser_parse_chunk(parser.get(), reinterpret_cast<const unsigned char*>(text.data()), text.size(), 1) ||
            !error_.empty()) {
            if (error_.empty()) error_ = "syntax error (" + syntax_ + ")";
            throw load_error(file_, error_line_, error_column_, error_);
        }
        if (!failure_.empty()) throw load_error(file_, 0, 0, failure_);
    }

    dictionary_builder& dictionary() noexcept { return dict_; }
    std::vector<triple>& triples() noexcept { return triples_; }

private:
    term_id encode(const raptor_term* t) {
        key_.clear();
        switch (t->type) {
        case RAPTOR_TERM_TYPE_URI: {
            std::size_t n = 0;
            const unsigned char* s = raptor_uri_as_counted_string(t->value.uri, &n);
            append_key(key_, term_kind::iri, {reinterpret_cast<const char*>(s), n});
            break;
        }
        case RAPTOR_TERM_TYPE_BLANK: {
            std::string label = blank_prefix_;
            label.append(reinterpret_cast<const char*>(t->value.blank.string), t->value.blank.string_len);
            append_key(key_, term_kind::blank, label);
            break;
        }
        case RAPTOR_TERM_TYPE_LITERAL: {
            const auto& l = t->value.literal;
            std::string_view datatype, lang;
            std::size_t n = 0;
            if (l.datatype) datatype = {reinterpret_cast<const char*>(raptor_uri_as_counted_string(l.datatype, &n)), n};
            if (l.language) lang = {reinterpret_cast<const char*>(l.language), l.language_len};
            append_key(key_, term_kind::literal, {reinterpret_cast<const char*>(l.string), l.string_len}, datatype, lang);
            break;
        }
        default: failure_ = "raptor returned a term of unknown type"; return 0;
        }
        return dict_.intern(key_);
    }

    static void on_statement(void* self_, raptor_statement* st) {
        auto& self = *static_cast<raptor_reader*>(self_);
        if (!self.failure_.empty()) return;
        try {
            const term_id s = self.encode(st->subject), p = self.encode(st->predicate), o = self.encode(st->object);
            self.triples_.push_back({s, p, o});
        } catch (const std::exception& e) {
            self.failure_ = e.what();
        }
    }

    static void on_log(void* self_, raptor_log_message* m) {
        auto& self = *static_cast<raptor_reader*>(self_);
        if (m->level < RAPTOR_LOG_LEVEL_ERROR || !self.error_.empty()) return;
        self.error_ = m->text ? m->text : "error";
        if (m->locator) {
            self.error_line_ = std::uint64_t(std::max(0, raptor_locator_line(m->locator)));
            self.error_column_ = std::uint64_t(std::max(0, raptor_locator_column(m->locator)));
        }
    }

    std::string file_, syntax_, blank_prefix_;
    dictionary_builder dict_;
    std::vector<triple> triples_;
    std::string key_, error_, failure_;
    std::uint64_t error_line_ = 0, error_column_ = 0;
};

} // namespace rdf
