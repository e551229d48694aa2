// <warpstage/trace_relay.cuh>: the relay engine -- the staged engine without the flush on the warps that record.
//
// StagedWarp (trace.cuh) makes each recording warp copy its own full staging half to global memory: a
// proxy fence (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC), a bulk copy and a wait for the copy's reads, every 32 events
// of every warp. On the GEMM ladder's ping-pong body that flush is the whole large-shape tracing cost (session 8,
// s8-tracecost: no flush, 8192^3 +3.7 % -> +0.9 %). Here the recording warps (the "sources", up to 12) only
// st.shared their events into the same 1 KB rings and hand a full half over with one mbarrier arrive; one other
// warp of the CTA (the relay, a warp that would otherwise idle) copies it with ld.shared / st.global (the generic
// proxy: no proxy fence anywhere) and frees the half with an arrive of its own. A source waits only when it is
// about to write a half the relay has not copied yet (32 events after handing it over).
//
// The buffer layout (trace_format.h) does not change: the relay writes the same events into the same regions
// and each source's region header (its role word, which the source leaves in shared memory, and its final count).
// So a source never touches global memory: no load of the buffer header at its start (a global-memory round trip
// before the producer's first TMA load, on every CTA), no store at its end. The relay checks the header; when it
// does not match the launch, the relay still frees every half (the sources cannot tell) and writes nothing.
//
// Measured (H200, session 9, docs/benchmarks.md): cheaper than StagedWarp at large shapes (streamk 8192^3 +5.4 ->
// +3.4 %), dearer at small ones (1024^3 pingpong +8.9 -> +14.8 %); the ladder builds it only with
// -DWS_PP_TRACE_RELAY=1 (an experiment, off by default).
//
// Use (the ladder: pingpong_body.cuh, Traced builds with WS_PP_TRACE_RELAY=1):
//   RelayShared* rs = ...;                        // sizeof(RelayShared) <= 512 bytes of shared memory, 8-byte aligned
//   if (one thread) rs->init();                   // before a CTA (cluster) barrier; the ladder: the relay's lane 0
//   source warps: RelayedWarp w; w.begin(buffer, warp, role, wg, idx, staging); w.attach(rs, warp);
//                 events as with StagedWarp; w.end();
//   relay warp:   the same begin (its own events: fewer than 32, in the first half of its ring), then
//                 relayRun(buffer, rs, sourceMask, stage0) (all 32 lanes), then w.endRelay() instead of end().
// Source s is warp s; warp w's staging ring is at stage0 + w * kTraceSmemPerWarp (stage0: warp 0's ring).
#pragma once

#include <cstdint>

#include "warpstage/trace.cuh"

#ifndef WS_TRACE_RELAY_SLEEP_NS
#define WS_TRACE_RELAY_SLEEP_NS 64  // the relay's pause between polls when no half is ready
#endif

namespace ws::trace {

inline constexpr int kRelayMaxSources = 12;  // sources are warps 0..11 of the CTA (state lanes 16..27)

// Shared-memory state of one relay: per source and half, "full" (the source handed the half over) and "freed" (the
// relay copied it), and the source's final event count (~0u until its end()).
struct RelayShared {
    std::uint64_t full[kRelayMaxSources][2];
    std::uint64_t freed[kRelayMaxSources][2];
    std::uint32_t total[kRelayMaxSources];
    std::uint32_t role[kRelayMaxSources];   // the source's WarpRegionHeader word 1 (roleWord)
    std::uint8_t userRole[kRelayMaxSources];  // word 2 (0 when no user role)
#ifdef __CUDACC__
    // One thread, before a CTA barrier.
    __device__ __forceinline__ void init()
    {
        for (int s = 0; s < kRelayMaxSources; ++s) {
            for (int h = 0; h < 2; ++h) {
                asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&full[s][h])) : "memory");
                asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&freed[s][h])) : "memory");
            }
            total[s] = ~0u;
        }
    }
    static __device__ __forceinline__ std::uint32_t smem(const void* p)
    {
        return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
    }
#endif
};
static_assert(sizeof(RelayShared) <= 512, "fits in half of the relay warp's staging ring");

#ifdef __CUDACC__
namespace relay_detail {
__device__ __forceinline__ void arrive(std::uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ bool testWait(std::uint32_t bar, std::uint32_t parity)
{
    std::uint32_t ok;
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}"
        : "=r"(ok)
        : "r"(bar), "r"(parity)
        : "memory");
    return ok != 0;
}
__device__ __forceinline__ void wait(std::uint32_t bar, std::uint32_t parity)
{
    std::uint32_t ok;
    do {
        asm volatile(
            "{\n.reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n}"
            : "=r"(ok)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (ok == 0);
}
}  // namespace relay_detail

// A source warp's engine: StagedWarp's events and staging ring, a relay instead of the flush.
struct RelayedWarp {
    std::uint32_t count = 0;          // events so far (warp-uniform)
    std::uint32_t roleW = 0;          // WarpRegionHeader words 1 and 2, written by the relay
    std::uint32_t userW = 0;
    std::uint32_t stage = 0;          // shared address of the warp's staging ring
    std::uint32_t full = 0;           // shared address of RelayShared::full[src][0] (halves 8 bytes apart)
    std::uint32_t freed = 0;          // ... freed[src][0]
    std::uint32_t total = 0;          // ... total[src]
    bool writer = false;              // lane 0 of a recording warp
    bool on = false;                  // the warp records (warp-uniform)

    __device__ __forceinline__ void begin(void* buffer, std::uint32_t warp, std::uint8_t role, std::uint8_t warpgroup,
                                          std::uint8_t roleIndex, void* staging, std::uint8_t userRole = kNoUserRole)
    {
        (void)warp;  // the relay knows the source's region: source s is warp s
        stage = static_cast<std::uint32_t>(__cvta_generic_to_shared(staging));
        on = buffer != nullptr;
        writer = on && (threadIdx.x & 31u) == 0;
        roleW = roleWord(role, warpgroup, roleIndex, userRole);
        userW = userRole == kNoUserRole ? 0u : std::uint32_t(userRole);
    }
    // Source index `src` (its warp index) of the relay state `rs`, after begin; the relay's init() and a CTA
    // barrier must come before the first hand-over (32 events), as before the relay reads the role (at the end).
    __device__ __forceinline__ void attach(RelayShared* rs, int src)
    {
        full = RelayShared::smem(&rs->full[src][0]);
        freed = RelayShared::smem(&rs->freed[src][0]);
        total = RelayShared::smem(&rs->total[src]);
        if (writer) {
            rs->role[src] = roleW;
            rs->userRole[src] = std::uint8_t(userW);
        }
    }

    __device__ __forceinline__ void event(std::uint8_t kind, std::int32_t kstep = -1, std::uint8_t slot = kNoSlot,
                                          std::int16_t aux = 0)
    {
        eventAt(readClock64(), kind, kstep, slot, aux);
    }
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
        if ((count & 31u) == 0) handOff();
    }
    // A half is full (batch b = count / 32 - 1): hand it to the relay; before the next batch goes into the other
    // half, that half's copy (batch b - 1, handed over 32 events ago) must be done.
    __device__ __forceinline__ void handOff()
    {
        if (!on) return;
        const std::uint32_t b = (count >> 5) - 1u;
        if (writer) relay_detail::arrive(full + (b & 1u) * 8u);
        const std::uint32_t nb = b + 1u;
        if (nb >= 2u) relay_detail::wait(freed + (nb & 1u) * 8u, ((nb >> 1) + 1u) & 1u);
    }
    // Last event (kEventEnd); the count and the partial last half go to the relay, which writes both.
    __device__ __forceinline__ void end()
    {
        event(kEventEnd);
        if (!writer) return;
        const std::uint32_t b = count >> 5;  // the last batch: count & 31 events (0: only the end mark)
        asm volatile("st.shared.u32 [%0], %1;" ::"r"(total), "r"(count) : "memory");
        relay_detail::arrive(full + (b & 1u) * 8u);
    }
    // end() with the last partial half copied by the source itself (session 10, the relay's parallel end: relayRun<true>):
    // its 32 lanes copy the last count & 31 events (ld.shared / st.global, no fence) and lane 0 writes the region header
    // (a header load at the end, in parallel with the other warps, instead of the relay copying 11 halves in turn);
    // then the count and the hand-over tell the relay that the source has ended. Every lane calls it.
    __device__ __forceinline__ void endOwn(void* buffer)
    {
        event(kEventEnd);
        if (!on) return;
        __syncwarp();  // lane 0's staged events, visible to the other lanes
        const auto* h = static_cast<const TraceBufferHeader*>(buffer);
        const std::uint32_t b = count >> 5;  // the last batch: count & 31 events (0: only the region header)
        if (headerMatches(h)) {
            const std::uint32_t lane = threadIdx.x & 31u, base = b * 32u, cap = h->eventsPerWarp;
            auto* r = warpRegion(buffer, h, warpInCta());
            if (lane < (count & 31u) && base + lane < cap) {
                std::uint32_t a, bb, c, x;
                asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                             : "=r"(a), "=r"(bb), "=r"(c), "=r"(x)
                             : "r"(stage + (b & 1u) * 512u + lane * 16u)
                             : "memory");
                asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(reinterpret_cast<TraceEvent*>(r + 1) + base + lane),
                             "r"(a), "r"(bb), "r"(c), "r"(x)
                             : "memory");
            }
            if (lane == 0)
                asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(r), "r"(count), "r"(roleW), "r"(userW), "r"(0u)
                             : "memory");
        }
        if (!writer) return;
        asm volatile("st.shared.u32 [%0], %1;" ::"r"(total), "r"(count) : "memory");
        relay_detail::arrive(full + (b & 1u) * 8u);
    }
    // The relay warp's own end (after relayRun): its events (fewer than 32: it hands nothing over) are copied by
    // its own lanes, straight from the first half of its ring, and lane 0 writes the count. Every lane calls it.
    __device__ __forceinline__ void endRelay(void* buffer)
    {
        event(kEventEnd);
        if (!on) return;
        __syncwarp();
        const auto* h = static_cast<const TraceBufferHeader*>(buffer);
        if (!headerMatches(h)) return;
        const std::uint32_t lane = threadIdx.x & 31u;
        auto* r = warpRegion(buffer, h, warpInCta());
        const std::uint32_t n = count < 32u ? count : 32u;
        if (lane < n && lane < h->eventsPerWarp) {
            std::uint32_t a, b, c, x;
            asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                         : "=r"(a), "=r"(b), "=r"(c), "=r"(x)
                         : "r"(stage + lane * 16u)
                         : "memory");
            asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(reinterpret_cast<TraceEvent*>(r + 1) + lane),
                         "r"(a), "r"(b), "r"(c), "r"(x)
                         : "memory");
        }
        if (lane == 0)
            asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(r), "r"(count), "r"(roleW), "r"(userW), "r"(0u)
                         : "memory");
    }
};

// The relay: one whole warp copies the sources' halves as they are handed over, until every source has ended.
// Source s is warp s of the CTA (bit s of `sources`; s < kRelayMaxSources); warp w stages at stage0 + w * 1 KB.
// Lanes 16 + s watch source s (state lanes: they only wait and arrive, never store to global memory, so that their
// arrives never wait for stores); lanes 0-15 copy (two events each per half).
// SourcesEnd (session 10): the sources end with endOwn() (they copy their last partial half and write their region
// header themselves); the relay copies only the full halves. Default false: the sources end with end().
template <bool SourcesEnd = false>
__device__ __forceinline__ void relayRun(void* buffer, RelayShared* rs, std::uint32_t sources, std::uint32_t stage0)
{
    const std::uint32_t lane = threadIdx.x & 31u;
    if (buffer == nullptr) return;  // the sources do not record either
    const auto* h = static_cast<const TraceBufferHeader*>(buffer);
    const bool valid = headerMatches(h);  // not valid: free every half, write nothing
    const std::uint32_t cap = valid ? h->eventsPerWarp : 0u;
    const int src = int(lane) - 16;
    bool live = src >= 0 && src < kRelayMaxSources && ((sources >> src) & 1u) != 0;
    std::uint32_t done = 0;  // batches copied (state lane of a source)
    TraceEvent* ev = live && valid ? reinterpret_cast<TraceEvent*>(warpRegion(buffer, h, std::uint32_t(src)) + 1)
                                   : nullptr;
    const std::uint32_t full0 = RelayShared::smem(&rs->full[0][0]);
    const std::uint32_t freed0 = RelayShared::smem(&rs->freed[0][0]);
    while (__any_sync(~0u, live)) {
        bool ready = false;
        std::uint32_t tot = ~0u;
        if (live) {
            ready = relay_detail::testWait(full0 + std::uint32_t(src) * 16u + (done & 1u) * 8u, (done >> 1) & 1u);
            if (ready) tot = *static_cast<volatile std::uint32_t*>(&rs->total[src]);
        }
        std::uint32_t mask = __ballot_sync(~0u, ready);
        if (mask == 0) {
#if WS_TRACE_RELAY_SLEEP_NS > 0
            __nanosleep(WS_TRACE_RELAY_SLEEP_NS);
#endif
            continue;
        }
        while (mask != 0) {
            const int l = __ffs(mask) - 1;
            mask &= mask - 1u;
            const std::uint32_t s = std::uint32_t(l) - 16u;
            const std::uint32_t d = __shfl_sync(~0u, done, l);
            const std::uint32_t t = __shfl_sync(~0u, tot, l);
            auto* e = reinterpret_cast<TraceEvent*>(__shfl_sync(~0u, reinterpret_cast<std::uintptr_t>(ev), l));
            const std::uint32_t base = d * 32u;
            const bool last = t != ~0u && t < base + 32u;
            const std::uint32_t n = last ? (SourcesEnd ? 0u : t - base) : 32u;
            const std::uint32_t room = cap > base ? cap - base : 0u;
            const std::uint32_t m = n < room ? n : room;
            const std::uint32_t half = stage0 + s * kTraceSmemPerWarp + (d & 1u) * 512u;
            if (lane < 16u) {
#pragma unroll
                for (std::uint32_t j = lane; j < 32u; j += 16u) {
                    if (j < m) {
                        std::uint32_t a, b, c, x;
                        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                                     : "=r"(a), "=r"(b), "=r"(c), "=r"(x)
                                     : "r"(half + j * 16u)
                                     : "memory");
                        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(e + base + j), "r"(a), "r"(b),
                                     "r"(c), "r"(x)
                                     : "memory");
                    }
                }
                if (!SourcesEnd && last && valid && lane == 0)  // the region header: count, role word, user role
                    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(reinterpret_cast<WarpRegionHeader*>(e) - 1),
                                 "r"(t), "r"(static_cast<volatile std::uint32_t*>(rs->role)[s]),
                                 "r"(std::uint32_t(static_cast<volatile std::uint8_t*>(rs->userRole)[s])), "r"(0u)
                                 : "memory");
            }
            __syncwarp();
            if (lane == std::uint32_t(l)) {
                relay_detail::arrive(freed0 + s * 16u + (d & 1u) * 8u);
                ++done;
                if (last) live = false;
            }
        }
    }
}
#endif  // __CUDACC__

}  // namespace ws::trace
