#pragma once
// The cluster platform: TACO over Open MPI (docs: platforms/mpi/README.md).
// A program is started by `mpirun -np N program`; every rank runs it, rank 0
// as the program and the others as servers of its runs (session.hpp). A run
// has config.cores cores, placed round robin over the ranks (core c on rank
// c mod N), as threads of their rank: one core per rank by default,
// several with threads_per_rank (then one node can be one process).
//
// Channels between cores of one host (config.on_host = shared_memory, the
// default): the POSIX platform's rings in an MPI shared-memory window
// (host_channels.hpp); a full ring is the back-pressure, and where every
// core is on one host the cores make no MPI call during a run. Between
// hosts (and everywhere with on_host::mpi), MPI messages:
// an invocation is one MPI message of at most taco::message_bytes
// (plus the sending core) to the destination core's rank, tagged with the
// destination core (MPI keeps messages of one sender thread with one tag in
// order: in order per source core), sent by MPI_Isend, which for messages
// this small copies and completes at once (eager). Back-pressure is by
// credits: a core may have `window` messages to one core that it has not
// heard were taken; the receiver sends one credit (an MPI message to the
// sender's credit tag) per window / 2 messages it took from that core, and
// a send that finds the window full fails (try_acquire returns nullptr)
// until one comes: a slow receiver stops its senders instead of growing
// Open MPI's queue of unexpected messages. (MPI_Issend, which completes
// only once the receiver took the message, did the same with an
// acknowledgement per message: 2.6x the ping-pong's round trip.) Each core
// keeps four receives posted for its tag, tested when the runtime polls
// (the progress step of its idle loop): a message lands in place, not in
// MPI's queue of unexpected messages (a matched probe and receive per
// message cost more). An idle core polls, or sleeps in growing naps (1 us to 1 ms, never
// past its next timer) between polls.
//
// Each run has its own communicator, so nothing of one run reaches the
// next: at the end of a run every rank keeps taking (and dropping) what is
// sent to its cores until every rank's cores have stopped (a message still
// in flight then, to a core that has stopped, stays unmatched on the freed
// communicator).
//
// Code addresses in messages are relative to the program image
// (taco/image_ptr.hpp), so ranks with different load addresses agree.
//
// MESH: shared memory is a view per rank with its canonical copy at rank 0
// (memory.hpp), so the endpoint models taco::remote_memory_endpoint, and
// taco::versioned_memory_endpoint: where the other ranks reach the copy by
// requests (config.remote_memory = home_messages, home_requests.hpp), rank
// 0's core 0 serves them when it polls.
//
// A rank that dies is reported on rank 0 as taco::core_failure, under
// `mpirun --enable-recovery` (failure_watch.hpp). Not yet: ranks started
// with different programs.
#include <sched.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <taco/core_failure.hpp>
#include <taco/core_id.hpp>
#include <taco/platform/bulk_message_endpoint.hpp>
#include <taco/platform/core_threads.hpp>
#include <taco/platform/platform.hpp>
#include <taco/platform/remote_memory.hpp>
#include <taco/platform/versioned_memory.hpp>
#include <tacomesh/mpi/failure_watch.hpp>
#include <tacomesh/mpi/host_channels.hpp>
#include <tacomesh/mpi/memory.hpp>
#include <tacomesh/mpi/session.hpp>

namespace tacomesh::mpi {

using taco::core_id;

/// How cores on one host reach each other.
enum class on_host {
    /// Through an MPI shared-memory window: invocations in rings
    /// (host_channels.hpp), MESH by loads, stores and atomics on the
    /// canonical copy (memory.hpp). Cores on other hosts: MPI messages and RMA.
    shared_memory,
    /// As across hosts: every invocation an MPI message, every MESH access
    /// MPI RMA (to measure or test that path on one machine).
    mpi,
};

enum class idle_policy {
    poll,  ///< an idle core polls MPI (lowest latency; spins a CPU)
    sleep, ///< an idle core naps between polls (1 us, doubling to 1 ms)
};

/// Filled in on rank 0 when a run ends.
struct run_report {
    int ranks = 0;
    core_id cores = 0;
    bool oversubscribed = false; ///< more cores on a host than it has CPUs
    std::uint64_t rings_to_core0 = 0; ///< cores whose messages to core 0 came through shared-memory rings
    bool mesh_direct = false; ///< rank 0 reached MESH's canonical copy by loads and stores (on_host::shared_memory)
};

class platform;

struct config {
    using platform = mpi::platform;

    core_id cores = 0;            ///< 0: one per thread of every rank (ranks x threads_per_rank)
    core_id threads_per_rank = 1; ///< cores per rank when cores = 0
    idle_policy idle = idle_policy::poll;
    std::uint32_t window = 32; ///< messages a core may have sent to one core that it has not yet taken
    mpi::on_host on_host = on_host::shared_memory;
    /// How ranks that cannot load and store MESH's canonical copy (other
    /// hosts; every rank with on_host::mpi) reach it (memory.hpp).
    mpi::remote_memory remote_memory = remote_memory::home_messages;
    /// MESH's shared memory (reserved, not used, until allocated): views on
    /// every rank, canonical copies at rank 0. 0 and 0: no MESH in the run.
    std::size_t cached_bytes = std::size_t(256) << 20;
    std::size_t non_cached_bytes = std::size_t(32) << 20;
    std::size_t private_bytes = std::size_t(16) << 20; ///< per core
    /// A rank not heard from for this long is reported as lost: taco::run
    /// throws taco::core_failure naming it (failure_watch.hpp; needs
    /// `mpirun --enable-recovery`, or Open MPI ends the whole job itself).
    /// 0: no watch.
    std::chrono::milliseconds failure_timeout{10'000};
    run_report* report = nullptr;
};

namespace detail {

/// A run that could not start its cores on some rank; thrown on every rank
/// alike (platform::all_started).
struct start_refused : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// What the cores of one rank share during a run.
struct run_state {
    MPI_Comm comm = MPI_COMM_NULL;
    int rank = 0, ranks = 1;
    core_id cores = 1;
    idle_policy idle = idle_policy::poll;
    std::uint32_t window = 32;
    bool oversubscribed = false;
    std::uint64_t rings_to_core0 = 0; ///< on rank 0: the rings that carried messages to core 0
    bool mesh_direct = false;         ///< memory->direct(), kept past the memory's end
    std::unique_ptr<shared_memory> memory;
    std::unique_ptr<host_channels> host; ///< none where config.on_host is mpi
    std::unique_ptr<failure_watch> watch; ///< none where config.failure_timeout is 0 (or MPI serialises threads)

    int rank_of(core_id c) const noexcept { return int(c % core_id(ranks)); }
    int tag_of(core_id c) const noexcept { return int(c); }
    int urgent_tag_of(core_id c) const noexcept { return int(cores + c); }
    int credit_tag_of(core_id c) const noexcept { return int(2 * cores + c); }
    /// Large carried buffers to core c, one message each (endpoint::bulk_send).
    int bulk_tag_of(core_id c) const noexcept { return int(3 * cores + c); }
    /// The first of the four tags of MESH's requests to the home (home_requests.hpp).
    int memory_tags() const noexcept { return int(4 * cores); }
    /// Messages a credit stands for: a receiver sends one per this many taken from a source.
    std::uint32_t credit_unit() const noexcept { return window / 2 ? window / 2 : 1; }
    /// Every core's id, as the payload of its credits (sends need the bytes
    /// to stay put until done, which is at the latest the run's end).
    std::vector<core_id> ids;
};

} // namespace detail

/// One core (satisfies taco::channel_endpoint).
class endpoint {
public:
    endpoint(detail::run_state& s, core_id id)
        : s_(s), id_(id), rings_out_(s.cores), out_(s.cores), taken_(s.cores),
          my_header_(s.host ? &s.host->header_of(id) : nullptr), messages_(!s.host || s.host->spans_hosts()),
          serves_memory_(id == 0 && s.memory->serves()) {
        if (messages_)
            for (auto& r : posted_) post(r);
    }
    ~endpoint() {
        // What the posted receives still wait for is not coming to this
        // core any more (it stopped): cancel them, or drop what they got.
        for (auto& r : posted_)
            if (r.request != MPI_REQUEST_NULL) {
                MPI_Cancel(&r.request);
                MPI_Wait(&r.request, MPI_STATUS_IGNORE);
            }
        // The slots' bytes go with this endpoint: wait until MPI has them
        // (at once: messages this small are sent eagerly, copied).
        for (auto& o : out_)
            if (o)
                for (auto& slot : o->slots)
                    if (slot.request != MPI_REQUEST_NULL) MPI_Wait(&slot.request, MPI_STATUS_IGNORE);
        // A bulk message for a core that stopped before taking it is never
        // matched (the run's communicator goes): its request is let go, but
        // its bytes stay until the process ends, since a large send's are
        // read only when matched.
        for (auto& b : bulk_out_)
            if (b.request != MPI_REQUEST_NULL) {
                int done = 0;
                MPI_Test(&b.request, &done, MPI_STATUS_IGNORE);
                if (done) continue;
                MPI_Request_free(&b.request);
                static std::mutex lock;
                static std::vector<std::vector<std::byte>> unmatched;
                const std::lock_guard<std::mutex> held(lock);
                unmatched.push_back(std::move(b.bytes));
            }
    }
    endpoint(const endpoint&) = delete;
    endpoint& operator=(const endpoint&) = delete;

    core_id id() const noexcept { return id_; }
    core_id core_count() const noexcept { return s_.cores; }

    // taco::memory_endpoint and taco::remote_memory_endpoint (memory.hpp)
    std::span<std::byte> region(taco::memory_mode m) const { return s_.memory->region(m); }
    std::span<std::byte> private_region() const { return s_.memory->private_region(); }
    std::ptrdiff_t private_offset() const { return s_.memory->private_offset(id_ / core_id(s_.ranks)); }
    void invalidate(const void* p, std::size_t n) { s_.memory->invalidate(p, n); }
    void write_back(const void* p, std::size_t n) { s_.memory->write_back(p, n); }
    bool coherent() const noexcept { return false; }
    std::uint64_t word(taco::word_op op, void* w, std::size_t bytes, std::uint64_t operand) {
        return s_.memory->word(op, w, bytes, operand);
    }
    bool versioned_copies() const noexcept { return s_.memory->versioned_copies(); }
    std::uint64_t refresh_versioned(void* version, void* p, std::size_t n, std::uint64_t seen) {
        return s_.memory->refresh_versioned(version, p, n, seen);
    }
    std::uint64_t publish_versioned(void* version, const void* p, std::size_t n) {
        return s_.memory->publish_versioned(version, p, n);
    }

    std::byte* try_acquire(core_id dest) {
        // A core on this host: its ring (an unconnected producer never has a free slot).
        detail::ring::producer& p = rings_out_[dest];
        if (std::byte* slot = p.try_acquire()) [[likely]] {
            acquired_ring_ = &p;
            return slot;
        }
        return try_acquire_slow(dest);
    }
    void publish(core_id dest, std::size_t length) {
        if (acquired_ring_) [[likely]] {
            acquired_ring_->publish(length);
            acquired_ring_ = nullptr;
            return;
        }
        slot& sl = acquired_->next();
        // The sender's core after the message: the receiver's credits go back to it.
        std::memcpy(sl.bytes.data() + length, &id_, sizeof id_);
        detail::check(MPI_Isend(sl.bytes.data(), int(length + sizeof id_), MPI_BYTE, s_.rank_of(dest), s_.tag_of(dest),
                                s_.comm, &sl.request),
                      "MPI_Isend");
        ++acquired_->sent;
    }

    template <class Handler>
    std::size_t poll(Handler&& handle) {
        std::size_t n = 0;
        if (my_header_) {
            // acquire: a ring counted here has its flag set (the sender set
            // it before counting), so take_new_rings finds every one.
            if (const auto c = my_header_->connected.load(std::memory_order_acquire); c != rings_known_)
                [[unlikely]] {
                rings_known_ = c;
                s_.host->take_new_rings(id_, rings_in_, rings_polled_);
            }
            // By index: a handler that waits polls again, and may add rings.
            for (std::size_t i = 0; i < rings_in_.size(); ++i) n += rings_in_[i]->consume(handle, per_ring_budget);
        }
        if (messages_) {
            n += poll_messages(handle);
            if (!bulk_out_.empty()) reap_bulk_sends(); // their buffers freed, and MPI's progress for their rendezvous
        }
        if (serves_memory_) n += s_.memory->serve();
        if (n) nap_ = std::chrono::microseconds{1};
        return n;
    }

    // A waiting core learns here that a rank was lost (failure_watch).
    void idle(std::chrono::nanoseconds limit) {
        if (s_.idle == idle_policy::poll) return pause();
        if (s_.watch && s_.watch->failed()) [[unlikely]] s_.watch->throw_failure();
        std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(nap_, limit));
        nap_ = std::min(nap_ * 2, std::chrono::microseconds{1000});
    }
    void pause() {
        if (s_.watch && s_.watch->failed()) [[unlikely]] s_.watch->throw_failure();
        // The home's core may spin here in a seqlock read of an object whose
        // write-back another rank is doing by requests to it: serve them.
        if (serves_memory_) s_.memory->serve();
        if (s_.oversubscribed) ::sched_yield(); // the core we wait for may need this CPU
    }

    // taco::bulk_message_endpoint: a large carried buffer to a core on
    // another host (or any, with on_host::mpi) as one MPI message on the
    // destination's bulk tag, instead of some 9,600 channel messages a MiB. Its
    // bytes are copied, with the sending core first (a rank's cores share
    // its tags), into a buffer kept until MPI_Isend completes: the caller
    // may reuse its own at once. Cores on this host keep the rings, which
    // copy pieces at memory speed.
    bool bulk_send(core_id dest, std::span<const std::byte> bytes) {
        if (s_.host && s_.host->on_host(dest)) return false;
        if (bytes.size() > std::size_t(std::numeric_limits<int>::max()) - sizeof(core_id)) return false;
        reap_bulk_sends();
        pending_bulk& b = bulk_out_.emplace_back();
        b.bytes.resize(sizeof(core_id) + bytes.size());
        std::memcpy(b.bytes.data(), &id_, sizeof id_);
        std::memcpy(b.bytes.data() + sizeof id_, bytes.data(), bytes.size());
        detail::check(MPI_Isend(b.bytes.data(), int(b.bytes.size()), MPI_BYTE, s_.rank_of(dest), s_.bulk_tag_of(dest), s_.comm,
                                &b.request),
                      "MPI_Isend");
        return true;
    }
    // The message that names the bytes came through the channel, after
    // bulk_send returned: they are sent, or on the way. MPI keeps one
    // rank's messages on one tag in order per sending thread, and a rank's
    // cores are its threads: one from another core of `source`'s rank is
    // kept aside for when that core's turn comes. Waiting, the core serves
    // nothing (its own message is what comes next): it pauses, which
    // reports a lost rank.
    void bulk_receive(core_id source, std::vector<std::byte>& into, std::size_t n) {
        auto& waiting = bulk_in_[source];
        while (waiting.empty()) {
            int found = 0;
            MPI_Message m;
            MPI_Status st;
            detail::check(MPI_Improbe(s_.rank_of(source), s_.bulk_tag_of(id_), s_.comm, &found, &m, &st), "MPI_Improbe");
            if (!found) {
                pause();
                continue;
            }
            int length = 0;
            MPI_Get_count(&st, MPI_BYTE, &length);
            std::vector<std::byte> got(std::size_t(std::max(length, 0)));
            detail::check(MPI_Mrecv(got.data(), length, MPI_BYTE, &m, MPI_STATUS_IGNORE), "MPI_Mrecv");
            core_id from = s_.cores;
            if (got.size() >= sizeof from) std::memcpy(&from, got.data(), sizeof from);
            if (from >= s_.cores || s_.rank_of(from) != s_.rank_of(source))
                throw std::runtime_error("tacomesh::mpi: a bulk message for core " + std::to_string(id_) +
                                         " from no core of its rank: was the rank started with another program?");
            bulk_in_[from].push_back(std::move(got));
        }
        const std::vector<std::byte> got = std::move(waiting.front());
        waiting.pop_front();
        if (got.size() - sizeof(core_id) != n)
            throw std::runtime_error("tacomesh::mpi: a bulk message of " + std::to_string(got.size() - sizeof(core_id)) +
                                     " bytes where " + std::to_string(n) + " were announced");
        into.insert(into.end(), got.begin() + std::ptrdiff_t(sizeof(core_id)), got.end());
    }

    // On this host the urgent flag is a word in the core's header (release:
    // the message published before it is visible to whoever sees the flag);
    // to another host it travels as an empty message with the core's urgent
    // tag: no bytes to keep, so its request is let go at once.
    void signal_urgent(core_id dest) {
        if (s_.host && s_.host->on_host(dest)) return s_.host->header_of(dest).urgent.store(1, std::memory_order_release);
        MPI_Request r;
        detail::check(MPI_Isend(nullptr, 0, MPI_BYTE, s_.rank_of(dest), s_.urgent_tag_of(dest), s_.comm, &r), "MPI_Isend");
        MPI_Request_free(&r);
    }
    bool take_urgent() {
        bool any = false;
        if (my_header_ && my_header_->urgent.load(std::memory_order_relaxed)) [[unlikely]]
            any = my_header_->urgent.exchange(0, std::memory_order_acquire) != 0;
        // A probe costs far more than the flag load it stands for: look at
        // every 16th scheduling point only.
        if (!messages_ || ++urgent_checks_ % 16 != 0) return any;
        for (;;) {
            int found = 0;
            MPI_Message m;
            detail::check(MPI_Improbe(MPI_ANY_SOURCE, s_.urgent_tag_of(id_), s_.comm, &found, &m, MPI_STATUS_IGNORE),
                          "MPI_Improbe");
            if (!found) return any;
            detail::check(MPI_Mrecv(nullptr, 0, MPI_BYTE, &m, MPI_STATUS_IGNORE), "MPI_Mrecv");
            any = true;
        }
    }

private:
    /// A core on another host (or on_host::mpi), or a ring to connect, or a full ring.
    [[gnu::noinline]] std::byte* try_acquire_slow(core_id dest) {
        if (s_.host && s_.host->on_host(dest)) {
            detail::ring::producer& p = rings_out_[dest];
            if (p.connected()) return nullptr; // full: `window` messages to dest not yet taken
            p = s_.host->connect(id_, dest);
            acquired_ring_ = &p;
            return p.try_acquire();
        }
        auto& o = out_[dest];
        if (!o) [[unlikely]] o = std::make_unique<outgoing>(s_.window);
        if (o->sent - o->credited >= s_.window) {
            take_credits();
            if (o->sent - o->credited >= s_.window) return nullptr; // `window` messages to dest not yet taken
        }
        // The slot's last message was sent `window` messages ago, and the
        // credits say it was taken: its bytes are free, and its request is
        // let go without a test (which would run MPI's progress engine).
        slot& sl = o->next();
        if (sl.request != MPI_REQUEST_NULL) MPI_Request_free(&sl.request);
        acquired_ = o.get(); // publish follows at once (channel_endpoint): no second look-up
        return sl.bytes.data();
    }

    template <class Handler>
    std::size_t poll_messages(Handler&& handle) {
        std::size_t n = 0;
        for (; n < per_poll_budget; ++n) {
            receive& r = posted_[next_ % posted_.size()];
            int done = 0;
            MPI_Status st;
            detail::check(MPI_Test(&r.request, &done, &st), "MPI_Test");
            if (!done) break;
            int length = 0;
            MPI_Get_count(&st, MPI_BYTE, &length);
            if (length < int(sizeof(core_id)) || std::size_t(length) > r.bytes.size())
                throw std::runtime_error("tacomesh::mpi: a message of " + std::to_string(length) +
                                         " bytes for core " + std::to_string(id_) +
                                         " (at most taco::message_bytes): was the rank started with another program?");
            // Out of the receive buffer, which is posted again at once: the
            // handler may poll again (nested waits).
            alignas(taco::message_align) std::array<std::byte, slot_bytes> bytes;
            std::memcpy(bytes.data(), r.bytes.data(), std::size_t(length));
            post(r);
            ++next_;
            core_id source;
            std::memcpy(&source, bytes.data() + length - sizeof source, sizeof source);
            if (source >= s_.cores) throw std::runtime_error("tacomesh::mpi: a message from no core of this run");
            if (++taken_[source] % s_.credit_unit() == 0) give_credit(source);
            handle(bytes.data());
        }
        return n;
    }

    static constexpr std::size_t per_poll_budget = 64;
    static constexpr std::size_t per_ring_budget = 32; // fairness between sources
    static constexpr std::size_t slot_bytes = taco::message_bytes + sizeof(core_id); ///< the message, then its source
    struct slot {
        alignas(taco::message_align) std::array<std::byte, slot_bytes> bytes;
        MPI_Request request = MPI_REQUEST_NULL;
    };
    struct outgoing {
        explicit outgoing(std::uint32_t window) : slots(window) {}
        slot& next() noexcept { return slots[sent % slots.size()]; }
        std::vector<slot> slots;
        std::uint64_t sent = 0, credited = 0; ///< messages sent; taken, as far as credits tell
    };

    /// Receives kept posted for this core's tag: MPI matches them in the
    /// order they were posted, and poll takes them in that order, so
    /// messages stay in order per source; a message that finds one posted
    /// lands in place instead of in the queue of unexpected messages.
    struct receive {
        alignas(taco::message_align) std::array<std::byte, slot_bytes> bytes;
        MPI_Request request = MPI_REQUEST_NULL;
    };
    void post(receive& r) {
        detail::check(MPI_Irecv(r.bytes.data(), int(r.bytes.size()), MPI_BYTE, MPI_ANY_SOURCE, s_.tag_of(id_), s_.comm,
                                &r.request),
                      "MPI_Irecv");
    }

    /// Tell `source` that another credit_unit() of its messages were taken.
    void give_credit(core_id source) {
        MPI_Request r;
        detail::check(MPI_Isend(&s_.ids[id_], 1, MPI_UINT32_T, s_.rank_of(source), s_.credit_tag_of(source), s_.comm, &r),
                      "MPI_Isend");
        MPI_Request_free(&r); // the bytes stay until the run's end
    }
    void take_credits() {
        for (;;) {
            int found = 0;
            MPI_Message m;
            detail::check(MPI_Improbe(MPI_ANY_SOURCE, s_.credit_tag_of(id_), s_.comm, &found, &m, MPI_STATUS_IGNORE),
                          "MPI_Improbe");
            if (!found) return;
            core_id giver = 0;
            detail::check(MPI_Mrecv(&giver, 1, MPI_UINT32_T, &m, MPI_STATUS_IGNORE), "MPI_Mrecv");
            if (giver < out_.size() && out_[giver]) out_[giver]->credited += s_.credit_unit();
        }
    }

    /// Drop the bulk sends MPI is done with (in order: the oldest finish first).
    void reap_bulk_sends() {
        while (!bulk_out_.empty()) {
            int done = 0;
            detail::check(MPI_Test(&bulk_out_.front().request, &done, MPI_STATUS_IGNORE), "MPI_Test");
            if (!done) return;
            bulk_out_.pop_front();
        }
    }

    struct pending_bulk {
        std::vector<std::byte> bytes; ///< the sending core, then the buffer
        MPI_Request request = MPI_REQUEST_NULL;
    };

    detail::run_state& s_;
    core_id id_;
    std::deque<pending_bulk> bulk_out_; ///< bulk sends not yet known complete
    std::map<core_id, std::deque<std::vector<std::byte>>> bulk_in_; ///< per source core: received ahead of their turn
    std::vector<detail::ring::producer> rings_out_; ///< per destination on this host, connected on the first send
    detail::ring::producer* acquired_ring_ = nullptr; ///< of the last try_acquire, where it was a ring's
    std::vector<detail::ring*> rings_in_;            ///< the rings to this core that carry something
    std::vector<bool> rings_polled_;                 ///< per core of the host: its ring is in rings_in_
    std::vector<std::unique_ptr<outgoing>> out_; ///< per destination, made on the first send there
    std::vector<std::uint32_t> taken_; ///< per source core: messages taken (credits given per credit_unit)
    std::array<receive, 4> posted_;
    std::uint64_t next_ = 0; ///< posted_[next_ % 4] completes first
    outgoing* acquired_ = nullptr; ///< of the last try_acquire
    std::chrono::microseconds nap_{1};
    std::uint32_t urgent_checks_ = 0;
    detail::host_channels::header* my_header_; ///< none without host channels
    std::uint32_t rings_known_ = 0;             ///< my_header_->connected when rings_in_ was last brought up to date
    bool messages_;                             ///< some core is reached by MPI messages: poll them
    bool serves_memory_; ///< core 0 of the home, where other ranks ask it for MESH's canonical copy
};

static_assert(taco::bulk_message_endpoint<endpoint>);

/// The MPI platform (satisfies taco::platform).
class platform {
public:
    using endpoint = mpi::endpoint;
    using config = mpi::config;
    static constexpr std::size_t message_bytes = taco::message_bytes;
    static constexpr std::size_t message_align = taco::message_align;

    /// On rank 0: run entry(endpoint, arg) on every core of every rank and
    /// return when all have returned. On any other rank: serve this run
    /// and every later one, and exit the process when rank 0's program ends.
    static void launch(const config& c, void (*entry)(endpoint&, void*), void* arg) {
        detail::session& s = detail::session::get();
        using command = detail::session::command;
        static_assert(sizeof(taco::launch_args) <= sizeof(command{}.args) &&
                      std::is_trivially_copyable_v<taco::launch_args>);
        if (s.rank() != 0) serve(s, entry); // never returns
        if (!s.lost().empty())
            throw taco::core_failure(s.lost() + " (so this run cannot start: restart the job)");
        command cmd{};
        cmd.cores = c.cores ? c.cores : core_id(s.ranks()) * c.threads_per_rank;
        cmd.idle = std::uint32_t(c.idle);
        cmd.window = c.window;
        cmd.on_host = std::uint32_t(c.on_host);
        cmd.remote_memory = std::uint32_t(c.remote_memory);
        cmd.cached_bytes = c.cached_bytes;
        cmd.non_cached_bytes = c.non_cached_bytes;
        cmd.private_bytes = c.private_bytes;
        cmd.failure_timeout_ms = std::uint32_t(std::clamp<std::int64_t>(c.failure_timeout.count(), 0, INT32_MAX));
        std::memcpy(cmd.args, arg, sizeof(taco::launch_args));
        validate(s, cmd); // before the others hear of it: a bad config throws here, on rank 0 alone
        if (s.ranks() > 1) s.broadcast(cmd);
        detail::run_state rs;
        run(s, cmd, rs, entry, arg);
        if (c.report) {
            c.report->ranks = s.ranks();
            c.report->cores = cmd.cores;
            c.report->oversubscribed = rs.oversubscribed;
            c.report->rings_to_core0 = rs.rings_to_core0;
            c.report->mesh_direct = rs.mesh_direct;
        }
    }

    /// Address space MESH's memory may take in each rank (it is reserved
    /// at one address in all of them, MAP_NORESERVE: only touched pages
    /// cost memory), as the POSIX platform's limit.
    static constexpr std::size_t max_reserved_bytes = std::size_t(32) << 40;

private:
    static void validate(const detail::session& s, const detail::session::command& c) {
        if (c.cores < 1) throw std::invalid_argument("tacomesh::mpi: config.cores (or threads_per_rank) must be at least 1");
        if (c.window < 1 || c.window > 65536)
            throw std::invalid_argument("tacomesh::mpi: config.window must be 1 to 65536, got " + std::to_string(c.window));
        if (std::int64_t(c.cores) * 4 + 4 > std::int64_t(s.tag_limit()))
            throw std::invalid_argument("tacomesh::mpi: " + std::to_string(c.cores) +
                                        " cores need four MPI tags each (and MESH four), more than this MPI's MPI_TAG_UB (" +
                                        std::to_string(s.tag_limit()) + ")");
        const core_id per_rank = (c.cores + core_id(s.ranks()) - 1) / core_id(s.ranks());
        if (per_rank > 1 && !s.thread_multiple())
            throw std::invalid_argument("tacomesh::mpi: " + std::to_string(per_rank) +
                                        " cores on one rank need MPI_THREAD_MULTIPLE, which this MPI does not provide; "
                                        "run with as many ranks as cores");
        validate_memory(c, per_rank);
    }
    /// Each size within the limit before it is rounded to pages (so nothing
    /// wraps: a size near 2^64 became 0, a run without that memory), then
    /// the rank's reservation in all.
    static void validate_memory(const detail::session::command& c, core_id per_rank) {
        using std::to_string;
        const std::string limit = " the " + to_string(max_reserved_bytes >> 40) + " TiB a rank may reserve";
        for (auto [name, bytes] : {std::pair{"cached_bytes", c.cached_bytes}, std::pair{"non_cached_bytes", c.non_cached_bytes},
                                   std::pair{"private_bytes", c.private_bytes}})
            if (bytes > max_reserved_bytes)
                throw std::invalid_argument(std::string("tacomesh::mpi: config.") + name + " = " + to_string(bytes) +
                                            " is more than" + limit + "; lower config." + name);
        const std::uint64_t page = detail::shared_memory::page;
        auto pages = [page](std::uint64_t n) { return (n + page - 1) / page * page; };
        const std::uint64_t total = pages(c.cached_bytes) + pages(c.non_cached_bytes) + pages(c.private_bytes) * per_rank;
        if (total > max_reserved_bytes)
            throw std::invalid_argument(
                "tacomesh::mpi: MESH's memory would take " + to_string(total) + " bytes of each rank's address space (config.cached_bytes = " +
                to_string(c.cached_bytes) + ", non_cached_bytes = " + to_string(c.non_cached_bytes) + ", private_bytes = " +
                to_string(c.private_bytes) + " per core for " + to_string(per_rank) + " cores per rank), more than" + limit +
                "; lower them");
    }

    [[noreturn]] static void serve(detail::session& s, void (*entry)(endpoint&, void*)) {
        for (;;) {
            detail::session::command cmd{};
            s.broadcast(cmd);
            if (cmd.kind == detail::session::command::stop) {
                s.end();
                std::exit(0);
            }
            taco::launch_args args;
            std::memcpy(&args, cmd.args, sizeof args);
            detail::run_state rs;
            try {
                run(s, cmd, rs, entry, &args);
            } catch (const detail::start_refused&) {
                // Every rank threw it together, before any core ran: rank 0
                // reports it, and the job goes on to its next run.
            } catch (const std::exception& e) {
                std::fprintf(stderr, "tacomesh::mpi: rank %d: %s\n", s.rank(), e.what());
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    }

    /// This rank's part of a run: its cores as threads (the first on the
    /// calling thread), then the drain that ends the run on every rank.
    static void run(detail::session& s, const detail::session::command& cmd, detail::run_state& rs,
                    void (*entry)(endpoint&, void*), void* arg) {
        detail::check(MPI_Comm_dup(s.world(), &rs.comm), "MPI_Comm_dup");
        rs.rank = s.rank();
        rs.ranks = s.ranks();
        rs.cores = cmd.cores;
        rs.idle = idle_policy(cmd.idle);
        rs.window = cmd.window;
        for (core_id c = 0; c < rs.cores; ++c) rs.ids.push_back(c);
        std::vector<core_id> mine;
        for (core_id c = core_id(rs.rank); c < rs.cores; c += core_id(rs.ranks)) mine.push_back(c);
        const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
        const std::size_t per_rank = (rs.cores + core_id(rs.ranks) - 1) / core_id(rs.ranks);
        rs.oversubscribed = per_rank * std::size_t(s.host_ranks()) > cpus;
        const bool host_memory = on_host(cmd.on_host) == on_host::shared_memory;
        rs.memory = std::make_unique<detail::shared_memory>(
            rs.comm, detail::memory_sizes{cmd.cached_bytes, cmd.non_cached_bytes, cmd.private_bytes},
            core_id(mine.size()), core_id(per_rank), host_memory, remote_memory(cmd.remote_memory), rs.memory_tags());
        rs.mesh_direct = rs.memory->direct();
        if (host_memory) rs.host = std::make_unique<detail::host_channels>(rs.comm, rs.rank, rs.ranks, rs.cores, rs.window);
        // The watch's thread makes MPI calls beside the cores': it needs MPI_THREAD_MULTIPLE.
        if (cmd.failure_timeout_ms && rs.ranks > 1 && s.thread_multiple())
            rs.watch = std::make_unique<detail::failure_watch>(s, rs.comm, rs.cores,
                                                               std::chrono::milliseconds(cmd.failure_timeout_ms));
        // A core waiting for the home's answer learns there of a lost rank,
        // and gives its CPU away where the host has fewer than its ranks.
        rs.memory->on_wait([&rs] {
            if (rs.watch && rs.watch->failed()) [[unlikely]] rs.watch->throw_failure();
            if (rs.oversubscribed) ::sched_yield();
        });

        std::exception_ptr error;
        try {
            taco::detail::run_core_threads(
                mine.size(),
                [&](std::size_t k) {
                    endpoint ep(rs, mine[k]);
                    entry(ep, arg);
                },
                "tacomesh::mpi",
                [&](std::size_t k) {
                    return "core " + std::to_string(mine[k]) + " (" + std::to_string(k + 1) + " of " +
                           std::to_string(mine.size()) + " on rank " + std::to_string(rs.rank) + ")";
                },
                "run fewer cores per rank (config.cores, or more ranks), or raise the limit (ulimit -u, memory)",
                [&](bool started_here, const std::string& why) { return all_started(rs, started_here, why); });
        } catch (...) {
            // The other ranks go on to the end-of-run barrier below, so this
            // one must too, or they would wait for it for ever.
            error = std::current_exception();
        }
        if (rs.host && rs.rank == 0) rs.rings_to_core0 = rs.host->header_of(0).connected.load(std::memory_order_relaxed);
        try {
            if (rs.watch && rs.watch->failed()) rs.watch->throw_failure();
            finish(rs);
        } catch (const taco::core_failure& e) {
            // No end-of-run barrier, nor the window's and communicator's
            // collective frees: the lost rank would never join them.
            s.lose(e.what());
            rs.memory->abandon();
            if (rs.host) rs.host->abandon();
            throw;
        }
        if (error) std::rethrow_exception(error);
    }

    /// Collective, before any core runs: a core of a rank that gives up
    /// would never answer the others' cores, so either every rank goes on,
    /// or every rank throws the report of the first rank that could not
    /// start its threads (rank 0's taco::run gives it to the program).
    static bool all_started(detail::run_state& rs, bool started_here, const std::string& why) {
        int first_refused = started_here ? rs.ranks : rs.rank;
        detail::check(MPI_Allreduce(MPI_IN_PLACE, &first_refused, 1, MPI_INT, MPI_MIN, rs.comm), "MPI_Allreduce");
        if (first_refused == rs.ranks) return true;
        char report[512] = {};
        if (rs.rank == first_refused) why.copy(report, sizeof report - 1);
        detail::check(MPI_Bcast(report, sizeof report, MPI_CHAR, first_refused, rs.comm), "MPI_Bcast");
        std::string_view what(report);
        if (constexpr std::string_view who = "tacomesh::mpi: "; what.starts_with(who)) what.remove_prefix(who.size());
        throw detail::start_refused("tacomesh::mpi: rank " + std::to_string(first_refused) + ": " + std::string(what));
    }

    /// Every rank takes what reaches its cores (and drops it: they have
    /// stopped) until all ranks got here, then the run's communicator goes.
    static void finish(detail::run_state& rs) {
        MPI_Request barrier = MPI_REQUEST_NULL;
        detail::check(MPI_Ibarrier(rs.comm, &barrier), "MPI_Ibarrier");
        detail::wait_politely(barrier, [&] {
            if (rs.watch && rs.watch->failed()) rs.watch->throw_failure(); // a rank died before it got here
            bool any = false;
            for (;;) {
                int found = 0;
                MPI_Message m;
                MPI_Status st;
                if (rs.memory->serves() && rs.memory->serve()) any = true; // a rank still at work may ask
                detail::check(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, rs.comm, &found, &m, &st), "MPI_Improbe");
                if (!found) return any;
                if (rs.memory->serve_matched(m, st)) {
                    any = true;
                    continue;
                }
                int length = 0;
                MPI_Get_count(&st, MPI_BYTE, &length);
                std::vector<std::byte> sink(std::size_t(length > 0 ? length : 0) + 1);
                detail::check(MPI_Mrecv(sink.data(), length, MPI_BYTE, &m, MPI_STATUS_IGNORE), "MPI_Mrecv");
                any = true;
            }
        });
        rs.watch.reset(); // every rank is here: none goes silent now
        rs.memory.reset(); // its window's free is collective too: after the barrier
        rs.host.reset();   // so is this one (messages left in rings go with it)
        MPI_Comm_free(&rs.comm);
    }
};

static_assert(taco::platform<platform>);
static_assert(taco::remote_memory_endpoint<endpoint>);
static_assert(taco::versioned_memory_endpoint<endpoint>);

} // namespace tacomesh::mpi
