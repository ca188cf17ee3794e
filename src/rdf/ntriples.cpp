#include <rdf/ntriples.hpp>

#include <sys/stat.h>
#include <zlib.h>

#include <serd/serd.h>

#include <algorithm>
#include <array>
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
        // Grown by reads of at most what it holds (from 1 MB): resize zeroes
        // what it adds, and a small file's load was mostly the zeroing and
        // first touching of a whole block's pages (16 MB: 8-10 ms).
        const std::size_t want = std::min(used < block_bytes_ ? block_bytes_ - used : std::max<std::size_t>(block_bytes_ / 4, 1),
                                          std::max<std::size_t>(used, 1 << 20));
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
    // Only a \\u or \\U escape can name no character, and the walk below
    // looks at every byte: text without one is passed at memchr's pace (a
    // literal-heavy file's escapes made the walk a tenth of its load). A
    // backslash takes the next byte with it, as the walk's escapes do, so
    // an escaped backslash before a 'u' is no candidate; where the two could
    // differ (in a comment, which the walk skips) this only finds more.
    bool candidate = false;
    for (std::size_t i = text.find('\\'); i != std::string_view::npos && !candidate; i = text.find('\\', i + 2))
        candidate = i + 1 < text.size() && (text[i + 1] == 'u' || text[i + 1] == 'U');
    if (!candidate) return std::string_view::npos;
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

namespace {

// Byte classes for the line scanner: what may stand in an IRI or a
// string literal as it is (plain), what ends it, what needs a closer look.
enum : std::uint8_t { plain = 0, closes = 1, escape = 2, high = 3, refused = 4 };

constexpr std::array<std::uint8_t, 256> byte_classes(bool iri) {
    std::array<std::uint8_t, 256> t{};
    for (int c = 0; c < 256; ++c) {
        if (c >= 0x80) t[c] = high;
        else if (c <= 0x20 || c == 0x7f) t[c] = refused; // (a literal's raw tab, too: serd decides those)
        else t[c] = plain;
    }
    if (iri) {
        for (const char c : {'<', '"', '{', '}', '|', '^', '`', '\\'}) t[static_cast<unsigned char>(c)] = refused;
        t['>'] = closes;
    } else {
        t[' '] = plain;
        t['"'] = closes;
        t['\\'] = escape;
    }
    return t;
}
constexpr auto iri_bytes = byte_classes(true), literal_bytes = byte_classes(false);

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The scanner reads a line's terms into their parts, and refuses (returns
// nullptr) anything it is not sure of: refusing is never wrong, serd reads
// the line then.
struct scanned_term {
    term_kind kind = term_kind::iri;
    std::string_view value, datatype, lang; // IRI and datatype without <>, blank label without _:
};

// <scheme:...> with only the characters N-Triples allows unescaped, and
// valid UTF-8. From p at '<'.
const char* scan_iri(const char* p, const char* end, std::string_view& body) {
    const char* q = p + 1;
    if (q == end || !is_alpha(*q)) return nullptr; // an absolute IRI starts with its scheme
    while (q < end && (is_alpha(*q) || is_digit(*q) || *q == '+' || *q == '-' || *q == '.')) ++q;
    if (q == end || *q != ':') return nullptr;
    bool any_high = false;
    for (; q < end; ++q) {
        const std::uint8_t k = iri_bytes[static_cast<unsigned char>(*q)];
        if (k == plain) continue;
        if (k == closes) break;
        if (k != high) return nullptr;
        any_high = true;
    }
    if (q == end) return nullptr;
    body = std::string_view(p + 1, std::size_t(q - p - 1));
    if (any_high && detail::invalid_utf8_at(body) != std::string_view::npos) return nullptr;
    return q + 1;
}

// "..." with the escapes \\t \\b \\n \\r \\f \\" \\' \\\\ (not \\u, \\U), then
// @lang or ^^<datatype> or nothing. From p at '"'.
// `own` holds the value if it had escapes.
const char* scan_literal(const char* p, const char* end, scanned_term& t, std::string& own) {
    const char* q = p + 1;
    const char* run = q;
    bool any_high = false, unescaped = false;
    for (;; ++q) {
        if (q == end) return nullptr;
        const std::uint8_t k = literal_bytes[static_cast<unsigned char>(*q)];
        if (k == plain) continue;
        if (k == closes) break;
        if (k == high) {
            any_high = true;
            continue;
        }
        if (k != escape || q + 1 == end) return nullptr;
        if (!unescaped) own.clear();
        unescaped = true;
        own.append(run, q);
        switch (q[1]) {
        case 't': own += '\t'; break;
        case 'b': own += '\b'; break;
        case 'n': own += '\n'; break;
        case 'r': own += '\r'; break;
        case 'f': own += '\f'; break;
        case '"': own += '"'; break;
        case '\'': own += '\''; break;
        case '\\': own += '\\'; break;
        default: return nullptr; // \\u, \\U or an error
        }
        run = ++q + 1;
    }
    if (unescaped) {
        own.append(run, q);
        t.value = own;
    } else {
        t.value = std::string_view(p + 1, std::size_t(q - p - 1));
    }
    if (any_high && detail::invalid_utf8_at(std::string_view(p + 1, std::size_t(q - p - 1))) != std::string_view::npos)
        return nullptr;
    t.kind = term_kind::literal;
    t.datatype = t.lang = {};
    ++q;
    if (q < end && *q == '@') {
        const char* l = ++q;
        if (q == end || !is_alpha(*q)) return nullptr;
        while (q < end && is_alpha(*q)) ++q;
        while (q < end && *q == '-') {
            const char* part = ++q;
            while (q < end && (is_alpha(*q) || is_digit(*q))) ++q;
            if (q == part) return nullptr;
        }
        t.lang = std::string_view(l, std::size_t(q - l));
    } else if (q + 1 < end && q[0] == '^' && q[1] == '^') {
        q += 2;
        if (q == end || *q != '<') return nullptr;
        q = scan_iri(q, end, t.datatype);
    }
    return q;
}

// _:label with ASCII letters, digits, '_' and '-' (the first not '-'): N-Triples
// also allows dots inside and other letters, which serd reads.
const char* scan_blank(const char* p, const char* end, std::string_view& label) {
    const char* q = p + 2;
    if (q >= end || !(is_alpha(*q) || is_digit(*q) || *q == '_')) return nullptr;
    while (q < end && (is_alpha(*q) || is_digit(*q) || *q == '_' || *q == '-')) ++q;
    label = std::string_view(p + 2, std::size_t(q - p - 2));
    return q;
}

const char* scan_term(const char* p, const char* end, scanned_term& t, bool object, std::string& own) {
    if (p == end) return nullptr;
    if (*p == '<') {
        t.kind = term_kind::iri;
        return scan_iri(p, end, t.value);
    }
    if (*p == '_' && p + 1 < end && p[1] == ':') {
        t.kind = term_kind::blank;
        return scan_blank(p, end, t.value);
    }
    if (*p == '"' && object) return scan_literal(p, end, t, own);
    return nullptr;
}

const char* skip_blanks(const char* p, const char* end) {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    return p;
}

enum class line_kind { refused, empty, triple };

// A line (with its line end): its three terms, or an empty or comment line.
line_kind scan_line(std::string_view line, std::array<scanned_term, 3>& t, std::array<std::string, 3>& own) {
    const char* p = skip_blanks(line.data(), line.data() + line.size());
    const char* end = line.data() + line.size();
    while (end > p && (end[-1] == '\n' || end[-1] == '\r')) --end; // EOL is [\r\n]+
    if (p == end) return line_kind::empty;
    if (*p == '#') { // a comment of printable ASCII
        for (const char* q = p; q < end; ++q)
            if (static_cast<unsigned char>(*q) < 0x20 ? *q != '\t' : static_cast<unsigned char>(*q) >= 0x7f)
                return line_kind::refused;
        return line_kind::empty;
    }
    for (std::size_t i = 0; i < 3; ++i) {
        // A blank after each term (serd decides "_:b." and the like), the dot after the last.
        if (!(p = scan_term(p, end, t[i], i == 2, own[i])) || p == end) return line_kind::refused;
        const char* after = skip_blanks(p, end);
        if (after == p && (i < 2 || t[i].kind == term_kind::blank)) return line_kind::refused;
        p = after;
    }
    if (t[1].kind != term_kind::iri || *p != '.' || skip_blanks(p + 1, end) != end) return line_kind::refused;
    return line_kind::triple;
}

} // namespace

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
        case SERD_CURIE: // serd's N-Triples reader takes a bare name as one
            self.failure_token_ = sv(n);
            self.failure_ = "'" + self.failure_token_ +
                            "' is not a term of N-Triples: write an IRI in <...>, a blank node _:label or a \"literal\"";
            return no_term;
        default: self.failure_ = "unexpected node type " + std::to_string(int(n->type)); return no_term;
        }
        return self.encode_key(self.key_);
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

term_id ntriples_parser::encode_key(std::string_view k) {
    if (!known_) return dict_.intern(k);
    if (const term_id id = known_->find(k); id != no_term) return id;
    return fresh_id(dict_.intern(k));
}

void ntriples_parser::refuse_nul(const std::string& text, const text_chunk& c) const {
    // serd would take a NUL for the end of its text.
    if (const void* nul = std::memchr(text.data() + c.begin, 0, c.end - c.begin)) {
        const std::size_t at = std::size_t(static_cast<const char*>(nul) - text.data());
        throw error_at(text, c, at, "NUL byte in the text (is this a binary file?)");
    }
}

void ntriples_parser::parse(const std::string& text, const text_chunk& c) {
    if (c.begin == c.end) return;
    refuse_nul(text, c);
    // Line by line: the forms most data is written in by scan_line, runs of
    // other lines (\\u escapes, labels with dots, comments after a
    // statement, a statement over two lines, errors) by serd, which then
    // also names what is wrong. A run ends at the next line scan_line reads
    // as a triple. Both give the keys append_key writes, so a line's terms
    // do not depend on which of them read it.
    std::array<scanned_term, 3> t;
    auto serd_run = [&](std::size_t from, std::size_t to, std::uint64_t first) {
        try {
            parse_with_serd(text, {from, to, first});
        } catch (const load_error&) {
            // A statement may go on past the run (a missing dot, and then a
            // line the scanner reads): the rest of the chunk, read on by
            // serd, names the error as serd reading it all would.
            if (to < c.end) parse_with_serd(text, {from, c.end, first});
            throw;
        }
    };
    std::uint64_t line = c.first_line, run_line = 0;
    std::size_t run = c.end; // where the lines for serd start; c.end: none
    for (std::size_t b = c.begin; b < c.end; ++line) {
        const void* nl = std::memchr(text.data() + b, '\n', c.end - b);
        const std::size_t e = nl ? std::size_t(static_cast<const char*>(nl) - text.data()) + 1 : c.end;
        const line_kind k = scan_line(std::string_view(text.data() + b, e - b), t, unescaped_);
        if (k == line_kind::refused || (k == line_kind::empty && run != c.end)) {
            if (run == c.end) run = b, run_line = line;
            b = e;
            continue;
        }
        if (run != c.end) {
            serd_run(run, b, run_line);
            run = c.end;
        }
        if (k == line_kind::triple) {
            term_id id[3];
            for (std::size_t i = 0; i < 3; ++i) {
                key_.clear();
                if (t[i].kind == term_kind::blank) {
                    key_ += "_:";
                    key_ += blank_prefix_;
                    key_ += t[i].value;
                } else {
                    append_key(key_, t[i].kind, t[i].value, t[i].datatype, t[i].lang);
                }
                id[i] = encode_key(key_);
            }
            triples_.push_back({id[0], id[1], id[2]});
        }
        b = e;
    }
    if (run != c.end) serd_run(run, c.end, run_line);
}

namespace {
// serd reads a range as a stream that ends where it does: a string would
// need a NUL after it, written over the next line's first byte (another
// thread's chunk) or over the range's last line end (which made serd
// report "end of file" for a literal left open on that line). Past the
// file's first line, a space goes first: serd takes bytes EF.. at the
// start of its text for a byte order mark, which only the file's start
// may have.
struct serd_range {
    const char* at;
    std::size_t left;
    bool space;
    static std::size_t read(void* buf, std::size_t size, std::size_t n, void* stream) {
        auto& r = *static_cast<serd_range*>(stream);
        char* out = static_cast<char*>(buf);
        std::size_t room = size * n, k = 0;
        if (r.space && room) {
            out[k++] = ' ';
            --room;
            r.space = false;
        }
        const std::size_t m = std::min(r.left, room);
        std::memcpy(out + k, r.at, m);
        r.at += m;
        r.left -= m;
        return size ? (k + m) / size : 0;
    }
    static int error(void*) { return 0; }
};
} // namespace

int ntriples_parser::read_with_serd(const std::string& text, std::size_t begin, std::size_t end, bool space) {
    serd_range in{text.data() + begin, end - begin, space};
    SerdReader* r = serd_reader_new(SERD_NTRIPLES, this, nullptr, nullptr, nullptr, &serd_sink::on_statement, nullptr);
    serd_reader_set_strict(r, true);
    serd_reader_set_error_sink(r, &serd_sink::on_error, this);
    if (!blank_prefix_.empty()) serd_reader_add_blank_prefix(r, reinterpret_cast<const std::uint8_t*>(blank_prefix_.c_str()));
    error_.clear();
    failure_.clear();
    failure_token_.clear();
    error_line_ = error_column_ = 0;
    const SerdStatus st = serd_reader_read_source(r, &serd_range::read, &serd_range::error, &in, nullptr, 4096);
    serd_reader_free(r);
    return int(st);
}

void ntriples_parser::parse_with_serd(const std::string& text, const text_chunk& c) {
    if (c.begin == c.end) return;
    refuse_nul(text, c);
    const bool space = c.first_line > 1;
    const auto st = SerdStatus(read_with_serd(text, c.begin, c.end, space));
    if (!failure_.empty()) {
        // serd tells a statement's terms, not where they stand: the name is looked for.
        const std::size_t at = failure_token_.empty()
                                   ? std::string_view::npos
                                   : find_turtle_name(std::string_view(text.data() + c.begin, c.end - c.begin), failure_token_);
        if (at != std::string_view::npos) throw error_at(text, c, c.begin + at, failure_);
        throw load_error(file_, 0, 0, failure_);
    }
    // serd takes a surrogate escape; the chunk is searched for one only if
    // it has a backslash at all (most data has none), and the first error in
    // the text is the one reported.
    const std::string_view chunk(text.data() + c.begin, c.end - c.begin);
    std::optional<load_error> bad_escape;
    if (chunk.find('\\') != std::string_view::npos)
        if (const std::size_t at = find_bad_unicode_escape(chunk); at != std::string_view::npos)
            bad_escape = bad_unicode_escape_error(file_, chunk, at, c.first_line);
    if (st != SERD_SUCCESS || !error_.empty()) {
        std::uint64_t line = c.first_line + (error_line_ ? error_line_ - 1 : 0);
        if (error_.empty()) {
            // Failed without a word of where (some syntax errors are not
            // reported, only returned): the first line serd refuses alone.
            error_ = serd_strerror(st) ? reinterpret_cast<const char*>(serd_strerror(st)) : "syntax error";
            const std::string why = error_;
            line = c.first_line;
            for (std::size_t b = c.begin; b < c.end; ++line) {
                const void* nl = std::memchr(text.data() + b, '\n', c.end - b);
                const std::size_t e = nl ? std::size_t(static_cast<const char*>(nl) - text.data()) + 1 : c.end;
                if (read_with_serd(text, b, e, line > 1) != SERD_SUCCESS || !error_.empty()) break;
                b = e;
            }
            if (line >= c.first_line + count_lines(text.data() + c.begin, text.data() + c.end) + 1) line = c.first_line;
            error_ = why;
            error_line_ = error_column_ = 0;
        }
        // serd's columns on the first line of its text are one past those
        // on the lines after it (where a line end resets the count), and
        // the space put first is one more: its texts here start at a
        // line's start, so that is undone.
        const std::uint64_t shift = space ? 2 : 1;
        const std::uint64_t column = error_line_ <= 1 ? (error_column_ > shift ? error_column_ - shift : 0) : error_column_;
        load_error e(file_, line, column, error_);
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
