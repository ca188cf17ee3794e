#pragma once
// N-Triples loading with serd (strict mode): a file, plain or gzip, is read
// as it is parsed, in blocks of whole lines (line_block_reader: N-Triples is
// one statement a line, so a cut at a line end never splits a term), so the
// text in memory is one block, whatever the file's size. A block is cut
// again into chunks, each parsed into a dictionary_builder and a list of
// triples; chunks are what lets several threads parse one block (each into
// its own builder, which store.hpp then folds into the store's dictionary
// and empties before the next block).
//
// Errors carry the file, line and column. A parse either completes or
// throws: the caller stages its results, so a failed load adds nothing.
// serd and zlib are called from src/rdf/ntriples.cpp only.
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rdf/dictionary.hpp>
#include <rdf/term.hpp>

namespace rdf {

struct triple {
    term_id s, p, o;
    friend auto operator<=>(const triple&, const triple&) = default;
};

/// A file the loader cannot take. what() is "file:line:column: why", or
/// "file:line: why" when the parser gave no column (raptor's Turtle), or
/// "file: why" when the error is not at a place in the text.
struct load_error : std::runtime_error {
    load_error(const std::string& file, std::uint64_t line, std::uint64_t column, const std::string& why)
        : std::runtime_error(file + (line ? ":" + std::to_string(line) : std::string()) +
                             (line && column ? ":" + std::to_string(column) : std::string()) + ": " + why),
          file(file), line(line), column(column) {}
    std::string file;
    std::uint64_t line, column; ///< 1-based; 0 when unknown (column) or not at a place in the text (both)
};

/// The whole file as text: gzip is detected by its magic bytes, not by the
/// name, and decompressed (zlib reads plain files through unchanged).
std::string read_text_file(const std::string& path);

/// One chunk of the text: whole lines, and where the first one is.
struct text_chunk {
    std::size_t begin, end;
    std::uint64_t first_line;
};

/// Cut `text` into chunks of about `size` bytes, each ending after a line
/// end; `text`'s first line is line `first_line` of its file.
std::vector<text_chunk> split_lines(std::string_view text, std::size_t size, std::uint64_t first_line = 1);

/// A file, plain or gzip (by its magic bytes), read in blocks of whole lines.
/// A line longer than a block makes its block longer: a block is never cut
/// inside a line. The reader holds one block's text and the start of the
/// next line, nothing more.
class line_block_reader {
public:
    /// Throws load_error if the file cannot be opened.
    explicit line_block_reader(std::string path, std::size_t block_bytes = std::size_t(16) << 20);
    ~line_block_reader();
    line_block_reader(const line_block_reader&) = delete;
    line_block_reader& operator=(const line_block_reader&) = delete;

    /// The next block into `block` (its old contents are dropped), and the
    /// line number of its first line; false at the end of the file. The last
    /// block may end without a line end. Throws load_error on a read error
    /// or a corrupt or truncated gzip stream (at the end: zlib finds a cut
    /// only there), so a caller that stages its work loses nothing.
    bool next(std::string& block, std::uint64_t& first_line);

    /// Bytes of the file on disk, and how many of them were read so far
    /// (compressed bytes for gzip): a progress fraction for either kind.
    std::uint64_t file_bytes() const noexcept { return file_bytes_; }
    std::uint64_t file_bytes_read() const noexcept;

private:
    std::string path_;
    std::size_t block_bytes_;
    void* gz_ = nullptr; // gzFile: zlib.h stays out of this header
    std::uint64_t file_bytes_ = 0, next_line_ = 1;
    std::string carry_; ///< the start of the line the last block could not end
    bool eof_ = false;
};

/// Where the first \\u or \\U escape in an IRI or a string of N-Triples or
/// Turtle text names no character (a UTF-16 surrogate, U+D800..U+DFFF, or
/// a number past U+10FFFF), as an offset into `text`; npos if none. serd
/// and raptor turn a surrogate escape into bytes that are not UTF-8, which
/// the store would then hand on to every output, so the loaders look for
/// them first. Comments and the text outside terms are skipped.
std::size_t find_bad_unicode_escape(std::string_view text);

/// Where the prefixed name `name` is first written in Turtle text as a
/// token of its own (not in a comment, an IRI or a string); npos if not.
/// raptor's error for an undeclared prefix comes without its place.
std::size_t find_turtle_name(std::string_view text, std::string_view name);

/// The error for such an escape at `at`: file, line, column and what to write instead.
load_error bad_unicode_escape_error(const std::string& file, std::string_view text, std::size_t at, std::uint64_t first_line = 1);

/// Parses chunks of one file into its own dictionary and triple list.
class ntriples_parser {
public:
    /// `blank_prefix` renames the file's blank nodes (_:b -> _:<prefix>b), so
    /// that two files' _:b1 stay two nodes, as RDF has it. With `known` (a
    /// dictionary no one changes while this parser parses), a term `known`
    /// has comes out as its id there, and only new terms enter dictionary(),
    /// as fresh_id(their id in it): a term in every chunk is looked up once
    /// per occurrence, as it would be anyway, and never copied or folded.
    ntriples_parser(std::string file, std::string blank_prefix = {}, const dictionary_builder* known = nullptr)
        : file_(std::move(file)), blank_prefix_(std::move(blank_prefix)), known_(known) {}

    /// With `known`: the triples' id for dictionary() term i, counted down
    /// from the top of the id range, which no known id reaches (ids stop at
    /// 2^32 - 2 terms, known and new together).
    static constexpr term_id fresh_id(term_id i) noexcept { return no_term - 1 - i; }

    /// Forget the parsed terms and triples (the next block starts afresh).
    void clear() {
        dict_ = dictionary_builder();
        triples_.clear();
    }

    /// Parse text[c.begin, c.end) (other threads may parse other chunks of
    /// the same text at the same time: it is only read).
    void parse(const std::string& text, const text_chunk& c);

    /// As parse, by serd alone: what parse does with lines its own scanner
    /// does not read (and the reference the tests hold the scanner to).
    void parse_with_serd(const std::string& text, const text_chunk& c);

    dictionary_builder& dictionary() noexcept { return dict_; }
    std::vector<triple>& triples() noexcept { return triples_; }
    const std::string& file() const noexcept { return file_; }

private:
    // serd's callbacks (ntriples.cpp): a member, so they reach the parser's
    // state, and only declared here, so that this header needs no serd.h.
    struct serd_sink;

    load_error error_at(const std::string& text, const text_chunk& c, std::size_t at, const std::string& why) const;
    void refuse_nul(const std::string& text, const text_chunk& c) const;
    /// serd on text[begin, end) (a space first if `space`): its SerdStatus.
    int read_with_serd(const std::string& text, std::size_t begin, std::size_t end, bool space);
    term_id encode_key(std::string_view key);

    std::string file_, blank_prefix_;
    const dictionary_builder* known_;
    dictionary_builder dict_;
    std::vector<triple> triples_;
    std::string key_, error_, failure_, failure_token_;
    std::array<std::string, 3> unescaped_; ///< the scanner's literal values with escapes undone
    std::uint64_t error_line_ = 0, error_column_ = 0;
};

} // namespace rdf
