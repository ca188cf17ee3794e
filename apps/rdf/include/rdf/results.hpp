#pragma once
// Query results out: decoding ids to terms happens here and only here.
// Formats: SPARQL 1.1 TSV (terms in N-Triples form, which the dictionary's
// keys already are, so a row is copied, not converted), SPARQL 1.1 JSON,
// SPARQL XML and CSV results; ASK's boolean in each; N-Triples for the
// graphs of CONSTRUCT and DESCRIBE. Ids are read through any term_keys
// (the store's dictionary, or a SPARQL result's terms).
#include <algorithm>
#include <array>
#include <span>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <rdf/execute.hpp>
#include <rdf/term.hpp>
#include <rdf/term_keys.hpp>

namespace rdf {

/// Where TSV text goes: a std::string, or an adapter over other storage
/// (a worker's shared output, parallel.hpp) that takes it without a
/// second copy.
template <class T>
concept text_buffer = requires(T& t, const char* p, std::size_t n, char c) {
    t.append(p, n);
    t.push_back(c);
};

/// The rows of a TSV result, without the header line.
template <text_buffer Out, term_keys Keys>
void append_tsv_rows(Out& out, const table& rows, const Keys& dict) {
    const std::size_t w = rows.width();
    for (std::size_t r = 0; r < rows.rows(); ++r) {
        for (std::size_t c = 0; c < w; ++c) {
            if (c) out.push_back('\t');
            const term_id id = rows.cells[r * w + c];
            if (id != no_term) {
                const std::string_view k = dict.key(id);
                // TSV cells cannot hold a tab or line end raw; keys escape \n
                // and \r already, tabs get \t.
                if (k.find('\t') == std::string_view::npos) out.append(k.data(), k.size());
                else
                    for (char ch : k)
                        if (ch == '\t') out.append("\\t", 2);
                        else out.push_back(ch);
            }
        }
        out.push_back('\n');
    }
}

/// The bytes append_tsv_rows writes for `rows` (a tab inside a term, which
/// it escapes, aside).
template <term_keys Keys>
std::size_t tsv_rows_bytes(const table& rows, const Keys& dict) noexcept {
    const std::size_t w = rows.width();
    std::size_t n = rows.rows() * std::max<std::size_t>(w, 1); // a tab between cells, and the line end
    for (const term_id id : rows.cells)
        if (id != no_term) n += dict.key(id).size();
    return n;
}

namespace detail {
/// Reads a byte of every 32-byte line of [p, p + n): the SCC's caches do
/// not allocate a line on a write miss (MESH paper, section IV.A, on its
/// Table I), so text written into a buffer that is not cached goes to
/// memory store by store, a memory request per character. Read first, each
/// line costs one line fill and a write-back. Elsewhere it costs a load
/// per line that the writes would have brought in anyway.
inline void read_lines_before_writing(const char* p, std::size_t n) noexcept {
    const auto* bytes = reinterpret_cast<const volatile unsigned char*>(p);
    for (std::size_t i = 0; i < n; i += 32) (void)bytes[i];
    if (n) (void)bytes[n - 1];
}
} // namespace detail

inline void append_tsv_header(std::string& out, const std::vector<std::string>& names) {
    for (std::size_t c = 0; c < names.size(); ++c) {
        if (c) out += '\t';
        out += '?';
        out += names[c];
    }
    out += '\n';
}

template <term_keys Keys>
void append_tsv(std::string& out, const table& rows, const std::vector<std::string>& names, const Keys& dict) {
    append_tsv_header(out, names);
    append_tsv_rows(out, rows, dict);
}

namespace detail {
/// A JSON string's body: runs that need no escape are appended whole (a
/// large answer's JSON is mostly such runs: byte-by-byte appends were half
/// of its writing time).
inline void append_json_body(std::string& out, std::string_view s) {
    std::size_t run = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        out.append(s.data() + run, i - run);
        run = i + 1;
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        }
    }
    out.append(s.data() + run, s.size() - run);
}

inline void append_json_string(std::string& out, std::string_view s) {
    out += '"';
    append_json_body(out, s);
    out += '"';
}

/// A key slice (term.hpp's split_key) as a JSON string: its N-Triples escapes
/// undone, through `scratch`, only when it has any.
inline void append_json_key_slice(std::string& out, std::string_view slice, bool escaped, std::string& scratch) {
    out += '"';
    if (escaped && slice.find('\\') != std::string_view::npos) {
        scratch.clear();
        append_unescaped(scratch, slice);
        append_json_body(out, scratch);
    } else {
        append_json_body(out, slice);
    }
    out += '"';
}
} // namespace detail

template <term_keys Keys>
void append_json(std::string& out, const table& rows, const std::vector<std::string>& names, const Keys& dict) {
    out += "{\"head\":{\"vars\":[";
    for (std::size_t c = 0; c < names.size(); ++c) {
        if (c) out += ',';
        detail::append_json_string(out, names[c]);
    }
    out += "]},\"results\":{\"bindings\":[";
    const std::size_t w = rows.width();
    // Each column's '"name":{"type":', escaped once, not once a cell.
    std::vector<std::string> opening(w);
    for (std::size_t c = 0; c < w && c < names.size(); ++c) {
        detail::append_json_string(opening[c], names[c]);
        opening[c] += ":{\"type\":";
    }
    std::string scratch;
    for (std::size_t r = 0; r < rows.rows(); ++r) {
        out += r ? ",\n{" : "\n{";
        bool first = true;
        for (std::size_t c = 0; c < w; ++c) {
            const term_id id = rows.cells[r * w + c];
            if (id == no_term) continue; // unbound: absent, as the format has it
            const detail::key_parts t = detail::split_key(dict.key(id));
            if (!first) out += ',';
            first = false;
            out += opening[c];
            out += t.kind == term_kind::iri ? "\"uri\"" : t.kind == term_kind::blank ? "\"bnode\"" : "\"literal\"";
            out += ",\"value\":";
            detail::append_json_key_slice(out, t.value, t.escaped, scratch);
            if (!t.lang.empty()) {
                out += ",\"xml:lang\":";
                detail::append_json_string(out, t.lang);
            } else if (!t.datatype.empty()) {
                out += ",\"datatype\":";
                detail::append_json_key_slice(out, t.datatype, t.escaped, scratch);
            }
            out += '}';
        }
        out += '}';
    }
    out += "]}}\n";
}

namespace detail {
inline void append_xml_escaped(std::string& out, std::string_view s) {
    for (const char c : s) {
        switch (c) {
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '&': out += "&amp;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
}
} // namespace detail

/// SPARQL Query Results XML Format (W3C recommendation, 2013).
template <term_keys Keys>
void append_xml(std::string& out, const table& rows, const std::vector<std::string>& names, const Keys& dict) {
    out += "<?xml version=\"1.0\"?>\n<sparql xmlns=\"http://www.w3.org/2005/sparql-results#\">\n<head>";
    for (const std::string& n : names) {
        out += "<variable name=\"";
        detail::append_xml_escaped(out, n);
        out += "\"/>";
    }
    out += "</head>\n<results>\n";
    const std::size_t w = rows.width();
    for (std::size_t r = 0; r < rows.rows(); ++r) {
        out += "<result>";
        for (std::size_t c = 0; c < w; ++c) {
            const term_id id = rows.cells[r * w + c];
            if (id == no_term) continue;
            const term t = parse_key(dict.key(id));
            out += "<binding name=\"";
            detail::append_xml_escaped(out, names[c]);
            out += "\">";
            if (t.kind == term_kind::iri) {
                out += "<uri>";
                detail::append_xml_escaped(out, t.value);
                out += "</uri>";
            } else if (t.kind == term_kind::blank) {
                out += "<bnode>";
                detail::append_xml_escaped(out, t.value);
                out += "</bnode>";
            } else {
                out += "<literal";
                if (!t.lang.empty()) {
                    out += " xml:lang=\"";
                    detail::append_xml_escaped(out, t.lang);
                    out += '"';
                } else if (!t.datatype.empty()) {
                    out += " datatype=\"";
                    detail::append_xml_escaped(out, t.datatype);
                    out += '"';
                }
                out += '>';
                detail::append_xml_escaped(out, t.value);
                out += "</literal>";
            }
            out += "</binding>";
        }
        out += "</result>\n";
    }
    out += "</results>\n</sparql>\n";
}

/// SPARQL 1.1 CSV results: the header without '?', each term as its plain
/// text (IRIs and literals' lexical forms, blank nodes as _:label), quoted
/// where it holds a comma, a quote or a line end; the format drops
/// datatypes and language tags by design (its section 2).
template <term_keys Keys>
void append_csv(std::string& out, const table& rows, const std::vector<std::string>& names, const Keys& dict) {
    auto field = [&](std::string_view s) {
        if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
            out += s;
            return;
        }
        out += '"';
        for (const char c : s) {
            if (c == '"') out += '"';
            out += c;
        }
        out += '"';
    };
    for (std::size_t c = 0; c < names.size(); ++c) {
        if (c) out += ',';
        field(names[c]);
    }
    out += "\r\n";
    const std::size_t w = rows.width();
    for (std::size_t r = 0; r < rows.rows(); ++r) {
        for (std::size_t c = 0; c < w; ++c) {
            if (c) out += ',';
            const term_id id = rows.cells[r * w + c];
            if (id == no_term) continue;
            const term t = parse_key(dict.key(id));
            field(t.kind == term_kind::blank ? "_:" + t.value : t.value);
        }
        out += "\r\n";
    }
}

/// ASK's answer: SPARQL JSON and XML results, or true / false as the text of TSV and CSV.
inline void append_boolean(std::string& out, bool answer, std::string_view format) {
    const char* word = answer ? "true" : "false";
    if (format == "json") {
        out += "{\"head\":{},\"boolean\":";
        out += word;
        out += "}\n";
    } else if (format == "xml") {
        out += "<?xml version=\"1.0\"?>\n<sparql xmlns=\"http://www.w3.org/2005/sparql-results#\">\n<head></head>\n<boolean>";
        out += word;
        out += "</boolean>\n</sparql>\n";
    } else {
        out += word;
        out += '\n';
    }
}

/// A graph (CONSTRUCT, DESCRIBE) as N-Triples: the keys are N-Triples terms already.
template <term_keys Keys>
void append_ntriples(std::string& out, std::span<const std::array<term_id, 3>> triples, const Keys& dict) {
    for (const auto& t : triples) {
        for (const term_id id : t) {
            out += dict.key(id);
            out += ' ';
        }
        out += ".\n";
    }
}

} // namespace rdf
