#pragma once
// A load's triples between parsing and indexing, in bounded memory: they
// collect in a buffer of at most `memory_bytes`; a full buffer is sorted,
// its duplicates dropped, and written to a temporary file as a run; the
// indexes then read them back as one stream, a k-way merge of the runs and
// the buffer's last contents in SPO order without duplicates, once per
// pass they need (store.hpp's build reads it four times). A load that fits
// the buffer writes nothing and merges nothing: one sort, as before.
//
// Why: the triples are 12 bytes each until indexed, and the store they
// become is ~33 bytes of index each, so a list of them all beside the
// indexes being built was a third more memory than the store (1.2 GB at
// 100 M triples). The runs cost a write and four reads of 12 bytes a
// triple, from the page cache while memory lasts.
//
// The temporary file is unnamed (std::tmpfile: gone when closed, or when
// the process dies), in the directory the C library uses for it ($TMPDIR
// is not read by tmpfile, so TMPDIR-less systems still work).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include <unistd.h>

#include <rdf/ntriples.hpp>

namespace rdf {

class triple_runs {
public:
    /// `memory_bytes`: the buffer's size (at least 64 KB); the merge's read
    /// slices share the same budget, once the buffer is freed.
    explicit triple_runs(std::size_t memory_bytes)
        : capacity_(std::max<std::size_t>(memory_bytes, 64 << 10) / sizeof(triple)) {}

    void push(const triple& t) {
        if (buffer_.size() == capacity_) spill();
        if (buffer_.size() == buffer_.capacity()) // grown by hand: doubling would pass the budget
            buffer_.reserve(std::min(capacity_, std::max<std::size_t>(1 << 16, 2 * buffer_.capacity())));
        buffer_.push_back(t);
        max_s_ = std::max(max_s_, t.s);
        max_p_ = std::max(max_p_, t.p);
        max_o_ = std::max(max_o_, t.o);
        ++pushed_;
    }

    std::uint64_t pushed() const noexcept { return pushed_; }
    std::size_t runs() const noexcept { return runs_.size(); }
    term_id max_s() const noexcept { return max_s_; }
    term_id max_p() const noexcept { return max_p_; }
    term_id max_o() const noexcept { return max_o_; }

    /// Call once, after the last push and before merge. With runs on disk
    /// the buffer's last triples become one more, and the buffer is freed,
    /// so the merge's read slices have the whole budget.
    void finish() {
        if (runs_.empty()) {
            sort_unique(buffer_);
            buffer_.shrink_to_fit();
            return;
        }
        if (!buffer_.empty()) spill();
        buffer_ = {};
    }

    /// visit(const triple&) for each distinct triple, in SPO order. Throws
    /// load_error if a run cannot be read back.
    template <class Visit>
    void merge(Visit&& visit) const {
        if (runs_.empty()) {
            for (const triple& t : buffer_) visit(t);
            return;
        }
        // One cursor a run, each reading its run a slice at a time, and one
        // over the buffer; a heap of their heads.
        const std::size_t slice =
            std::max<std::size_t>(capacity_ / (runs_.size() + 1), (64 << 10) / sizeof(triple));
        struct cursor {
            std::uint64_t next, end; // triples of the file, as positions; the buffer: indexes into it
            std::vector<triple> slice;
            std::size_t at = 0;
            bool in_file;
        };
        std::vector<cursor> cursors;
        for (const auto& r : runs_) cursors.push_back({r.first, r.first + r.count, {}, 0, true});
        cursors.push_back({0, buffer_.size(), {}, 0, false});
        auto head = [&](const cursor& c) -> const triple& { return c.in_file ? c.slice[c.at] : buffer_[c.next]; };
        auto refill = [&](cursor& c) { // false when the cursor is done
            if (!c.in_file) return c.next < c.end;
            if (c.at < c.slice.size()) return true;
            if (c.next == c.end) return false;
            const std::size_t n = std::size_t(std::min<std::uint64_t>(slice, c.end - c.next));
            c.slice.resize(n);
            read_at(c.slice.data(), n, c.next);
            c.next += n;
            c.at = 0;
            return true;
        };
        auto greater = [&](std::size_t a, std::size_t b) { return head(cursors[b]) < head(cursors[a]); };
        std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(greater)> heap(greater);
        for (std::size_t i = 0; i < cursors.size(); ++i)
            if (refill(cursors[i])) heap.push(i);
        bool any = false;
        triple last{};
        while (!heap.empty()) {
            const std::size_t i = heap.top();
            heap.pop();
            cursor& c = cursors[i];
            const triple t = head(c);
            if (!any || t != last) visit(t);
            any = true;
            last = t;
            if (c.in_file) ++c.at;
            else ++c.next;
            if (refill(c)) heap.push(i);
        }
    }

private:
    struct file_closer {
        void operator()(std::FILE* f) const noexcept { std::fclose(f); }
    };
    struct run {
        std::uint64_t first, count; ///< in triples from the file's start
    };

    static void sort_unique(std::vector<triple>& v) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    }

    void spill() {
        sort_unique(buffer_);
        if (!file_) {
            file_.reset(std::tmpfile());
            if (!file_)
                throw load_error("(sorting the triples)", 0, 0,
                                 std::string("cannot create a temporary file: ") + std::strerror(errno) +
                                     " (give the load more memory, or free space where temporary files go)");
        }
        const std::uint64_t first = written_;
        const char* p = reinterpret_cast<const char*>(buffer_.data());
        std::size_t left = buffer_.size() * sizeof(triple);
        std::uint64_t at = written_ * sizeof(triple);
        while (left) {
            const ssize_t n = ::pwrite(::fileno(file_.get()), p, left, off_t(at));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0)
                throw load_error("(sorting the triples)", 0, 0,
                                 std::string("cannot write a temporary file: ") +
                                     (n < 0 ? std::strerror(errno) : "no space written") +
                                     " (free space where temporary files go, or give the load more memory)");
            p += n;
            left -= std::size_t(n);
            at += std::uint64_t(n);
        }
        written_ += buffer_.size();
        runs_.push_back({first, buffer_.size()});
        buffer_.clear();
    }

    void read_at(triple* into, std::size_t n, std::uint64_t first) const {
        char* p = reinterpret_cast<char*>(into);
        std::size_t left = n * sizeof(triple);
        std::uint64_t at = first * sizeof(triple);
        while (left) {
            const ssize_t got = ::pread(::fileno(file_.get()), p, left, off_t(at));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0)
                throw load_error("(sorting the triples)", 0, 0,
                                 std::string("cannot read back a temporary file: ") +
                                     (got < 0 ? std::strerror(errno) : "it is shorter than was written"));
            p += got;
            left -= std::size_t(got);
            at += std::uint64_t(got);
        }
    }

    std::size_t capacity_;
    std::vector<triple> buffer_;
    std::vector<run> runs_;
    std::unique_ptr<std::FILE, file_closer> file_;
    std::uint64_t written_ = 0, pushed_ = 0;
    term_id max_s_ = 0, max_p_ = 0, max_o_ = 0;
};

} // namespace rdf
