#include <rdf/ntriples.hpp>

#include <zlib.h>

#include <serd/serd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include <rdf/dictionary.hpp>
#include <rdf/term.hpp>

namespace rdf {

std::string read_text_file(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) throw load_error(path, 0, 0, std::string("cannot open: ") + std::strerror(errno));
    gzbuffer(f, 1 << 20);
    std::string text;
    std::size_t used = 0;
    for (;;) {
        if (text.size() - used < (1 << 20)) text.resize(std::max<std::size_t>(text.size() * 2, 4 << 20));
        const int n = gzread(f, text.data() + used, unsigned(std::min<std::size_t>(text.size() - used, 1u << 30)));
        if (n < 0) {
            int code = 0;
            std::string why = gzerror(f, &code);
            gzclose(f);
            throw load_error(path, 0, 0, "cannot read: " + (code == Z_ERRNO ? std::string(std::strerror(errno)) : why));
        }
        if (n == 0) break;
        used += std::size_t(n);
    }
    int code = 0;
    const std::string why = gzerror(f, &code);
    gzclose(f);
    // A truncated .gz reads as a short file with Z_BUF_ERROR: say so rather
    // than load the part that arrived.
    if (code != Z_OK && code != Z_STREAM_END) throw load_error(path, 0, 0, "corrupt or truncated gzip data: " + why);
    text.resize(used);
    return text;
}

std::vector<text_chunk> split_lines(std::string_view text, std::size_t size) {
    std::vector<text_chunk> out;
    std::uint64_t line = 1;
    for (std::size_t b = 0; b < text.size();) {
        std::size_t e = std::min(text.size(), b + size);
        if (e < text.size()) {
            const std::size_t nl = text.find('\n', e - 1);
            e = nl == std::string_view::npos ? text.size() : nl + 1;
        }
        out.push_back({b, e, line});
        line += std::uint64_t(std::count(text.begin() + std::ptrdiff_t(b), text.begin() + std::ptrdiff_t(e), '\n'));
        b = e;
    }
    return out;
}

// serd calls these with the parser as its handle.
struct ntriples_parser::serd_sink {
    static std::string_view sv(const SerdNode* n) {
        return n && n->buf ? std::string_view(reinterpret_cast<const char*>(n->buf), n->n_bytes) : std::string_view();
    }

    static term_id encode(ntriples_parser& self, const SerdNode* n, const SerdNode* datatype, const SerdNode* lang) {
        self.key_.clear();
        switch (n->type) {
        case SERD_URI: append_key(self.key_, term_kind::iri, sv(n)); break;
        case SERD_BLANK: append_key(self.key_, term_kind::blank, sv(n)); break;
        case SERD_LITERAL: append_key(self.key_, term_kind::literal, sv(n), sv(datatype), sv(lang)); break;
        default: self.failure_ = "unexpected node type " + std::to_string(int(n->type)); return no_term;
        }
        return self.dict_.intern(self.key_);
    }

    static SerdStatus on_statement(void* self_, SerdStatementFlags, const SerdNode*, const SerdNode* s,
                                   const SerdNode* p, const SerdNode* o, const SerdNode* datatype,
                                   const SerdNode* lang) {
        auto& self = *static_cast<ntriples_parser*>(self_);
        try {
            const term_id si = encode(self, s, nullptr, nullptr), pi = encode(self, p, nullptr, nullptr),
                          oi = encode(self, o, datatype, lang);
            if (!self.failure_.empty()) return SERD_ERR_BAD_SYNTAX;
            self.triples_.push_back({si, pi, oi});
        } catch (const std::exception& e) { // out of memory or ids: stop the parse, report it
            self.failure_ = e.what();
            return SERD_ERR_UNKNOWN;
        }
        return SERD_SUCCESS;
    }

    static SerdStatus on_error(void* self_, const SerdError* e) {
        auto& self = *static_cast<ntriples_parser*>(self_);
        if (!self.error_.empty()) return SERD_SUCCESS; // the first error is the one to fix
        char buf[512];
        va_list args;
        va_copy(args, *e->args);
        std::vsnprintf(buf, sizeof buf, e->fmt, args);
        va_end(args);
        self.error_ = buf;
        while (!self.error_.empty() && (self.error_.back() == '\n' || self.error_.back() == ' ')) self.error_.pop_back();
        self.error_line_ = e->line;
        self.error_column_ = e->col;
        return SERD_SUCCESS;
    }
};

void ntriples_parser::parse(std::string& text, const text_chunk& c) {
    if (c.begin == c.end) return;
    if (const void* nul = std::memchr(text.data() + c.begin, 0, c.end - c.begin)) {
        const std::size_t at = std::size_t(static_cast<const char*>(nul) - text.data());
        throw error_at(text, c, at, "NUL byte in the text (is this a binary file?)");
    }
    char& last = text[c.end - 1];
    const char kept = last;
    if (kept == '\n' && c.end < text.size()) last = '\0';
    SerdReader* r = serd_reader_new(SERD_NTRIPLES, this, nullptr, nullptr, nullptr, &serd_sink::on_statement, nullptr);
    serd_reader_set_strict(r, true);
    serd_reader_set_error_sink(r, &serd_sink::on_error, this);
    if (!blank_prefix_.empty()) serd_reader_add_blank_prefix(r, reinterpret_cast<const std::uint8_t*>(blank_prefix_.c_str()));
    error_.clear();
    failure_.clear();
    const SerdStatus st = serd_reader_read_string(r, reinterpret_cast<const std::uint8_t*>(text.data() + c.begin));
    serd_reader_free(r);
    last = kept;
    if (!failure_.empty()) throw load_error(file_, 0, 0, failure_);
    if (st != SERD_SUCCESS || !error_.empty()) {
        if (error_.empty()) error_ = serd_strerror(st) ? reinterpret_cast<const char*>(serd_strerror(st)) : "syntax error";
        throw load_error(file_, c.first_line + (error_line_ ? error_line_ - 1 : 0), error_column_, error_);
    }
}

load_error ntriples_parser::error_at(const std::string& text, const text_chunk& c, std::size_t at, const std::string& why) const {
    const auto b = text.begin() + std::ptrdiff_t(c.begin), a = text.begin() + std::ptrdiff_t(at);
    const std::uint64_t line = c.first_line + std::uint64_t(std::count(b, a, '\n'));
    const auto line_start = std::find(std::make_reverse_iterator(a), std::make_reverse_iterator(b), '\n').base();
    return load_error(file_, line, std::uint64_t(a - line_start) + 1, why);
}

} // namespace rdf
