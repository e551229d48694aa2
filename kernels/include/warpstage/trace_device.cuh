// Device side of the per-warp event buffer (layout: trace_format.h).
//
// Every rung of the ladder is a template on `bool Traced`. It holds one
// ws::trace::WarpTrace<Traced> per warp and one CtaTrace<Traced> per CTA. For
// Traced == false every member is an empty inline function guarded by
// `if constexpr`, so the untraced build contains no trace code at all.
//
// Cost model (Traced == true): the warp's event pointer and its event count live in
// registers; an event is one clock64 read and one 16-byte st.global from lane 0,
// predicated on count < capacity. No extra synchronisation: only the CTA end
// record waits for the CTA's other warps (one __syncthreads, once, at the end).
//
// Events mark the warp ENTERING a phase (kind = ws::IntervalKind value); the last
// event of each warp is kEventEnd, after which the warp writes its final count
// (attempted events, which may exceed the capacity: overflow) into its region header.
#pragma once

#include <cstdint>

#include "warpstage/trace_format.h"

namespace ws::trace {

// ws::IntervalKind / ws::WarpRole numeric values (core/include/warpstage/model.h), spelled
// out here so device code does not include the core model header.
namespace kind {
inline constexpr std::uint8_t Other = 0, Setup = 1, WaitSlot = 2, IssueLoad = 3, WaitData = 4, MmaIssue = 5,
                              MmaWait = 6, Release = 7, Epilogue = 8, Store = 9, Load = 10, Sync = 11,
                              Compute = 12, WaitOrder = 13;
}
namespace role {
inline constexpr std::uint8_t Unknown = 0, Producer = 1, Consumer = 2, Epilogue = 3, Worker = 4, Idle = 5;
}
inline constexpr std::uint8_t kNoSlot = 0xFF;

#ifdef __CUDACC__
__device__ __forceinline__ std::uint64_t readClock64()
{
    std::uint64_t c;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
    return c;
}
__device__ __forceinline__ std::uint64_t readGlobalTimer()
{
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ std::uint32_t readSmId()
{
    std::uint32_t s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

// Linear CTA index, as the decoder indexes CtaRecords.
__device__ __forceinline__ std::uint32_t linearCta()
{
    return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}

// True when the host-filled header matches this launch (else tracing is switched off for
// the launch rather than writing outside the buffer).
__device__ __forceinline__ bool headerMatches(const TraceBufferHeader* h)
{
    const std::uint32_t ctas = gridDim.x * gridDim.y * gridDim.z;
    const std::uint32_t warps = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
    return h->magic == kMagic && h->version == kFormatVersion && h->numCtas == ctas && h->warpsPerCta == warps;
}

template <bool Traced>
struct WarpTrace {
    __device__ __forceinline__ void begin(void*, std::uint32_t, std::uint8_t, std::uint8_t, std::uint8_t) {}
    __device__ __forceinline__ void event(std::uint8_t, std::int32_t = -1, std::uint8_t = kNoSlot, std::int16_t = 0)
    {
    }
    __device__ __forceinline__ void end() {}
};

template <>
struct WarpTrace<true> {
    TraceEvent* ev = nullptr;     // this warp's event array (null: tracing off, or not lane 0)
    WarpRegionHeader* hdr = nullptr;
    std::uint32_t count = 0;
    std::uint32_t cap = 0;

    // Declares the warp's role and points it at its region. Call once per warp, early,
    // with warp-uniform arguments (all lanes may call; only lane 0 keeps a pointer).
    __device__ __forceinline__ void begin(void* buffer, std::uint32_t warpInCta, std::uint8_t role,
                                          std::uint8_t warpgroup, std::uint8_t roleIndex)
    {
        if (buffer == nullptr || (threadIdx.x & 31u) != 0) return;
        const auto* h = static_cast<const TraceBufferHeader*>(buffer);
        if (!headerMatches(h)) return;
        cap = h->eventsPerWarp;
        // == warpRegionOffset(...) of trace_format.h (spelled out: that one is host constexpr)
        const std::uint64_t off = sizeof(TraceBufferHeader) + std::uint64_t(h->numCtas) * sizeof(CtaRecord)
            + (std::uint64_t(linearCta()) * h->warpsPerCta + warpInCta)
                * (sizeof(WarpRegionHeader) + std::uint64_t(cap) * sizeof(TraceEvent));
        hdr = reinterpret_cast<WarpRegionHeader*>(static_cast<char*>(buffer) + off);
        ev = reinterpret_cast<TraceEvent*>(hdr + 1);
        // role, warpgroup, roleIndex, flags (bit 0: role declared) in the header's second word
        const std::uint32_t w1 = std::uint32_t(role) | (std::uint32_t(warpgroup) << 8)
            | (std::uint32_t(roleIndex) << 16) | (1u << 24);
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(hdr), "r"(0u), "r"(w1), "r"(0u), "r"(0u)
                     : "memory");
    }

    // The warp enters phase `kind` (or passes a marker) at this moment.
    __device__ __forceinline__ void event(std::uint8_t kind, std::int32_t kstep = -1, std::uint8_t slot = kNoSlot,
                                          std::int16_t aux = 0)
    {
        if (ev != nullptr) {
            if (count < cap) {
                const std::uint64_t c = readClock64();
                const std::uint32_t w3 = std::uint32_t(std::uint16_t(aux)) | (std::uint32_t(slot) << 16)
                    | (std::uint32_t(kind) << 24);
                asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(ev + count),
                             "r"(std::uint32_t(c)), "r"(std::uint32_t(c >> 32)), "r"(std::uint32_t(kstep)),
                             "r"(w3));
            }
            ++count;
        }
    }

    // Last event (kEventEnd) and the final attempted-event count.
    __device__ __forceinline__ void end()
    {
        if (ev != nullptr) {
            event(kEventEnd);
            asm volatile("st.global.u32 [%0], %1;" ::"l"(&hdr->count), "r"(count) : "memory");
        }
    }
};

// The CTA record: one thread writes the start pair and %smid; the end pair is written after
// a CTA-wide barrier so it follows every warp's last event.
template <bool Traced>
struct CtaTrace {
    __device__ __forceinline__ void begin(void*) {}
    __device__ __forceinline__ void end(void*) {}
};

template <>
struct CtaTrace<true> {
    __device__ __forceinline__ CtaRecord* record(void* buffer)
    {
        auto* h = static_cast<TraceBufferHeader*>(buffer);
        return reinterpret_cast<CtaRecord*>(h + 1) + linearCta();
    }
    __device__ __forceinline__ void begin(void* buffer)
    {
        if (buffer == nullptr || threadIdx.x != 0) return;
        if (!headerMatches(static_cast<const TraceBufferHeader*>(buffer))) return;
        const std::uint64_t g = readGlobalTimer();
        const std::uint64_t c = readClock64();
        CtaRecord* r = record(buffer);
        r->globaltimerStart = g;
        r->clockStart = c;
        r->smId = readSmId();
        r->flags = 1u;
    }
    // Every thread of the CTA must call this (it contains __syncthreads()).
    __device__ __forceinline__ void end(void* buffer)
    {
        if (buffer == nullptr) return;
        __syncthreads();
        if (threadIdx.x != 0) return;
        if (!headerMatches(static_cast<const TraceBufferHeader*>(buffer))) return;
        const std::uint64_t g = readGlobalTimer();
        const std::uint64_t c = readClock64();
        CtaRecord* r = record(buffer);
        r->globaltimerEnd = g;
        r->clockEnd = c;
        r->flags = 3u;
    }
};
#endif  // __CUDACC__

}  // namespace ws::trace
