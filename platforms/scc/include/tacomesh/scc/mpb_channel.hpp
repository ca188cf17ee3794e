#pragma once
// Invocation channels in the message-passing buffers (CCI paper, section V;
// Xipx thesis, section 4.3), written against the hardware-access layer so
// that the same code runs on the chip and on the emulation.
//
// Each receiver's 8 KB MPB is split among the senders: core s owns `depth`
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

template <hardware H>
class mpb_channels {
public:
    static constexpr std::size_t payload_bytes = 4 * line_bytes;
    static constexpr std::size_t slot_bytes = line_bytes + payload_bytes;
    /// Acknowledgements: a 4-byte word per receiver, below the reserved last line.
    static constexpr std::size_t ack_bytes = max_cores * sizeof(std::uint32_t);
    static constexpr std::size_t ack_offset = mpb_flush_line - ack_bytes;
    /// Flags: a byte per sender, below the acknowledgements.
    static constexpr std::size_t flag_bytes = (max_cores + line_bytes - 1) / line_bytes * line_bytes;
    static constexpr std::size_t flag_offset = ack_offset - flag_bytes;
    static_assert(flag_offset % line_bytes == 0 && max_cores * slot_bytes <= flag_offset,
                  "a slot per sender for 48 cores, the flags, the acknowledgements and the flush line fit in 8 KB");
    static constexpr std::uint32_t max_depth = 32;
    /// Left to the platform's on-chip memory at any core count: what 48
    /// senders' single slots leave (three 64-byte control blocks).
    static constexpr std::size_t min_spare_bytes = 224;
    static_assert(max_cores * slot_bytes + min_spare_bytes <= flag_offset);

    explicit mpb_channels(H& hw, mpb_channel_options o = {})
        : hw_(hw), o_(o), depth_(slots_per_sender(hw.core_count())) {}

    H& hardware() noexcept { return hw_; }
    /// Messages a sender may have in one receiver's MPB at once.
    std::uint32_t depth() const noexcept { return depth_; }
    static constexpr std::uint32_t slots_per_sender(core_index cores) noexcept {
        const std::size_t d = (flag_offset - min_spare_bytes) / (std::size_t(cores) * slot_bytes);
        return std::uint32_t(d < 1 ? 1 : d > max_depth ? max_depth : d);
    }
    /// The bytes [spare_offset(cores), flag_offset) of every MPB, which
    /// the channels leave alone: the platform's on-chip memory for MESH's
    /// control blocks (min_spare_bytes at 2 and at 48 cores, up to 3.8 KB
    /// in between).
    static constexpr std::size_t spare_offset(core_index cores) noexcept {
        return std::size_t(cores) * slots_per_sender(cores) * slot_bytes;
    }
    static_assert(slot_bytes % line_bytes == 0, "the spare bytes start on a line");

    /// Room for a message to `dest`, or nullptr while its slots are all
    /// busy (their messages not yet taken).
    /// Where try_acquire's callers compose a message: the bytes stand for
    /// the slot in the receiver's MPB, whose lines publish() writes.
    std::span<const std::byte> staging() const noexcept { return staging_; }

    std::byte* try_acquire(core_index dest) {
        if (sent_[dest] - acked_[dest] >= depth_) {
            if (o_.invalidate) hw_.cl1invmb();
            std::uint32_t ack = 0;
            hw_.mpb_load(hw_.core(), ack_offset + dest * sizeof ack, &ack, sizeof ack);
            acked_[dest] = ack;
            if (sent_[dest] - ack >= depth_) return nullptr;
        }
        return staging_.data();
    }

    /// Hand the first `length` bytes of the acquired room to `dest`.
    void publish(core_index dest, std::size_t length) {
        const std::size_t slot = slot_offset(hw_.core(), sent_[dest] % depth_);
        const std::size_t lines = (length + line_bytes - 1) / line_bytes;
        hw_.mpb_store(dest, slot + line_bytes, staging_.data(), lines * line_bytes); // whole lines
        header h{++sent_[dest], std::uint32_t(length), {}};
        hw_.mpb_store(dest, slot, &h, sizeof h); // whole: pushes the payload out before it
        const auto flag = std::uint8_t(h.seq);
        hw_.mpb_store(dest, flag_offset + hw_.core(), &flag, 1);
        hw_.flush_wcb(); // a partial line: out now, or the receiver never looks at the slot
    }

    /// Run `handler(bytes, length, source)` on each newly arrived message,
    /// one at a time and copied out of the MPB first (a handler may poll
    /// again: the next message of a source is then taken there, in order);
    /// returns how many.
    template <class Handler>
    std::size_t poll(Handler&& handler) {
        if (o_.invalidate) hw_.cl1invmb();
        const core_index me = hw_.core();
        std::array<std::uint8_t, flag_bytes> flags;
        hw_.mpb_load(me, flag_offset, flags.data(), hw_.core_count());
        std::size_t ran = 0;
        for (core_index src = 0; src < hw_.core_count(); ++src) {
            if (flags[src] == std::uint8_t(received_[src])) continue; // nothing new published by src
            for (std::uint32_t taken = 0; taken < depth_; ++taken) {
                const std::uint32_t next = received_[src] + 1;
                const std::size_t slot = slot_offset(src, received_[src] % depth_);
                header h;
                hw_.mpb_load(me, slot, &h, sizeof h);
                if (h.seq != next) break; // an older message's slot: nothing new from src
                received_[src] = next;
                const std::size_t length = h.length < payload_bytes ? h.length : payload_bytes; // never past the slot
                std::array<std::byte, payload_bytes> copy;
                hw_.mpb_load(me, slot + line_bytes, copy.data(), length);
                // Its slot is free again: tell the sender, in its MPB.
                hw_.mpb_store(src, ack_offset + std::size_t(me) * sizeof next, &next, sizeof next);
                if (o_.flush_acks) hw_.flush_wcb();
                handler(copy.data(), length, src);
                ++ran;
            }
        }
        return ran;
    }

private:
    struct header {
        std::uint32_t seq, length;
        std::array<std::uint32_t, line_bytes / 4 - 2> pad; // a whole line: it leaves the WCB at once
    };
    static_assert(sizeof(header) == line_bytes);

    std::size_t slot_offset(core_index sender, std::uint32_t k) const noexcept {
        return (std::size_t(sender) * depth_ + k) * slot_bytes;
    }

    H& hw_;
    mpb_channel_options o_;
    std::uint32_t depth_;
    std::array<std::uint32_t, max_cores> sent_{}, acked_{}, received_{};
    alignas(line_bytes) std::array<std::byte, payload_bytes> staging_{};
};

} // namespace tacomesh::scc
