// Layout of the per-warp event buffer that traced kernels fill on the device
// and the recorder decodes on the host. Plain C++ (no CUDA, no Qt): included
// by the device header (trace_device.cuh) and by the host-side decoder.
//
// Buffer (one per traced launch, in global memory, little-endian):
//
//   TraceBufferHeader                      (64 bytes)
//   CtaRecord[numCtas]                     (64 bytes each, indexed by linear blockIdx)
//   for each CTA, for each warp w < warpsPerCta:
//       WarpRegionHeader                   (16 bytes)
//       TraceEvent[eventsPerWarp]          (16 bytes each)
//
// Lane 0 of each warp appends events to its own region. An event marks the
// moment the warp ENTERS a phase (IntervalKind value in `kind`); the phase
// lasts until the warp's next event. The last event of a warp is kEventEnd.
// Marker events (kind >= kMarkerBase) do not start a phase.
//
// Overflow: a warp always increments `count` but writes only while
// count < eventsPerWarp. The recorder reports count > eventsPerWarp as an
// overflow (the run is stored as failed); nothing is written out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ws::trace {

inline constexpr std::uint32_t kMagic = 0x57535452u;   // "WSTR"
// The version a kernel compiled against this header writes (Control::version in trace.cuh; the host copies the version
// it accepted into TraceBufferHeader::version, and the device writes only when the two agree). Version history:
//   1  plain events only (sessions 1-13);
//   2  adds the packed records kEventKStep4 and kEventLoad2 (session 14);
//   3  adds kEventPair, any two phase events of one k-step in one record (session 16).
// The rule: a change that a reader of the older version would misread or silently skip (a new record kind, a field
// meaning) bumps kFormatVersion. Readers accept every version from kOldestFormatVersion to kFormatVersion (a recorder
// traces a kernel built against an older header, and decodes its buffer by that version's rules), refuse a newer one
// with a sentence, and treat a marker kind that the buffer's version does not define as a fault of the buffer, never
// as something to skip (knownMarker below).
inline constexpr std::uint32_t kFormatVersion = 3;
inline constexpr std::uint32_t kOldestFormatVersion = 1;
inline constexpr bool isReadableVersion(std::uint32_t v) { return v >= kOldestFormatVersion && v <= kFormatVersion; }

// Event kinds 0..63 are ws::IntervalKind values (a phase begins); 64..239 are user-named phases
// (ws::kUserPhaseBase + i: the i-th name of the kernel's WARPSTAGE_PHASE_NAMES, trace.cuh).
inline constexpr std::uint8_t kMarkerBase = 0xF0;
inline constexpr std::uint8_t kEventEnd = 0xF0;        // warp finished; closes the last phase
inline constexpr std::uint8_t kEventTileBegin = 0xF1;  // marker: warp starts an output tile;
                                                       //   kstep = tileM, aux = tileN
inline constexpr std::uint8_t kEventTileEnd = 0xF2;    // marker: warp finished the current tile
inline constexpr std::uint8_t kEventLoadReady = 0xF3;  // marker: consumer observed k-step data ready
                                                       //   (emitted when the full-barrier wait returns;
                                                       //   the recorder can also use the end of WaitData)
// Not an event but a record of four (session 14, the GEMM ladder's ping-pong body): one consumer k-step's MmaWait and
// Release of k-step kstep - lag, then WaitData and MmaIssue of k-step kstep, in one 16-byte TraceEvent whose
// fields mean:
//   clock  bits 0-31: the low 32 bits of MmaWait's clock64; bits 32-47: Release - MmaWait, bits 48-63:
//          WaitData - Release (cycles); MmaWait's full clock is the warp's previous event's plus the low words'
//          difference mod 2^32 (a record never opens a warp's region: Setup comes first);
//   kstep  WaitData / MmaIssue's k-step;  aux (as uint16): MmaIssue - WaitData (cycles);
//   slot   bits 0-3: the ring's stages S (an event's slot = its kstep % S), bits 4-7: lag.
// A warp writes one only when the three gaps fit 16 bits (else the four events); decoders expand it into the four
// events it stands for (forEachEvent below) before anything else reads them, so it never reaches a model.
inline constexpr std::uint8_t kEventKStep4 = 0xF4;
// A record of two (session 14, the ping-pong body's producer): WaitSlot then IssueLoad of k-step kstep. clock bits 0-31:
// the low 32 bits of WaitSlot's clock64 (its full clock as kEventKStep4's first), bits 32-63: IssueLoad - WaitSlot
// (cycles); slot bits 0-3: the ring's stages S (both events' slot = kstep % S); aux 0.
inline constexpr std::uint8_t kEventLoad2 = 0xF5;
// A record of two phase events of one k-step, any kinds (format version 3, session 16: the lce consumers' first
// k-steps of a tile, their drain, WaitOrder + Epilogue). clock bits 0-31: the low 32 bits of the first event's clock64
// (its full clock as kEventKStep4's first), bits 32-63: the second's - the first's (cycles); kstep: both events';
// aux (as uint16) bits 0-7: the first event's kind, bits 8-15: the second's (phase kinds, < kMarkerBase); slot bits 0-3:
// the ring's stages S (both slots kstep % S; 0: no slot, 0xFF).
inline constexpr std::uint8_t kEventPair = 0xF6;
// A record that stands for several events (expanded by forEachEvent).
inline constexpr bool isPackedRecord(std::uint8_t kind)
{
    return kind == kEventKStep4 || kind == kEventLoad2 || kind == kEventPair;
}
// True when `kind` (>= kMarkerBase) is a marker or record that buffers of format `version` may hold.
inline constexpr bool knownMarker(std::uint8_t kind, std::uint32_t version)
{
    return kind <= kEventLoadReady || (version >= 2 && (kind == kEventKStep4 || kind == kEventLoad2))
        || (version >= 3 && kind == kEventPair);
}

struct TraceBufferHeader {
    std::uint32_t magic;          // kMagic, written by the host before launch
    std::uint32_t version;        // kFormatVersion
    std::uint32_t numCtas;        // CTA records that follow (== grid size)
    std::uint32_t warpsPerCta;    // warp regions per CTA
    std::uint32_t eventsPerWarp;  // capacity of each warp region
    std::uint32_t stages;         // pipeline slots (S) of the kernel, 0 if none
    std::uint32_t bytesPerKStep;  // bytes one k-step's load brings into shared memory
    std::uint32_t reserved[9];
};
static_assert(sizeof(TraceBufferHeader) == 64);

struct CtaRecord {
    std::uint64_t globaltimerStart;  // %globaltimer (ns) at CTA start
    std::uint64_t clockStart;        // clock64 (SM cycles) read right after it
    std::uint64_t globaltimerEnd;    // %globaltimer at CTA end
    std::uint64_t clockEnd;          // clock64 right after it
    std::uint32_t smId;              // %smid
    std::uint32_t flags;             // bit 0: start written, bit 1: end written
    std::uint32_t reserved[6];
};
static_assert(sizeof(CtaRecord) == 64);

struct WarpRegionHeader {
    std::uint32_t count;          // events attempted (may exceed eventsPerWarp: overflow)
    std::uint8_t role;            // ws::WarpRole value
    std::uint8_t warpgroup;       // warp index / 4 (or the kernel's own grouping)
    std::uint8_t roleIndex;       // e.g. consumer warpgroup 0/1 for display names
    std::uint8_t flags;           // bit 0: role declared, bit 1: userRole names the role
    std::uint32_t userRole;       // index into the kernel's WARPSTAGE_ROLE_NAMES (if flags bit 1)
    std::uint32_t reserved;
};
static_assert(sizeof(WarpRegionHeader) == 16);

struct TraceEvent {
    std::uint64_t clock;          // clock64 at the event
    std::int32_t kstep;           // CTA-wide running k-step counter (or tileM for TileBegin), -1 if none
    std::int16_t aux;             // tileN for TileBegin, else 0
    std::uint8_t slot;            // pipeline slot, 0xFF if none
    std::uint8_t kind;            // IntervalKind value or a marker
};
static_assert(sizeof(TraceEvent) == 16);

// Calls f(const TraceEvent&) for every event of a warp's n stored records, in order, with each kEventKStep4 record
// expanded into its four events (kinds WaitData = 4, MmaIssue = 5, MmaWait = 6, Release = 7: ws::IntervalKind), each
// kEventLoad2 record into its two (WaitSlot = 2, IssueLoad = 3) and each kEventPair into its two (its kinds).
// Returns the number of events passed to f. Every reader of a region's records goes through it.
template <class F>
inline std::uint32_t forEachEvent(const TraceEvent* rec, std::uint32_t n, F&& f)
{
    std::uint32_t out = 0;
    std::uint64_t prev = 0;  // the last event's clock
    for (std::uint32_t i = 0; i < n; ++i) {
        const TraceEvent& r = rec[i];
        if (!isPackedRecord(r.kind)) {
            f(r);
            prev = r.clock;
            ++out;
            continue;
        }
        const std::uint32_t lo = std::uint32_t(r.clock);
        const std::uint64_t c0 = prev + std::uint32_t(lo - std::uint32_t(prev));
        const std::uint32_t stages = r.slot & 0xFu;
        auto slotOf = [stages](std::int32_t k) {
            return stages == 0 || k < 0 ? std::uint8_t(0xFF) : std::uint8_t(std::uint32_t(k) % stages);
        };
        if (r.kind == kEventPair) {
            const std::uint8_t slot = slotOf(r.kstep);
            const std::uint64_t c1 = c0 + std::uint32_t(r.clock >> 32);  // (the gap: the high word)
            const std::uint16_t kinds = std::uint16_t(r.aux);
            const TraceEvent e[2] = {{c0, r.kstep, 0, slot, std::uint8_t(kinds & 0xFFu)},
                                     {c1, r.kstep, 0, slot, std::uint8_t(kinds >> 8)}};
            for (const TraceEvent& x : e) f(x);
            prev = c1;
            out += 2;
            continue;
        }
        if (r.kind == kEventLoad2) {
            const std::uint8_t slot = slotOf(r.kstep);
            const std::uint64_t c1 = c0 + (r.clock >> 32);
            const TraceEvent e[2] = {{c0, r.kstep, 0, slot, 2}, {c1, r.kstep, 0, slot, 3}};  // WaitSlot, IssueLoad
            for (const TraceEvent& x : e) f(x);
            prev = c1;
            out += 2;
            continue;
        }
        const std::uint64_t c1 = c0 + ((r.clock >> 32) & 0xFFFFu);
        const std::uint64_t c2 = c1 + (r.clock >> 48);
        const std::uint64_t c3 = c2 + std::uint16_t(r.aux);
        const std::uint32_t lag = r.slot >> 4;
        const std::int32_t k0 = r.kstep - std::int32_t(lag);
        const TraceEvent e[4] = {{c0, k0, 0, slotOf(k0), 6}, {c1, k0, 0, slotOf(k0), 7},
                                 {c2, r.kstep, 0, slotOf(r.kstep), 4}, {c3, r.kstep, 0, slotOf(r.kstep), 5}};
        for (const TraceEvent& x : e) f(x);
        prev = c3;
        out += 4;
    }
    return out;
}

inline constexpr std::uint64_t bufferBytes(std::uint32_t numCtas, std::uint32_t warpsPerCta,
                                           std::uint32_t eventsPerWarp)
{
    return sizeof(TraceBufferHeader) + std::uint64_t(numCtas) * sizeof(CtaRecord)
        + std::uint64_t(numCtas) * warpsPerCta
        * (sizeof(WarpRegionHeader) + std::uint64_t(eventsPerWarp) * sizeof(TraceEvent));
}

// What a recorder zeroes before each traced launch (session 16): the CTA records (one block) and each warp region's
// header (headerRows rows of headerBytes, headerPitch apart). A finished warp needs no more: it writes its region's
// header when it begins and counts every event it stores, and every reader reads only the first min(count,
// eventsPerWarp) events of a region, all written by the launch; a region whose warp never began keeps count 0. The
// event arrays are most of the buffer (the ladder sizes them for 4 events per k-step and warp), and zeroing them left
// that much of the L2 dirty for the traced launch to write back: 2-5 points of stream-K's tracing cost at its short and
// DRAM-bound shapes on the H200 (docs/kernel-notes/tracing-cost-2.md, session 16).
// A warp that began but never ended (count 0: no end() on some path) is read up to its first all-zero event (the
// decoder's scan), so the event arrays must be zero where no launch wrote: a recorder that reuses a buffer zeroes it
// whole once when it allocates it and, after reading each traced launch back, the events that launch wrote
// (writtenEvents below: every region's first n events, one 2-D memset at headerOffset + headerBytes) -- off the traced
// launch's timing, and only what the trace itself dirtied.
struct ClearRanges {
    std::uint64_t ctaOffset = 0, ctaBytes = 0;  // the CtaRecord array
    std::uint64_t headerOffset = 0;             // the first warp region's header
    std::uint64_t headerPitch = 0;              // from one region's header to the next
    std::uint64_t headerBytes = 0;              // sizeof(WarpRegionHeader)
    std::uint64_t headerRows = 0;               // numCtas x warpsPerCta
};
inline constexpr ClearRanges clearRanges(std::uint32_t numCtas, std::uint32_t warpsPerCta, std::uint32_t eventsPerWarp)
{
    ClearRanges r;
    r.ctaOffset = sizeof(TraceBufferHeader);
    r.ctaBytes = std::uint64_t(numCtas) * sizeof(CtaRecord);
    r.headerOffset = r.ctaOffset + r.ctaBytes;
    r.headerPitch = sizeof(WarpRegionHeader) + std::uint64_t(eventsPerWarp) * sizeof(TraceEvent);
    r.headerBytes = sizeof(WarpRegionHeader);
    r.headerRows = std::uint64_t(numCtas) * warpsPerCta;
    return r;
}

// The events of a warp region whose count is 0 (a warp that began but never ended): those before its first event with
// clock, kind, kstep and slot all 0 (the recorders keep unwritten events zero), at most eventsPerWarp. `events`: the
// region's first event in a read-back buffer. The decoder reads an unfinished warp by it, and writtenEvents below.
inline std::uint32_t unendedEvents(const void* events, std::uint32_t eventsPerWarp)
{
    const auto* p = static_cast<const unsigned char*>(events);
    std::uint32_t n = 0;
    for (; n < eventsPerWarp; ++n) {
        TraceEvent e;
        std::memcpy(&e, p + std::size_t(n) * sizeof(TraceEvent), sizeof e);
        if (e.clock == 0 && e.kind == 0 && e.kstep == 0 && e.slot == 0) break;
    }
    return n;
}

// The most events any warp region of a read-back buffer (`bytes` long, `numCtas` x `warpsPerCta` regions of
// `eventsPerWarp`) holds: its count, or for a region with count 0 unendedEvents (as the decoder reads an unfinished
// warp), at most eventsPerWarp. What a recorder zeroes after the launch (ClearRanges above).
inline std::uint32_t writtenEvents(const void* buffer, std::uint64_t bytes, std::uint32_t numCtas, std::uint32_t warpsPerCta,
                                   std::uint32_t eventsPerWarp)
{
    const auto* base = static_cast<const unsigned char*>(buffer);
    const ClearRanges r = clearRanges(numCtas, warpsPerCta, eventsPerWarp);
    std::uint32_t most = 0;
    for (std::uint64_t row = 0; row < r.headerRows; ++row) {
        const std::uint64_t off = r.headerOffset + row * r.headerPitch;
        if (off + r.headerPitch > bytes) break;
        std::uint32_t count = 0;
        for (int b = 0; b < 4; ++b) count |= std::uint32_t(base[off + b]) << (8 * b);  // WarpRegionHeader::count
        const std::uint32_t n = count == 0 ? unendedEvents(base + off + r.headerBytes, eventsPerWarp)
                                           : count < eventsPerWarp ? count : eventsPerWarp;
        most = n > most ? n : most;
    }
    return most;
}

inline constexpr std::uint64_t warpRegionOffset(std::uint32_t numCtas, std::uint32_t warpsPerCta,
                                                std::uint32_t eventsPerWarp, std::uint32_t cta,
                                                std::uint32_t warp)
{
    return sizeof(TraceBufferHeader) + std::uint64_t(numCtas) * sizeof(CtaRecord)
        + (std::uint64_t(cta) * warpsPerCta + warp)
        * (sizeof(WarpRegionHeader) + std::uint64_t(eventsPerWarp) * sizeof(TraceEvent));
}

}  // namespace ws::trace
