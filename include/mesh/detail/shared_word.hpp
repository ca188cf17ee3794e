#pragma once
// The words of non-cached shared memory that several cores update (a
// control block's version and pending writers, the debug writer claim):
// std::atomic operations where cores share memory, and the platform's word
// operations on the canonical copy where each core has a view of its own
// (taco::remote_memory_endpoint: cluster ranks). One test of a field of
// the running core decides, so shared-memory platforms pay a predictable
// branch, not a call.
#include <atomic>
#include <cstdint>
#include <type_traits>

#include <mesh/memory.hpp>

namespace mesh::detail {

template <class T>
    requires(std::is_unsigned_v<T> && (sizeof(T) == 4 || sizeof(T) == 8))
class shared_word {
public:
    static T load(const std::atomic<T>& w, std::memory_order o = std::memory_order_acquire) {
        if (auto& m = memory(); m.remote_words) [[unlikely]]
            return T(m.word(taco::word_op::load, const_cast<std::atomic<T>*>(&w), sizeof(T), 0));
        return w.load(o);
    }
    static void store(std::atomic<T>& w, T v, std::memory_order o = std::memory_order_release) {
        if (auto& m = memory(); m.remote_words) [[unlikely]] {
            m.word(taco::word_op::store, &w, sizeof(T), v);
            return;
        }
        w.store(v, o);
    }
    static T fetch_add(std::atomic<T>& w, T d, std::memory_order o = std::memory_order_relaxed) {
        if (auto& m = memory(); m.remote_words) [[unlikely]]
            return T(m.word(taco::word_op::fetch_add, &w, sizeof(T), d));
        return w.fetch_add(d, o);
    }
    static T exchange(std::atomic<T>& w, T v, std::memory_order o = std::memory_order_acq_rel) {
        if (auto& m = memory(); m.remote_words) [[unlikely]]
            return T(m.word(taco::word_op::exchange, &w, sizeof(T), v));
        return w.exchange(v, o);
    }
};

/// Non-cached memory that one core writes and others then only read (a
/// control block's fields, a part list): where each core has a view of it,
/// the writer sends it to memory and each reader fetches it once.
inline bool views_of_non_cached() { return memory().remote_words; }

} // namespace mesh::detail
