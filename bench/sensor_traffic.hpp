#pragma once
// The example type of the controller benchmarks (bench/controller_bench.cpp
// on host cores, bench/platforms/scc/scc_controller_bench.cpp on the
// emulated SCC): a user's type and the traffic on it (mesh/traffic.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <mesh/mesh.hpp>

/// The user's type: a log of readings, a private-member class (so it
/// declares its members: mesh/shared_members.hpp).
class sensor_log : public mesh::sharing_aware<sensor_log> {
public:
    explicit sensor_log(std::size_t n) : readings_(n, 0) {}

    /// Record `round` in n readings from `at` on.
    void record(std::size_t at, std::size_t n, std::uint64_t round) {
        for (std::size_t i = 0; i < n; ++i) readings_.set(at + i, round);
        last_round_ = round;
        last_at_ = at;
    }
    /// The last round, if the readings it wrote are here too (else 0: a view
    /// that has the counter but not the readings is stale as well).
    std::uint64_t last_round() const { return readings_[last_at_] == last_round_ ? last_round_ : 0; }
    std::size_t size() const { return readings_.size(); }

private:
    mesh::vector<std::uint64_t> readings_;
    std::uint64_t last_round_ = 0;
    std::size_t last_at_ = 0;

public:
    using shared_members = mesh::members<&sensor_log::readings_, &sensor_log::last_round_, &sensor_log::last_at_>;
};

/// The traffic: each release changes `bytes` of readings, at a place that
/// moves from round to round; a reader checks it sees the last round.
struct sensor_traffic {
    using object = sensor_log;
    static constexpr std::size_t readings = std::size_t(1) << 17; // 1 MiB

    template <class C>
    static mesh::sharing_ptr<sensor_log> make() {
        return mesh::make_shared_object<sensor_log, C>(readings);
    }
    static void write(sensor_log& s, std::size_t bytes, std::uint64_t round) {
        const std::size_t n = std::clamp<std::size_t>(bytes / sizeof(std::uint64_t), 1, s.size());
        s.record(std::size_t(round * n) % (s.size() - n + 1), n, round);
    }
    static std::uint64_t read(const sensor_log& s) { return s.last_round(); }
};
