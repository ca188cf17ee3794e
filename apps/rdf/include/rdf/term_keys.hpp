#pragma once
// What the result writers (results.hpp) read ids through: anything that
// gives a term id's canonical key (term.hpp). The store's dictionary is one;
// a SPARQL result's terms (sparql_engine.hpp: the dictionary, then the
// terms the query made) are another.
#include <concepts>
#include <string_view>

#include <rdf/dictionary.hpp>

namespace rdf {

template <class T>
concept term_keys = requires(const T& t, term_id id) {
    { t.key(id) } -> std::convertible_to<std::string_view>;
};

} // namespace rdf
