// Loading, the dictionary, the indexes and the store file.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include <rdf/query_engine.hpp>
#include <rdf/store.hpp>
#include <rdf/store_file.hpp>

#include "test_support.hpp" // this directory's (rdf_test::), not tests/support's

namespace {

std::string temp_path(const std::string& name) {
    return "/tmp/tacomesh_rdf_" + std::to_string(::getpid()) + "_" + name;
}

void write_file(const std::string& path, const std::string& text) {
    FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
}

// A store file's arrays, in the order save_store writes them: the text,
// the dictionary offsets and hash table, each order's offsets, second and
// third columns, the predicate statistics. Their element sizes:
constexpr std::size_t array_count = 16;
constexpr std::size_t element_size[array_count] = {1, 8, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 16};
enum array_index : std::size_t { text = 0, dict_offsets = 1, hash_table = 2, spo = 3, pso = 6, pos = 9, osp = 12, stats = 15 };

/// Where array k's elements start in a store file's bytes, and how many there are.
std::pair<std::size_t, std::uint64_t> array_at(const std::string& bytes, std::size_t k) {
    std::size_t at = rdf::store_header_bytes; // magic, version, byte order, the two CRCs
    for (std::size_t i = 0;; ++i) {
        std::uint64_t n = 0;
        REQUIRE(at + 8 <= bytes.size());
        std::memcpy(&n, bytes.data() + at, 8);
        if (i == k) return {at + 8, n};
        at += 8 + n * element_size[i] + rdf::detail::padding_to_8(n * element_size[i]);
    }
}

template <class T>
T get(const std::string& bytes, std::size_t k, std::size_t i) {
    T v;
    std::memcpy(&v, bytes.data() + array_at(bytes, k).first + i * sizeof(T), sizeof(T));
    return v;
}

template <class T>
void put(std::string& bytes, std::size_t k, std::size_t i, T v) {
    std::memcpy(bytes.data() + array_at(bytes, k).first + i * sizeof(T), &v, sizeof(T));
}

/// Array k replaced by `elements` (count and bytes).
void replace_array(std::string& bytes, std::size_t k, const std::string& elements) {
    const auto [at, n] = array_at(bytes, k);
    const std::uint64_t count = elements.size() / element_size[k];
    std::string head = bytes.substr(0, at - 8);
    head.append(reinterpret_cast<const char*>(&count), 8);
    const std::size_t old_bytes = n * element_size[k];
    bytes = head + elements + std::string(rdf::detail::padding_to_8(elements.size()), '\0') +
            bytes.substr(at + old_bytes + rdf::detail::padding_to_8(old_bytes));
}

/// A store of four terms (a, p, b, q: ids 0 to 3) and three triples, as a store file's bytes.
std::string small_store_bytes() {
    rdf::store s;
    std::string text = "<http://e/a> <http://e/p> <http://e/b> .\n<http://e/b> <http://e/p> <http://e/a> .\n"
                       "<http://e/a> <http://e/q> <http://e/b> .\n";
    s.load_text(text, "small.nt");
    REQUIRE(s.dictionary().size() == 4);
    const std::string path = temp_path("small.tmrdf");
    rdf::save_store(s, path);
    std::string bytes = rdf_test::slurp(path);
    std::remove(path.c_str());
    return bytes;
}

} // namespace

TEST_CASE("N-Triples load: duplicates removed, terms encoded once, keys canonical", "[store]") {
    rdf::store s;
    std::string text =
        "<http://e/a> <http://e/p> <http://e/b> .\n"
        "<http://e/a> <http://e/p> <http://e/b> .\n" // duplicate
        "<http://e/a> <http://e/q> \"x\"@EN .\n"
        "<http://e/a> <http://e/q> \"x\"^^<http://www.w3.org/2001/XMLSchema#string> .\n"
        "<http://e/a> <http://e/q> \"x\" .\n" // the same term as xsd:string
        "<http://e/a> <http://e/q> \"a\\\"b\\nc\" .\n"
        "_:n1 <http://e/p> <http://e/a> .\n";
    const rdf::load_report r = s.load_text(text, "t.nt");
    CHECK(r.statements == 7);
    CHECK(r.added == 5);
    CHECK(s.triple_count() == 5);
    const rdf::store_view v = s.view();
    CHECK(v.dict.find("\"x\"@en") != rdf::no_term);
    CHECK(v.dict.find("\"x\"") != rdf::no_term);
    CHECK(v.dict.find("\"x\"^^<http://www.w3.org/2001/XMLSchema#string>") == rdf::no_term);
    CHECK(v.dict.find("\"a\\\"b\\nc\"") != rdf::no_term);
    CHECK(v.dict.find("_:n1") != rdf::no_term);
    // Every key is found again, and every order holds every triple.
    for (rdf::term_id t = 0; t < v.dict.size(); ++t) CHECK(v.dict.find(v.dict.key(t)) == t);
    for (const auto& perm : v.perms) CHECK(perm.second.size() == 5);
    const rdf::term_id a = v.dict.find("<http://e/a>"), p = v.dict.find("<http://e/p>"), b = v.dict.find("<http://e/b>");
    CHECK(v[rdf::order::spo].contains(a, p, b));
    CHECK_FALSE(v[rdf::order::spo].contains(b, p, a));
    const rdf::predicate_stat* st = v.stat(p);
    REQUIRE(st);
    CHECK(st->triples == 2);
    CHECK(st->subjects == 2);
    CHECK(st->objects == 2);
}

TEST_CASE("A malformed file is an error with file, line and column, and adds nothing", "[store]") {
    rdf::store s;
    std::string good = "<http://e/a> <http://e/p> <http://e/b> .\n";
    s.load_text(good, "good.nt");
    std::string bad = "<http://e/c> <http://e/p> <http://e/d> .\n"
                      "<http://e/c> <http://e/p> <http://e/e> .\n"
                      "<http://e/c> <http://e/p> \"unterminated .\n";
    try {
        s.load_text(bad, "bad.nt", rdf::load_options::chunked(50)); // the error is in the third chunk
        FAIL("no error");
    } catch (const rdf::load_error& e) {
        CHECK(e.file == "bad.nt");
        CHECK(e.line == 3);
        CHECK(std::string(e.what()).rfind("bad.nt:3:", 0) == 0);
    }
    CHECK(s.triple_count() == 1);
    CHECK(s.view().dict.find("<http://e/c>") == rdf::no_term);
    std::string nul = "<http://e/a> <http://e/p> <http://e/b> .\n<http://e/a>";
    nul += '\0';
    nul += " .\n";
    CHECK_THROWS_WITH(s.load_text(nul, "nul.nt"), Catch::Contains("nul.nt:2:13") && Catch::Contains("NUL byte"));
    CHECK_THROWS_WITH(s.load_file("/nonexistent/x.nt"), Catch::Contains("/nonexistent/x.nt") && Catch::Contains("cannot open"));
    CHECK(s.triple_count() == 1);
}

TEST_CASE("gzip and plain text load the same, and a truncated gzip is an error", "[store]") {
    rdf::store gz, plain;
    gz.load_file(rdf_test::data_dir + "/lubm1-raw.nt.gz");
    std::string text = rdf::read_text_file(rdf_test::data_dir + "/lubm1-raw.nt.gz");
    plain.load_text(text, "plain");
    CHECK(gz.triple_count() == 100543);
    CHECK(plain.triple_count() == gz.triple_count());
    CHECK(plain.dictionary().text() == gz.dictionary().text());

    const std::string whole = rdf_test::slurp(rdf_test::data_dir + "/lubm1-raw.nt.gz");
    const std::string cut = temp_path("cut.nt.gz");
    write_file(cut, whole.substr(0, whole.size() / 2));
    rdf::store s;
    CHECK_THROWS_WITH(s.load_file(cut), Catch::Contains("truncated"));
    CHECK(s.triple_count() == 0);
    std::remove(cut.c_str());
}

TEST_CASE("Blank nodes of two files stay apart", "[store]") {
    rdf::store s;
    std::string one = "_:b <http://e/p> <http://e/a> .\n";
    std::string two = "_:b <http://e/p> <http://e/a> .\n";
    s.load_text(one, "one");
    s.load_text(two, "two");
    CHECK(s.triple_count() == 2);
}

TEST_CASE("A second file's renamed blank nodes do not meet labels the first file wrote", "[store]") {
    // The first file's _:f1_x is its own node; the second file's _:x, however
    // it is renamed, must not become it.
    rdf::store s;
    std::string one = "_:f1_x <http://e/p> <http://e/a> .\n_:f1__x <http://e/p> <http://e/a> .\n";
    std::string two = "_:x <http://e/p> <http://e/b> .\n";
    std::string three = "_:x <http://e/p> <http://e/c> .\n_:f1_x <http://e/p> <http://e/c> .\n";
    s.load_text(one, "one");
    s.load_text(two, "two");
    s.load_text(three, "three");
    // Five statements, five subjects: no node is shared between files.
    std::vector<rdf::term_id> subjects;
    rdf::detail::enumerate(s.index(), rdf::order::spo)([&](const std::array<rdf::term_id, 3>& x) { subjects.push_back(x[0]); });
    std::sort(subjects.begin(), subjects.end());
    CHECK(subjects.size() == 5);
    CHECK(std::adjacent_find(subjects.begin(), subjects.end()) == subjects.end());
}

TEST_CASE("An ontology's blank nodes stay apart from the data's, in Turtle too", "[store]") {
    const std::string ttl = temp_path("bn.ttl");
    write_file(ttl, "_:x <http://e/p> <http://e/a> .\n[] <http://e/p> <http://e/a> .\n");
    rdf::store s;
    std::string data = "_:f1_x <http://e/p> <http://e/b> .\n_:genid1 <http://e/p> <http://e/b> .\n";
    s.load_text(data, "data.nt");
    s.load_file(ttl);
    std::size_t blanks = 0;
    const rdf::store_view v = s.view();
    for (rdf::term_id t = 0; t < v.dict.size(); ++t) blanks += v.dict.key(t).starts_with("_:");
    CHECK(blanks == 4);
    std::remove(ttl.c_str());
}

TEST_CASE("An escape naming no character (a surrogate, past U+10FFFF) is refused at its place", "[store]") {
    // Taken, it would give the store bytes that are not UTF-8, and every output after them.
    auto refused = [](std::string text, const char* where) {
        rdf::store s;
        CHECK_THROWS_WITH(s.load_text(text, "e.nt"), Catch::Contains(where) && Catch::Contains("names no Unicode character"));
        CHECK(s.triple_count() == 0);
    };
    refused("<http://e/a> <http://e/p> \"x\\uD800\" .\n", "e.nt:1:29: escape '\\uD800'");
    refused("<http://e/a> <http://e/p> \"a\" .\n<http://e/a> <http://e/p> <http://e/\\uDFFF> .\n", "e.nt:2:37");
    refused("<http://e/a> <http://e/p> \"x\\U0000DBFF\" .\n", "e.nt:1:29");
    refused("<http://e/a> <http://e/p> \"x\\U00110000\" .\n", "e.nt:1:29");
    // After escaped backslashes, a surrogate is still seen (a backslash pairs with the byte after it).
    refused("<http://e/a> <http://e/p> \"a\\\\\\uD800\" .\n", "e.nt:1:31");
    refused("<http://e/a> <http://e/p> \"\\\\u \\\\\\\\\\U0000D800\" .\n", "e.nt:1:36");
    // In the third chunk of a parse on several threads: still its own line.
    {
        std::string text;
        for (int i = 0; i < 20; ++i) text += "<http://e/a> <http://e/p> \"" + std::to_string(i) + "\" .\n";
        text += "<http://e/a> <http://e/p> \"\\uD800\" .\n";
        rdf::store s;
        rdf::load_options o = rdf::load_options::chunked(200);
        o.threads = 2;
        CHECK_THROWS_WITH(s.load_text(text, "c.nt", o), Catch::Contains("c.nt:21:28"));
    }
    // Characters, an escaped backslash before "uD800", and one in a comment are fine.
    rdf::store s;
    std::string fine = "# \\uD800 in a comment\n<http://e/a> <http://e/p> \"\\\\uD800 \\u00E9 \\U0001F600\" .\n";
    s.load_text(fine, "fine.nt");
    CHECK(s.triple_count() == 1);
    CHECK(s.view().dict.find("\"\\\\uD800 \xC3\xA9 \xF0\x9F\x98\x80\"") != rdf::no_term);

    const std::string ttl = temp_path("esc.ttl");
    write_file(ttl, "@prefix : <http://e/> .\n:a :p 'it\\'s\"' , \"\"\"long\n\"\" \\uD800\"\"\" .\n");
    rdf::store t;
    CHECK_THROWS_WITH(t.load_file(ttl), Catch::Contains("esc.ttl:3:4: escape '\\uD800'"));
    write_file(ttl, "@prefix : <http://e/> .\n:a\\'b :p \"\\uD83D\\uDE00\" .\n");
    CHECK_THROWS_WITH(t.load_file(ttl), Catch::Contains("esc.ttl:2:11"));
    CHECK(t.triple_count() == 0);
    std::remove(ttl.c_str());
}

TEST_CASE("A Turtle undeclared prefix is reported at its line and column", "[store]") {
    // raptor reports it without a place; it is where the name is first
    // written as a name (not in a comment, an IRI or a string).
    const std::string ttl = temp_path("prefix.ttl");
    write_file(ttl, "@prefix : <http://e/> .\n# undefined:d in a comment\n:a :p \"undefined:d\" , <undefined:d> .\n"
                    ":a :p xundefined:dd .\n\n  :a :p undefined:d .\n");
    rdf::store s;
    CHECK_THROWS_WITH(s.load_file(ttl), Catch::Contains("prefix.ttl:4:7: The namespace prefix in \"xundefined:dd\" was not declared"));
    write_file(ttl, "@prefix : <http://e/> .\n# undefined:d in a comment\n:a :p \"undefined:d\" , <undefined:d> .\n"
                    ":a :p :b .\n\n  :a :p\n undefined:d .\n");
    CHECK_THROWS_WITH(s.load_file(ttl), Catch::Contains("prefix.ttl:7:2: The namespace prefix in \"undefined:d\" was not declared"));
    CHECK(s.triple_count() == 0);
    std::remove(ttl.c_str());
}

TEST_CASE("RDF/XML ontologies load through raptor", "[store]") {
    rdf::store s;
    const rdf::load_report r = s.load_file(rdf_test::data_dir + "/univ-bench.owl");
    CHECK(r.statements > 200);
    CHECK(s.view().dict.find("<http://swat.cse.lehigh.edu/onto/univ-bench.owl#Chair>") != rdf::no_term);
    const std::string bad = temp_path("bad.owl");
    write_file(bad, "<?xml version=\"1.0\"?>\n<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n<rdf:Description>\n</rdf:RDF>\n");
    rdf::store t;
    CHECK_THROWS_AS(t.load_file(bad), rdf::load_error);
    CHECK(t.triple_count() == 0);
    std::remove(bad.c_str());
}

TEST_CASE("Store files round-trip, and a damaged one is refused", "[store]") {
    rdf::store s;
    s.load_file(rdf_test::data_dir + "/lubm1-raw.nt.gz");
    const std::string path = temp_path("store.tmrdf");
    rdf::save_store(s, path);
    REQUIRE(rdf::is_store_file(path));
    const rdf::store back = rdf::open_store(path);
    CHECK(back.triple_count() == s.triple_count());
    CHECK(back.dictionary().text() == s.dictionary().text());
    CHECK(back.index().second == s.index().second);
    CHECK(back.index().third == s.index().third);
    {
        // Mapped: the same arrays, read where they lie in the file, and the same answers.
        const rdf::mapped_store m(path);
        const rdf::store_view v = m.view(), w = s.view();
        CHECK(m.triple_count() == s.triple_count());
        CHECK(m.bytes() == s.bytes());
        REQUIRE(v.dict.size() == w.dict.size());
        for (rdf::term_id t = 0; t < w.dict.size(); t += 97) CHECK(v.dict.key(t) == w.dict.key(t));
        CHECK(v.dict.find("<http://www.Department0.University0.edu>") == w.dict.find("<http://www.Department0.University0.edu>"));
        for (std::size_t o = 0; o < rdf::order_count; ++o) {
            CHECK(std::ranges::equal(v.perms[o].offsets, w.perms[o].offsets));
            CHECK(std::ranges::equal(v.perms[o].third, w.perms[o].third));
            CHECK(reinterpret_cast<std::uintptr_t>(v.perms[o].second.data()) % 8 == 0); // aligned in place
        }
        const std::string q = "SELECT ?x ?y WHERE { ?x <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
                              "<http://swat.cse.lehigh.edu/onto/univ-bench.owl#GraduateStudent> . "
                              "?x <http://swat.cse.lehigh.edu/onto/univ-bench.owl#memberOf> ?y }";
        std::string from_map, from_store;
        rdf::answer_as_tsv(q, v, from_map);
        rdf::answer_as_tsv(q, w, from_store);
        CHECK(from_map.size() > 1000);
        CHECK(from_map == from_store);
        CHECK(m.copy().dictionary().text() == s.dictionary().text());
    }

    std::string bytes = rdf_test::slurp(path);
    const std::string broken = temp_path("broken.tmrdf");
    write_file(broken, bytes.substr(0, bytes.size() - 100));
    CHECK_THROWS_WITH(rdf::open_store(broken), Catch::Contains("truncated") || Catch::Contains("corrupt"));
    bytes.replace(bytes.size() - 5000, 4, "\xff\xff\xff\xff"); // an id past the dictionary in the last index column
    write_file(broken, bytes);
    CHECK_THROWS_WITH(rdf::open_store(broken), Catch::Contains("corrupt"));
    write_file(broken, "TMRDFST1 not really");
    CHECK_THROWS_AS(rdf::open_store(broken), rdf::load_error);
    std::remove(broken.c_str());
    std::remove(path.c_str());
}

TEST_CASE("A mapped open checks a store file once, and again after any change", "[store]") {
    rdf::store s;
    s.load_file(rdf_test::data_dir + "/lubm1-raw.nt.gz");
    const std::string path = temp_path("checked.tmrdf"), record_path = temp_path("record/checked-stores");
    rdf::save_store(s, path);
    // Settled at once (the default waits 2 s after a file's last change:
    // its times must be able to tell a later one).
    const rdf::checked_stores record(record_path, std::chrono::nanoseconds(0));
    auto rows = [](const rdf::mapped_store& m) {
        std::string out;
        rdf::answer_as_tsv("SELECT ?x WHERE { ?x <http://swat.cse.lehigh.edu/onto/univ-bench.owl#memberOf> "
                           "<http://www.Department0.University0.edu> }",
                           m.view(), out);
        return out;
    };
    std::string first;
    {
        const rdf::mapped_store m(path, &record);
        CHECK(m.checked());
        first = rows(m);
        CHECK(first.size() > 100);
    }
    {
        const rdf::mapped_store m(path, &record); // unchanged: the record holds it
        CHECK_FALSE(m.checked());
        CHECK(rows(m) == first);
        CHECK(rdf::mapped_store(path, &record, true).checked()); // --check-store
        CHECK(rdf::mapped_store(path).checked());                // no record
    }
    // Changed in place, same size, one byte of the dictionary's text: the
    // status-change time moves (after a clock tick of the file system), and
    // the open checks again and finds it.
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    std::string bytes = rdf_test::slurp(path);
    const std::size_t at = bytes.find("University0");
    REQUIRE(at != std::string::npos);
    {
        FILE* f = std::fopen(path.c_str(), "r+b");
        REQUIRE(f);
        std::fseek(f, long(at), SEEK_SET);
        std::fputc('X', f);
        std::fclose(f);
    }
    CHECK_THROWS_WITH(rdf::mapped_store(path, &record), Catch::Contains("checksum does not match"));
    // Replaced by a new file (save_store renames over it): a new inode, checked.
    rdf::save_store(s, path);
    CHECK(rdf::mapped_store(path, &record).checked());
    CHECK_FALSE(rdf::mapped_store(path, &record).checked());
    // A file changed just now is not recorded (its times could not tell a
    // change within the same tick), nor is anything where the record
    // cannot be written: each open checks.
    const rdf::checked_stores waiting(record_path + ".2", std::chrono::hours(1));
    CHECK(rdf::mapped_store(path, &waiting).checked());
    CHECK(rdf::mapped_store(path, &waiting).checked());
    const rdf::checked_stores unwritable("/dev/null/checked-stores", std::chrono::nanoseconds(0));
    CHECK(rdf::mapped_store(path, &unwritable).checked());
    CHECK(rdf::mapped_store(path, &unwritable).checked());
    // A garbled record matches nothing, and is rewritten whole on the next check.
    write_file(record_path, "# comment\nnot numbers at all\n1 2 3\n");
    CHECK(rdf::mapped_store(path, &record).checked());
    CHECK_FALSE(rdf::mapped_store(path, &record).checked());
    std::remove(path.c_str());
    std::remove(record_path.c_str());
    std::remove((record_path + ".2").c_str());
    ::rmdir(temp_path("record").c_str());
}

TEST_CASE("Parsing on several threads gives the triples one thread gives", "[store]") {
    std::string text = rdf::read_text_file(rdf_test::data_dir + "/lubm1-raw.nt.gz");
    auto decoded = [&](unsigned threads) {
        rdf::load_options o = rdf::load_options::chunked(64 << 10); // ~470 chunks over 3 threads' dictionaries
        o.threads = threads;
        rdf::store s;
        std::string copy = text;
        s.load_text(copy, "lubm1-raw", o);
        std::vector<std::string> out;
        const rdf::store_view v = s.view();
        rdf::detail::enumerate(s.index(), rdf::order::spo)([&](const std::array<rdf::term_id, 3>& t) {
            out.push_back(std::string(v.dict.key(t[0])) + ' ' + std::string(v.dict.key(t[1])) + ' ' + std::string(v.dict.key(t[2])));
        });
        std::sort(out.begin(), out.end());
        return out;
    };
    const auto one = decoded(1), three = decoded(3);
    CHECK(one.size() == 100543);
    CHECK(three == one);
}

TEST_CASE("A file is read in blocks of whole lines, numbered from the file's first", "[store]") {
    // A line of 300 bytes, longer than a block: its block grows to hold it.
    std::string text = "<http://e/a> <http://e/p> <http://e/b> .\n<http://e/a> <http://e/p> \"" + std::string(260, 'x') +
                       "\" .\n";
    for (int i = 0; i < 40; ++i) text += "<http://e/s" + std::to_string(i) + "> <http://e/p> <http://e/o> .\n";
    text += "<http://e/last> <http://e/p> <http://e/o> ."; // no line end at the end
    const std::string path = temp_path("blocks.nt");
    write_file(path, text);
    for (const std::size_t block : {std::size_t(1), std::size_t(64), std::size_t(100), std::size_t(1) << 20}) {
        rdf::line_block_reader in(path, block);
        std::string got, b;
        std::uint64_t line = 0, expected_line = 1;
        int blocks = 0;
        while (in.next(b, line)) {
            ++blocks;
            CHECK(line == expected_line);
            expected_line += std::uint64_t(std::count(b.begin(), b.end(), '\n'));
            if (got.size() + b.size() < text.size()) CHECK(b.back() == '\n'); // only the last may end mid-line
            got += b;
        }
        CHECK(got == text);
        CHECK(in.file_bytes() == text.size());
        CHECK(in.file_bytes_read() == text.size());
        if (block == 1) CHECK(blocks == 43); // a line each
        if (block == 64) CHECK(blocks > 10);
        if (block == (std::size_t(1) << 20)) CHECK(blocks == 1);
    }
    std::remove(path.c_str());
}

TEST_CASE("Loading block by block gives the store one block gives, ids in order of first appearance", "[store]") {
    const std::string file = rdf_test::data_dir + "/lubm1-raw.nt.gz";
    std::string text = rdf::read_text_file(file);
    rdf::store whole;
    rdf::load_options one;
    one.threads = 1;
    whole.load_text(text, "lubm1-raw", one);
    for (const unsigned threads : {1u, 3u}) {
        rdf::load_options o = rdf::load_options::chunked(100 << 10);
        o.block_bytes = 1 << 20; // ~17 blocks of ~10 chunks
        o.threads = threads;
        std::vector<rdf::load_progress> seen;
        o.progress = [&](const rdf::load_progress& p) { seen.push_back(p); };
        rdf::store s;
        const rdf::load_report r = s.load_file(file, o);
        CHECK(r.statements == 100543);
        CHECK(r.bytes == text.size());
        CHECK(s.dictionary().text() == whole.dictionary().text());
        CHECK(s.index().second == whole.index().second);
        CHECK(s.index().third == whole.index().third);
        REQUIRE(seen.size() > 10);
        for (std::size_t i = 1; i < seen.size(); ++i) {
            CHECK(seen[i].statements > seen[i - 1].statements);
            CHECK(seen[i].file_bytes_read >= seen[i - 1].file_bytes_read);
        }
        CHECK(seen.back().statements == 100543);
        CHECK(seen.back().file_bytes_read == seen.back().file_bytes);
    }
}

TEST_CASE("Triples past the memory budget go to disk in sorted runs and come back merged, once each", "[store]") {
    rdf::triple_runs runs(64 << 10); // the least: 5461 triples a run
    std::vector<rdf::triple> all;
    std::uint64_t x = 12345;
    for (int i = 0; i < 40000; ++i) { // ~7 runs, with duplicates inside and across them
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const rdf::triple t{rdf::term_id(x >> 60), rdf::term_id((x >> 40) & 7), rdf::term_id((x >> 20) & 255)};
        runs.push(t);
        all.push_back(t);
    }
    runs.finish();
    CHECK(runs.runs() >= 6);
    CHECK(runs.pushed() == 40000);
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    std::vector<rdf::triple> merged;
    runs.merge([&](const rdf::triple& t) { merged.push_back(t); });
    CHECK(merged == all);
    std::vector<rdf::triple> again; // the indexes read the stream more than once
    runs.merge([&](const rdf::triple& t) { again.push_back(t); });
    CHECK(again == all);
    CHECK(runs.max_s() == std::max_element(all.begin(), all.end(), [](auto& a, auto& b) { return a.s < b.s; })->s);
}

TEST_CASE("A load in a small memory budget builds the store a large one builds, a second file's too", "[store]") {
    const std::string file = rdf_test::data_dir + "/lubm1-raw.nt.gz";
    rdf::store roomy, tight;
    rdf::load_options small;
    small.memory_bytes = 64 << 10; // ~19 runs
    small.block_bytes = 1 << 20;
    roomy.load_file(file);
    tight.load_file(file, small);
    CHECK(tight.triple_count() == 100543);
    CHECK(tight.index().second == roomy.index().second);
    CHECK(tight.index().third == roomy.index().third);
    CHECK(tight.index().offsets == roomy.index().offsets);
    // A second file: the store's triples join the runs; known ones count as not new.
    std::string more = "<http://e/x> <http://e/p> <http://e/y> .\n";
    const rdf::store_view v = roomy.view();
    more += std::string(v.dict.key(0)) + " " + std::string(v.dict.key(1)) + " " + std::string(v.dict.key(2)) + " .\n";
    std::string copy = more;
    const rdf::load_report a = roomy.load_text(more, "more.nt");
    const rdf::load_report b = tight.load_text(copy, "more.nt", small);
    CHECK(a.added == b.added);
    CHECK(tight.triple_count() == roomy.triple_count());
    CHECK(tight.index().second == roomy.index().second);
    CHECK(tight.index().third == roomy.index().third);
}

TEST_CASE("An error in a later block adds nothing: the terms of the blocks before it are forgotten", "[store]") {
    rdf::store s;
    std::string first = "<http://e/kept> <http://e/p> <http://e/o> .\n";
    s.load_text(first, "first.nt");
    const rdf::term_id terms = s.dictionary().size();
    std::string text;
    for (int i = 0; i < 500; ++i) text += "<http://e/new" + std::to_string(i) + "> <http://e/p> <http://e/o> .\n";
    text += "<http://e/bad> <http://e/p> \"unterminated .\n";
    const std::string path = temp_path("late_error.nt");
    write_file(path, text);
    rdf::load_options o = rdf::load_options::chunked(1 << 10);
    o.block_bytes = 4 << 10; // the error is in the fifth block or later
    try {
        s.load_file(path, o);
        FAIL("no error");
    } catch (const rdf::load_error& e) {
        CHECK(e.line == 501);
        CHECK(std::string(e.what()).find("late_error.nt:501:") != std::string::npos);
    }
    CHECK(s.dictionary().size() == terms);
    CHECK(s.view().dict.find("<http://e/new0>") == rdf::no_term);
    // The hash index was rebuilt, not left pointing past the text.
    for (rdf::term_id i = 0; i < terms; ++i) CHECK(s.view().dict.find(s.view().dict.key(i)) == i);
    CHECK(s.triple_count() == 1);
    // And the store takes the file once it is mended.
    text.resize(text.rfind("<http://e/bad>"));
    write_file(path, text);
    CHECK(s.load_file(path, o).added == 500);
    CHECK(s.view().dict.find("<http://e/new499>") != rdf::no_term);
    std::remove(path.c_str());
}

TEST_CASE("A store made from no triples opens and answers nothing", "[store]") {
    rdf::store s;
    std::string empty;
    s.load_text(empty, "empty.nt");
    const std::string path = temp_path("empty.tmrdf");
    rdf::save_store(s, path);
    const rdf::store back = rdf::open_store(path);
    CHECK(back.triple_count() == 0);
    CHECK(back.dictionary().size() == 0);
    CHECK(rdf::run_query("SELECT * WHERE { ?s ?p ?o }", back.view()).rows.rows() == 0);
    CHECK(rdf::run_query("SELECT ?s WHERE { ?s <http://e/p> <http://e/o> }", back.view()).rows.rows() == 0);
    std::remove(path.c_str());
}

TEST_CASE("A damaged store file is refused on open, naming the file and what is wrong", "[store]") {
    const std::string good = small_store_bytes();
    REQUIRE(array_at(good, hash_table).second == 64);
    const std::string path = temp_path("damaged.tmrdf");
    auto refused = [&](const std::string& bytes, const std::string& why) {
        write_file(path, bytes);
        CHECK_THROWS_WITH(rdf::open_store(path), Catch::Contains(path + ": corrupt store file: ") && Catch::Contains(why));
        CHECK_THROWS_WITH(rdf::read_store(bytes, "in memory"), Catch::Contains("in memory: corrupt store file: ") && Catch::Contains(why));
        // Mapped, each is refused too; what open_store finds by rebuilding
        // the orders from SPO, the mapped open finds by a checksum or by
        // an order's own shape.
        CHECK_THROWS_WITH(rdf::mapped_store(path), Catch::Contains(path + ": corrupt store file: "));
    };
    std::string b = good;
    write_file(path, b);
    REQUIRE(rdf::open_store(path).triple_count() == 3); // the patches below break a store that opens

    SECTION("a hash table without an empty slot: a lookup of a missing key would never stop") {
        // Four slots for the four keys, each where a probe finds it: a table
        // that answers every key it holds, and loops on any other.
        const rdf::store s = rdf::read_store(good, "good");
        std::uint32_t table[4] = {};
        for (rdf::term_id t = 0; t < 4; ++t) {
            std::size_t i = rdf::detail::hash_key(s.dictionary().key(t)) & 3;
            while (table[i] != 0) i = (i + 1) & 3;
            table[i] = t + 1;
        }
        replace_array(b, hash_table, std::string(reinterpret_cast<const char*>(table), sizeof table));
        refused(b, "no empty slot");
    }
    SECTION("a hash table whose empty slots are filled with repeated ids") {
        for (std::size_t i = 0; i < 64; ++i)
            if (get<std::uint32_t>(b, hash_table, i) == 0) put<std::uint32_t>(b, hash_table, i, 1);
        refused(b, "hash table holds 64 ids for 4 terms");
    }
    SECTION("a hash table entry past the last term") {
        std::size_t i = 0;
        while (get<std::uint32_t>(b, hash_table, i) != 0) ++i;
        put<std::uint32_t>(b, hash_table, i, 99);
        refused(b, "hash table entry past the last term");
    }
    SECTION("a hash table whose size is not a power of two") {
        replace_array(b, hash_table, b.substr(array_at(b, hash_table).first, 5 * 4));
        refused(b, "not a power of two");
    }
    SECTION("a key moved to another slot, where a probe does not find it") {
        std::size_t from = 0;
        while (get<std::uint32_t>(b, hash_table, from) == 0) ++from;
        std::size_t to = (from + 32) % 64;
        while (get<std::uint32_t>(b, hash_table, to) != 0) to = (to + 1) % 64;
        put<std::uint32_t>(b, hash_table, to, get<std::uint32_t>(b, hash_table, from));
        put<std::uint32_t>(b, hash_table, from, 0);
        refused(b, "does not match its keys");
    }
    SECTION("dictionary offsets past the text") {
        put<std::uint64_t>(b, dict_offsets, 4, get<std::uint64_t>(b, dict_offsets, 4) + 1);
        refused(b, "dictionary offsets");
    }
    SECTION("dictionary offsets not ascending") {
        put<std::uint64_t>(b, dict_offsets, 2, get<std::uint64_t>(b, dict_offsets, 3) + 1);
        refused(b, "not ascending");
    }
    SECTION("a key that is not an N-Triples term") {
        b[array_at(b, text).first] = 'x';
        refused(b, "dictionary key 0 is not an N-Triples term");
    }
    SECTION("an id past the last term") {
        put<rdf::term_id>(b, spo + 2, 0, 7);
        refused(b, "SPO ids past the last term");
    }
    SECTION("a bucket out of order") {
        // Subject a (id 0) has (p, b) and (q, b): swap the predicates.
        put<rdf::term_id>(b, spo + 1, 0, 3);
        put<rdf::term_id>(b, spo + 1, 1, 1);
        refused(b, "SPO not sorted");
    }
    SECTION("SPO offsets not ascending") {
        put<std::uint32_t>(b, spo, 1, 3);
        refused(b, "SPO offsets not ascending");
    }
    SECTION("SPO offsets with an empty bucket past the last subject") {
        const auto [at, n] = array_at(b, spo);
        REQUIRE(n == 4); // subjects a (0) and b (2): buckets 0 to 2, and the end
        replace_array(b, spo, b.substr(at, n * 4) + b.substr(at + (n - 1) * 4, 4));
        refused(b, "SPO offsets past the last subject");
    }
    SECTION("an order that holds other triples than SPO") {
        const std::size_t n = array_at(b, pso + 2).second;
        put<rdf::term_id>(b, pso + 2, n - 1, get<rdf::term_id>(b, pso + 2, n - 1) == 0 ? 1 : 0);
        refused(b, "PSO does not hold the triples of SPO");
    }
    SECTION("a triple changed, its ids in range and its buckets in order: the mapped open's index checksum tells") {
        // Subject a's (q, b) made (q, q): SPO still sorted, every id a term's.
        REQUIRE(get<rdf::term_id>(b, spo + 2, 1) == 2);
        put<rdf::term_id>(b, spo + 2, 1, 3);
        write_file(path, b);
        CHECK_THROWS_WITH(rdf::mapped_store(path), Catch::Contains("the indexes' checksum does not match their bytes"));
        refused(b, "PSO does not hold the triples of SPO");
    }
    SECTION("an order one triple short") {
        const auto [at, n] = array_at(b, osp + 2);
        replace_array(b, osp + 2, b.substr(at, (n - 1) * 4));
        refused(b, "OSP length");
    }
    SECTION("predicate statistics that do not count the triples") {
        put<std::uint32_t>(b, stats, 1, get<std::uint32_t>(b, stats, 1) + 1); // the first predicate's triples
        refused(b, "predicate statistics do not match the triples");
    }
    SECTION("an array longer than the file") {
        const std::uint64_t huge = std::uint64_t(1) << 40;
        std::memcpy(b.data() + rdf::store_header_bytes, &huge, 8);
        refused(b, "an array is longer than the file");
    }
    SECTION("bytes after the last array") {
        b += '\0';
        refused(b, "bytes after the last array");
    }
    std::remove(path.c_str());
}

TEST_CASE("Checks run on several threads report the first failure in their order, as a serial run would", "[store]") {
    // 64 checks, the later ones failing fast and the first failing one slow:
    // on threads the later ones finish first, and still the first is named.
    std::vector<std::function<void()>> checks;
    std::atomic<int> ran{0};
    for (int i = 0; i < 64; ++i)
        checks.push_back([i, &ran] {
            ++ran;
            if (i == 5) {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                throw rdf::load_error("s", 0, 0, "check 5");
            }
            if (i > 5 && i % 7 == 0) throw rdf::load_error("s", 0, 0, "check " + std::to_string(i));
        });
    for (const bool parallel : {false, true}) {
        ran = 0;
        CHECK_THROWS_WITH(rdf::detail::run_in_order(checks, parallel), Catch::Contains("check 5"));
        CHECK(ran == (parallel ? 64 : 6)); // on threads every check runs; in order, none after the first failure
    }
}

TEST_CASE("Keys escape each special byte wherever it falls in a word-at-a-time scan", "[store]") {
    // The byte-by-byte form the word scan must equal.
    auto reference = [](std::string_view s, bool iri) {
        std::string out;
        for (const char c : s) {
            if (c == '\\') out += "\\\\";
            else if (c == '\n') out += "\\n";
            else if (c == '\r') out += "\\r";
            else if (c == '"' && !iri) out += "\\\"";
            else if (c == '>' && iri) out += "\\u003E";
            else out += c;
        }
        return out;
    };
    for (const char special : {'\\', '\n', '\r', '"', '>'})
        for (std::size_t len = 1; len <= 20; ++len)
            for (std::size_t at = 0; at < len; ++at) {
                std::string s(len, 'x');
                s[at] = special;
                if (at + 3 < len) s[at + 3] = '\xc3'; // a high byte beside it
                for (const bool iri : {false, true}) {
                    std::string out = "<";
                    rdf::detail::append_escaped(out, s, iri);
                    INFO(int(special) << " at " << at << " of " << len << (iri ? " (IRI)" : " (literal)"));
                    CHECK(out == "<" + reference(s, iri));
                    CHECK(rdf::detail::needs_escape(s, iri) == (out.size() != s.size() + 1));
                }
            }
}

TEST_CASE("Dictionary keys: what append_key writes is accepted, anything else named", "[store]") {
    std::size_t at = 0;
    for (const rdf::term& t : {rdf::term{rdf::term_kind::iri, "http://e/a\\b>c\"d e<f\tg", "", ""},
                               rdf::term{rdf::term_kind::literal, "a\"b\\c\nd\re\tf\0g", "", "en-GB"},
                               rdf::term{rdf::term_kind::literal, "5", "http://e/t>y", ""},
                               rdf::term{rdf::term_kind::literal, "", "", ""},
                               rdf::term{rdf::term_kind::literal, "caf\xc3\xa9 \xf0\x9f\x98\x80", "", ""},
                               rdf::term{rdf::term_kind::blank, "b1", "", ""}}) {
        const std::string k = rdf::key(t);
        INFO(k);
        CHECK(rdf::detail::key_shape_error(k, at) == nullptr);
    }
    const std::pair<std::string, std::string> wrong[] = {
        {"", "an empty key"},
        {"\"hello\xa2", "not valid UTF-8"},
        {"<http://e/\xc0\xaf>", "not valid UTF-8"}, // an overlong '/'
        {"\"\xed\xa0\x80\"", "not valid UTF-8"},     // a surrogate
        {"\"hello", "a literal without its closing '\"'"},
        {"\"hel\"lo\"", "characters after a literal's closing"},
        {"\"a\\qb\"", "an escape in a literal that the loader never writes"},
        {"\"a\nb\"", "a raw line end in a literal"},
        {"\"a\"@", "an empty language tag"},
        {"\"a\"@e<n", "a language tag with"},
        {"\"a\"^^<http://e/t", "an IRI without its closing '>'"},
        {"<http://e/a", "an IRI without its closing '>'"},
        {"<http://e/a>b>", "characters after the IRI's closing '>'"},
        {"<http://e/\na>", "a raw line end or NUL in an IRI"},
        {"<http://e/\\u0041>", "an escape in an IRI that the loader never writes"},
        {"_:", "a blank node without a label"},
        {"_:a b", "a blank node label with"},
        {"http://e/a", "neither an IRI"},
    };
    for (const auto& [k, why] : wrong) {
        INFO(rdf::detail::shown_key(k));
        const char* said = rdf::detail::key_shape_error(k, at);
        REQUIRE(said != nullptr);
        CHECK_THAT(said, Catch::Contains(why));
    }
}

TEST_CASE("A store whose dictionary was damaged is refused: term shapes, UTF-8, its checksum, the version", "[store]") {
    // The misuse round's data: a flipped byte in "hello"@en's closing
    // quote was accepted, and printed as an unclosed, invalid UTF-8 cell.
    rdf::store s;
    std::string nt = "<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .\n"
                     "<http://ex.org/b> <http://ex.org/p> <http://ex.org/c> .\n"
                     "<http://ex.org/a> <http://ex.org/q> \"hello\"@en .\n"
                     "<http://ex.org/a> <http://ex.org/q> \"hello\" .\n"
                     "<http://ex.org/a> <http://ex.org/q> \"5\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n"
                     "<http://ex.org/c> <http://ex.org/p> <http://ex.org/a> .\n"
                     "_:x <http://ex.org/p> <http://ex.org/a> .\n";
    s.load_text(nt, "d.nt");
    const std::string path = temp_path("d.tmrdf");
    rdf::save_store(s, path);
    const std::string good = rdf_test::slurp(path);
    REQUIRE(rdf::read_store(good, "good").triple_count() == 7);
    auto refused = [&](const std::string& bytes, const std::string& why) {
        write_file(path, bytes);
        CHECK_THROWS_WITH(rdf::open_store(path), Catch::Contains(path + ": corrupt store file: ") && Catch::Contains(why));
    };
    const std::size_t quote = good.find("\"hello\"@en") + 6;
    std::string b = good;
    b[quote] = char(b[quote] ^ 0x80);
    refused(b, "is not an N-Triples term: not valid UTF-8 at byte " + std::to_string(quote) + " of the file, in \"hello\\xa2");
    b = good;
    b[quote] = 'x'; // valid UTF-8, no closing quote
    refused(b, "is not an N-Triples term: a literal without its closing '\"'");
    b = good;
    b[quote + 1] = '#';
    refused(b, "neither @lang nor ^^<datatype>");
    b = good;
    b[good.find("<http://ex.org/b>") + 16] = 'x';
    refused(b, "an IRI without its closing '>'");
    // <http://ex.org/a> made <http://ex.mrg/a>: well-formed, and still found
    // by a probe of the hash table: only the checksum tells.
    b = good;
    b[good.find("<http://ex.org/a>") + 11] ^= 2;
    refused(b, "the dictionary's checksum does not match its bytes");
    // A store written before the checksum (version 1): made again, not read.
    b = good;
    b[8] = 1;
    write_file(path, b);
    CHECK_THROWS_WITH(rdf::open_store(path), Catch::Contains(path + ": store file version 1, this tacomesh-rdf reads 3: "
                                                                     "make it again from the data with tacomesh-rdf load"));
    CHECK_THROWS_WITH(rdf::mapped_store(path), Catch::Contains("store file version 1, this tacomesh-rdf reads 3"));
    std::remove(path.c_str());
}

TEST_CASE("A store path that is a directory or missing is refused with its name", "[store]") {
    CHECK_THROWS_WITH(rdf::open_store("/tmp"), Catch::Contains("/tmp: not a regular file"));
    CHECK_THROWS_WITH(rdf::open_store("/nonexistent/x.tmrdf"), Catch::Contains("/nonexistent/x.tmrdf: cannot open"));
}

namespace {

// What a parser made of `text` as one chunk: its keys in id order and its
// triples, or the error.
struct parsed {
    bool failed = false;
    std::string error;
    std::vector<std::string> keys;
    std::vector<rdf::triple> triples;
    bool operator==(const parsed& o) const {
        return failed == o.failed && keys == o.keys &&
               std::equal(triples.begin(), triples.end(), o.triples.begin(), o.triples.end(),
                          [](const rdf::triple& a, const rdf::triple& b) { return a.s == b.s && a.p == b.p && a.o == b.o; });
    }
};

parsed parse_by(std::string text, bool serd_only) {
    rdf::ntriples_parser p("t.nt", "pfx");
    parsed out;
    try {
        const rdf::text_chunk whole{0, text.size(), 1};
        serd_only ? p.parse_with_serd(text, whole) : p.parse(text, whole);
    } catch (const rdf::load_error& e) {
        out.failed = true;
        out.error = e.what();
        return out;
    }
    for (rdf::term_id i = 0; i < p.dictionary().size(); ++i) out.keys.emplace_back(p.dictionary().key(i));
    out.triples = p.triples();
    return out;
}

} // namespace

TEST_CASE("The line scanner reads what serd reads, to the key, and leaves it every other line", "[store]") {
    const std::string lines[] = {
        "<http://e/a> <http://e/p> <http://e/o> .",
        "<http://e/a>\t<http://e/p>\t<http://e/o>\t.",
        "  <http://e/a>   <http://e/p> <http://e/o>.  ",
        "<http://e/a> <http://e/p> <http://e/o> .\r",
        "<http://e/a> <http://e/p> \"x\".",
        "<http://e/a> <http://e/p> \"\" .",
        "<http://e/a> <http://e/p> \"caf\xc3\xa9 \xf0\x9f\x98\x80\"@fr-CA .",
        "<http://e/a> <http://e/p> \"x\"@EN-gb .",
        "<http://e/a> <http://e/p> \"x\"@en- .",
        "<http://e/a> <http://e/p> \"x\"@ .",
        "<http://e/a> <http://e/p> \"x\"@1en .",
        "<http://e/a> <http://e/p> \"5\"^^<http://www.w3.org/2001/XMLSchema#integer> .",
        "<http://e/a> <http://e/p> \"s\"^^<http://www.w3.org/2001/XMLSchema#string> .",
        "<http://e/a> <http://e/p> \"x\"^^<rel> .",
        "<http://e/a> <http://e/p> \"x\"^^ .",
        "<http://e/a> <http://e/p> \"t\\tb\\bn\\nr\\rf\\fq\\\"a\\'s\\\\\" .",
        "<http://e/a> <http://e/p> \"\\u00e9\\U0001F600\" .",
        "<http://e/a> <http://e/p> \"\\x\" .",
        "<http://e/a> <http://e/p> \"raw\ttab\" .",
        "<http://e/a> <http://e/p> \"del\x7f\" .",
        "<http://e/a> <http://e/p> \"bad\xc3(\" .",
        "<http://e/a> <http://e/p> \"unclosed .",
        "<http://e/\xc3\xa9> <http://e/p> <http://e/o> .",
        "<http://e/\xff> <http://e/p> <http://e/o> .",
        "<http://e/a b> <http://e/p> <http://e/o> .",
        "<http://e/a{b}> <http://e/p> <http://e/o> .",
        "<http://e/a|^`> <http://e/p> <http://e/o> .",
        "<http://e/%zz?q=1#f> <http://e/p> <http://e/o> .",
        "<http://e/\\u0041> <http://e/p> <http://e/o> .",
        "<rel> <http://e/p> <http://e/o> .",
        "<1a:b> <http://e/p> <http://e/o> .",
        "<a+b-c.d:x> <http://e/p> <http://e/o> .",
        "_:b1 <http://e/p> _:genid3 .",
        "_:b-1 <http://e/p> _:_x .",
        "_:1a <http://e/p> _:a.b .",
        "_:-a <http://e/p> <http://e/o> .",
        "<http://e/a> <http://e/p> _:b1.",
        "_:b1 _:p <http://e/o> .",
        "\"lit\" <http://e/p> <http://e/o> .",
        "<http://e/a> \"p\" <http://e/o> .",
        "<http://e/a> <http://e/p> <http://e/o>",
        "<http://e/a> <http://e/p> <http://e/o> . # a comment",
        "# a comment line",
        "# caf\xc3\xa9 comment",
        "",
        "   \t ",
        "<http://e/a> <http://e/p> <http://e/o> . <http://e/a> <http://e/p> <http://e/o2> .",
        "<http://e/a> <http://e/p><http://e/o> .",
        "<http://e/a><http://e/p> <http://e/o> .",
        "<http://e/a> ex:p <http://e/o> .",
        "x <http://e/p> <http://e/o> .",
        "<http://e/a> <http://e/p> \"open",
    };
    for (const std::string& l : lines) {
        INFO(l);
        const parsed scanned = parse_by(l + "\n", false), by_serd = parse_by(l + "\n", true);
        CHECK(scanned == by_serd);
        CHECK(scanned.error == by_serd.error);
    }
    // A statement that lacks its dot, before a line the scanner reads: serd's error, as serd alone gives it.
    {
        const std::string text = "<http://e/a> <http://e/p> <http://e/o> # no dot\n# caf\xc3\xa9\n"
                                 "<http://e/a> <http://e/p> <http://e/o2> .\n";
        CHECK(parse_by(text, false).failed);
        CHECK(parse_by(text, false).error == parse_by(text, true).error);
    }
    // A byte order mark: taken at the file's start, an error after it (as serd reading the whole text has it).
    CHECK_FALSE(parse_by("\xef\xbb\xbf<http://e/a> <http://e/p> <http://e/o> .\n", false).failed);
    {
        const std::string late = "<http://e/a> <http://e/p> <http://e/o> .\n\xef\xbb\xbf<http://e/a> <http://e/p> <http://e/o> .\n";
        CHECK(parse_by(late, false).failed);
        CHECK(parse_by(late, false).error == parse_by(late, true).error);
    }
    // A prefixed name, which serd's N-Triples reader takes as a term and we do not, is named at its place.
    CHECK_THAT(parse_by("<http://e/a> <http://e/p> <http://e/o> .\n<http://e/a> ex:p <http://e/o> .\n", false).error,
               Catch::Contains("t.nt:2:14: 'ex:p' is not a term of N-Triples"));
    // All of them at once, and the valid ones with a statement over two
    // lines among them: runs of lines go to serd together.
    std::string all, valid;
    for (const std::string& l : lines) {
        all += l + "\n";
        if (!parse_by(l + "\n", true).failed) valid += l + "\n";
    }
    valid += "<http://e/a> <http://e/p>\n  <http://e/split> .\n<http://e/a> <http://e/p> <http://e/after> .\n";
    CHECK(parse_by(all, false).failed);
    CHECK(parse_by(all, false).error == parse_by(all, true).error);
    const parsed v = parse_by(valid, false);
    CHECK_FALSE(v.failed);
    CHECK(v == parse_by(valid, true));
    CHECK(std::find(v.keys.begin(), v.keys.end(), "<http://e/split>") != v.keys.end());
    CHECK(std::find(v.keys.begin(), v.keys.end(), "_:pfxb1") != v.keys.end()); // blank nodes get the file's prefix

    // Random lines of the pieces above, valid and not.
    const char* pieces[] = {"<http://e/a>", "<http://e/\xc3\xa9>", "_:b", "_:b.c", "\"x\"", "\"a\\\"b\"", "\"x\"@en",
                            "\"1\"^^<http://e/t>", "\"\\u0041\"", "<rel>", " ", "\t", ".", "#", "\"\xff\"", "@en", "^^"};
    std::uint64_t seed = 12345;
    auto next = [&] { return (seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
    for (int n = 0; n < 3000; ++n) {
        std::string l;
        const int k = 2 + int(next() % 6);
        for (int i = 0; i < k; ++i) l += std::string(pieces[next() % std::size(pieces)]) + (next() % 4 ? " " : "");
        if (next() % 3) l += " .";
        INFO(l);
        const parsed scanned = parse_by(l + "\n", false), by_serd = parse_by(l + "\n", true);
        CHECK(scanned == by_serd);
        CHECK(scanned.error == by_serd.error);
    }
}
