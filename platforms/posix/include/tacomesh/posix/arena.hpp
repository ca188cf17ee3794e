#pragma once
// One MAP_SHARED anonymous region that holds everything cores share: the
// per-core records and the channels. MAP_SHARED (rather than the heap) so the
// same layout serves the process-per-core mode: mapped before the cores start,
// it sits at the same address in every core. MAP_NORESERVE: only the pages of
// channels actually created cost memory, so the worst case (a ring for every
// pair) can be reserved as address space.
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace tacomesh::posix::detail {

class arena {
public:
    explicit arena(std::size_t bytes) : size_(round_up(bytes, 4096)) {
        void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            throw std::runtime_error("tacomesh::posix: cannot map " + std::to_string(size_) +
                                     " bytes of shared memory for the channels: " + std::strerror(errno));
        base_ = static_cast<std::byte*>(p);
    }
    ~arena() { ::munmap(base_, size_); }
    arena(const arena&) = delete;
    arena& operator=(const arena&) = delete;

    /// Thread-safe bump allocation (lock-free), zeroed memory.
    void* allocate(std::size_t bytes, std::size_t align = 64) {
        std::size_t old = used_.load(std::memory_order_relaxed);
        std::size_t start;
        do {
            start = round_up(old, align);
            if (start + bytes > size_) throw std::bad_alloc();
        } while (!used_.compare_exchange_weak(old, start + bytes, std::memory_order_relaxed));
        return base_ + start;
    }

    std::size_t used() const noexcept { return used_.load(std::memory_order_relaxed); }
    std::size_t size() const noexcept { return size_; }

    static constexpr std::size_t round_up(std::size_t v, std::size_t a) noexcept { return (v + a - 1) / a * a; }

private:
    std::byte* base_ = nullptr;
    std::size_t size_;
    // The bump pointer lives in the (private) arena object: in process mode
    // allocation happens before the fork or through the owning core.
    std::atomic<std::size_t> used_{0};
};

} // namespace tacomesh::posix::detail
