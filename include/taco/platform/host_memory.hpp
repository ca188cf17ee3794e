#pragma once
// What the host can back, for launchers and readers that refuse a size
// before they allocate it (and name the figure in their message): its RAM
// and swap, or the process's address-space limit (RLIMIT_AS) where lower.
#include <sys/resource.h>
#ifdef __linux__
#include <sys/sysinfo.h>
#endif

#include <algorithm>
#include <cstdint>
#include <limits>

namespace taco::detail {

inline std::uint64_t host_memory_bytes() noexcept {
    std::uint64_t bytes = std::numeric_limits<std::uint64_t>::max();
#ifdef __linux__
    struct sysinfo si {};
    if (::sysinfo(&si) == 0) bytes = (std::uint64_t(si.totalram) + std::uint64_t(si.totalswap)) * si.mem_unit;
#endif
    rlimit as{};
    if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) bytes = std::min(bytes, std::uint64_t(as.rlim_cur));
    return bytes;
}

} // namespace taco::detail
