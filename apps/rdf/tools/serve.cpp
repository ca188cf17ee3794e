// tacomesh-rdf serve: the SPARQL 1.1 Protocol's query operation (section
// 2.1) over HTTP (cpp-httplib), the queries answered by tacomesh cores.
//
// How a request is answered, and why so:
//
// 1. An HTTP thread (cpp-httplib's pool) reads the request, parses the query
//    (a syntax error is answered there, with its line and column, without
//    taking a core), chooses the result format from Accept (406 before any
//    work), puts the job in core 0's inbox (a queue under a mutex) and waits
//    for its promise. It cannot hand the query to a core itself: TACO
//    invocations are sent from cores only, and these threads are not cores.
// 2. Core 0 is the dispatcher and answers no query itself. It takes jobs
//    from the inbox in arrival order and gives each to a free query core
//    (taco::async on that core's query_core, the query text and the format
//    as arguments); the body comes back to core 0 by taco::then, which
//    fulfils the HTTP thread's promise and gives that core the next job.
//    One job in hand per core: a core that finishes takes the oldest
//    waiting query, so a long query holds one core while the short ones
//    flow through the others (with several in hand, or a queue per core, a
//    short query could wait behind a long one). The round trip through
//    core 0 costs microseconds, against a query's evaluation and its body.
//    Core 0 answering queries too (as the task-parallel pool's core 0 does,
//    parallel.hpp) would stop the hand-out for as long as each of its own
//    queries runs.
// 3. The query cores (1..N, --cores N) parse the text again (microseconds;
//    an algebra tree cannot travel in a message), evaluate it with
//    rdf::sparql::evaluate over their view of the store shared through MESH
//    (shared_store.hpp: one read acquire for the whole run, the store is
//    never written after loading) and write the response body: evaluation
//    and serialization run in parallel on the cores, each query on one.
//    Text and body travel as TACO's carried strings and the store through
//    MESH, so the same code runs with --platform processes.
//
// Waking: a sleeping core wakes for a message or a timer, and nothing
// outside the cores can send either. So the HTTP thread that puts a job in
// an empty inbox rings a doorbell: a signal to core 0's thread, whose empty
// handler ends core 0's timed sleep (the futex wait returns EINTR, and the
// platform's idle returns to the runtime's loop, which looks at the inbox).
// On LUBM Q1 (4 rows) it took a request's median latency from 0.31 ms to
// 0.12 ms (a 250 us tick alone: 0.31 ms). A ring just before core 0 goes to sleep is lost, so core 0 also
// looks at its inbox on a timer tick (inbox_tick), which bounds that wait.
// The run idles with idle_policy::sleep: an idle server's query cores sleep
// until a message, and core 0 wakes once a tick (about 1% of a CPU).
//
// Shutdown: SIGINT or SIGTERM sets a flag that core 0 sees at its next
// tick; it stops the listener (cpp-httplib finishes the requests in
// flight, which core 0 goes on answering), then the cores end and
// run_serve returns 0. A second signal ends the process at once.
#include "serve.hpp"

#include <httplib.h>
#include <pthread.h>
#include <sys/socket.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <rdf/results.hpp>
#include <rdf/shared_store.hpp>
#include <rdf/sparql_algebra.hpp>
#include <rdf/sparql_engine.hpp>
#include <rdf/sparql_parser.hpp>
#include <tacomesh/posix.hpp>

namespace rdf::serve {
namespace {

using namespace std::chrono_literals;

/// How often core 0 looks at its inbox when nothing wakes it: the most a
/// request waits for core 0 if its doorbell is lost (see "Waking"). An idle
/// server costs core 0 this many wake-ups (some microseconds each).
constexpr auto inbox_tick = 1ms;

/// The largest body a query core sends back: a carried result is at most
/// taco::max_carried_bytes (256 MiB); past this the query is answered 500,
/// not cut.
constexpr std::size_t max_body_bytes = std::size_t(255) << 20;

// ---- result formats and content negotiation ----

enum class format : std::uint8_t { json, xml, tsv, csv, ntriples, turtle, ntriples_as_text };

const char* content_type(format f) {
    switch (f) {
    case format::json: return "application/sparql-results+json; charset=utf-8";
    case format::xml: return "application/sparql-results+xml; charset=utf-8";
    case format::tsv: return "text/tab-separated-values; charset=utf-8";
    case format::csv: return "text/csv; charset=utf-8";
    case format::ntriples: return "application/n-triples";
    case format::turtle: return "text/turtle; charset=utf-8"; // N-Triples is Turtle
    case format::ntriples_as_text: return "text/plain; charset=utf-8";
    }
    return "text/plain";
}

struct offer {
    const char* media; ///< type/subtype, lower case
    format f;
};
// In order of preference: the first is the default, and wins ties.
constexpr offer solution_offers[] = {
    {"application/sparql-results+json", format::json}, {"application/sparql-results+xml", format::xml},
    {"text/tab-separated-values", format::tsv},        {"text/csv", format::csv},
    {"application/json", format::json},                {"application/xml", format::xml},
    {"text/xml", format::xml},
};
constexpr offer graph_offers[] = {
    {"application/n-triples", format::ntriples},
    {"text/turtle", format::turtle},
    {"text/plain", format::ntriples_as_text},
};

std::string lower(std::string_view s) {
    std::string r(s);
    for (char& c : r) c = char(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

/// The media type of a Content-Type value, lower case, without parameters.
std::string media_type(std::string_view v) { return lower(trim(v.substr(0, v.find(';')))); }

/// The offer an Accept header prefers (RFC 9110 section 12.5.1): each offer
/// takes the q of the most specific range that matches it (type/subtype,
/// then type/*, then */*); the highest q wins, ties going to the earlier
/// offer; q=0 refuses. nullopt: nothing offered is acceptable.
template <std::size_t N>
std::optional<format> negotiate(std::string_view accept, const offer (&offers)[N]) {
    if (trim(accept).empty()) return offers[0].f;
    struct range {
        std::string type, subtype;
        double q = 1;
    };
    std::vector<range> ranges;
    for (std::size_t at = 0; at <= accept.size();) {
        std::size_t end = accept.find(',', at);
        if (end == std::string_view::npos) end = accept.size();
        std::string_view item = accept.substr(at, end - at);
        at = end + 1;
        range r;
        const std::size_t semi = item.find(';');
        const std::string media = lower(trim(item.substr(0, semi)));
        const std::size_t slash = media.find('/');
        if (media.empty() || slash == std::string::npos) continue; // not a media range: ignored
        r.type = media.substr(0, slash);
        r.subtype = media.substr(slash + 1);
        for (std::size_t p = semi; p != std::string_view::npos;) {
            const std::size_t next = item.find(';', p + 1);
            const std::string_view param = trim(item.substr(p + 1, next == std::string_view::npos ? next : next - p - 1));
            p = next;
            if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
                const std::string v(param.substr(2));
                char* stop = nullptr;
                const double q = std::strtod(v.c_str(), &stop);
                r.q = stop && *stop == '\0' && q >= 0 && q <= 1 ? q : 1;
                break; // what follows q are accept-extensions
            }
        }
        ranges.push_back(std::move(r));
    }
    if (ranges.empty()) return offers[0].f;
    std::optional<format> best;
    double best_q = 0;
    for (const offer& o : offers) {
        const std::string_view media = o.media;
        const std::string_view type = media.substr(0, media.find('/')), subtype = media.substr(media.find('/') + 1);
        int specificity = 0;
        double q = 0;
        for (const range& r : ranges) {
            int s = 0;
            if (r.type == type && r.subtype == subtype) s = 3;
            else if (r.type == type && r.subtype == "*") s = 2;
            else if (r.type == "*" && r.subtype == "*") s = 1;
            if (s > specificity) specificity = s, q = r.q;
        }
        if (q > best_q) best_q = q, best = o.f;
    }
    return best;
}

std::string offered_list(bool graph) {
    std::string s;
    auto add = [&](const auto& offers) {
        for (const offer& o : offers) s += std::string(s.empty() ? "" : ", ") + o.media;
    };
    if (graph) add(graph_offers);
    else add(solution_offers);
    return s;
}

// ---- the query cores ----

/// One per query core: answers a query over the shared store, as a status
/// and a body ("200" + body; "400"/"500" + a message).
class query_core {
public:
    query_core(mesh::sharing_ptr<shared_store> store, query_limits limits, std::string base)
        : store_(store), limits_(limits), base_(std::move(base)) {}
    ~query_core() { reader_.reset(); }
    query_core(const query_core&) = delete;
    query_core& operator=(const query_core&) = delete;

    std::string answer(const std::string& text, std::uint8_t wanted) {
        try {
            const sparql::query_tree tree = sparql::parse_sparql(text, base_);
            if (!reader_) reader_.emplace(mesh::read(store_)); // read for the whole run: nobody writes the store
            const store_view v = (*reader_)->view();
            sparql::evaluate_options eo;
            eo.limits = limits_;
            const sparql::result r = sparql::evaluate(tree, v, eo);
            const sparql::result_terms terms(v.dict, r.pool);
            std::string out = "200";
            using form = sparql::query_tree::form;
            const auto f = format(wanted);
            if (r.what == form::construct || r.what == form::describe) append_ntriples(out, r.triples, terms);
            else if (r.what == form::ask)
                append_boolean(out, r.boolean, f == format::json ? "json" : f == format::xml ? "xml" : "tsv");
            else if (f == format::json) append_json(out, r.rows, r.names, terms);
            else if (f == format::xml) append_xml(out, r.rows, r.names, terms);
            else if (f == format::csv) append_csv(out, r.rows, r.names, terms);
            else append_tsv(out, r.rows, r.names, terms);
            if (out.size() - 3 > max_body_bytes)
                return "500the result is " + std::to_string((out.size() - 3) >> 20) + " MiB, past the " +
                       std::to_string(max_body_bytes >> 20) + " MiB that one response carries: add a LIMIT\n";
            return out;
        } catch (const query_error& e) {
            return "400" + std::string(e.what()) + "\n"; // "line L, column C: ..."
        } catch (const result_too_large& e) {
            return "400" + std::string(e.what()) + "\n"; // "query refused: ... past the budget ..."
        } catch (const std::bad_alloc&) {
            return "500out of memory answering the query\n";
        } catch (const std::exception& e) {
            return "500" + std::string(e.what()) + "\n";
        } catch (...) {
            return "500an unknown error answering the query\n";
        }
    }

private:
    mesh::sharing_ptr<shared_store> store_;
    query_limits limits_;
    std::string base_;
    std::optional<decltype(mesh::read(std::declval<const mesh::sharing_ptr<shared_store>&>()))> reader_;
};

// ---- core 0: the dispatcher ----

struct job {
    std::string text;
    format f;
    std::promise<std::string> reply; ///< "SSS" status + body
};

std::atomic<int> signal_seen{0};
extern "C" void on_signal(int sig) { signal_seen.store(sig, std::memory_order_relaxed); }

/// The doorbell: a signal to core 0's thread, whose handler does nothing,
/// ends its timed sleep at once (futex_wait returns EINTR, and the
/// platform's idle goes back to the runtime, which looks at the inbox).
constexpr int doorbell = SIGUSR1;
extern "C" void on_doorbell(int) {}

std::atomic<bool> ticking{false};
/// Core 0's timer: waking it is all it does (see inbox_tick).
void tick() {
    if (ticking.load(std::memory_order_relaxed)) taco::after(inbox_tick, taco::core_id(0), &tick);
}

class dispatcher {
public:
    /// Any thread: queue a query; the future holds "SSS" + body.
    std::future<std::string> submit(std::string text, format f) {
        auto j = std::make_unique<job>();
        j->text = std::move(text);
        j->f = f;
        std::future<std::string> reply = j->reply.get_future();
        {
            std::lock_guard<std::mutex> lock(inbox_mutex_);
            inbox_.push_back(std::move(j));
        }
        // The first job in an empty inbox rings; core 0 takes the others with it.
        if (waiting_.fetch_add(1, std::memory_order_acq_rel) == 0 && ring_) ::pthread_kill(core0_, doorbell);
        return reply;
    }

    /// Core 0: hand out queries until the listener has stopped and every
    /// query in flight is answered. `stop` is called once, on a signal.
    template <class Stop>
    void run(const std::vector<taco::global_ptr<query_core>>& cores, const std::atomic<bool>& listener_done, Stop&& stop) {
        self_ = taco::to_global(this);
        cores_ = cores;
        core0_ = ::pthread_self();
        ring_.store(true, std::memory_order_release);
        for (std::uint32_t i = 0; i < cores_.size(); ++i) free_.push_back(i);
        bool stopping = false;
        for (;;) {
            taco::wait_until([&] {
                return (waiting_.load(std::memory_order_acquire) > 0 && !free_.empty()) ||
                       (signal_seen.load(std::memory_order_relaxed) != 0 && !stopping) ||
                       (listener_done.load(std::memory_order_acquire) && in_flight_.empty() &&
                        waiting_.load(std::memory_order_acquire) == 0);
            });
            if (signal_seen.load(std::memory_order_relaxed) != 0 && !stopping) {
                stopping = true;
                stop();
            }
            while (!free_.empty() && waiting_.load(std::memory_order_acquire) > 0 && hand_out()) {
            }
            if (listener_done.load(std::memory_order_acquire) && in_flight_.empty() &&
                waiting_.load(std::memory_order_acquire) == 0) {
                ring_.store(false, std::memory_order_release);
                return;
            }
        }
    }

    /// Core 0, by taco::then: core `core`'s answer to job `id`.
    void done(std::uint32_t core, std::uint64_t id, std::string reply) {
        const auto it = in_flight_.find(id);
        if (it != in_flight_.end()) {
            it->second->reply.set_value(std::move(reply));
            in_flight_.erase(it);
        }
        free_.push_back(core);
        while (!free_.empty() && waiting_.load(std::memory_order_acquire) > 0 && hand_out()) {
        }
    }

private:
    /// The oldest job to a free core; false if the inbox was empty after all.
    bool hand_out() {
        std::unique_ptr<job> j;
        {
            std::lock_guard<std::mutex> lock(inbox_mutex_);
            if (inbox_.empty()) return false;
            j = std::move(inbox_.front());
            inbox_.pop_front();
        }
        waiting_.fetch_sub(1, std::memory_order_relaxed);
        const std::uint32_t core = free_.back(); // the one that finished last: its caches are warm
        free_.pop_back();
        const std::uint64_t id = next_id_++;
        try {
            taco::async(cores_[core], taco::m2f(&query_core::answer, j->text, std::uint8_t(j->f)),
                        taco::then(self_, &dispatcher::done, core, id));
        } catch (const std::exception& e) { // the text past what a message carries, say
            j->reply.set_value("500cannot hand the query to a core: " + std::string(e.what()) + "\n");
            free_.push_back(core);
            return true;
        }
        in_flight_.emplace(id, std::move(j));
        return true;
    }

    std::mutex inbox_mutex_;
    std::deque<std::unique_ptr<job>> inbox_;
    std::atomic<std::size_t> waiting_{0}; ///< jobs in the inbox (read without the lock)
    pthread_t core0_{};
    std::atomic<bool> ring_{false};
    // Core 0's own:
    taco::global_ptr<dispatcher> self_;
    std::vector<taco::global_ptr<query_core>> cores_;
    std::vector<std::uint32_t> free_;
    std::unordered_map<std::uint64_t, std::unique_ptr<job>> in_flight_;
    std::uint64_t next_id_ = 0;
};

// ---- HTTP ----

void text_reply(httplib::Response& res, int status, const std::string& message) {
    res.status = status;
    res.set_content(message.empty() || message.back() == '\n' ? message : message + "\n", "text/plain; charset=utf-8");
}

/// The one value of parameter `name`, or nullopt; more than one is an error.
std::optional<std::string> one_param(const httplib::Request& req, const char* name) {
    const std::size_t n = req.get_param_value_count(name);
    if (n == 0) return std::nullopt;
    if (n > 1) throw std::invalid_argument(std::string("more than one '") + name + "' parameter");
    return req.get_param_value(name);
}

class endpoint {
public:
    endpoint(dispatcher& d, const serve_options& o) : d_(d), o_(o) {}

    void handle(const httplib::Request& req, httplib::Response& res) {
        try {
            handle_checked(req, res);
        } catch (const std::invalid_argument& e) {
            text_reply(res, 400, e.what());
        }
    }

private:
    void handle_checked(const httplib::Request& req, httplib::Response& res) {
        std::optional<std::string> text;
        if (req.method == "POST") {
            const std::string type = media_type(req.get_header_value("Content-Type"));
            if (type == "application/sparql-update")
                return text_reply(res, 400, "this endpoint is read-only: SPARQL Update is not supported");
            if (type == "application/sparql-query") {
                if (req.has_param("query"))
                    return text_reply(res, 400, "a query in the body (application/sparql-query) and a 'query' "
                                                "parameter: give one");
                text = req.body;
            } else if (type != "application/x-www-form-urlencoded") {
                res.set_header("Accept-Post", "application/sparql-query, application/x-www-form-urlencoded");
                return text_reply(res, 415,
                                  "POST takes a query as application/sparql-query (the body) or "
                                  "application/x-www-form-urlencoded (query=...), not " +
                                      (type.empty() ? std::string("a body without Content-Type") : "'" + type + "'"));
            }
        }
        if (req.has_param("update"))
            return text_reply(res, 400, "this endpoint is read-only: SPARQL Update is not supported");
        if (req.has_param("default-graph-uri") || req.has_param("named-graph-uri") ||
            req.has_param("using-graph-uri") || req.has_param("using-named-graph-uri"))
            return text_reply(res, 400, "this endpoint has one graph, the default graph of the loaded data: "
                                        "default-graph-uri and named-graph-uri are not supported");
        if (!text) text = one_param(req, "query");
        if (!text)
            return text_reply(res, 400, "no query: give it as ?query=... (GET), or POST it as query=... "
                                        "(application/x-www-form-urlencoded) or as the body (application/sparql-query)");
        // The parser refuses a query past its cap with a position; a body
        // past it is refused before it is read (set_payload_max_length: 413).
        sparql::query_tree tree;
        try {
            tree = sparql::parse_sparql(*text, o_.base);
            sparql::refuse_dataset_clauses(tree);
        } catch (const query_error& e) {
            return text_reply(res, 400, std::string("query error: ") + e.what());
        }
        using form = sparql::query_tree::form;
        const bool graph = tree.what == form::construct || tree.what == form::describe;
        std::optional<format> f;
        if (const auto named = one_param(req, "format")) {
            f = by_name(*named, graph);
            if (!f) return text_reply(res, 406, "format=" + *named + " is not a format of " +
                                                    (graph ? "a graph (CONSTRUCT, DESCRIBE)" : "query results") +
                                                    ": offered are " + offered_list(graph));
        } else {
            f = graph ? negotiate(req.get_header_value("Accept"), graph_offers)
                      : negotiate(req.get_header_value("Accept"), solution_offers);
            if (!f) return text_reply(res, 406, "none of the Accept header's types is offered for " +
                                                    std::string(graph ? "a graph (CONSTRUCT, DESCRIBE)" : "query results") +
                                                    ": offered are " + offered_list(graph));
        }
        std::string reply = d_.submit(std::move(*text), *f).get();
        const int status = std::atoi(reply.substr(0, 3).c_str());
        reply.erase(0, 3);
        if (status != 200) return text_reply(res, status, reply);
        res.status = 200;
        res.set_header("Vary", "Accept");
        res.body = std::move(reply);
        res.set_header("Content-Type", content_type(*f));
    }

    /// format=NAME (json, xml, tsv, csv; nt, ttl) or format=TYPE/SUBTYPE (as Accept).
    static std::optional<format> by_name(const std::string& name, bool graph) {
        const std::string n = lower(name);
        if (n.find('/') != std::string::npos)
            return graph ? negotiate(n, graph_offers) : negotiate(n, solution_offers);
        if (graph) {
            if (n == "nt" || n == "ntriples" || n == "n-triples") return format::ntriples;
            if (n == "ttl" || n == "turtle") return format::turtle;
            return std::nullopt;
        }
        if (n == "json") return format::json;
        if (n == "xml") return format::xml;
        if (n == "tsv") return format::tsv;
        if (n == "csv") return format::csv;
        return std::nullopt;
    }

    dispatcher& d_;
    const serve_options& o_;
};

std::string url_host(const std::string& host) { return host.find(':') != std::string::npos ? "[" + host + "]" : host; }

} // namespace

int run_serve(store& s, const serve_options& o) {
    if (o.cores < 1 || o.cores > 1023) throw std::invalid_argument("serve: --cores from 1 to 1023");
    // Signals are caught before the cores start (core processes inherit the
    // handler and ignore it: core 0 ends the run); the first sets the flag,
    // a second one ends the process as usual (SA_RESETHAND).
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    struct sigaction bell {};
    bell.sa_handler = on_doorbell;
    bell.sa_flags = SA_RESTART; // other calls go on; a timed futex wait still returns EINTR
    sigemptyset(&bell.sa_mask);
    sigaction(doorbell, &bell, nullptr);
    ::signal(SIGPIPE, SIG_IGN); // a client that hangs up is cpp-httplib's write error, not our end

    tacomesh::posix::config cfg{.cores = taco::core_id(o.cores + 1), .mode = o.platform};
    cfg.idle = tacomesh::posix::idle_policy::sleep; // see "Waking" above
    cfg.pin = false; // the HTTP threads share the CPUs with the cores
    // As rdf::with_cluster_on: room for the store's parts in MESH's shared memory.
    cfg.cached_bytes = std::max(cfg.cached_bytes, 4 * (s.bytes() + (std::size_t(64) << 20)));
    int status = 0;
    taco::run(cfg, [&] {
        auto shared = mesh::make_shared_object<shared_store>();
        mesh::write(shared)->assign(s);
        s = store(); // the cores read the shared copy from here on
        std::vector<taco::global_ptr<query_core>> cores;
        for (std::uint32_t i = 1; i <= o.cores; ++i)
            cores.push_back(taco::new_on<query_core>(taco::core_id(i), shared, o.limits, o.base).get());

        dispatcher d;
        endpoint ep(d, o);
        httplib::Server svr;
        // Threads for connections: a connection holds one while it is kept
        // alive, so several per query core.
        const std::size_t threads = std::max<std::size_t>(16, 4 * std::size_t(o.cores));
        svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
        svr.set_payload_max_length(detail::sparql_max_query_bytes); // larger: 413, before the body is read
        svr.set_keep_alive_timeout(5);
        svr.set_keep_alive_max_count(1000); // cpp-httplib closes a connection after 5 requests by default
        svr.set_tcp_nodelay(true); // a response goes out as headers, then body: without it, Nagle holds the body for the ACK
        const auto handler = [&ep](const httplib::Request& req, httplib::Response& res) { ep.handle(req, res); };
        for (const char* path : {"/sparql", "/"}) {
            svr.Get(path, handler);
            svr.Post(path, handler);
            const auto not_allowed = [](const httplib::Request&, httplib::Response& res) {
                res.set_header("Allow", "GET, POST");
                text_reply(res, 405, "the SPARQL endpoint takes GET and POST (queries only: it is read-only)");
            };
            svr.Put(path, not_allowed);
            svr.Delete(path, not_allowed);
            svr.Patch(path, not_allowed);
        }
        svr.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
            std::string what = "an unknown error";
            try {
                std::rethrow_exception(ep);
            } catch (const std::exception& e) {
                what = e.what();
            } catch (...) {
            }
            text_reply(res, 500, "internal error: " + what);
        });
        // cpp-httplib's own refusals (413, 414, 404, 400) get a body that says why.
        svr.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
            if (!res.body.empty()) return;
            if (res.status == 413)
                text_reply(res, 413, "the request is larger than the " + std::to_string(detail::sparql_max_query_bytes >> 20) +
                                         " MiB a query may have");
            else if (res.status == 404) text_reply(res, 404, "no such resource: the SPARQL endpoint is /sparql");
            else if (res.status == 414) text_reply(res, 414, "the URL is too long: POST the query instead");
            else text_reply(res, res.status, "the request was refused (" + req.method + " " + req.path + ")");
        });
        if (!o.quiet)
            svr.set_logger([](const httplib::Request& req, const httplib::Response& res) {
                std::fprintf(stderr, "%s %s %d %zu bytes\n", req.method.c_str(), req.path.c_str(), res.status,
                             res.body.size());
            });

        // cpp-httplib (0.11) sets SO_REUSEPORT on its socket, and then a
        // second server binds the same port beside the first and the kernel
        // splits the connections between them: a stale server answers half
        // the queries. SO_REUSEADDR alone lets a restart bind at once (past
        // TIME_WAIT) and a port in use is refused.
        svr.set_socket_options([](int sock) {
            const int yes = 1;
            ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        });
        int port = o.port;
        errno = 0;
        const bool bound = o.port == 0 ? (port = svr.bind_to_any_port(o.host)) > 0 : svr.bind_to_port(o.host, o.port);
        std::atomic<bool> listener_done{false};
        std::thread listener;
        if (!bound) {
            std::fprintf(stderr, "tacomesh-rdf: cannot listen on %s port %d: %s\n", o.host.c_str(), o.port,
                         errno ? std::strerror(errno) : "the address is not this machine's, or is in use");
            status = 1;
            listener_done = true;
        } else {
            std::fprintf(stderr, "listening on http://%s:%d/sparql (%u query core%s)\n", url_host(o.host).c_str(), port,
                         unsigned(o.cores), o.cores == 1 ? "" : "s");
            std::fflush(stderr);
            listener = std::thread([&] {
                svr.listen_after_bind();
                listener_done.store(true, std::memory_order_release);
            });
        }
        ticking = true;
        tick();
        d.run(cores, listener_done, [&] { svr.stop(); });
        ticking = false;
        if (listener.joinable()) listener.join();
        for (auto c : cores) taco::delete_on(c);
        mesh::destroy_shared_object(shared);
    });
    if (status == 0 && signal_seen.load() != 0 && !o.quiet)
        std::fprintf(stderr, "tacomesh-rdf: stopped (%s)\n", signal_seen.load() == SIGINT ? "SIGINT" : "SIGTERM");
    return status;
}

} // namespace rdf::serve
