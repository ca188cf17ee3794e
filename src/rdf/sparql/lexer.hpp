#pragma once
// The SPARQL lexer: the query text as tokens, one at a time, with the
// errors of both lexer and parser placed at byte offsets of that text
// ("line L, column C: ...", as rdf::query_error carries them).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rdf::detail {

struct sparql_token {
    enum class kind : std::uint8_t {
        end,
        word,    ///< a bare keyword: SELECT, a, true, FILTER, ...
        var,     ///< value: the name without the sigil
        iri,     ///< value: the IRI with escapes decoded, not yet resolved
        pname,   ///< prefix: before ':'; value: the local part, unescaped
        blank,   ///< value: the label after "_:"
        string,  ///< value: the lexical form, unescaped
        langtag, ///< value: the tag without '@'
        integer,
        decimal,
        dbl,     ///< numbers: value is the text as written, sign included
        punct,   ///< value: the character(s); two-character ones: ^^ != <= >= && ||
    };
    kind k = kind::end;
    std::size_t begin = 0, end = 0; ///< byte offsets in the query text
    std::string value;
    std::string prefix;
    bool has_local = false; ///< pname: "p:x" rather than "p:" (PREFIX declarations need the latter)
};

class sparql_lexer {
public:
    explicit sparql_lexer(std::string_view text) : text_(text) {}

    /// The next token into token(), skipping space and comments.
    void advance();
    /// The current token lexed again as an IRI (the parser found '<' where
    /// only a term can stand): an IRI token, or its error.
    void reread_as_iri() {
        pos_ = tok_.begin;
        tok_ = sparql_token{};
        tok_.begin = pos_;
        lex_iri();
        tok_.end = pos_;
    }
    /// The current token; the parser may take its strings (it advances next).
    sparql_token& token() noexcept { return tok_; }
    std::string_view text() const noexcept { return text_; }

    /// Throws query_error at `offset` of the text.
    [[noreturn]] void fail(std::size_t offset, const std::string& message) const;
    /// Query text quoted into messages: bounded in length and with control
    /// bytes made visible, since it may be anything a fuzzer produced.
    static std::string quote(std::string_view s);
    /// A token as messages show it: its text quoted, or "end of query".
    std::string describe(const sparql_token& t) const;

private:
    using kind = sparql_token::kind;

    char at(std::size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

    void skip_space();
    [[noreturn]] void bad_char(std::size_t i) const;
    void lex_token();
    void punct(std::size_t n);
    bool iri_ahead() const;
    char32_t read_uchar(std::size_t backslash);
    void lex_iri();
    void lex_string(char q);
    void lex_var();
    void lex_langtag();
    // A name that may contain '.' but not end with one: "ex:a.b." is ex:a.b
    // followed by the '.' ending the triple. Returns where the name ends.
    std::size_t scan_dotted_name(std::size_t i, bool (*allowed)(char32_t)) const;
    void lex_blank_label();
    void lex_word();
    // PN_LOCAL, unescaping '\'-escapes and keeping %XX as written (the
    // grammar says so: a prefixed name expands to exactly those bytes).
    void lex_pname(std::size_t colon);
    void lex_number();

    std::string_view text_;
    std::size_t pos_ = 0;
    sparql_token tok_;
};

} // namespace rdf::detail
