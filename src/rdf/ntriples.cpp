#include <rdf/ntriples.hpp>

#include <sys/stat.h>
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
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rdf/dictionary.hpp>
#include <rdf/term.hpp>

namespace rdf {

namespace {

// Line ends in [b, e): memchr's vector loop, a call per line. std::count
// here is a byte at a time (g++ -O2 does not vectorise it), and a load
// counts every byte of its file: 7 instructions a byte, a third of the
// parse's own.
std::uint64_t count_lines(const char* b, const char* e) {
    std::uint64_t n = 0;
    while (b < e) {
        const void* nl = std::memchr(b, '\n', std::size_t(e - b));
        if (!nl) break;
        ++n;
        b = static_cast<const char*>(nl) + 1;
    }
    return n;
}

} // namespace

line_block_reader::line_block_reader(std::string path, std::size_t block_bytes)
    : path_(std::move(path)), block_bytes_(std::max<std::size_t>(block_bytes, 1)) {
    gzFile f = gzopen(path_.c_str(), "rb");
    if (!f) throw load_error(path_, 0, 0, std::string("cannot open: ") + std::strerror(errno));
    gz_ = f;
    gzbuffer(f, 1 << 20);
    if (struct stat st; ::stat(path_.c_str(), &st) == 0) file_bytes_ = std::uint64_t(st.st_size);
}

line_block_reader::~line_block_reader() {
    if (gz_) gzclose(static_cast<gzFile>(gz_));
}

std::uint64_t line_block_reader::file_bytes_read() const noexcept {
    const auto at = gzoffset(static_cast<gzFile>(gz_));
    return at < 0 ? 0 : std::uint64_t(at);
}

bool line_block_reader::next(std::string& block, std::uint64_t& first_line) {
    gzFile f = static_cast<gzFile>(gz_);
    block.swap(carry_);
    carry_.clear();
    std::size_t scanned = 0; // bytes of block searched for a line end
    while (!eof_) {
        // Read until the block holds block_bytes_ and a line end past what
        // came before it (a long line lengthens the block).
        const std::size_t used = block.size();
        const std::size_t want = used < block_bytes_ ? block_bytes_ - used : std::max<std::size_t>(block_bytes_ / 4, 1);
        block.resize(used + want);
        const int n = gzread(f, block.data() + used, unsigned(std::min<std::size_t>(want, 1u << 30)));
        if (n < 0) {
            int code = 0;
            const std::string why = gzerror(f, &code);
            throw load_error(path_, 0, 0, "cannot read: " + (code == Z_ERRNO ? std::string(std::strerror(errno)) : why));
        }
        block.resize(used + std::size_t(n));
        if (n == 0) {
            eof_ = true;
            int code = 0;
            const std::string why = gzerror(f, &code);
            // A truncated .gz reads as a short file with Z_BUF_ERROR: say so
            // rather than load the part that arrived.
            if (code != Z_OK && code != Z_STREAM_END) throw load_error(path_, 0, 0, "corrupt or truncated gzip data: " + why);
            break;
        }
        if (block.size() < block_bytes_) continue;
        // The last line end, searched for only in what the earlier rounds
        // did not search (they found none).
        if (const void* nl = ::memrchr(block.data() + scanned, '\n', block.size() - scanned)) {
            const std::size_t end = std::size_t(static_cast<const char*>(nl) - block.data()) + 1;
            carry_.assign(block, end);
            block.resize(end);
            break;
        }
        scanned = block.size();
    }
    first_line = next_line_;
    next_line_ += count_lines(block.data(), block.data() + block.size());
    return !block.empty();
}

std::string read_text_file(const std::string& path) {
    // The block reader's opening, reading and truncation checks, its blocks joined.
    line_block_reader in(path);
    std::string text, block;
    std::uint64_t first_line = 0;
    while (in.next(block, first_line)) text += block;
    return text;
}

std::vector<text_chunk> split_lines(std::string_view text, std::size_t size, std::uint64_t first_line) {
    std::vector<text_chunk> out;
    std::uint64_t line = first_line;
    for (std::size_t b = 0; b < text.size();) {
        std::size_t e = std::min(text.size(), b + size);
        if (e < text.size()) {
            const std::size_t nl = text.find('\n', e - 1);
            e = nl == std::string_view::npos ? text.size() : nl + 1;
        }
        out.push_back({b, e, line});
        line += count_lines(text.data() + b, text.data() + e);
        b = e;
    }
    return out;
}

namespace {

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// The escape starting at text[at] == '\\': its length, and whether it is a
// \\u or \\U escape whose number is no character. A malformed one is left
// to the parser, which reports it.
std::pair<std::size_t, bool> read_escape(std::string_view text, std::size_t at) {
    if (at + 1 >= text.size()) return {1, false};
    const char kind = text[at + 1];
    if (kind != 'u' && kind != 'U') return {2, false};
    const std::size_t digits = kind == 'u' ? 4 : 8;
    std::uint64_t cp = 0;
    for (std::size_t i = 0; i < digits; ++i) {
        const std::size_t k = at + 2 + i;
        if (k >= text.size() || !is_hex(text[k])) return {2, false};
        const char c = text[k];
        cp = cp * 16 + std::uint64_t(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return {2 + digits, (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF};
}

} // namespace

namespace {

// Calls visit(i) at each byte of N-Triples or Turtle text outside comments,
// IRIs and strings, and on_escape(i) at each backslash escape inside IRIs
// and strings; either returning true stops the walk, at that offset.
// Turtle's '...' and long """...""" strings are handled too; N-Triples has
// neither, and in it the rules read the same.
template <class Visit, class OnEscape>
std::size_t walk_terms(std::string_view text, Visit&& visit, OnEscape&& on_escape) {
    std::size_t i = 0;
    const std::size_t n = text.size();
    while (i < n) {
        const char c = text[i];
        if (c == '#') { // a comment may hold anything
            const std::size_t nl = text.find('\n', i);
            i = nl == std::string_view::npos ? n : nl + 1;
        } else if (c == '<' || c == '"' || c == '\'') {
            const bool is_long = c != '<' && i + 2 < n && text[i + 1] == c && text[i + 2] == c;
            const char close = c == '<' ? '>' : c;
            i += is_long ? 3 : 1;
            while (i < n) {
                if (text[i] == '\\') {
                    if (on_escape(i)) return i;
                    i += read_escape(text, i).first;
                } else if (text[i] == close && (!is_long || (i + 2 < n && text[i + 1] == c && text[i + 2] == c))) {
                    i += is_long ? 3 : 1;
                    break;
                } else if (text[i] == '\n' && !is_long) { // an unclosed term: the parser reports it
                    ++i;
                    break;
                } else {
                    ++i;
                }
            }
        } else {
            if (visit(i)) return i;
            // Turtle's \\' or \\# in a prefixed name: not a quote, not a comment.
            i += c == '\\' ? 2 : 1;
        }
    }
    return std::string_view::npos;
}

} // namespace

std::size_t find_bad_unicode_escape(std::string_view text) {
    // Escapes mean something only in IRIs and strings.
    return walk_terms(text, [](std::size_t) { return false; }, [&](std::size_t at) { return read_escape(text, at).second; });
}

std::size_t find_turtle_name(std::string_view text, std::string_view name) {
    auto is_name_char = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
               c == ':' || c == '%' || c == '\\' || (static_cast<unsigned char>(c) & 0x80);
    };
    return walk_terms(
        text,
        [&](std::size_t i) {
            // A whole token: no name character just before or after it.
            return text.substr(i).starts_with(name) && (i == 0 || !is_name_char(text[i - 1])) &&
                   (i + name.size() == text.size() || !is_name_char(text[i + name.size()]));
        },
        [](std::size_t) { return false; });
}

load_error bad_unicode_escape_error(const std::string& file, std::string_view text, std::size_t at, std::uint64_t first_line) {
    const std::uint64_t line = first_line + std::uint64_t(std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n'));
    const std::size_t line_start = at == 0 ? 0 : text.rfind('\n', at - 1) + 1; // npos + 1 == 0
    const std::string_view escape = text.substr(at, read_escape(text, at).first);
    return load_error(file, line, at - line_start + 1,
                      "escape '" + std::string(escape) +
                          "' names no Unicode character (a UTF-16 surrogate, D800-DFFF, or past 10FFFF): "
                          "escape the character's own code point, e.g. \\U0001F600 rather than a surrogate pair");
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
        if (!self.known_) return self.dict_.intern(self.key_);
        if (const term_id id = self.known_->find(self.key_); id != no_term) return id;
        return fresh_id(self.dict_.intern(self.key_));
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
    // serd takes a surrogate escape; the chunk is searched for one only if
    // it has a backslash at all (most data has none), and the first error in
    // the text is the one reported.
    const std::string_view chunk(text.data() + c.begin, c.end - c.begin);
    std::optional<load_error> bad_escape;
    if (chunk.find('\\') != std::string_view::npos)
        if (const std::size_t at = find_bad_unicode_escape(chunk); at != std::string_view::npos)
            bad_escape = bad_unicode_escape_error(file_, chunk, at, c.first_line);
    if (st != SERD_SUCCESS || !error_.empty()) {
        if (error_.empty()) error_ = serd_strerror(st) ? reinterpret_cast<const char*>(serd_strerror(st)) : "syntax error";
        load_error e(file_, c.first_line + (error_line_ ? error_line_ - 1 : 0), error_column_, error_);
        if (bad_escape && (bad_escape->line < e.line || (bad_escape->line == e.line && bad_escape->column < e.column)))
            throw *bad_escape;
        throw e;
    }
    if (bad_escape) throw *bad_escape;
}

load_error ntriples_parser::error_at(const std::string& text, const text_chunk& c, std::size_t at, const std::string& why) const {
    const auto b = text.begin() + std::ptrdiff_t(c.begin), a = text.begin() + std::ptrdiff_t(at);
    const std::uint64_t line = c.first_line + std::uint64_t(std::count(b, a, '\n'));
    const auto line_start = std::find(std::make_reverse_iterator(a), std::make_reverse_iterator(b), '\n').base();
    return load_error(file_, line, std::uint64_t(a - line_start) + 1, why);
}

} // namespace rdf
