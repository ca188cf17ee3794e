#pragma once
// MESH's canonical copy reached by messages to the rank that holds it
// (config.remote_memory = home_messages, the default; memory.hpp). The home
// rank keeps the copy in its own memory, and its core 0 serves requests
// for it when it polls, as it serves invocations: a word operation, a copy
// in or out, or a whole side of a seqlock over one range
// (taco::versioned_memory_endpoint). Each is one exchange.
//
// Ranks on the home's host may share the copy with it and reach it by loads
// and stores (memory.hpp): what the home serves is then done as they do it,
// by atomics and by the seqlock's odd mark.
//
// Why not MPI RMA (config.remote_memory = rma): over TCP, Open MPI's
// one-sided components (osc/ucx, osc/pt2pt) serve a Get or an atomic in the
// target's own MPI calls, so the home's core has to poll for either; and
// there each completed RMA operation cost 35-120 us between two network
// namespaces, against about 17 us for a round trip of two messages (a
// taco::sync, measured in the same runs). A seqlock's
// release and acquire (three word operations and two copies, each
// completed) then took 5x an MPI_Put + MPI_Get of the object. Done at the
// home, each side is one exchange, and the seqlock's odd state is never
// waited for across the network.
//
// Ordering: a requester waits for each reply, so its requests take effect
// in program order, before anything it does after (an invocation it sends,
// which a third rank may answer with a request of its own).
//
// Liveness: the home's core 0 answers when it polls (its idle loop, waits,
// sends that find a channel full, pause() in a seqlock spin, and the run's
// end). A home core that
// computes for long without reaching one holds up the other ranks' MESH
// accesses, as it holds up their invocations to it.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <taco/platform/remote_memory.hpp>
#include <tacomesh/mpi/session.hpp>

namespace tacomesh::mpi::detail {

/// A word operation where the word is loaded and stored (the home, and the
/// ranks that share its copy): seq_cst, as MPI_Fetch_and_op completed by a
/// flush is (the controllers' words and copies keep program order).
template <class T>
std::uint64_t word_at(taco::word_op op, T& w, T operand) noexcept {
    std::atomic_ref<T> a(w);
    switch (op) {
    case taco::word_op::load: return a.load();
    case taco::word_op::fetch_add: return a.fetch_add(operand);
    case taco::word_op::store: a.store(operand); return 0;
    case taco::word_op::exchange: return a.exchange(operand);
    }
    return 0;
}

/// The seqlock's two sides at the canonical copy, by the process that holds
/// it (the home's core, for itself or for a request).
struct versioned_at_home {
    enum status : std::uint32_t { copied, unchanged, busy };

    /// Reader: `busy` while a write-back is under way (odd: the home's own
    /// publish, polling in its `during`, or one by a rank of its host),
    /// `unchanged` if the word is `seen` and `always` is false; else
    /// `copy()` copies the range, and the word (even) is returned in v.
    template <class Copy>
    static status refresh(std::atomic<std::uint64_t>& version, std::uint64_t seen, bool always, std::uint64_t& v,
                          Copy&& copy) {
        v = version.load(std::memory_order_acquire);
        if (v & 1) return busy;
        if (!always && v == seen) return unchanged;
        copy();
        // Ranks on the home's host that write the copy by loads and stores
        // mark the word odd first: a changed word is a torn copy.
        std::atomic_thread_fence(std::memory_order_acquire);
        return version.load(std::memory_order_relaxed) == v ? copied : busy;
    }
    /// Writer: `busy` while another write-back is under way; else the word
    /// goes odd, `copy()` runs, and it goes to v + 2 (returned in v).
    template <class Copy>
    static status publish(std::atomic<std::uint64_t>& version, std::uint64_t& v, Copy&& copy) {
        v = version.load(std::memory_order_relaxed);
        if ((v & 1) || !version.compare_exchange_strong(v, v + 1, std::memory_order_acq_rel)) return busy;
        std::atomic_thread_fence(std::memory_order_release); // odd before any copied byte
        copy();
        v += 2;
        version.store(v, std::memory_order_release);
        return copied;
    }
};

/// The requests and their answers, on a run's communicator with four tags
/// of their own (after the cores' three each).
class home_requests {
public:
    /// Payload carried in the request or reply message itself; larger ones
    /// follow as a message of their own, received in place.
    static constexpr std::size_t inline_bytes = 8192;
    static constexpr int home = 0;

    /// Every rank of the run makes one. `canonical`: the home's copy (the
    /// home rank only).
    home_requests(MPI_Comm comm, int rank, int first_tag, std::byte* canonical, std::size_t bytes)
        : comm_(comm), rank_(rank), request_tag_(first_tag), request_data_tag_(first_tag + 1),
          reply_tag_(first_tag + 2), reply_data_tag_(first_tag + 3), canonical_(canonical), bytes_(bytes),
          buffer_(sizeof(request) + inline_bytes) {
        if (rank_ == home) post();
    }
    ~home_requests() {
        if (posted_ != MPI_REQUEST_NULL) {
            MPI_Cancel(&posted_);
            MPI_Wait(&posted_, MPI_STATUS_IGNORE);
        }
    }
    home_requests(const home_requests&) = delete;
    home_requests& operator=(const home_requests&) = delete;

    /// Called between tests of a pending reply (the failure watch's report,
    /// a yield when oversubscribed).
    void on_wait(std::function<void()> f) { waiting_ = std::move(f); }
    int request_tag() const noexcept { return request_tag_; }

    // The requester's side (any rank but the home). `at`: displacement in
    // the canonical copy; `view`: this rank's view of the range.

    std::uint64_t word(taco::word_op op, std::uint64_t at, std::size_t width, std::uint64_t operand) {
        request r{kind::word, std::uint32_t(width), std::uint64_t(op), at, 0, 0, operand};
        return exchange(r, {}, {}).value;
    }
    void get(std::uint64_t at, std::byte* view, std::size_t n) { exchange({kind::get, 0, 0, at, n, 0, 0}, {}, {view, n}); }
    void put(std::uint64_t at, const std::byte* view, std::size_t n) {
        exchange({kind::put, 0, 0, at, n, 0, 0}, {view, n}, {});
    }
    std::uint64_t refresh(std::uint64_t version_at, std::uint64_t at, std::byte* view, std::size_t n, std::uint64_t seen,
                          const std::function<void()>& pause) {
        const bool always = seen == ~std::uint64_t(0);
        for (;;) {
            const reply a = exchange({kind::refresh, 0, always, at, n, version_at, seen}, {}, {view, n});
            if (a.status != versioned_at_home::busy) return a.value;
            if (pause) pause(); // a write-back of it is under way at the home
        }
    }
    std::uint64_t publish(std::uint64_t version_at, std::uint64_t at, const std::byte* view, std::size_t n,
                          const std::function<void()>& pause) {
        for (;;) {
            const reply a = exchange({kind::publish, 0, 0, at, n, version_at, 0}, {view, n}, {});
            if (a.status != versioned_at_home::busy) return a.value;
            if (pause) pause();
        }
    }

    // The home's side.

    /// Serve what has come (core 0 of the home, when it polls); returns how many.
    std::size_t serve() {
        std::size_t n = 0;
        for (; n < per_poll_budget; ++n) {
            int done = 0;
            MPI_Status st;
            check(MPI_Test(&posted_, &done, &st), "MPI_Test");
            if (!done) break;
            int length = 0;
            MPI_Get_count(&st, MPI_BYTE, &length);
            // Served before the receive is posted again: the buffer is the
            // request's, and a reply never waits for another request.
            serve_one(buffer_.data(), std::size_t(length), st.MPI_SOURCE);
            post();
        }
        return n;
    }
    /// A request the run's end found by probing (its drain): served, not dropped.
    void serve_matched(MPI_Message& m, const MPI_Status& st) {
        int length = 0;
        MPI_Get_count(&st, MPI_BYTE, &length);
        std::vector<std::byte> bytes(std::size_t(std::max(length, 0)));
        check(MPI_Mrecv(bytes.data(), length, MPI_BYTE, &m, MPI_STATUS_IGNORE), "MPI_Mrecv");
        serve_one(bytes.data(), bytes.size(), st.MPI_SOURCE);
    }

private:
    enum class kind : std::uint32_t { word, get, put, refresh, publish };
    struct request {
        kind what;
        std::uint32_t width; ///< word: 4 or 8
        std::uint64_t op;    ///< word: taco::word_op; refresh: copy even if unchanged
        std::uint64_t at, bytes;
        std::uint64_t version_at;
        std::uint64_t operand; ///< word: the operand; refresh: the version the view holds
    };
    struct reply {
        std::uint64_t value = 0;
        std::uint32_t status = versioned_at_home::copied;
        std::uint32_t unused = 0;
    };
    static constexpr std::size_t per_poll_budget = 16;

    void post() {
        check(MPI_Irecv(buffer_.data(), int(buffer_.size()), MPI_BYTE, MPI_ANY_SOURCE, request_tag_, comm_, &posted_),
              "MPI_Irecv");
    }

    void wait(MPI_Request& r) {
        for (;;) {
            int done = 0;
            check(MPI_Test(&r, &done, MPI_STATUS_IGNORE), "MPI_Test");
            if (done) return;
            if (waiting_) waiting_();
        }
    }

    /// One request and its reply. `out`: payload sent with it; `in`: where
    /// a reply's payload goes (received there in place when it is large).
    reply exchange(const request& r, std::span<const std::byte> out, std::span<std::byte> in) {
        std::vector<std::byte>& message = scratch_;
        const bool out_inline = out.size() <= inline_bytes, in_inline = in.size() <= inline_bytes;
        message.resize(sizeof r + (out_inline ? out.size() : 0));
        std::memcpy(message.data(), &r, sizeof r);
        if (out_inline && !out.empty()) std::memcpy(message.data() + sizeof r, out.data(), out.size());

        std::vector<std::byte>& answer = answer_;
        answer.resize(sizeof(reply) + (in_inline ? in.size() : 0));
        MPI_Request got_reply, got_data = MPI_REQUEST_NULL, sent_data = MPI_REQUEST_NULL, sent;
        check(MPI_Irecv(answer.data(), int(answer.size()), MPI_BYTE, home, reply_tag_, comm_, &got_reply), "MPI_Irecv");
        if (!in_inline)
            check(MPI_Irecv(in.data(), int(in.size()), MPI_BYTE, home, reply_data_tag_, comm_, &got_data), "MPI_Irecv");
        check(MPI_Isend(message.data(), int(message.size()), MPI_BYTE, home, request_tag_, comm_, &sent), "MPI_Isend");
        if (!out_inline)
            check(MPI_Isend(out.data(), int(out.size()), MPI_BYTE, home, request_data_tag_, comm_, &sent_data), "MPI_Isend");
        wait(sent);
        if (sent_data != MPI_REQUEST_NULL) wait(sent_data);
        wait(got_reply);
        reply a;
        std::memcpy(&a, answer.data(), sizeof a);
        if (a.status == versioned_at_home::copied && !in.empty()) {
            if (in_inline) std::memcpy(in.data(), answer.data() + sizeof a, in.size());
            else wait(got_data);
        } else if (got_data != MPI_REQUEST_NULL) {
            check(MPI_Cancel(&got_data), "MPI_Cancel"); // nothing comes: unchanged, or busy
            MPI_Wait(&got_data, MPI_STATUS_IGNORE);
        }
        return a;
    }

    std::byte* at_home(std::uint64_t at, std::uint64_t n) const {
        if (!canonical_) throw std::runtime_error("tacomesh::mpi: a MESH memory request, but this rank holds no canonical copy");
        if (at > bytes_ || n > bytes_ - at)
            throw std::runtime_error("tacomesh::mpi: a request for " + std::to_string(n) + " bytes at " +
                                     std::to_string(at) + " of MESH's shared memory, which has " +
                                     std::to_string(bytes_) + " (was the rank started with another program?)");
        return canonical_ + at;
    }

    void serve_one(const std::byte* message, std::size_t length, int source) {
        if (length < sizeof(request))
            throw std::runtime_error("tacomesh::mpi: a MESH memory request of " + std::to_string(length) +
                                     " bytes from rank " + std::to_string(source) + " (was it started with another program?)");
        request r;
        std::memcpy(&r, message, sizeof r);
        const std::byte* payload = message + sizeof r;
        const bool payload_inline = r.bytes <= inline_bytes;
        // A payload too large for the request follows it: take it, in place
        // where it goes (or dropped, if the request cannot be served now).
        auto take_payload = [&](std::byte* to) {
            if (payload_inline) std::memcpy(to, payload, r.bytes);
            else
                check(MPI_Recv(to, int(r.bytes), MPI_BYTE, source, request_data_tag_, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
        };
        reply a;
        // A refresh's payload is copied out first, then sent: ranks on the
        // home's host may write the copy meanwhile (by loads and stores,
        // marking the version odd as the seqlock asks), so the copy is
        // checked against the version before it goes. A large get is sent
        // from the copy itself, as an RMA Get reads it: the requester's own
        // version reads catch a write-back that overlapped it.
        std::vector<std::byte>& out = reply_buffer_;
        const std::byte* data = nullptr;
        std::size_t data_bytes = 0;
        auto copy_out = [&](const std::byte* from, std::size_t n) {
            out.resize(sizeof a + n);
            std::memcpy(out.data() + sizeof a, from, n);
            data = out.data() + sizeof a;
            data_bytes = n;
        };
        switch (r.what) {
        case kind::word: {
            std::byte* w = at_home(r.at, r.width);
            if ((r.width != 4 && r.width != 8) || r.at % r.width != 0)
                throw std::runtime_error("tacomesh::mpi: a shared word request of " + std::to_string(r.width) + " bytes");
            a.value = r.width == 8 ? word_at(taco::word_op(r.op), *reinterpret_cast<std::uint64_t*>(w), r.operand)
                                   : word_at(taco::word_op(r.op), *reinterpret_cast<std::uint32_t*>(w),
                                             std::uint32_t(r.operand));
            break;
        }
        case kind::get:
            if (r.bytes <= inline_bytes) copy_out(at_home(r.at, r.bytes), r.bytes);
            else {
                data = at_home(r.at, r.bytes);
                data_bytes = r.bytes;
            }
            break;
        case kind::put: take_payload(at_home(r.at, r.bytes)); break;
        case kind::refresh: {
            auto& v = version_word(r.version_at);
            std::byte* from = at_home(r.at, r.bytes);
            a.status = versioned_at_home::refresh(v, r.operand, r.op != 0, a.value, [&] { copy_out(from, r.bytes); });
            if (a.status != versioned_at_home::copied) data_bytes = 0;
            break;
        }
        case kind::publish: {
            std::byte* to = at_home(r.at, r.bytes);
            a.status = versioned_at_home::publish(version_word(r.version_at), a.value, [&] { take_payload(to); });
            if (a.status == versioned_at_home::busy && !payload_inline) {
                std::vector<std::byte> dropped(r.bytes); // sent anyway: take it, the requester sends it again
                take_payload(dropped.data());
            }
            break;
        }
        default:
            throw std::runtime_error("tacomesh::mpi: a MESH memory request of unknown kind " +
                                     std::to_string(std::uint32_t(r.what)) + " from rank " + std::to_string(source));
        }
        // The reply, its payload in the same message where it fits.
        if (data_bytes <= inline_bytes) {
            out.resize(sizeof a + data_bytes); // the payload is there already (copy_out)
            std::memcpy(out.data(), &a, sizeof a);
            check(MPI_Send(out.data(), int(out.size()), MPI_BYTE, source, reply_tag_, comm_), "MPI_Send");
        } else {
            check(MPI_Send(&a, int(sizeof a), MPI_BYTE, source, reply_tag_, comm_), "MPI_Send");
            check(MPI_Send(data, int(data_bytes), MPI_BYTE, source, reply_data_tag_, comm_), "MPI_Send");
        }
        // A large object's refresh needed its size here once: not for the run.
        if (out.capacity() > (std::size_t(1) << 20)) std::vector<std::byte>().swap(out);
    }

    std::atomic<std::uint64_t>& version_word(std::uint64_t at) const {
        if (at % 8 != 0) throw std::runtime_error("tacomesh::mpi: a version word request not 8-byte aligned");
        return *reinterpret_cast<std::atomic<std::uint64_t>*>(at_home(at, 8));
    }

    MPI_Comm comm_;
    int rank_;
    int request_tag_, request_data_tag_, reply_tag_, reply_data_tag_;
    std::byte* canonical_;
    std::size_t bytes_;
    std::vector<std::byte> buffer_;                     ///< the home's posted receive
    std::vector<std::byte> scratch_, answer_; ///< a requester's: one request at a time per rank
    std::vector<std::byte> reply_buffer_;     ///< the home's: one request served at a time
    MPI_Request posted_ = MPI_REQUEST_NULL;
    std::function<void()> waiting_;
};

} // namespace tacomesh::mpi::detail
