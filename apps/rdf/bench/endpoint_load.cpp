// rdf_endpoint_load: a closed-loop load client for a SPARQL endpoint, the
// one endpoint_compare.py drives against tacomesh-rdf serve and Oxigraph's
// server alike. It shares the 2 CPUs with the server it measures, so it
// should cost little: Python's http.client took about 0.25 ms of CPU a
// request on the LUBM mix, as much as a small query takes to answer, and
// cpp-httplib's client as much (it reads 4 KB at a time, each read after a
// poll: 60 recv and 65 poll calls for the mix's average 240 KB body). So
// this is HTTP/1.1 on a plain socket: one send a request, reads of up to
// 1 MB (2 recv calls a request), Content-Length or chunked bodies
// (Oxigraph streams chunked): about 0.1 ms of CPU a request.
//
//   rdf_endpoint_load --port N [--host ADDR] [--path /sparql] [--connections C]
//                     [--warmup S] [--duration S] [--get] [--verify-all] QUERY.rq...
//
// C connections, each a thread with one keep-alive connection, each sending
// the queries in turn (connection k starts at query k*Q/C, so that they do
// not move in step), the next as soon as the last is answered, with
// Accept: application/sparql-results+json (Accept-Encoding: identity: no
// compression on either side). POST as application/sparql-query, or GET
// with ?query= (--get). The first --warmup seconds are not counted; of the
// next --duration seconds, every request that ends inside them is counted
// and timed. Each response must be 200, and its rows (the objects in
// results.bindings, or 1 for a boolean) are counted: by scanning the body
// the first time a query's body has a given length, and then by that length
// (the same rows in any order have the same length; --verify-all scans
// every body).
//
// Prints JSON on stdout: the window, requests, throughput, errors, the
// client's CPU time (user + system over the window), and latency
// percentiles (ms) overall and per query with each query's row counts.
// Exit status: 0 if every response was 200, 1 otherwise, 2 for bad usage.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr,
                 "rdf_endpoint_load: %s\n"
                 "usage: rdf_endpoint_load --port N [--host ADDR] [--path /sparql] [--connections C]\n"
                 "                         [--warmup S] [--duration S] [--get] [--verify-all] QUERY.rq...\n",
                 why.c_str());
    std::exit(2);
}

/// The rows of a SPARQL JSON results body: the objects directly inside the
/// array of the "bindings" member (of "results"), or 1 for a "boolean"
/// member; nullopt if the body is not such a document (or is cut short).
std::optional<std::size_t> json_rows(std::string_view b) {
    int depth = 0;
    int bindings_depth = -1; // the depth inside the bindings array, once in it
    bool expect_bindings = false, saw_boolean = false, bindings_done = false;
    std::size_t rows = 0;
    std::string_view last_string;
    for (std::size_t i = 0; i < b.size(); ++i) {
        const char c = b[i];
        if (c == '"') {
            const std::size_t start = ++i;
            for (; i < b.size() && b[i] != '"'; ++i)
                if (b[i] == '\\') ++i;
            if (i >= b.size()) return std::nullopt;
            last_string = b.substr(start, i - start);
            continue;
        }
        switch (c) {
        case ':':
            // A member's value follows: the key is the last string, at depth 2
            // ({"results": {"bindings": ...}}) or 1 ({"boolean": ...}).
            if (depth == 2 && last_string == "bindings") expect_bindings = true;
            if (depth == 1 && last_string == "boolean") saw_boolean = true;
            break;
        case '[':
            ++depth;
            if (expect_bindings) bindings_depth = depth, expect_bindings = false;
            break;
        case '{':
            if (depth == bindings_depth) ++rows;
            ++depth;
            break;
        case ']':
            if (depth == bindings_depth) bindings_depth = -1, bindings_done = true;
            --depth;
            break;
        case '}': --depth; break;
        case ' ': case '\n': case '\r': case '\t': case ',': break;
        default: expect_bindings = false; break; // "bindings": something not an array
        }
        if (depth < 0) return std::nullopt;
    }
    if (depth != 0) return std::nullopt;
    if (bindings_done) return rows;
    if (saw_boolean) return 1;
    return std::nullopt;
}

std::string url_encode(std::string_view s) {
    static const char* hex = "0123456789ABCDEF";
    std::string r;
    for (unsigned char c : s) {
        if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') r += char(c);
        else r += '%', r += hex[c >> 4], r += hex[c & 15];
    }
    return r;
}

std::string json_escape(std::string_view s) {
    std::string r;
    for (char c : s) {
        if (c == '"' || c == '\\') r += '\\', r += c;
        else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            r += buf;
        } else r += c;
    }
    return r;
}

/// One keep-alive HTTP/1.1 connection: a request out, its response in.
class connection {
public:
    connection(std::string host, int port) : host_(std::move(host)), port_(port) { buf_.resize(1 << 20); }
    ~connection() { close_socket(); }
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    struct response {
        int status = 0;
        std::string body;
    };

    /// Sends `request` (the whole message) and reads the response into r;
    /// an empty string, or what went wrong. A kept-alive connection that
    /// the server has closed meanwhile is opened again, once.
    std::string exchange(const std::string& request, response& r) {
        for (int attempt = 0;; ++attempt) {
            const bool reused = fd_ >= 0;
            if (fd_ < 0) {
                if (std::string e = open(); !e.empty()) return e;
            }
            std::string e = send_all(request);
            bool nothing_read = true;
            if (e.empty()) e = read_response(r, nothing_read);
            if (e.empty()) return e;
            close_socket();
            if (!(reused && nothing_read && attempt == 0)) return e;
        }
    }

private:
    std::string open() {
        addrinfo hints{}, *ai = nullptr;
        hints.ai_socktype = SOCK_STREAM;
        if (const int rc = getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &ai); rc != 0)
            return std::string("cannot resolve ") + host_ + ": " + gai_strerror(rc);
        std::string e = "cannot connect";
        for (addrinfo* p = ai; p; p = p->ai_next) {
            const int fd = ::socket(p->ai_family, p->ai_socktype, p->ai_protocol);
            if (fd < 0) continue;
            if (::connect(fd, p->ai_addr, p->ai_addrlen) == 0) {
                fd_ = fd;
                break;
            }
            e = std::string("cannot connect: ") + std::strerror(errno);
            ::close(fd);
        }
        freeaddrinfo(ai);
        if (fd_ < 0) return e + " (" + host_ + ":" + std::to_string(port_) + ")";
        const int one = 1;
        ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        timeval tv{120, 0};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        begin_ = end_ = 0;
        return {};
    }

    void close_socket() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
        begin_ = end_ = 0;
    }

    std::string send_all(const std::string& m) {
        for (std::size_t at = 0; at < m.size();) {
            const ssize_t n = ::send(fd_, m.data() + at, m.size() - at, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return std::string("send: ") + std::strerror(errno);
            at += std::size_t(n);
        }
        return {};
    }

    /// More bytes into buf_[end_..]; false at the end of the stream or an error (in e).
    bool fill(std::string& e, bool& nothing_read) {
        if (begin_ == end_) begin_ = end_ = 0;
        else if (end_ == buf_.size()) {
            if (begin_ == 0) buf_.resize(buf_.size() * 2);
            else {
                std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
                end_ -= begin_;
                begin_ = 0;
            }
        }
        for (;;) {
            const ssize_t n = ::recv(fd_, buf_.data() + end_, buf_.size() - end_, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return e = std::string("recv: ") + std::strerror(errno), false;
            if (n == 0) return e = "the server closed the connection", false;
            end_ += std::size_t(n);
            nothing_read = false;
            return true;
        }
    }

    /// A line ending in CRLF from the buffer (without it).
    bool line(std::string& out, std::string& e, bool& nothing_read) {
        for (;;) {
            const char* b = buf_.data() + begin_;
            const void* nl = std::memchr(b, '\n', end_ - begin_);
            if (nl) {
                const std::size_t len = std::size_t(static_cast<const char*>(nl) - b);
                out.assign(b, len && b[len - 1] == '\r' ? len - 1 : len);
                begin_ += len + 1;
                return true;
            }
            if (!fill(e, nothing_read)) return false;
        }
    }

    /// n bytes of body from the buffer and the socket, appended to out.
    bool take(std::size_t n, std::string& out, std::string& e, bool& nothing_read) {
        while (n > 0) {
            if (begin_ == end_ && !fill(e, nothing_read)) return false;
            const std::size_t k = std::min(n, end_ - begin_);
            out.append(buf_.data() + begin_, k);
            begin_ += k;
            n -= k;
        }
        return true;
    }

    std::string read_response(response& r, bool& nothing_read) {
        std::string e, l;
        r.body.clear();
        if (!line(l, e, nothing_read)) return e;
        if (l.size() < 12 || l.compare(0, 7, "HTTP/1.") != 0) return "not an HTTP/1.x status line: " + l.substr(0, 80);
        r.status = std::atoi(l.c_str() + 9);
        std::optional<std::size_t> length;
        bool chunked = false, close_after = l.compare(0, 8, "HTTP/1.0") == 0;
        for (;;) {
            if (!line(l, e, nothing_read)) return e;
            if (l.empty()) break;
            const std::size_t colon = l.find(':');
            if (colon == std::string::npos) continue;
            std::string name = l.substr(0, colon), value = l.substr(colon + 1);
            for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
            for (char& c : value) c = char(std::tolower(static_cast<unsigned char>(c)));
            value.erase(0, value.find_first_not_of(" \t"));
            if (name == "content-length") length = std::stoull(value);
            else if (name == "transfer-encoding") chunked = value.find("chunked") != std::string::npos;
            else if (name == "connection") close_after = value.find("close") != std::string::npos;
        }
        if (chunked) {
            for (;;) {
                if (!line(l, e, nothing_read)) return e;
                const std::size_t n = std::strtoull(l.c_str(), nullptr, 16);
                if (n == 0) {
                    do {
                        if (!line(l, e, nothing_read)) return e; // trailers, then an empty line
                    } while (!l.empty());
                    break;
                }
                if (!take(n, r.body, e, nothing_read) || !line(l, e, nothing_read)) return e;
            }
        } else if (length) {
            r.body.reserve(*length);
            if (!take(*length, r.body, e, nothing_read)) return e;
        } else {
            return "a response with neither Content-Length nor chunked: not kept alive";
        }
        if (close_after) close_socket(); // the next request opens another
        return {};
    }

    std::string host_;
    int port_;
    int fd_ = -1;
    std::string buf_;
    std::size_t begin_ = 0, end_ = 0;
};

struct query {
    std::string name, text, request; ///< request: the whole HTTP message
};

struct sample {
    std::uint32_t query;
    double ms;
};

/// One connection's record over the counted window.
struct conn_record {
    std::vector<sample> samples;
    std::map<std::uint32_t, std::set<std::size_t>> rows;  ///< query -> the row counts seen
    std::map<std::uint32_t, std::size_t> bytes;           ///< query -> the last body's length
    std::vector<std::string> errors;                      ///< the first few
    std::size_t error_count = 0, scans = 0, requests_all = 0;
};

double percentile(std::vector<double>& v, double p) { // v sorted; nearest rank
    if (v.empty()) return 0;
    const std::size_t k = std::min(v.size() - 1, std::size_t(std::ceil(p / 100.0 * double(v.size()))) - (p > 0 ? 1 : 0));
    return v[k];
}

std::string stats_json(std::vector<double> ms) {
    std::sort(ms.begin(), ms.end());
    double sum = 0;
    for (double x : ms) sum += x;
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "\"n\": %zu, \"mean_ms\": %.4f, \"p50_ms\": %.4f, \"p90_ms\": %.4f, \"p99_ms\": %.4f, \"max_ms\": %.4f",
                  ms.size(), ms.empty() ? 0 : sum / double(ms.size()), percentile(ms, 50), percentile(ms, 90),
                  percentile(ms, 99), ms.empty() ? 0 : ms.back());
    return buf;
}

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

} // namespace

int main(int argc, char** argv) {
    std::string host = "127.0.0.1", path = "/sparql";
    int port = 0;
    unsigned connections = 1;
    double warmup = 1, duration = 5;
    bool get = false, verify_all = false;
    std::vector<query> queries;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(a + " needs a value");
            return argv[++i];
        };
        try {
            if (a == "--host") host = value();
            else if (a == "--port") port = std::stoi(value());
            else if (a == "--path") path = value();
            else if (a == "--connections") connections = unsigned(std::stoul(value()));
            else if (a == "--warmup") warmup = std::stod(value());
            else if (a == "--duration") duration = std::stod(value());
            else if (a == "--get") get = true;
            else if (a == "--verify-all") verify_all = true;
            else if (a == "--help") usage("help");
            else if (a.rfind("--", 0) == 0) usage("unknown option " + a);
            else {
                std::ifstream in(a);
                if (!in) usage("cannot read " + a);
                std::stringstream ss;
                ss << in.rdbuf();
                std::string name = a.substr(a.find_last_of('/') + 1);
                if (name.size() > 3 && name.compare(name.size() - 3, 3, ".rq") == 0) name.resize(name.size() - 3);
                queries.push_back({name, ss.str(), {}});
            }
        } catch (const std::logic_error&) {
            usage("bad value for " + a);
        }
    }
    if (port <= 0 || port > 65535) usage("--port N is needed");
    if (queries.empty()) usage("no QUERY.rq");
    if (connections < 1 || duration <= 0 || warmup < 0) usage("--connections >= 1, --duration > 0, --warmup >= 0");

    const std::string common = "Host: " + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                               std::to_string(port) +
                               "\r\nAccept: application/sparql-results+json\r\nAccept-Encoding: identity\r\n";
    for (query& q : queries)
        q.request = get ? "GET " + path + "?query=" + url_encode(q.text) + " HTTP/1.1\r\n" + common + "\r\n"
                        : "POST " + path + " HTTP/1.1\r\n" + common +
                              "Content-Type: application/sparql-query\r\nContent-Length: " + std::to_string(q.text.size()) +
                              "\r\n\r\n" + q.text;
    std::vector<conn_record> records(connections);
    // The counted window, set before the threads start.
    const clock_type::time_point t0 =
        clock_type::now() + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(warmup));
    const clock_type::time_point t1 =
        t0 + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(duration));
    std::vector<std::thread> threads;
    for (unsigned k = 0; k < connections; ++k)
        threads.emplace_back([&, k] {
            conn_record& rec = records[k];
            connection conn(host, port);
            connection::response r;
            std::map<std::uint32_t, std::map<std::size_t, std::size_t>> known; // query -> body length -> rows
            std::size_t next = std::size_t(k) * queries.size() / connections;
            for (;;) {
                const auto begin = clock_type::now();
                if (begin >= t1) break;
                const auto qi = std::uint32_t(next % queries.size());
                ++next;
                const query& q = queries[qi];
                const std::string failed = conn.exchange(q.request, r);
                const auto end = clock_type::now();
                ++rec.requests_all;
                std::string error;
                std::size_t rows = 0;
                if (!failed.empty()) error = q.name + ": " + failed;
                else if (r.status != 200)
                    error = q.name + ": HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 200);
                else {
                    auto& by_length = known[qi];
                    const auto it = by_length.find(r.body.size());
                    if (it != by_length.end() && !verify_all) rows = it->second;
                    else {
                        ++rec.scans;
                        const auto n = json_rows(r.body);
                        if (!n) error = q.name + ": not a SPARQL JSON results body: " + r.body.substr(0, 200);
                        else rows = *n, by_length[r.body.size()] = rows;
                    }
                }
                // Errors count wherever they happen (warm-up included); the
                // rest only inside the window.
                if (!error.empty()) {
                    if (rec.errors.size() < 5) rec.errors.push_back(error);
                    ++rec.error_count;
                    continue;
                }
                rec.rows[qi].insert(rows);
                rec.bytes[qi] = r.body.size();
                if (end >= t0 && end <= t1)
                    rec.samples.push_back({qi, std::chrono::duration<double, std::milli>(end - begin).count()});
            }
        });
    std::this_thread::sleep_until(t0);
    const double cpu0 = cpu_seconds();
    std::this_thread::sleep_until(t1);
    const double cpu1 = cpu_seconds();
    for (auto& t : threads) t.join();

    std::vector<double> all;
    std::vector<std::vector<double>> per(queries.size());
    std::map<std::uint32_t, std::set<std::size_t>> rows;
    std::map<std::uint32_t, std::size_t> bytes;
    std::vector<std::string> errors;
    std::size_t error_count = 0, scans = 0, requests_all = 0;
    for (const conn_record& rec : records) {
        for (const sample& s : rec.samples) all.push_back(s.ms), per[s.query].push_back(s.ms);
        for (const auto& [q, set] : rec.rows) rows[q].insert(set.begin(), set.end());
        for (const auto& [q, b] : rec.bytes) bytes[q] = std::max(bytes[q], b);
        for (const auto& e : rec.errors)
            if (errors.size() < 10) errors.push_back(e);
        error_count += rec.error_count;
        scans += rec.scans;
        requests_all += rec.requests_all;
    }
    std::printf("{\n \"connections\": %u, \"method\": \"%s\", \"warmup_s\": %g, \"window_s\": %g,\n", connections,
                get ? "GET" : "POST", warmup, duration);
    std::printf(" \"requests\": %zu, \"requests_all\": %zu, \"throughput_qps\": %.2f, \"errors\": %zu, \"scans\": %zu,\n",
                all.size(), requests_all, double(all.size()) / duration, error_count, scans);
    std::printf(" \"client_cpu_s\": %.4f, \"client_cpu_share\": %.4f,\n", cpu1 - cpu0, (cpu1 - cpu0) / duration);
    std::printf(" \"error_samples\": [");
    for (std::size_t i = 0; i < errors.size(); ++i) std::printf("%s\"%s\"", i ? ", " : "", json_escape(errors[i]).c_str());
    std::printf("],\n \"latency\": {%s},\n \"per_query\": {\n", stats_json(all).c_str());
    for (std::uint32_t q = 0; q < queries.size(); ++q) {
        std::string r;
        for (std::size_t n : rows[q]) r += (r.empty() ? "" : ", ") + std::to_string(n);
        std::printf("  \"%s\": {%s, \"rows\": [%s], \"bytes\": %zu}%s\n", json_escape(queries[q].name).c_str(),
                    stats_json(per[q]).c_str(), r.c_str(), bytes[q], q + 1 < queries.size() ? "," : "");
    }
    std::printf(" }\n}\n");
    return error_count == 0 ? 0 : 1;
}
