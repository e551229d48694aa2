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

#include <cstdint>

namespace ws::trace {

inline constexpr std::uint32_t kMagic = 0x57535452u;   // "WSTR"
inline constexpr std::uint32_t kFormatVersion = 1;

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

inline constexpr std::uint64_t bufferBytes(std::uint32_t numCtas, std::uint32_t warpsPerCta,
                                           std::uint32_t eventsPerWarp)
{
    return sizeof(TraceBufferHeader) + std::uint64_t(numCtas) * sizeof(CtaRecord)
        + std::uint64_t(numCtas) * warpsPerCta
        * (sizeof(WarpRegionHeader) + std::uint64_t(eventsPerWarp) * sizeof(TraceEvent));
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
