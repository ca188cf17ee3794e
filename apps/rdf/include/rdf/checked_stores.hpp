#pragma once
// The store files a mapped open has checked, so that the next open of an
// unchanged file skips the checks. Those read the whole file (3-5 s and
// every page of a 4 GB store at 90 M triples), where a selective query
// reads a few pages: without the record, the open was nearly all of a
// one-shot query's time, and a store larger than memory was streamed
// through it on every query.
//
// "Unchanged": the same device, inode and size, the same modification and
// status-change times (to the nanosecond), and the same checksums in the
// header. Any write through the file system moves the status-change time,
// which no system call sets back, and a store is replaced by renaming a new
// file over it (a new inode). What the record cannot see is damage beneath
// the file system, the storage's own checksums' domain; `tacomesh-rdf
// --check-store` checks regardless.
//
// As git's index does with its "racily clean" entries: the file system's
// timestamps move in clock ticks, so a file changed less than `settle`
// before its check could be changed again within the same tick with its
// times unmoved. Such a file is not recorded, and is checked again next time.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace rdf {

/// A store file as the file system and its header name it.
struct store_identity {
    std::uint64_t device = 0, inode = 0, size = 0;
    std::int64_t modified_ns = 0, changed_ns = 0;
    std::uint32_t dictionary_crc = 0, index_crc = 0;
    bool operator==(const store_identity&) const = default;
};

inline store_identity identity_of(const struct stat& st, std::uint32_t dictionary_crc, std::uint32_t index_crc) {
    auto ns = [](const timespec& t) { return std::int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec; };
    return {std::uint64_t(st.st_dev), std::uint64_t(st.st_ino), std::uint64_t(st.st_size), ns(st.st_mtim),
            ns(st.st_ctim), dictionary_crc, index_crc};
}

/// The record: a small text file, one line per store file checked, the
/// most recent `kept` of them. Reading and writing it are best effort: a
/// record that cannot be read or written only costs checks.
class checked_stores {
public:
    static constexpr std::size_t kept = 256;

    /// `record`: the record's file (its directory is made when needed); an
    /// empty path records nothing (every open checks).
    explicit checked_stores(std::string record, std::chrono::nanoseconds settle = std::chrono::seconds(2))
        : path_(std::move(record)), settle_(settle) {}

    /// $XDG_CACHE_HOME/tacomesh/checked-stores, else ~/.cache/tacomesh/checked-stores;
    /// without either variable, none.
    static checked_stores for_user() {
        const char* cache = std::getenv("XDG_CACHE_HOME");
        if (cache && *cache) return checked_stores(std::string(cache) + "/tacomesh/checked-stores");
        const char* home = std::getenv("HOME");
        if (home && *home) return checked_stores(std::string(home) + "/.cache/tacomesh/checked-stores");
        return checked_stores("");
    }

    const std::string& path() const noexcept { return path_; }

    bool holds(const store_identity& id) const {
        for (const store_identity& e : read())
            if (e == id) return true;
        return false;
    }

    /// Records a file that passed its checks, unless it changed too
    /// recently for its times to tell a later change (above). Returns
    /// whether it was recorded.
    bool add(const store_identity& id) const noexcept {
        if (path_.empty()) return false;
        const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
        if (now - std::max(id.modified_ns, id.changed_ns) < settle_.count()) return false;
        try {
            std::vector<store_identity> entries;
            for (const store_identity& e : read())
                if (e.device != id.device || e.inode != id.inode) entries.push_back(e); // an older state of this file
            entries.push_back(id);
            if (entries.size() > kept) entries.erase(entries.begin(), entries.end() - kept);
            std::error_code ec;
            std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
            // Written whole, then renamed over the record: a reader sees the
            // old record or the new, never half of one. Two processes adding
            // at once: the later rename wins, and the other's file is checked
            // again at its next open.
            const std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
            {
                std::ofstream out(tmp, std::ios::trunc);
                out << "# store files tacomesh-rdf has checked, as they were then (safe to delete)\n";
                for (const store_identity& e : entries)
                    out << e.device << ' ' << e.inode << ' ' << e.size << ' ' << e.modified_ns << ' ' << e.changed_ns
                        << ' ' << e.dictionary_crc << ' ' << e.index_crc << '\n';
                if (!out.flush()) {
                    std::remove(tmp.c_str());
                    return false;
                }
            }
            if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
                std::remove(tmp.c_str());
                return false;
            }
            return true;
        } catch (...) {
            return false;
        }
    }

private:
    std::vector<store_identity> read() const {
        std::vector<store_identity> entries;
        if (path_.empty()) return entries;
        std::ifstream in(path_);
        std::string line;
        while (std::getline(in, line)) {
            if (line.empty() || line[0] == '#') continue;
            std::istringstream fields(line);
            store_identity e;
            if (fields >> e.device >> e.inode >> e.size >> e.modified_ns >> e.changed_ns >> e.dictionary_crc >> e.index_crc)
                entries.push_back(e); // a garbled line matches nothing
        }
        return entries;
    }

    std::string path_;
    std::chrono::nanoseconds settle_;
};

} // namespace rdf
