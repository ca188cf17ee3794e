// The MPB channels (mpb_channel.hpp) on the emulated SCC: in order per
// source under contention, a busy slot refused, and each piece of cache
// control shown necessary: without CL1INVMB the receiver reads a stale
// header for ever, without the WCB flush the sender waits on an
// acknowledgement that never leaves the receiver's buffer.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include <tacomesh/scc/emulated/chip.hpp>
#include <tacomesh/scc/emulated/hardware.hpp>
#include <tacomesh/scc/mpb_channel.hpp>

namespace emu = tacomesh::scc::emulated;
using channels = tacomesh::scc::mpb_channels<emu::hardware>;
using tacomesh::scc::core_index;

namespace {

bool send(channels& ch, core_index dest, std::uint64_t value) {
    std::byte* room = ch.try_acquire(dest);
    if (!room) return false;
    std::memcpy(room, &value, sizeof value);
    ch.publish(dest, sizeof value);
    return true;
}

std::vector<std::uint64_t> receive(channels& ch) {
    std::vector<std::uint64_t> got;
    ch.poll([&](const std::byte* p, std::size_t n, core_index) {
        REQUIRE(n == sizeof(std::uint64_t));
        std::uint64_t v;
        std::memcpy(&v, p, sizeof v);
        got.push_back(v);
    });
    return got;
}

} // namespace

TEST_CASE("SCC channels: messages arrive once, in order, and full slots refuse the next", "[scc][channel]") {
    using tacomesh::scc::mpb_layout;
    CHECK(mpb_layout::of(48, 48, 8192).depth == 1); // the MPB split 48 ways
    CHECK(mpb_layout::of(2, 48, 8192).depth == 24);
    // A bigger chip's MPB (emulated::grid) holds a slot per sender too.
    const tacomesh::scc::chip_shape big = emu::grid(32, 16);
    CHECK(mpb_layout::of(1024, 1024, big.mpb_bytes).depth == 1);
    CHECK(!mpb_layout::of(1024, 1024, 8192).fits());
    for (const auto& [cores, shape] : {std::pair{core_index(2), tacomesh::scc::chip_shape{}},
                                       std::pair{core_index(48), tacomesh::scc::chip_shape{}},
                                       std::pair{core_index(256), emu::grid(16, 8)}}) {
        INFO(cores << " cores");
        emu::chip chip(cores, std::size_t(1) << 20, {}, shape);
        emu::hardware ha(chip, 0), hb(chip, 1);
        channels a(ha), b(hb);
        const std::uint32_t depth = a.depth();
        for (int round = 0; round < 3; ++round) { // the slots reused
            std::vector<std::uint64_t> sent;
            for (std::uint64_t i = 0; i < depth; ++i) {
                REQUIRE(send(a, 1, 100 * round + i));
                sent.push_back(100 * round + i);
            }
            CHECK_FALSE(send(a, 1, 99)); // every slot holds a message b has not taken
            CHECK(receive(b) == sent);
            CHECK(receive(b).empty());
        }
        CHECK(send(a, 1, 42));
        CHECK(receive(b) == std::vector<std::uint64_t>{42});
    }
}

namespace {
/// Cores 0 and 1 of a 48-core chip (one slot per sender: a second message
/// reuses the first's lines and needs the first acknowledged), the
/// receiver's cache control as given, the first message sent and taken
/// (its header line now in the receiver's L1).
struct one_slot_pair {
    emu::chip chip{48};
    emu::hardware ha{chip, 0}, hb{chip, 1};
    channels a{ha}, b;
    explicit one_slot_pair(tacomesh::scc::mpb_channel_options receiver) : b(hb, receiver) {
        REQUIRE(send(a, 1, 1));
        REQUIRE(receive(b) == std::vector<std::uint64_t>{1});
    }
};
} // namespace

TEST_CASE("SCC channels: without CL1INVMB the receiver reads a stale header for ever", "[scc][channel]") {
    for (const bool invalidate : {true, false}) {
        INFO("invalidate " << invalidate);
        one_slot_pair p({.invalidate = invalidate, .flush_acks = true});
        REQUIRE(send(p.a, 1, 2));
        std::size_t seen = 0;
        for (int i = 0; i < 100; ++i) seen += receive(p.b).size();
        CHECK(seen == (invalidate ? 1u : 0u));
    }
}

TEST_CASE("SCC channels: an acknowledgement left in the write-combine buffer never frees the slot", "[scc][channel]") {
    for (const bool flush : {true, false}) {
        INFO("flush acknowledgements " << flush);
        one_slot_pair p({.invalidate = true, .flush_acks = flush});
        bool sent = false;
        for (int i = 0; i < 100 && !sent; ++i) sent = send(p.a, 1, 2);
        CHECK(sent == flush);
    }
}

TEST_CASE("SCC channels: room_written sees an acknowledgement once it has left the receiver's buffer, past the "
          "sender's L1 and at no cost",
          "[scc][channel]") {
    // The emulated platform asks this before a sender waits for room in the
    // modelled-time order (platform.hpp, start_waiting): an acknowledgement
    // written since the sender's last try means it must not wait.
    for (const bool flush : {true, false}) {
        INFO("flush acknowledgements " << flush);
        one_slot_pair p({.invalidate = true, .flush_acks = flush});
        const auto peek = [&](core_index c, std::size_t off, void* dst, std::size_t n) { p.ha.mpb_peek(c, off, dst, n); };
        // Without the flush even message 1's acknowledgement is still in b's buffer.
        REQUIRE(send(p.a, 1, 2) == flush);
        CHECK_FALSE(send(p.a, 1, 3)); // the one slot is busy; the try left the acknowledgement line in a's L1
        CHECK_FALSE(p.a.room_written(1, peek));
        (void)receive(p.b); // b takes message 2, if sent, and acknowledges it
        const std::uint64_t before = p.ha.cycles();
        CHECK(p.a.room_written(1, peek) == flush);
        CHECK(p.ha.cycles() == before); // the emulation's look, not the core's
    }
}

TEST_CASE("SCC channels: many senders, in order per source, on 6 emulated cores (oversubscribed)", "[scc][channel]") {
    constexpr core_index cores = 6;
    constexpr std::uint64_t per_pair = 400;
    emu::chip chip(cores);
    std::atomic<core_index> done{0};
    std::vector<int> in_order(cores, 1);
    std::vector<std::thread> threads;
    for (core_index me = 0; me < cores; ++me)
        threads.emplace_back([&, me] {
            emu::hardware h(chip, me);
            channels ch(h);
            std::vector<std::uint64_t> next_out(cores, 0), next_in(cores, 0);
            std::uint64_t received = 0;
            bool finished = false;
            while (done.load() < cores) {
                for (core_index d = 0; d < cores; ++d)
                    if (next_out[d] < per_pair && send(ch, d, std::uint64_t(me) << 32 | next_out[d])) ++next_out[d];
                ch.poll([&](const std::byte* p, std::size_t, core_index src) {
                    std::uint64_t v;
                    std::memcpy(&v, p, sizeof v);
                    if (v >> 32 != src || (v & 0xffffffff) != next_in[src]) in_order[me] = 0;
                    ++next_in[src];
                    ++received;
                });
                if (!finished && received == per_pair * cores) {
                    finished = true;
                    ++done;
                }
                std::this_thread::yield();
            }
        });
    for (auto& t : threads) t.join();
    for (core_index c = 0; c < cores; ++c) CHECK(in_order[c] == 1);
}

TEST_CASE("SCC channels: a poll at 48 cores reads the senders' flags, then only the slots whose flag moved",
          "[scc][channel][cost]") {
    emu::chip chip(48);
    emu::hardware receiver_hw(chip, 0), sender_hw(chip, 47);
    channels receiver(receiver_hw), sender(sender_hw);
    const auto& costs = chip.costs();
    std::uint64_t before = receiver_hw.cycles();
    CHECK(receive(receiver).empty());
    // CL1INVMB and the two flag lines: not a header line per sender (48 x 82 cycles).
    CHECK(receiver_hw.cycles() - before == costs.cl1invmb + 2 * costs.mpb_line_read);
    REQUIRE(send(sender, 0, 42));
    before = receiver_hw.cycles();
    CHECK(receive(receiver) == std::vector<std::uint64_t>{42}); // found through core 47's flag
    CHECK(receiver_hw.cycles() - before < 10 * costs.mpb_line_read);
}

TEST_CASE("SCC channels: the spare bytes below the flags, MESH's on-chip memory, are never written",
          "[scc][channel]") {
    using tacomesh::scc::mpb_layout;
    for (core_index cores = 1; cores <= 48; ++cores)
        CHECK(mpb_layout::of(cores, 48, 8192).spare_bytes() >= mpb_layout::min_spare_bytes);
    for (const auto& [cores, shape] : {std::pair{core_index(2), tacomesh::scc::chip_shape{}},
                                       std::pair{core_index(7), tacomesh::scc::chip_shape{}},
                                       std::pair{core_index(48), tacomesh::scc::chip_shape{}},
                                       std::pair{core_index(256), emu::grid(16, 8)}}) {
        INFO(cores << " cores");
        const mpb_layout layout = mpb_layout::of(cores, shape.cores(), shape.mpb_bytes);
        const std::size_t spare = layout.spare_offset;
        emu::chip chip(cores, std::size_t(1) << 20, {}, shape);
        // The last sender's last slot is the highest the channels reach:
        // fill every slot of it with whole payloads, twice over.
        emu::hardware hs(chip, cores - 1), hr(chip, 0);
        channels sender(hs), receiver(hr);
        for (int round = 0; round < 2; ++round) {
            for (std::uint32_t k = 0; k < sender.depth(); ++k) {
                std::byte* room = sender.try_acquire(0);
                REQUIRE(room);
                std::memset(room, 0xff, channels::payload_bytes);
                sender.publish(0, channels::payload_bytes);
            }
            std::size_t taken = 0;
            receiver.poll([&](const std::byte*, std::size_t, core_index) { ++taken; });
            CHECK(taken == sender.depth());
        }
        for (core_index c = 0; c < cores; ++c)
            for (std::size_t off = spare; off < layout.flag_offset; off += tacomesh::scc::line_bytes) {
                std::byte line[tacomesh::scc::line_bytes];
                std::uint64_t written_at = 0;
                chip.mpb_line(c, off).read(line, written_at);
                INFO("core " << c << ", offset " << off);
                CHECK(written_at == 0);
                CHECK(std::all_of(std::begin(line), std::end(line), [](std::byte b) { return b == std::byte{0}; }));
            }
    }
}
