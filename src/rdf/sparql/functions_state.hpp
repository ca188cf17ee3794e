#pragma once
// What function_context holds, and the two units behind third-party
// libraries: regular expressions on PCRE2 (functions_regex.cpp) and hashes
// on libcrypto (functions_hash.cpp). Neither library's header is named
// here, so only those two files compile against them.
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>

#include <rdf/sparql_functions.hpp>

namespace rdf::sparql::detail {

struct regex_cache;
struct regex_cache_deleter {
    void operator()(regex_cache* c) const noexcept;
};

struct function_state {
    function_options options;
    term now;
    std::mt19937_64 rng;
    std::uint64_t bnode_counter = 0;
    /// BNODE(str)'s labels in the current solution.
    std::unordered_map<std::string, std::string> bnode_labels;
    std::unique_ptr<regex_cache, regex_cache_deleter> regexes;
};

/// An XPath regular expression (F&O 5.6) compiled with its flags.
struct compiled_regex;

/// The pattern compiled with `flags` (any of "smixq"), from the state's
/// cache; nullptr for an invalid pattern or flag (err:FORX0001/0002).
const compiled_regex* regex_for(function_state& state, std::string_view pattern, std::string_view flags);
/// fn:matches; nullopt for a subject that is not UTF-8 or a match that
/// exceeds PCRE2's limits.
std::optional<bool> regex_matches(const compiled_regex& re, std::string_view text);
/// fn:replace; nullopt for a pattern that matches the empty string
/// (err:FORX0003) or an invalid replacement (err:FORX0004).
std::optional<std::string> regex_replace(const compiled_regex& re, std::string_view text, std::string_view replacement);

/// The lower-case hex digest of `data` by "MD5", "SHA1", "SHA256",
/// "SHA384" or "SHA512"; nullopt for another name or a libcrypto failure.
std::optional<std::string> digest_hex(std::string_view algorithm, std::string_view data);

} // namespace rdf::sparql::detail
