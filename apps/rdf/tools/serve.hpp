#pragma once
// tacomesh-rdf serve: the SPARQL 1.1 Protocol over a loaded store (serve.cpp,
// the one file that sees the HTTP library).
#include <cstdint>
#include <string>

#include <rdf/plan.hpp>
#include <rdf/store.hpp>
#include <tacomesh/posix/shared_state.hpp>

namespace rdf::serve {

struct serve_options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 0; ///< 0: a free port, printed when listening
    std::uint32_t cores = 1; ///< cores answering queries (core 0, which hands them out, comes on top)
    tacomesh::posix::execution_mode platform = tacomesh::posix::execution_mode::threads;
    query_limits limits;  ///< --memory-limit, --max-intermediate-rows, per query
    std::string base;     ///< --base: what relative IRIs of a query without BASE resolve against
    bool quiet = false;   ///< no line per request on stderr
};

/// Serve `s` at http://host:port/sparql until SIGINT or SIGTERM; returns the
/// exit status (0 after such a signal, 1 if the address cannot be had).
/// The store's private copy is emptied once the cores share it.
int run_serve(store& s, const serve_options& o);

} // namespace rdf::serve
