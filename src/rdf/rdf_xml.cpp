#include <rdf/rdf_xml.hpp>

#include <raptor2.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <rdf/dictionary.hpp>
#include <rdf/ntriples.hpp>
#include <rdf/term.hpp>

namespace rdf {

std::string raptor_syntax_for(std::string_view path) {
    if (path.ends_with(".gz")) path.remove_suffix(3);
    for (auto [suffix, syntax] : {std::pair{".owl", "rdfxml"}, {".rdf", "rdfxml"}, {".xml", "rdfxml"},
                                  {".ttl", "turtle"}, {".nt", "ntriples"}})
        if (path.ends_with(suffix)) return syntax;
    return {};
}

// raptor calls these with the reader as its handle.
struct raptor_reader::raptor_sink {
    static term_id encode(raptor_reader& self, const raptor_term* t) {
        self.key_.clear();
        switch (t->type) {
        case RAPTOR_TERM_TYPE_URI: {
            std::size_t n = 0;
            const unsigned char* s = raptor_uri_as_counted_string(t->value.uri, &n);
            append_key(self.key_, term_kind::iri, {reinterpret_cast<const char*>(s), n});
            break;
        }
        case RAPTOR_TERM_TYPE_BLANK: {
            std::string label = self.blank_prefix_;
            label.append(reinterpret_cast<const char*>(t->value.blank.string), t->value.blank.string_len);
            append_key(self.key_, term_kind::blank, label);
            break;
        }
        case RAPTOR_TERM_TYPE_LITERAL: {
            const auto& l = t->value.literal;
            std::string_view datatype, lang;
            std::size_t n = 0;
            if (l.datatype) datatype = {reinterpret_cast<const char*>(raptor_uri_as_counted_string(l.datatype, &n)), n};
            if (l.language) lang = {reinterpret_cast<const char*>(l.language), l.language_len};
            append_key(self.key_, term_kind::literal, {reinterpret_cast<const char*>(l.string), l.string_len}, datatype, lang);
            break;
        }
        default: self.failure_ = "raptor returned a term of unknown type"; return 0;
        }
        return self.dict_.intern(self.key_);
    }

    static void on_statement(void* self_, raptor_statement* st) {
        auto& self = *static_cast<raptor_reader*>(self_);
        if (!self.failure_.empty()) return;
        try {
            const term_id s = encode(self, st->subject), p = encode(self, st->predicate), o = encode(self, st->object);
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
};

void raptor_reader::locate_turtle_error(const std::string& text) {
    // raptor: 'The namespace prefix in "undefined:d" was not declared.',
    // reported (without a place) at the name's first use, which is where
    // it is first written: no declaration came before it.
    static constexpr std::string_view head = "The namespace prefix in \"", tail = "\" was not declared.";
    const std::string_view message = error_;
    if (!message.starts_with(head) || !message.ends_with(tail) || message.size() <= head.size() + tail.size()) return;
    const std::string_view name = message.substr(head.size(), message.size() - head.size() - tail.size());
    const std::size_t at = find_turtle_name(text, name);
    if (at == std::string::npos) return;
    error_line_ = 1 + std::uint64_t(std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n'));
    const std::size_t line_start = at == 0 ? 0 : text.rfind('\n', at - 1) + 1; // npos + 1 == 0
    error_column_ = at - line_start + 1;
}

void raptor_reader::parse(const std::string& text) {
    std::unique_ptr<raptor_world, decltype(&raptor_free_world)> world(raptor_new_world(), &raptor_free_world);
    if (!world) throw load_error(file_, 0, 0, "raptor: cannot start");
    raptor_world_set_log_handler(world.get(), this, &raptor_sink::on_log);
    std::unique_ptr<raptor_parser, decltype(&raptor_free_parser)> parser(
        raptor_new_parser(world.get(), syntax_.c_str()), &raptor_free_parser);
    if (!parser) throw load_error(file_, 0, 0, "raptor has no parser for syntax '" + syntax_ + "'");
    raptor_parser_set_statement_handler(parser.get(), this, &raptor_sink::on_statement);
    // Relative IRIs (rdf:ID="Chair") resolve against the file's own IRI,
    // as they do for every other tool that reads the file by name.
    std::unique_ptr<unsigned char, decltype(&raptor_free_memory)> base_string(
        raptor_uri_filename_to_uri_string(file_.c_str()), &raptor_free_memory);
    std::unique_ptr<raptor_uri, decltype(&raptor_free_uri)> base(
        raptor_new_uri(world.get(), base_string ? base_string.get() : reinterpret_cast<const unsigned char*>("file:///")),
        &raptor_free_uri);
    // RDF/XML goes in a line at a time: its errors (libxml2's, which counts
    // no lines under raptor) carry no line, and the line being parsed when
    // one is reported is where the parser found it. Turtle goes in whole:
    // raptor gathers its chunks by copying all so far (lines would make that
    // quadratic). Its syntax errors have their line; the one for an
    // undeclared prefix has none, and is placed by locate_turtle_error.
    if (raptor_parser_parse_start(parser.get(), base.get())) throw load_error(file_, 0, 0, "raptor: cannot start the parse");
    const bool by_line = syntax_ == "rdfxml";
    std::uint64_t line = 1;
    bool failed = false;
    for (std::size_t at = 0; !failed && error_.empty();) {
        const std::size_t nl = by_line ? text.find('\n', at) : std::string::npos;
        const std::size_t end = nl == std::string::npos ? text.size() : nl + 1;
        failed = raptor_parser_parse_chunk(parser.get(), reinterpret_cast<const unsigned char*>(text.data() + at), end - at,
                                           end == text.size()) != 0;
        if (end == text.size()) break;
        at = end;
        if (error_.empty() && !failed) ++line;
    }
    // raptor takes a surrogate escape in Turtle (RDF/XML has no such
    // escapes, and libxml2 refuses the character references).
    std::optional<load_error> bad_escape;
    if (syntax_ == "turtle" && text.find('\\') != std::string::npos)
        if (const std::size_t at = find_bad_unicode_escape(text); at != std::string::npos)
            bad_escape = bad_unicode_escape_error(file_, text, at);
    if (failed || !error_.empty()) {
        if (error_.empty()) error_ = "syntax error (" + syntax_ + ")";
        if (error_line_ == 0 && syntax_ == "turtle") locate_turtle_error(text);
        if (error_line_ == 0 && by_line) {
            error_line_ = line;
            error_column_ = 0;
        }
        if (bad_escape && (error_line_ == 0 || bad_escape->line <= error_line_)) throw *bad_escape; // the first in the file, or the one with a place
        throw load_error(file_, error_line_, error_column_, error_);
    }
    if (bad_escape) throw *bad_escape;
    if (!failure_.empty()) throw load_error(file_, 0, 0, failure_);
}

} // namespace rdf
