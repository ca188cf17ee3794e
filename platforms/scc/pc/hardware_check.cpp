// A bare-metal, self-checking program for the PC stand-in (CTest
// "scc.bare-metal: the hardware layer and the MPB channels on N cores under
// QEMU"): on every booted core at once, the hardware layer (LOCK registers,
// DRAM, LUTs, interrupts and halt) and the MPB channels (mpb_channel.hpp,
// the protocol code of the chip and the emulation) between every pair of
// cores, the interrupt-driven way included (the receiver sleeps in hlt
// until the sender's interrupt). It reports each failure on the serial
// console, and core 0 ends the run with the verdict.
#include <tacomesh/scc/mpb_channel.hpp>
#include <tacomesh/scc/pc/console.hpp>
#include <tacomesh/scc/pc/hardware.hpp>

namespace {

using tacomesh::scc::core_index;
namespace pc = tacomesh::scc::pc;
namespace scc = tacomesh::scc;
using channels = scc::mpb_channels<pc::hardware>;

std::uint32_t failures = 0, checks = 0;

void check(bool ok, core_index core, const char* what, std::uint64_t got, std::uint64_t want) {
    __atomic_fetch_add(&checks, 1u, __ATOMIC_RELAXED);
    if (ok) return;
    __atomic_fetch_add(&failures, 1u, __ATOMIC_RELAXED);
    pc::print("core ", core, ": FAILED ", what, ": got ", got, ", want ", want, "\n");
}

/// DRAM words the program uses: a counter under core 0's LOCK register and
/// the barrier's arrivals.
constexpr std::size_t counter_at = 0, arrivals_at = 64;

std::uint32_t dram_word(pc::hardware& hw, std::size_t a) {
    std::uint32_t v;
    hw.dram_load(a, &v, sizeof v);
    return v;
}

/// A barrier from the hardware layer alone: arrivals counted in DRAM under
/// the last core's LOCK register, each core waiting for generation g's count.
void barrier(pc::hardware& hw, std::uint32_t& generation) {
    const core_index lock = hw.core_count() - 1;
    ++generation;
    while (!hw.test_and_set(lock)) asm volatile("pause");
    const std::uint32_t n = dram_word(hw, arrivals_at) + 1;
    hw.dram_store(arrivals_at, &n, sizeof n);
    hw.flush_l2_range(arrivals_at, sizeof n);
    hw.unlock(lock);
    while (true) {
        hw.invalidate_l1();
        if (dram_word(hw, arrivals_at) >= generation * hw.core_count()) return;
        asm volatile("pause");
    }
}

/// A message's length and bytes, from its source, destination and number:
/// the receiver recomputes them, so a lost, reordered or torn message shows.
std::size_t length_of(core_index src, core_index dest, std::uint32_t seq) {
    return 1 + (seq * 7 + src * 13 + dest * 5) % channels::payload_bytes;
}
std::byte byte_of(core_index src, std::uint32_t seq, std::size_t i) {
    return std::byte((src * 31 + seq * 7 + i * 3) & 0xFF);
}

struct inbox {
    std::uint32_t next[scc::max_cores] = {}; // the number expected next from each source
    std::uint32_t taken = 0;
};

void take(inbox& in, core_index me, const std::byte* bytes, std::size_t length, core_index src) {
    const std::uint32_t seq = in.next[src]++;
    ++in.taken;
    check(length == length_of(src, me, seq), me, "message length", length, length_of(src, me, seq));
    for (std::size_t i = 0; i < length; ++i)
        if (bytes[i] != byte_of(src, seq, i)) {
            check(false, me, "message byte (source, number)", src, seq);
            return;
        }
}

void send(channels& ch, inbox& in, core_index dest, std::uint32_t seq) {
    const core_index me = ch.hardware().core();
    std::byte* room;
    while ((room = ch.try_acquire(dest)) == nullptr) // slots full: take what others sent meanwhile
        ch.poll([&](const std::byte* b, std::size_t n, core_index src) { take(in, me, b, n, src); });
    const std::size_t length = length_of(me, dest, seq);
    for (std::size_t i = 0; i < length; ++i) room[i] = byte_of(me, seq, i);
    ch.publish(dest, length);
}

} // namespace

extern "C" void tacomesh_scc_main(core_index me) {
    pc::hardware hw;
    const core_index n = hw.core_count();
    std::uint32_t generation = 0;
    check(me < n, me, "core index below the core count", me, n);

    // LOCK registers: every core adds to one DRAM counter under core 0's lock.
    constexpr std::uint32_t adds = 2000;
    for (std::uint32_t i = 0; i < adds; ++i) {
        while (!hw.test_and_set(0)) asm volatile("pause");
        const std::uint32_t v = dram_word(hw, counter_at) + 1;
        hw.dram_store(counter_at, &v, sizeof v);
        hw.flush_l2_range(counter_at, sizeof v);
        hw.unlock(0);
    }
    barrier(hw, generation);
    check(dram_word(hw, counter_at) == adds * n, me, "additions under the LOCK register", dram_word(hw, counter_at),
          adds * n);

    // LUTs: each core writes an entry of the next core's table, which reads it.
    const core_index next = (me + 1) % n, prev = (me + n - 1) % n;
    hw.set_lut(next, 0x90, scc::lut_entry{.dest_x = std::uint8_t(me % 6), .dest_y = std::uint8_t(me / 6 % 4),
                                          .sub = scc::lut_entry::mpb, .address_high = std::uint16_t(me)});
    barrier(hw, generation);
    check(hw.lut(me, 0x90).address_high == prev, me, "LUT entry from the previous core", hw.lut(me, 0x90).address_high,
          prev);

    // MPB channels, all to all (itself included): each sender's slots in
    // each receiver wrapped at least four times, and some 5 000 messages in
    // all where the cores are few (at 48, one slot per sender, 5 a pair).
    channels ch(hw);
    check(ch.layout().fits(), me, "MPB layout fits", ch.depth(), 1);
    inbox in;
    const std::uint32_t per_pair = 1 + (4 * ch.depth() > 4800 / (n * n) ? 4 * ch.depth() : 4800 / (n * n));
    for (std::uint32_t seq = 0; seq < per_pair; ++seq)
        for (core_index k = 0; k < n; ++k) send(ch, in, (me + k) % n, seq);
    while (in.taken < per_pair * n)
        ch.poll([&](const std::byte* b, std::size_t len, core_index src) { take(in, me, b, len, src); });
    for (core_index src = 0; src < n; ++src) check(in.next[src] == per_pair, me, "messages from a source", in.next[src], per_pair);
    barrier(hw, generation);

    // Interrupt-driven: a token goes round the ring of cores; each core
    // sleeps in hlt until the previous one's interrupt, then finds the
    // message in its MPB.
    constexpr std::uint32_t laps = 20;
    static_cast<void>(hw.take_interrupt());
    barrier(hw, generation);
    std::uint32_t woken = 0;
    auto pass_on = [&](std::uint32_t lap) {
        send(ch, in, next, per_pair + lap); // numbered on from the all-to-all's
        hw.interrupt(next);
    };
    auto wait_for_token = [&] {
        const std::uint64_t t0 = hw.cycles();
        while (!hw.take_interrupt() && hw.cycles() - t0 < 40'000'000'000ull) hw.halt(4'000'000'000ull);
        std::size_t got = 0;
        while (got == 0)
            got = ch.poll([&](const std::byte* b, std::size_t len, core_index src) {
                check(src == prev, me, "token's source", src, prev);
                take(in, me, b, len, src);
            });
        ++woken;
    };
    for (std::uint32_t lap = 0; lap < laps && n > 1; ++lap) {
        if (me == 0) pass_on(lap); // core 0 starts each lap and ends it
        wait_for_token();
        if (me != 0) pass_on(lap);
    }
    if (n > 1) check(woken == laps, me, "wake-ups by interrupt", woken, laps);

    // halt() returns within its limit when nothing comes.
    const std::uint64_t t0 = hw.cycles();
    hw.halt(2'000'000);
    check(hw.cycles() - t0 >= 2'000'000, me, "halt without an interrupt waits its limit", hw.cycles() - t0, 2'000'000);
    barrier(hw, generation);

    if (me == 0) {
        pc::print("bare-metal pc: ", n, " cores, ", checks, " checks, ", failures, " failed\n");
        if (failures) pc::power_off(false);
    }
}
