// Loading, the dictionary, the indexes and the store file.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <unistd.h>

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
