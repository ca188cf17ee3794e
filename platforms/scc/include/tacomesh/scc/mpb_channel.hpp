#pragma once
// Invocation channels in the message-passing buffers (CCI paper, section V;
// Xipx thesis, section 4.3), written against the hardware-access layer so
// that the same code runs on the chip and on the emulation.
//
// Each receiver's MPB (8 KB on the SCC) is split among the senders: core s owns `depth`
// slots in every core's MPB, each a header line (sequence number, length)
// and four payload lines (128 bytes, room for taco::message_bytes). The
// depth is what the MPB holds for that many cores: 1 at 48 cores, 24 at 2.
// Messages from one sender fill its slots in turn, in sequence; the sender
// reuses a slot only after the receiver acknowledged it, by writing the
// last sequence number it took into the sender's own MPB (its
// acknowledgement words); until then try_acquire fails and the runtime
// keeps the message (never dropped). In order per source follows.
//
// A poll must not read a header line per sender: at 48 cores that is 48
// MPB reads (some 4 000 cycles) per look, and a reduce over the chip looks
// at every level of its tree. So each receiver's MPB also holds a flag
// byte per sender, the low byte of the last sequence number it published
// there (48 bytes, two lines); a poll reads those and then only the slots
// of senders whose flag moved. A sender is never 256 messages ahead of the
// receiver (depth <= 32), so a byte tells.
//
// The SCC's rules, each where it bites:
//  - publish writes the payload lines first, the header line next, as
//    whole lines: a whole line leaves the write-combine buffer at once, and
//    the header store pushes out a partial last payload line, so the
//    receiver can never see a header before its payload; the flag comes
//    last, a partial line written with its byte mask (the MPB keeps the
//    other senders' bytes of it), pushed out by flush_wcb();
//  - poll and try_acquire run CL1INVMB before reading what other cores
//    wrote (headers, acknowledgements): MPBT lines are cached in L1 and
//    would otherwise be read stale for ever;
//  - an acknowledgement is a partial line, so it is followed by
//    flush_wcb(), or the sender would wait on a word still in the buffer.
// `options` can leave the last two out: the tests show that the emulation
// then fails the channel as the chip would.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include <tacomesh/scc/geometry.hpp>
#include <tacomesh/scc/hardware.hpp>

namespace tacomesh::scc {

struct mpb_channel_options {
    bool invalidate = true; ///< CL1INVMB before reading what others wrote
    bool flush_acks = true; ///< push each acknowledgement out of the WCB
};

/// Where the channels put things in a core's MPB of `mpb_bytes` when `cores`
/// of a chip's `chip_cores` run, from the top: the backend's flush line, the
/// acknowledgement words (4 bytes per receiver), the flag bytes (one per
/// sender, whole lines), both sized for the whole chip, then, from the
/// bottom, `depth` slots per running sender; between them the spare bytes
/// the platform keeps for MESH's control blocks.
struct mpb_layout {
    static constexpr std::size_t payload_bytes = 4 * line_bytes;
    static constexpr std::size_t slot_bytes = line_bytes + payload_bytes;
    static constexpr std::uint32_t max_depth = 32;
    /// Left to the platform's on-chip memory at any core count: what 48
    /// senders' single slots leave in the SCC's 8 KB (three 64-byte control blocks).
    static constexpr std::size_t min_spare_bytes = 224;

    core_index cores = 0, chip_cores = 0;
    std::size_t mpb_bytes = 0;
    std::size_t flush_line = 0, ack_offset = 0, flag_offset = 0, spare_offset = 0;
    std::uint32_t depth = 0; ///< 0: one slot per sender does not fit

    static constexpr mpb_layout of(core_index cores, core_index chip_cores, std::size_t mpb_bytes) noexcept {
        mpb_layout l{cores, chip_cores, mpb_bytes};
        const std::size_t acks = round_up(std::size_t(chip_cores) * sizeof(std::uint32_t)),
                          flags = round_up(chip_cores), top = line_bytes + acks + flags;
        if (cores == 0 || cores > chip_cores || mpb_bytes % line_bytes != 0 ||
            mpb_bytes < top + min_spare_bytes + std::size_t(cores) * slot_bytes)
            return l;
        l.flush_line = mpb_bytes - line_bytes;
        l.ack_offset = l.flush_line - acks;
        l.flag_offset = l.ack_offset - flags;
        const std::size_t d = (l.flag_offset - min_spare_bytes) / (std::size_t(cores) * slot_bytes);
        l.depth = std::uint32_t(d > max_depth ? max_depth : d);
        l.spare_offset = std::size_t(cores) * l.depth * slot_bytes;
        return l;
    }
    /// The least MPB per core that holds one slot per sender of `cores`
    /// (the SCC's design needs the MPB to grow with the chip: 8 KB holds 48
    /// senders, 1024 need 165 KB).
    static constexpr std::size_t bytes_needed(core_index cores) noexcept {
        return std::size_t(cores) * slot_bytes + min_spare_bytes + round_up(cores) +
               round_up(std::size_t(cores) * sizeof(std::uint32_t)) + line_bytes;
    }
    constexpr bool fits() const noexcept { return depth >= 1; }
    /// Spare bytes for the platform's on-chip memory.
    constexpr std::size_t spare_bytes() const noexcept { return fits() ? flag_offset - spare_offset : 0; }

private:
    static constexpr std::size_t round_up(std::size_t n) noexcept { return (n + line_bytes - 1) / line_bytes * line_bytes; }
};
static_assert(mpb_layout::of(max_cores, max_cores, mpb_bytes_per_core).flag_offset == 7904 &&
                  mpb_layout::of(max_cores, max_cores, mpb_bytes_per_core).depth == 1 &&
                  mpb_layout::of(2, max_cores, mpb_bytes_per_core).depth == 24 &&
                  mpb_layout::bytes_needed(max_cores) <= mpb_bytes_per_core,
              "on the SCC a slot per sender for 48 cores, the flags, the acknowledgements and the flush line fit in 8 KB");
static_assert(mpb_layout::of(1024, 1024, mpb_layout::bytes_needed(1024)).depth == 1 &&
              !mpb_layout::of(1024, 1024, mpb_layout::bytes_needed(1024) - line_bytes).fits());

/// The channels of core `hw.core()`. `H::max_cores` sizes its per-peer
/// counters (no heap: the bare-metal build has none).
template <hardware H>
class mpb_channels {
public:
    static constexpr std::size_t payload_bytes = mpb_layout::payload_bytes;
    static constexpr std::size_t slot_bytes = mpb_layout::slot_bytes;
    static constexpr std::uint32_t max_depth = mpb_layout::max_depth;
    static constexpr core_index max_peers = H::max_cores;

    explicit mpb_channels(H& hw, mpb_channel_options o = {})
        : hw_(hw), o_(o), l_(mpb_layout::of(hw.core_count(), hw.shape().cores(), hw.shape().mpb_bytes)) {}

    H& hardware() noexcept { return hw_; }
    /// Messages a sender may have in one receiver's MPB at once.
    std::uint32_t depth() const noexcept { return l_.depth; }
    const mpb_layout& layout() const noexcept { return l_; }

    /// Room for a message to `dest`, or nullptr while its slots are all
    /// busy (their messages not yet taken).
    /// Where try_acquire's callers compose a message: the bytes stand for
    /// the slot in the receiver's MPB, whose lines publish() writes.
    std::span<const std::byte> staging() const noexcept { return staging_; }

    std::byte* try_acquire(core_index dest) {
        if (sent_[dest] - acked_[dest] >= l_.depth) {
            if (o_.invalidate) hw_.cl1invmb();
            std::uint32_t ack = 0;
            hw_.mpb_load(hw_.core(), l_.ack_offset + dest * sizeof ack, &ack, sizeof ack);
            acked_[dest] = ack;
            if (sent_[dest] - ack >= l_.depth) return nullptr;
        }
        return staging_.data();
    }

    /// Whether try_acquire(dest) would find room in the MPB as it is at this
    /// moment, read by `peek(core, offset, dst, n)` without the hardware's
    /// costs and caches: for an emulation that must know whether `dest`'s
    /// acknowledgement is already written (emulated/platform.hpp).
    template <class Peek>
    bool room_written(core_index dest, Peek&& peek) const {
        std::uint32_t ack = 0;
        peek(hw_.core(), l_.ack_offset + dest * sizeof ack, &ack, sizeof ack);
        return sent_[dest] - ack < l_.depth;
    }

    /// Hand the first `length` bytes of the acquired room to `dest`.
    void publish(core_index dest, std::size_t length) {
        const std::size_t slot = slot_offset(hw_.core(), sent_[dest] % l_.depth);
        const std::size_t lines = (length + line_bytes - 1) / line_bytes;
        hw_.mpb_store(dest, slot + line_bytes, staging_.data(), lines * line_bytes); // whole lines
        header h{++sent_[dest], std::uint32_t(length), {}};
        hw_.mpb_store(dest, slot, &h, sizeof h); // whole: pushes the payload out before it
        const auto flag = std::uint8_t(h.seq);
        hw_.mpb_store(dest, l_.flag_offset + hw_.core(), &flag, 1);
        hw_.flush_wcb(); // a partial line: out now, or the receiver never looks at the slot
    }

    /// Run `handler(bytes, length, source)` on each newly arrived message,
    /// one at a time and copied out of the MPB first (a handler may poll
    /// again: the next message of a source is then taken there, in order);
    /// returns how many.
    ///
    /// Why copied and acknowledged before it runs, not run in place (the
    /// CCI paper, section V: "executed directly from the communication
    /// memory"): in place, the slot stays the sender's until the handler
    /// returns. Measured on the emulated chip (counted blocks, host order;
    /// the model charges the copy nothing, on the P54C it is some 50 cycles
    /// for a four-line payload already in the L1): a round trip took 2,006
    /// cycles against 2,084 (the acknowledgement leaves the reply's path),
    /// a stream of one-way invocations at 2 cores 810 against 883-907 a
    /// message, but at 48 cores, one slot per sender, 2,362-2,368 against
    /// 1,714-2,133: the sender waits for each handler. And it is unsafe, as
    /// on POSIX (posix/ring.hpp): a handler that waits holds its sender's
    /// slot, so a reply that needs that slot never comes (the suites'
    /// 16-core membership test hung).
    template <class Handler>
    std::size_t poll(Handler&& handler) {
        if (o_.invalidate) hw_.cl1invmb();
        const core_index me = hw_.core();
        std::array<std::uint8_t, max_peers> flags;
        hw_.mpb_load(me, l_.flag_offset, flags.data(), hw_.core_count());
        std::size_t ran = 0;
        for (core_index src = 0; src < hw_.core_count(); ++src) {
            if (flags[src] == std::uint8_t(received_[src])) continue; // nothing new published by src
            for (std::uint32_t taken = 0; taken < l_.depth; ++taken) {
                const std::uint32_t next = received_[src] + 1;
                const std::size_t slot = slot_offset(src, received_[src] % l_.depth);
                header h;
                hw_.mpb_load(me, slot, &h, sizeof h);
                if (h.seq != next) break; // an older message's slot: nothing new from src
                received_[src] = next;
                const std::size_t length = h.length < payload_bytes ? h.length : payload_bytes; // never past the slot
                std::array<std::byte, payload_bytes> copy;
                hw_.mpb_load(me, slot + line_bytes, copy.data(), length);
                // Its slot is free again: tell the sender, in its MPB.
                hw_.mpb_store(src, l_.ack_offset + std::size_t(me) * sizeof next, &next, sizeof next);
                if (o_.flush_acks) hw_.flush_wcb();
                handler(copy.data(), length, src);
                ++ran;
            }
        }
        return ran;
    }

    /// Whether a message has been published here that poll() has not taken
    /// yet (the flag bytes only; nothing is taken): what a core checks after
    /// announcing that it goes to sleep, before it sleeps.
    bool pending() {
        if (o_.invalidate) hw_.cl1invmb();
        std::array<std::uint8_t, max_peers> flags;
        hw_.mpb_load(hw_.core(), l_.flag_offset, flags.data(), hw_.core_count());
        for (core_index src = 0; src < hw_.core_count(); ++src)
            if (flags[src] != std::uint8_t(received_[src])) return true;
        return false;
    }

private:
    struct header {
        std::uint32_t seq, length;
        std::array<std::uint32_t, line_bytes / 4 - 2> pad; // a whole line: it leaves the WCB at once
    };
    static_assert(sizeof(header) == line_bytes);

    std::size_t slot_offset(core_index sender, std::uint32_t k) const noexcept {
        return (std::size_t(sender) * l_.depth + k) * slot_bytes;
    }

    H& hw_;
    mpb_channel_options o_;
    mpb_layout l_;
    std::array<std::uint32_t, max_peers> sent_{}, acked_{}, received_{};
    alignas(line_bytes) std::array<std::byte, payload_bytes> staging_{};
};

} // namespace tacomesh::scc
