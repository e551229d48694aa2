// <warpstage/trace_lean.cuh>: the staged engine without a global-memory round trip at the warp's start
// (session 10, s10-tracecost; an experiment, off by default: the ladder builds it only with
// -DWS_PP_TRACE_LEAN_START=1 in pingpong_body.cuh).
//
// StagedWarp::begin (trace.cuh) has lane 0 load the buffer header, check it against the launch and store the
// region header before the warp's first event. On the ping-pong body (rungs 6-7) lane 0 of warp 0 is thread 0,
// which then initialises the ring's barriers: every CTA waits for that load (and for the CTA record's, the
// same thread) before its first TMA load. Session 9's relay build removed both and saved ~0.3 us per launch at
// 1024^3 (docs/kernel-notes.md, s9-traceflush, "What to try next" 3).
//
// LeanStagedWarp issues the header's loads at begin but does not wait for them: the warp writes its events into
// its staging ring as StagedWarp does (predicated on "recording", i.e. a non-null buffer, from lane 0), and checks
// the header, computes its region and stores the region header in settle(), which the kernel calls once, later
// (the ladder: after the ring init and the cluster barrier, so that the load's latency overlaps them) and before
// the warp's 32nd event (its first flush). A header that does not match the launch switches the warp off there:
// nothing is copied, as with StagedWarp (which would not have staged anything either). Same events, same buffer
// layout, same format: the decoder cannot tell the two engines apart. (A first version checked the header lazily
// at the first flush: the five header words then stay live through the loop, and the producer warp, 40 registers,
// spilled; settle() lets them die before the loop.) The region is warpInCta()'s (the ladder's `warp` argument).
//
// WarpCopy = true (-DWS_PP_TRACE_LEAN_START=2): the flush without the async proxy. StagedWarp's flush (fence.proxy.async
// = MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC, a bulk copy, a wait for the previous copy's reads) is the large-shape cost of
// rungs 6-7 (session 8: no flush at all, 8192^3 +3.7 -> +0.9 %). Here lanes 16-31 of the warp copy the full half
// themselves after a __syncwarp (two ld.shared.v4 / st.global.v4 each: the generic proxy, no fence, nothing to wait
// for later: the data is in registers when the stores issue). Lane 0, which arrives on the ring's barriers (release
// semantics: its arrive would wait for its own global stores, session 1), stores nothing to global memory in the loop.
#pragma once

#include <cstdint>

#include "warpstage/trace.cuh"

#ifdef __CUDACC__
namespace ws::trace {

template <bool WarpCopy>
struct LeanStagedWarpT {
    TraceEvent* ev = nullptr;      // this warp's event array (lane 0 after settle; every lane with WarpCopy)
    const void* buf = nullptr;     // the buffer (lane 0 of a recording warp)
    std::uint32_t count = 0;       // events so far (warp-uniform)
    std::uint32_t cap = 0;         // capacity (lane 0 after settle; every lane with WarpCopy)
    std::uint32_t stage = 0;       // shared address of the warp's staging ring
    std::uint32_t roleW = 0;       // WarpRegionHeader words 1 and 2
    std::uint32_t userW = 0;
    std::uint32_t hw[5] = {0, 0, 0, 0, 0};  // header words 0-4 (magic, version, numCtas, warpsPerCta, eventsPerWarp)
    bool writer = false;           // lane 0 of a recording warp (until a mismatching header switches it off)
    bool on = false;               // WarpCopy: the warp records (warp-uniform, after settle)

    __device__ __forceinline__ void begin(void* buffer, std::uint32_t warp, std::uint8_t role, std::uint8_t warpgroup,
                                          std::uint8_t roleIndex, void* staging, std::uint8_t userRole = kNoUserRole)
    {
        stage = static_cast<std::uint32_t>(__cvta_generic_to_shared(staging));
        if (buffer == nullptr || (threadIdx.x & 31u) != 0) return;
        (void)warp;
        buf = buffer;
        writer = true;
        roleW = roleWord(role, warpgroup, roleIndex, userRole);
        userW = userRole == kNoUserRole ? 0u : std::uint32_t(userRole);
            // issued now, used in settle(): the warp does not wait for them here
        asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(hw[0]), "=r"(hw[1]), "=r"(hw[2]), "=r"(hw[3])
                     : "l"(buffer)
                     : "memory");
        asm volatile("ld.global.u32 %0, [%1];" : "=r"(hw[4]) : "l"(static_cast<const char*>(buffer) + 16) : "memory");
    }

    // Once per warp (all lanes), after begin and before the warp's 32nd event: the header check StagedWarp::begin
    // makes (lane 0), the region and its header.
    __device__ __forceinline__ void settle()
    {
        settleLane0();
        if constexpr (WarpCopy) {  // the region and the state to every lane (lanes 16-31 copy)
            on = __shfl_sync(~0u, std::uint32_t(writer), 0) != 0;
            const std::uint64_t e = __shfl_sync(~0u, reinterpret_cast<std::uintptr_t>(ev), 0);
            ev = reinterpret_cast<TraceEvent*>(e);
            cap = __shfl_sync(~0u, cap, 0);
        }
    }
    __device__ __forceinline__ void settleLane0()
    {
        if (!writer) return;
        const std::uint32_t ctas = gridDim.x * gridDim.y * gridDim.z;
        const std::uint32_t warps = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
        if (hw[0] != kMagic || hw[1] != kFormatVersion || hw[2] != ctas || hw[3] != warps) {
            writer = false;
            return;
        }
        const std::uint64_t off = sizeof(TraceBufferHeader) + std::uint64_t(hw[2]) * sizeof(CtaRecord)
            + (std::uint64_t(linearCta()) * hw[3] + warpInCta()) * (sizeof(WarpRegionHeader) + std::uint64_t(hw[4]) * sizeof(TraceEvent));
        auto* hdr = reinterpret_cast<WarpRegionHeader*>(static_cast<char*>(const_cast<void*>(buf)) + off);
        ev = reinterpret_cast<TraceEvent*>(hdr + 1);
        cap = hw[4];
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(hdr), "r"(0u), "r"(roleW), "r"(userW), "r"(0u)
                     : "memory");
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
        if ((count & 31u) == 0) flush(32);
    }
    // StagedWarp::flush (WarpCopy: lanes 16-31 copy, no async proxy). Warp-uniform.
    __device__ __forceinline__ void flush(std::uint32_t n)
    {
        if constexpr (WarpCopy) {
            if (!on) return;
            const std::uint32_t base = (count - 1u) & ~31u;
            const std::uint32_t half = stage + (base & 32u) * 16u;
            const std::uint32_t room = cap > base ? cap - base : 0u;
            const std::uint32_t m = n < room ? n : room;
            // lane 0's st.shared visible to the copying lanes; and lane 0 writes this half again only after the
            // next flush's __syncwarp, which the copying lanes reach after their copy of this one
            __syncwarp();
            const std::uint32_t lane = threadIdx.x & 31u;
            if (lane >= 16u) {
#pragma unroll
                for (std::uint32_t j = lane - 16u; j < 32u; j += 16u) {
                    if (j < m) {
                        std::uint32_t a, b, c, x;
                        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                                     : "=r"(a), "=r"(b), "=r"(c), "=r"(x)
                                     : "r"(half + j * 16u)
                                     : "memory");
                        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(ev + base + j), "r"(a), "r"(b),
                                     "r"(c), "r"(x)
                                     : "memory");
                    }
                }
            }
            return;
        }
        if (!writer) return;
        const std::uint32_t base = (count - 1u) & ~31u;
        const std::uint32_t half = stage + (base & 32u) * 16u;
        const std::uint32_t room = cap > base ? cap - base : 0u;
        const std::uint32_t m = n < room ? n : room;
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        if (m > 0)
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(ev + base), "r"(half),
                         "r"(m * 16u)
                         : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
    }
    __device__ __forceinline__ void end()
    {
        event(kEventEnd);
        if ((count & 31u) != 0) flush(count & 31u);
        if (writer) {
            if constexpr (!WarpCopy) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
            auto* hdr = reinterpret_cast<WarpRegionHeader*>(ev) - 1;
            asm volatile("st.global.u32 [%0], %1;" ::"l"(&hdr->count), "r"(count) : "memory");
        }
    }
};
using LeanStagedWarp = LeanStagedWarpT<false>;

// The CTA record of the lean start: CtaRecordWriter::beginAt's record (the start pair read earlier, written now), and
// an end without a header load: the writing thread leaves its header check's result in a shared-memory word
// (`valid`, the same word at both calls), so after the CTA barrier it reads that word and stores the end pair, no
// dependent load -> compare -> branch chain on the CTA's way out (CtaRecordWriter::end checks the header again). No
// member: a register kept from start to end is live in every thread (a first version held the record's address and
// stream-K's traced kernels spilled 40-60 bytes more). For a thread that idles otherwise (the ladder: warp 1).
struct LeanCtaRecord {
    __device__ __forceinline__ void beginAt(void* buffer, bool first, std::uint64_t g, std::uint64_t c,
                                            std::uint32_t* valid)
    {
        if (buffer == nullptr || !first) return;
        const bool ok = headerMatches(static_cast<const TraceBufferHeader*>(buffer));
        *static_cast<volatile std::uint32_t*>(valid) = ok ? 1u : 0u;
        if (!ok) return;
        CtaRecord* rec = reinterpret_cast<CtaRecord*>(static_cast<TraceBufferHeader*>(buffer) + 1) + linearCta();
        rec->globaltimerStart = g;
        rec->clockStart = c;
        rec->smId = readSmId();
        rec->flags = 1u;
    }
    // Every thread of the CTA must call this (it contains __syncthreads() when buffer != null).
    __device__ __forceinline__ void end(void* buffer, bool first, const std::uint32_t* valid)
    {
        if (buffer == nullptr) return;
        __syncthreads();
        if (!first || *static_cast<const volatile std::uint32_t*>(valid) == 0u) return;
        CtaRecord* rec = reinterpret_cast<CtaRecord*>(static_cast<TraceBufferHeader*>(buffer) + 1) + linearCta();
        const std::uint64_t g = readGlobalTimer();
        const std::uint64_t c = readClock64();
        rec->globaltimerEnd = g;
        rec->clockEnd = c;
        rec->flags = 3u;
    }
};

}  // namespace ws::trace
#endif  // __CUDACC__
