#pragma once
// Anonymous mappings reserved before the cores start, so they sit at the same
// address in every core, threads or forked processes alike. MAP_NORESERVE:
// only touched pages cost memory, so the worst case (a ring for every pair, a
// gigabyte of shared heap) can be reserved as address space.
#include <sys/mman.h>
#include <sys/resource.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace tacomesh::posix::detail {

inline constexpr std::size_t page_bytes = 4096;

constexpr std::size_t round_up(std::size_t v, std::size_t a) noexcept { return (v + a - 1) / a * a; }

/// One anonymous mapping: MAP_SHARED stays shared between forked processes,
/// MAP_PRIVATE becomes each process's own copy (copy-on-write) after a fork.
class mapping {
public:
    enum class sharing { shared, private_ };

    mapping() = default;
    /// `setting`: the configuration that asked for these bytes, which the
    /// refusal names (e.g. "config.cached_bytes = 1073741824").
    mapping(std::size_t bytes, sharing s, const char* what, const std::string& setting = {})
        : size_(round_up(bytes, page_bytes)) {
        // 0 bytes is no mapping (mmap refuses a length of 0): a region the
        // configuration asked to be empty, such as MESH's with no MESH in a run.
        if (size_ == 0) return;
        const int flags = (s == sharing::shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS | MAP_NORESERVE;
        void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, flags, -1, 0);
        if (p == MAP_FAILED) {
            const int error = errno;
            std::string why = std::string("tacomesh::posix: cannot map ") + std::to_string(size_) + " bytes for " +
                              what + ": " + std::strerror(error);
            if (!setting.empty()) {
                why += " (" + setting;
                rlimit as{};
                if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
                    why += "; the process may map " + std::to_string(as.rlim_cur) + " bytes in all (RLIMIT_AS)";
                why += "): lower " + setting.substr(0, setting.find(' '));
            }
            throw std::runtime_error(why);
        }
        base_ = static_cast<std::byte*>(p);
    }
    ~mapping() {
        if (base_) ::munmap(base_, size_);
    }
    mapping(mapping&& o) noexcept : base_(std::exchange(o.base_, nullptr)), size_(o.size_) {}
    mapping& operator=(mapping&& o) noexcept {
        std::swap(base_, o.base_);
        std::swap(size_, o.size_);
        return *this;
    }

    std::byte* data() const noexcept { return base_; }
    std::size_t size() const noexcept { return size_; }
    bool contains(const void* p) const noexcept {
        auto* b = static_cast<const std::byte*>(p);
        return b >= base_ && b < base_ + size_;
    }

private:
    std::byte* base_ = nullptr;
    std::size_t size_ = 0;
};

/// A shared mapping with a lock-free bump allocator (zeroed memory) for the
/// channels and per-core records. The bump pointer lives in the mapping's
/// first line, not in this object: in process mode each core has its own
/// copy of this object, and rings are created lazily by any core.
class arena {
public:
    explicit arena(std::size_t bytes) : map_(bytes + header, mapping::sharing::shared, "the channels") {
        ::new (map_.data()) std::atomic<std::size_t>(header);
    }

    void* allocate(std::size_t bytes, std::size_t align = 64) {
        auto& used = used_word();
        std::size_t old = used.load(std::memory_order_relaxed);
        std::size_t start;
        do {
            start = round_up(old, align);
            if (start + bytes > map_.size()) throw std::bad_alloc();
        } while (!used.compare_exchange_weak(old, start + bytes, std::memory_order_relaxed));
        return map_.data() + start;
    }

    std::size_t used() const noexcept { return used_word().load(std::memory_order_relaxed) - header; }

private:
    static constexpr std::size_t header = 64;
    std::atomic<std::size_t>& used_word() const noexcept {
        return *std::launder(reinterpret_cast<std::atomic<std::size_t>*>(map_.data()));
    }
    mapping map_;
};

} // namespace tacomesh::posix::detail
