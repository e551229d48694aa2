// Device side of the per-warp event buffer (layout: trace_format.h).
//
// Every rung of the ladder is a template on `bool Traced`. It holds one
// ws::trace::WarpTrace<Traced> per warp and one CtaTrace<Traced> per CTA. For
// Traced == false every member is an empty inline function guarded by
// `if constexpr`, so the untraced build contains no trace code at all.
//
// Cost model (Traced == true): the warp's event pointer and count live in registers; an
// event is one clock64 read, a little packing and one st.shared from lane 0 into a per-warp
// staging ring (kTraceSmemPerWarp bytes per warp, given by the kernel); every 32 events
// lane 0 issues one TMA bulk copy to the buffer. No extra
// synchronisation: only the CTA end record waits for the CTA's other warps (one
// __syncthreads, once, at the end). All calls must be warp-uniform (all 32 lanes).
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
// Shared memory a traced kernel gives each warp for staging its events (2 x 32 events).
inline constexpr std::uint32_t kTraceSmemPerWarp = 1024;

#ifdef __CUDACC__
__device__ __forceinline__ std::uint64_t readClock64()
{
#ifdef WS_TRACE_EXPERIMENT_NO_CLOCK  // experiment only: no clock read
    return 0x12345ull;
#else
    std::uint64_t c;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
    return c;
#endif
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
    __device__ __forceinline__ void begin(void*, std::uint32_t, std::uint8_t, std::uint8_t, std::uint8_t, void*) {}
    __device__ __forceinline__ void event(std::uint8_t, std::int32_t = -1, std::uint8_t = kNoSlot, std::int16_t = 0)
    {
    }
    __device__ __forceinline__ std::uint64_t now() { return 0; }
    __device__ __forceinline__ void eventAt(std::uint64_t, std::uint8_t, std::int32_t = -1, std::uint8_t = kNoSlot,
                                            std::int16_t = 0)
    {
    }
    __device__ __forceinline__ void end() {}
};

template <>
struct WarpTrace<true> {
    // Lane 0 writes each event (16 bytes) into the warp's 1 KB shared-memory staging ring
    // (64 events, two halves of 32); when a half is full, lane 0 hands it to the TMA engine
    // (cp.async.bulk shared -> global, one 512-byte copy per 32 events). So an event costs a
    // clock read, a little packing and one st.shared; the warp never stores to global memory
    // in its loop. (Global stores from the warp made its next mbarrier arrive wait for them
    // and cost the pingpong rung 40-50%: device log.) Events past the capacity are not copied;
    // the count keeps counting, so an overflow is visible to the recorder.
    TraceEvent* ev = nullptr;         // this warp's event array (lane 0)
    WarpRegionHeader* hdr = nullptr;  // lane 0 only
    std::uint32_t count = 0;          // events so far (warp-uniform)
    std::uint32_t cap = 0;            // capacity (lane 0); 0 when tracing is off
    std::uint32_t stage = 0;          // shared address of the warp's staging ring
    bool writer = false;              // lane 0 of a traced warp

    // Declares the warp's role and points it at its region. Call once per warp, early, from
    // all 32 lanes, with warp-uniform arguments. `staging`: kTraceSmemPerWarp bytes of shared
    // memory owned by this warp, 16-byte aligned.
    __device__ __forceinline__ void begin(void* buffer, std::uint32_t warpInCta, std::uint8_t role,
                                          std::uint8_t warpgroup, std::uint8_t roleIndex, void* staging)
    {
        stage = static_cast<std::uint32_t>(__cvta_generic_to_shared(staging));
        if (buffer == nullptr || (threadIdx.x & 31u) != 0) return;
        const auto* h = static_cast<const TraceBufferHeader*>(buffer);
        if (!headerMatches(h)) return;
        const std::uint32_t perWarp = h->eventsPerWarp;
        // == warpRegionOffset(...) of trace_format.h (spelled out: that one is host constexpr)
        const std::uint64_t off = sizeof(TraceBufferHeader) + std::uint64_t(h->numCtas) * sizeof(CtaRecord)
            + (std::uint64_t(linearCta()) * h->warpsPerCta + warpInCta)
                * (sizeof(WarpRegionHeader) + std::uint64_t(perWarp) * sizeof(TraceEvent));
        hdr = reinterpret_cast<WarpRegionHeader*>(static_cast<char*>(buffer) + off);
        ev = reinterpret_cast<TraceEvent*>(hdr + 1);
        cap = perWarp;
        writer = true;
        // role, warpgroup, roleIndex, flags (bit 0: role declared) in the header's second word
        const std::uint32_t w1 = std::uint32_t(role) | (std::uint32_t(warpgroup) << 8)
            | (std::uint32_t(roleIndex) << 16) | (1u << 24);
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(hdr), "r"(0u), "r"(w1), "r"(0u), "r"(0u)
                     : "memory");
    }

    // The warp enters phase `kind` (or passes a marker) at this moment. Warp-uniform call.
    __device__ __forceinline__ void event(std::uint8_t kind, std::int32_t kstep = -1, std::uint8_t slot = kNoSlot,
                                          std::int16_t aux = 0)
    {
        eventAt(readClock64(), kind, kstep, slot, aux);
    }

    // Split form: take the time with now() where the phase begins, record it later.
    __device__ __forceinline__ std::uint64_t now() { return readClock64(); }

    __device__ __forceinline__ void eventAt(std::uint64_t c, std::uint8_t kind, std::int32_t kstep = -1,
                                            std::uint8_t slot = kNoSlot, std::int16_t aux = 0)
    {
        const std::uint32_t w3 = std::uint32_t(std::uint16_t(aux)) | (std::uint32_t(slot) << 16)
            | (std::uint32_t(kind) << 24);
        const std::uint32_t at = stage + ((count & 63u) << 4);
        asm volatile(
            "{\n.reg .pred p;\n"
            "setp.ne.u32 p, %5, 0;\n"
            "@p st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n}" ::"r"(at),
            "r"(std::uint32_t(c)), "r"(std::uint32_t(c >> 32)), "r"(std::uint32_t(kstep)), "r"(w3),
            "r"(std::uint32_t(writer))
            : "memory");
        ++count;
        if ((count & 31u) == 0) flush(32);
    }

    // Lane 0 copies the staged half holding events [base, base + n) to global memory.
    __device__ __forceinline__ void flush(std::uint32_t n)
    {
        if (!writer) return;
        const std::uint32_t base = (count - 1u) & ~31u;  // index of the batch's first event
        const std::uint32_t half = stage + (base & 32u) * 16u;
        const std::uint32_t room = cap > base ? cap - base : 0u;
        const std::uint32_t m = n < room ? n : room;
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // st.shared -> visible to the copy
#ifndef WS_TRACE_EXPERIMENT_NO_STORE
        if (m > 0)
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(ev + base),
                         "r"(half), "r"(m * 16u)
                         : "memory");
#endif
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        // the other half is written next: its copy (issued 32 events ago) must be done reading
        asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
    }

    // Last event (kEventEnd), the partial batch, completion of the copies, and the final
    // attempted-event count (lane 0).
    __device__ __forceinline__ void end()
    {
        event(kEventEnd);
        if ((count & 31u) != 0) flush(count & 31u);
        if (writer) {
            asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
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
