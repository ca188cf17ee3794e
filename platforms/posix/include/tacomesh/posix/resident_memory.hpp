#pragma once
// This process's resident memory as Linux accounts it (/proc/self/status):
// what the memory benchmarks and tacomesh-cluster --json report. Resident
// pages, not allocations: mapped shared memory that was touched counts,
// reserved address space does not.
#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

namespace tacomesh::posix {

/// A /proc/self/status field in KiB (VmRSS, VmHWM, ...); -1 where there is none.
inline long status_kib(std::string_view field) {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 && line[field.size()] == ':')
            return std::stol(line.substr(field.size() + 1));
    return -1;
}

/// The peak resident memory so far (VmHWM) in bytes; 0 where it is not
/// known. VmHWM, which exec resets, not getrusage's ru_maxrss: that keeps the
/// peak of the process that forked this one before its exec (a Python
/// script's 60 MB for one).
inline std::uint64_t peak_resident_bytes() {
    const long kib = status_kib("VmHWM");
    return kib > 0 ? std::uint64_t(kib) * 1024 : 0;
}

} // namespace tacomesh::posix
