#pragma once
// The RDF-on-the-SCC paper's two parallel models (section III.C-D) on TACO
// cores sharing the store through MESH (shared_store.hpp), and inference
// split the same way.
//
// Task-parallel (the paper's Algorithm 1): a pool of queries on core 0
// (query_pool); each worker asks the pool for a query, runs it against the
// shared index, reports the row count and asks again. The pool's
// bookkeeping runs as invocations on core 0, between the activities of
// core 0's own worker, so 2 cores give 2 workers. A worker asks for its
// next query before it runs the one in hand, so the answer travels while it
// works instead of the worker waiting for core 0 to finish a query of its own.
//
// Data-parallel (Algorithm 2, without its lost answers): the master plans
// the query for a split over the cores (make_plan's `ways`: lookups that
// divide with the rows beat hash builds every core would repeat), weighs
// each METIS region by the rows its first-pattern matches lead to
// (split_plan.hpp) and deals the regions out to the cores (partition.hpp);
// the plan and the deal go on the job board (a shared object: the workers
// neither parse nor plan again), the call goes to every worker
// (taco::gather, the paper's broadcast + gather); each worker runs the
// whole plan on its regions' first matches against the whole shared index
// and leaves its rows, decoded to TSV if asked, in its own shared output;
// the master takes them in core order and applies DISTINCT / LIMIT. Every
// first-pattern match is in exactly one region, so the union is the
// single-core answer.
//
// Inference: each round, every worker closes its partition of the
// subjects (inference.hpp) and leaves the new triples in its output; the
// master merges them into its store and publishes the store for the next round.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <optional>
#include <utility>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <taco/taco.hpp>
#include <mesh/mesh.hpp>
#include <rdf/inference.hpp>
#include <rdf/partition.hpp>
#include <rdf/query_engine.hpp>
#include <rdf/results.hpp>
#include <rdf/shared_store.hpp>
#include <rdf/split_plan.hpp>

namespace rdf {

/// What the master posts for the workers: a workload's query texts, or one
/// planned query and its region deal.
struct job_board : mesh::sharing_aware<job_board> {
    // Task-parallel: query i is text[offsets[i], offsets[i + 1]).
    shared_vector<char> text;
    shared_vector<std::uint64_t> offsets;
    // Data-parallel: what the workers execute (the variable names and the
    // solution modifiers stay with the master), and the deal.
    shared_vector<encoded_pattern> patterns;
    shared_vector<plan_step> steps;
    shared_vector<var_id> projection;
    bool unsatisfiable = false;
    // DISTINCT and LIMIT: a worker stops at LIMIT rows of its own (the
    // master applies both again to the whole). The variables' names and the
    // budget: a worker refuses a query as one core would, in the same words.
    bool distinct = false;
    bool limited = false;
    std::uint64_t limit = 0;
    query_limits limits;
    shared_vector<char> variable_names; ///< each followed by a NUL
    shared_vector<std::uint32_t> core_of_part; ///< METIS region -> core
    bool want_text = false;                    ///< workers also write their rows as TSV

    std::string_view query(std::size_t i) const {
        return {text.begin() + offsets[i], std::size_t(offsets[i + 1] - offsets[i])};
    }

    void post(const prepared_query& p) {
        patterns.assign(p.encoded.patterns.begin(), p.encoded.patterns.end());
        steps.assign(p.chosen.steps.begin(), p.chosen.steps.end());
        projection.assign(p.encoded.projection.begin(), p.encoded.projection.end());
        unsatisfiable = p.encoded.unsatisfiable;
        distinct = p.encoded.distinct;
        limited = p.encoded.limit.has_value();
        limit = p.encoded.limit.value_or(0);
        limits = p.encoded.limits;
        variable_names.clear();
        for (const std::string& n : p.encoded.variables) {
            variable_names.append(n.begin(), n.end());
            variable_names.push_back('\0');
        }
    }
    prepared_query posted() const {
        prepared_query p;
        p.encoded.patterns.assign(patterns.begin(), patterns.end());
        p.chosen.steps.assign(steps.begin(), steps.end());
        p.encoded.projection.assign(projection.begin(), projection.end());
        p.encoded.unsatisfiable = unsatisfiable;
        p.encoded.distinct = distinct;
        if (limited) p.encoded.limit = limit;
        p.encoded.limits = limits;
        for (auto it = variable_names.begin(); it != variable_names.end();) {
            const auto end = std::find(it, variable_names.end(), '\0');
            p.encoded.variables.emplace_back(it, end);
            it = end == variable_names.end() ? end : end + 1;
        }
        return p;
    }
};

/// A worker's results, written by it, read by the master.
///
/// A data-parallel share's rows (ids, and TSV if asked) go where the
/// platform lets the master read them in place: non-cached memory, when its
/// cores share it (mesh::non_cached_shared()), written once and copied by
/// no one; else (MPI ranks) the object's mesh::vectors, which its
/// controller carries. On core processes the vectors cost LUBM Q8's split a
/// third of its latency: the worker's release copies 1.2 MB of TSV to the
/// shared copy and the master's acquire copies it again into its view.
struct worker_output : mesh::sharing_aware<worker_output> {
    template <class T>
    using in_place_allocator = mesh::allocator<T, mesh::memory_mode::non_cached>;

    shared_vector<term_id> cells;
    shared_vector<char> text;
    // Their headers are in the object (carried by the controller), their elements not.
    std::vector<term_id, in_place_allocator<term_id>> cells_in_place;
    std::basic_string<char, std::char_traits<char>, in_place_allocator<char>> text_in_place;
    bool in_place_used = false; ///< what the worker did, for the master and the tests
    shared_vector<triple> triples;
    double seconds = 0; ///< data-parallel: the last share's time on this core, from the call to the rows left here
    shared_vector<char> refused; ///< data-parallel: why the share was refused (result_too_large), or empty

    std::span<const term_id> rows() const {
        return in_place_used ? std::span<const term_id>(cells_in_place) : std::span<const term_id>(cells.begin(), cells.end());
    }
    std::string_view rows_text() const {
        return in_place_used ? std::string_view(text_in_place) : std::string_view(text.begin(), text.size());
    }
};

/// A worker's share of the first step's matches: the ids of its regions,
/// known as runs (shared_store::part_runs) so that the scan can step over
/// the others' (execute.hpp, run_filter).
struct region_filter {
    const std::uint16_t* part_of;
    const char* mine; ///< per region: dealt to this core
    std::span<const term_id> starts;

    bool operator()(term_id t) const noexcept { return mine[part_of[t]] != 0; }
    std::span<const term_id> runs() const noexcept { return starts; }
};

/// A worker's output text as append_tsv_rows writes it: into the shared
/// vector in blocks of a few KiB, through a buffer that stays in L1. Each
/// append to a shared vector records the chunks it changes, and a TSV row
/// is a dozen appends: straight into the vector, LUBM Q8's split decoded
/// 3.7 M instructions' worth where 1 core's std::string took 2.9 M;
/// through the buffer, 2.9 M (callgrind).
class shared_text {
public:
    explicit shared_text(shared_vector<char>& to) : to_(to) {}
    shared_text(const shared_text&) = delete;
    shared_text& operator=(const shared_text&) = delete;
    void append(const char* p, std::size_t n) {
        if (used_ + n > buffer_.size()) flush();
        if (n > buffer_.size()) return to_.append(p, p + n);
        std::memcpy(buffer_.data() + used_, p, n);
        used_ += n;
    }
    void push_back(char c) {
        if (used_ == buffer_.size()) flush();
        buffer_[used_++] = c;
    }
    /// Before the writer proxy that `to` came from goes (no destructor does
    /// it: a flush may throw, out of shared memory).
    void flush() {
        to_.append(buffer_.data(), buffer_.data() + used_);
        used_ = 0;
    }

private:
    shared_vector<char>& to_;
    std::array<char, 4096> buffer_;
    std::size_t used_ = 0;
};

class query_pool;

/// One per core.
class rdf_worker {
public:
    rdf_worker(mesh::sharing_ptr<shared_store> store, mesh::sharing_ptr<job_board> jobs, std::uint32_t rank,
               std::uint32_t ranks)
        : store_(store), jobs_(jobs), rank_(rank), ranks_(ranks) {}
    ~rdf_worker() {
        if (out_) mesh::destroy_shared_object(out_);
    }
    rdf_worker(const rdf_worker&) = delete;
    rdf_worker& operator=(const rdf_worker&) = delete;

    /// Where this worker leaves its rows and triples (made on first use:
    /// rdf_cluster::make_outputs).
    mesh::sharing_ptr<worker_output> output() {
        if (!out_) out_ = mesh::make_shared_object<worker_output>();
        return out_;
    }

    /// Data-parallel: the posted plan on this core's regions; returns its rows.
    std::uint64_t run_regions() {
        const auto t0 = std::chrono::steady_clock::now();
        const auto board = mesh::read(jobs_);
        const auto shared = mesh::read(store_);
        const store_view v = shared->view();
        const prepared_query p = board->posted();
        // Asked once per first-step match: a region's byte beats the deal's word.
        mine_.assign(board->core_of_part.size(), 0);
        for (std::size_t part = 0; part < mine_.size(); ++part) mine_[part] = board->core_of_part[part] == rank_;
        const region_filter keep{shared->part_of.data(), mine_.data(), shared->part_runs};
        table rows;
        std::string refused;
        try {
            rows = project(execute(v, p.encoded, p.chosen, keep), p.encoded, false);
        } catch (const result_too_large& e) {
            // Left for the master with the rows, in full: a remote
            // exception's text reaches the caller cut to 80 characters.
            refused = e.what();
        }
        auto w = mesh::write(out_);
        w->refused.assign(refused.begin(), refused.end());
        // One kind per run (the platform decides); each keeps its capacity
        // from query to query.
        w->in_place_used = mesh::non_cached_shared();
        if (w->in_place_used) {
            w->cells_in_place.assign(rows.cells.begin(), rows.cells.end());
            w->text_in_place.clear();
            if (board->want_text) append_tsv_rows(w->text_in_place, rows, v.dict);
        } else {
            w->cells.assign(rows.cells.begin(), rows.cells.end());
            w->text.clear();
            if (board->want_text) {
                shared_text text(w->text);
                append_tsv_rows(text, rows, v.dict);
                text.flush();
            }
        }
        w->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return rows.rows();
    }

    /// Inference: one round over this core's subjects; returns the triples found.
    std::uint64_t infer() {
        std::vector<triple> found;
        {
            const auto shared = mesh::read(store_);
            found = infer_round(shared->view(), rank_, ranks_);
        }
        mesh::write(out_)->triples.assign(found.begin(), found.end());
        return found.size();
    }

    /// Task-parallel: start asking `pool` for queries.
    void start(taco::global_ptr<rdf_worker> self, taco::global_ptr<query_pool> pool, std::uint32_t in_hand);
    /// A query from the pool (-1: none left).
    void take(std::int64_t query);

private:
    mesh::sharing_ptr<shared_store> store_;
    mesh::sharing_ptr<job_board> jobs_;
    std::uint32_t rank_, ranks_;
    mesh::sharing_ptr<worker_output> out_;
    taco::global_ptr<rdf_worker> self_;
    taco::global_ptr<query_pool> pool_;
    std::string text_;
    std::vector<char> mine_; ///< data-parallel: the regions dealt to this core
    unsigned outstanding_ = 0;
    std::optional<decltype(mesh::read(std::declval<const mesh::sharing_ptr<job_board>&>()))> board_;
    std::optional<decltype(mesh::read(std::declval<const mesh::sharing_ptr<shared_store>&>()))> store_reader_;
};

/// The task pool of Algorithm 1, on core 0.
class query_pool {
public:
    query_pool(std::uint32_t distinct, std::uint64_t total, std::uint32_t workers)
        : distinct_(distinct), total_(total), workers_(workers), rows_(distinct, -1), runs_(workers, 0) {}

    std::int64_t next(std::uint32_t) { return handed_ < total_ ? std::int64_t(handed_++ % distinct_) : -1; }
    void done(std::uint32_t rank, std::uint32_t query, std::uint64_t rows) {
        ++runs_[rank];
        ++completed_;
        if (rows_[query] < 0) rows_[query] = std::int64_t(rows);
        else if (rows_[query] != std::int64_t(rows)) mismatch_ = true; // the same query must give the same rows everywhere
    }
    void finished(std::uint32_t) { ++finished_; }
    /// The query threw on a worker (which goes on with the next); the master
    /// reports the first such query once all have finished.
    void failed(std::uint32_t, std::uint32_t query) {
        ++completed_;
        if (!failed_) failed_ = query;
    }

    bool all_finished() const noexcept { return finished_ == workers_; }
    std::uint64_t completed() const noexcept { return completed_; }
    const std::vector<std::int64_t>& rows() const noexcept { return rows_; }
    const std::vector<std::uint64_t>& runs() const noexcept { return runs_; }
    bool mismatch() const noexcept { return mismatch_; }
    std::optional<std::uint32_t> first_failure() const noexcept { return failed_; }

private:
    std::uint32_t distinct_;
    std::uint64_t total_, handed_ = 0, completed_ = 0;
    std::uint32_t workers_, finished_ = 0;
    std::vector<std::int64_t> rows_;
    std::vector<std::uint64_t> runs_;
    bool mismatch_ = false;
    std::optional<std::uint32_t> failed_;
};

inline void rdf_worker::start(taco::global_ptr<rdf_worker> self, taco::global_ptr<query_pool> pool, std::uint32_t in_hand) {
    self_ = self;
    pool_ = pool;
    // Read access for the whole workload, acquired once: nobody writes the
    // store or the board while it runs, and an acquire per query (the
    // store has some twenty parts) cost core processes a third of their time.
    board_.emplace(mesh::read(jobs_));
    store_reader_.emplace(mesh::read(store_));
    outstanding_ = in_hand;
    for (unsigned i = 0; i < in_hand; ++i)
        taco::async(pool_, taco::m2f(&query_pool::next, rank_), taco::then(self_, &rdf_worker::take));
}

inline void rdf_worker::take(std::int64_t query) {
    if (query < 0) {
        if (--outstanding_ > 0) return; // the other requests' answers are still to come
        store_reader_.reset();
        board_.reset();
        taco::async(pool_, &query_pool::finished, rank_);
        return;
    }
    // Ask for the next one first: the pool answers while this one runs.
    // (Core 0 answers between its own queries, so a worker keeps several in
    // hand to outlast core 0's longest query: see run_workload.)
    taco::async(pool_, taco::m2f(&query_pool::next, rank_), taco::then(self_, &rdf_worker::take));
    std::uint64_t rows = 0;
    try {
        rows = answer_as_tsv((*board_)->query(std::size_t(query)), (*store_reader_)->view(), text_, (*board_)->limits);
    } catch (const std::exception&) {
        taco::async(pool_, &query_pool::failed, rank_, std::uint32_t(query));
        return;
    }
    taco::async(pool_, &query_pool::done, rank_, std::uint32_t(query), rows);
}

struct workload_result {
    std::uint64_t queries = 0;       ///< runs completed
    double seconds = 0;
    std::vector<std::int64_t> rows;  ///< per distinct query
    std::vector<std::uint64_t> runs; ///< per worker
};

struct parallel_answer {
    query_answer answer;
    std::vector<std::uint64_t> rows_per_core;
    std::vector<double> seconds_per_core; ///< split: each core's share, from the call to its rows left (the deal's balance)
    bool rows_in_place = false; ///< split: the master read the workers' rows where they wrote them (worker_output)
    bool split = false; ///< false: too small to share out, answered by core 0 alone
};

/// Receives a data-parallel answer's rows as TSV (no header), piece by piece, in order.
using tsv_sink = std::function<void(std::string_view)>;

/// The master's side, on core 0: a worker per core, the shared store and board.
class rdf_cluster {
public:
    explicit rdf_cluster(const store& s) : cores_(taco::core_count()) {
        store_ = mesh::make_shared_object<shared_store>();
        mesh::write(store_)->assign(s);
        jobs_ = mesh::make_shared_object<job_board>();
        for (std::uint32_t i = 0; i < cores_; ++i)
            workers_.push_back(taco::new_on<rdf_worker>(taco::core_id(i), store_, jobs_, i, cores_).get());
        group_ = taco::make_group(std::span<const taco::global_ptr<rdf_worker>>(workers_));
    }
    ~rdf_cluster() {
        taco::destroy_group(group_);
        for (auto w : workers_) taco::delete_on(w);
        mesh::destroy_shared_object(jobs_);
        mesh::destroy_shared_object(store_);
    }
    rdf_cluster(const rdf_cluster&) = delete;
    rdf_cluster& operator=(const rdf_cluster&) = delete;

    std::uint32_t cores() const noexcept { return cores_; }

    /// Publish the store again (after the master changed it).
    void publish(const store& s) { mesh::write(store_)->assign(s); }

    /// Task-parallel: every query `repeat` times, handed out on request.
    /// `master_works` false: core 0 only hands out queries (the paper's
    /// dedicated master), for comparison.
    workload_result run_workload(const std::vector<std::string>& queries, std::uint64_t repeat, bool master_works = true) {
        post(queries);
        query_pool pool(std::uint32_t(queries.size()), queries.size() * repeat, cores_);
        const auto pool_ptr = taco::to_global(&pool);
        const auto t0 = std::chrono::steady_clock::now();
        // Queries a worker keeps in hand: enough to outlast core 0's longest
        // query between two of its answers (on LUBM: 3 in hand gave 1.67x on
        // 2 cores, 6 gave 1.8x, 12 gave 1.9x), few enough that the pool's
        // last queries still spread (an eighth of each worker's share).
        const auto in_hand = std::uint32_t(std::clamp<std::uint64_t>(queries.size() * repeat / (8 * cores_), 1, 12));
        for (std::size_t i = 1; i < workers_.size(); ++i)
            taco::async(workers_[i], &rdf_worker::start, workers_[i], pool_ptr, in_hand);
        // Core 0's worker is this loop: a query from the pool, then a round
        // of the runtime, in which the other workers' requests are answered.
        // (As self-sent invocations, core 0's queries would share its rings'
        // polling budget with the others' requests and delay them.)
        {
            const auto board = mesh::read(jobs_);
            const auto shared = mesh::read(store_);
            const store_view v = shared->view();
            std::string out;
            for (std::int64_t q; master_works && (q = pool.next(0)) >= 0;) {
                taco::poll();
                try {
                    pool.done(0, std::uint32_t(q), answer_as_tsv(board->query(std::size_t(q)), v, out, limits_));
                } catch (const std::exception&) {
                    pool.failed(0, std::uint32_t(q));
                }
            }
        }
        pool.finished(0);
        taco::wait_until([&] { return pool.all_finished(); });
        workload_result r;
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (const auto q = pool.first_failure()) { // the same error again, here, with its message
            const auto shared = mesh::read(store_);
            run_query(queries[*q], shared->view(), limits_);
            throw std::logic_error("rdf: query " + std::to_string(*q) + " failed on a worker but not on the master");
        }
        if (pool.mismatch())
            throw std::logic_error("rdf: workers returned different row counts for one query: the shared store "
                                   "is not the same on every core");
        r.queries = pool.completed();
        r.rows = pool.rows();
        r.runs = pool.runs();
        return r;
    }

    /// Data-parallel: one query split over the cores by METIS regions.
    /// With `tsv`, the rows are also decoded to TSV, by the workers (or, for
    /// DISTINCT / LIMIT, which only the whole can apply, by the master), and
    /// handed to it in place, from the workers' outputs. A query whose plan
    /// estimates fewer rows in all than min_split_rows() is answered by core
    /// 0 alone: its split would cost more than it shares.
    parallel_answer run_split(std::string_view text, const tsv_sink& tsv = {}) {
        prepared_query p;
        {
            const auto shared = mesh::read(store_);
            const store_view v = shared->view();
            p = prepare(text, v, cores_, limits_);
            if (cores_ == 1 || estimated_work(p) < min_split_rows_) return run_here(p, v, tsv);
        }
        ensure_partition();
        bool text_there = false;
        {
            const auto shared = mesh::read(store_);
            const store_view v = shared->view();
            const auto deal = assign_parts(split_weights(v, p, span_of(shared->part_of), shared->parts, regions_), cores_);
            text_there = tsv && !p.encoded.distinct && !p.encoded.limit;
            auto w = mesh::write(jobs_);
            w->post(p);
            w->core_of_part.assign(deal.begin(), deal.end());
            w->want_text = text_there;
        }
        parallel_answer r;
        r.split = true;
        r.rows_per_core.resize(cores_);
        make_outputs();
        taco::gather(group_, taco::m2f(&rdf_worker::run_regions), std::span<std::uint64_t>(r.rows_per_core)).get();
        r.answer.names = p.encoded.projection_names;
        r.answer.used = p.chosen;
        table& rows = r.answer.rows;
        rows.vars = p.encoded.projection;
        for (auto n : r.rows_per_core) rows.count += n;
        rows.cells.reserve(rows.count * rows.width());
        r.rows_in_place = true;
        for (auto& o : outputs_) {
            const auto out = mesh::read(o);
            if (!out->refused.empty()) throw result_too_large(std::string(out->refused.begin(), out->refused.end()));
            r.seconds_per_core.push_back(out->seconds);
            r.rows_in_place = r.rows_in_place && out->in_place_used;
            const auto cells = out->rows();
            rows.cells.insert(rows.cells.end(), cells.begin(), cells.end());
            if (text_there) tsv(out->rows_text());
        }
        if (rows.width() && rows.cells.size() != rows.count * rows.width())
            throw std::logic_error("rdf: gathered rows do not match the workers' counts");
        finish(rows, p.encoded.distinct, p.encoded.limit);
        if (tsv && !text_there) decode_here(tsv, rows, mesh::read(store_)->view().dict);
        return r;
    }

    /// Below this many rows estimated over the plan's steps, run_split runs
    /// the query on core 0 alone; 0 splits every query. A split's fixed
    /// cost (post, broadcast, gather: some 15 us here) is about 1,500 rows
    /// of joins, and halving the work pays it back from twice that: LUBM's
    /// Q2 (2,200 estimated rows on LUBM(5), 20 us) ran slower split.
    double min_split_rows() const noexcept { return min_split_rows_; }
    void min_split_rows(double rows) noexcept { min_split_rows_ = rows; }

    /// The budget for the tables of the queries run from here on, on every
    /// core (query_limits): past it a query is refused with result_too_large.
    const query_limits& limits() const noexcept { return limits_; }
    void limits(const query_limits& l) noexcept { limits_ = l; }

    /// Inference in parallel rounds; `s` (the master's store) grows and is published.
    inference_report infer(store& s) {
        inference_report rep;
        const auto t0 = std::chrono::steady_clock::now();
        for (;;) {
            ++rep.rounds;
            std::vector<std::uint64_t> found(cores_);
            make_outputs();
            taco::gather(group_, taco::m2f(&rdf_worker::infer), std::span<std::uint64_t>(found)).get();
            std::vector<triple> all;
            for (auto& o : outputs_) {
                const auto out = mesh::read(o);
                all.insert(all.end(), out->triples.begin(), out->triples.end());
            }
            const std::uint64_t added = s.add_encoded(std::move(all));
            rep.added += added;
            if (added == 0) break;
            publish(s);
        }
        rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return rep;
    }

private:
    /// The workers' outputs, for the data-parallel calls only. Each is a
    /// shared object, and making one is a collective over every core (its
    /// adoption), so that making them with the workers cost n collectives
    /// of n cores before the first task-parallel query: at 1024 emulated
    /// cores, 2 host CPUs, the cluster was still being made after 4 minutes.
    void make_outputs() {
        if (!outputs_.empty()) return;
        for (auto w : workers_) outputs_.push_back(taco::sync(w, &rdf_worker::output));
    }

    void post(const std::vector<std::string>& queries) {
        auto w = mesh::write(jobs_);
        w->limits = limits_;
        w->text.clear();
        w->offsets = {0};
        for (const auto& q : queries) {
            w->text.append(q.begin(), q.end());
            w->offsets.push_back(w->text.size());
        }
    }

    void ensure_partition() {
        if (mesh::read(store_)->parts != 0) return; // made for an earlier query
        const std::uint32_t parts = cores_ == 1 ? 1 : 8 * cores_;
        std::vector<std::uint16_t> part_of;
        {
            const auto shared = mesh::read(store_);
            part_of = partition_entities(shared->view(), parts);
        }
        std::vector<term_id> runs;
        for (std::size_t t = 1; t < part_of.size(); ++t)
            if (part_of[t] != part_of[t - 1]) runs.push_back(term_id(t));
        {
            auto w = mesh::write(store_);
            w->part_of.assign(part_of.begin(), part_of.end());
            w->part_runs.assign(runs.begin(), runs.end());
            w->parts = parts;
        }
        regions_.count(mesh::read(store_)->view(), part_of, parts);
    }

    /// A query too small to split, on this core, as a split would give it.
    parallel_answer run_here(const prepared_query& p, const store_view& v, const tsv_sink& tsv) {
        parallel_answer r;
        r.answer = answer(p, v);
        r.rows_per_core.assign(taco::core_count(), 0);
        r.rows_per_core[0] = r.answer.rows.rows();
        if (tsv) decode_here(tsv, r.answer.rows, v.dict);
        return r;
    }

    void decode_here(const tsv_sink& tsv, const table& rows, const dictionary_view& dict) {
        text_.clear(); // its capacity kept, as the workers keep their outputs'
        append_tsv_rows(text_, rows, dict);
        tsv(text_);
    }

    std::uint32_t cores_;
    double min_split_rows_ = 3000;
    query_limits limits_;
    std::string text_; ///< rows the master decodes
    region_counts regions_; ///< made with the partition
    mesh::sharing_ptr<shared_store> store_;
    mesh::sharing_ptr<job_board> jobs_;
    std::vector<taco::global_ptr<rdf_worker>> workers_;
    std::vector<mesh::sharing_ptr<worker_output>> outputs_;
    taco::group<rdf_worker> group_;
};

} // namespace rdf
