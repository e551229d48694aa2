// Shared piece (kernels/src/common): the producer/consumer ring of S shared-memory stages guarded by
// full/empty mbarriers -- the only place that knows `fill % S` and the parities. A fill counter runs
// over every k-step a CTA loads (across tiles); the producer and each consumer keep their own.
//
// Each method records the phase it opens on the warp's trace `tr` (anything with event / now /
// eventAt: ws::trace::Warp<> of <warpstage/trace.cuh>, or the ladder's WarpTrace). Method names are
// the stage names the stall pass's stage map reads (waitSlot, issueLoad, waitData, release).
// Protocol (as the GEMM ladder's rungs 4-6 spell it out): the producer skips the empty wait for the
// first S fills and then waits with parity ((fill/S)-1)&1; the consumers wait on full with parity
// (fill/S)&1 and each consumer warp's lane 0 arrives on empty once the MMAs reading the slot are done.
#pragma once

#include <cstdint>
#include <string>  // hopper.cuh declares std::string helpers

#include "../hopper.cuh"
#include "warpstage/trace.cuh"

namespace ws::kern {

// Cluster > 1 (CTA pairs sharing a multicast operand): a slot is free only when the consumers of every
// CTA of the cluster released it, so each consumer warp also arrives on the peer's empty barrier
// (Cluster == 2; `peer` = the other CTA's rank), and init() counts the arrivals of both.
// ReadyMarker = false: waitData records no LoadReady marker (the GEMM ladder's budget is four events per
// consumer k-step: WaitData, MmaIssue, MmaWait, Release).
// UnsignedFill = true (session 13, the ping-pong body: WS_PP_UNSIGNED_FILL): the slot and the phases from the fill
// counter taken as unsigned (it never goes negative), so `fill % S` and `fill / S` need no sign fix-up (S = 6 is not
// a power of two: a multiply-high and a shift, not the signed fix-ups). The callers' fill (and every trace event's
// kstep) stays the same int.
template <int S, int Cluster = 1, bool ReadyMarker = true, bool UnsignedFill = false>
struct Ring {
    static_assert(Cluster == 1 || Cluster == 2, "rings of one CTA or of a CTA pair");
    uint64_t* full;
    uint64_t* empty;
    uint32_t peer = 0;

    static __device__ __forceinline__ int slot(int fill)
    {
        if constexpr (UnsignedFill) return int(uint32_t(fill) % uint32_t(S));
        else return fill % S;
    }
    // fill / S: how many times the ring went round before fill (its parity is the phase)
    static __device__ __forceinline__ uint32_t lap(int fill)
    {
        if constexpr (UnsignedFill) return uint32_t(fill) / uint32_t(S);
        else return uint32_t(fill / S);
    }

    // One thread: full[s] expects one arrive (the producer's expect_tx) plus the bytes; empty[s]
    // `consumerWarps` arrivals (one per consumer warp) from each CTA of the cluster. Follow with a CTA
    // barrier (a cluster barrier when Cluster > 1).
    __device__ __forceinline__ void init(uint32_t consumerWarps) const
    {
        for (int s = 0; s < S; ++s) {
            mbarInit(&full[s], 1);
            mbarInit(&empty[s], consumerWarps * Cluster);
        }
        fenceBarrierInit();
    }

    // Rings whose slots a CTA barrier frees (no warp specialization: the GEMM ladder's rungs 2-3, where the same
    // warps load and compute and a __syncthreads ends each k-step): only the full barriers, no empty ones.
    // One thread; follow with a CTA barrier.
    __device__ __forceinline__ void initFull() const
    {
        for (int s = 0; s < S; ++s) mbarInit(&full[s], 1);
        fenceBarrierInit();
    }

    // Producer: wait until the consumers released the slot of `fill` (nothing to wait for the first S).
    // The event is written after the wait returns, stamped when it began (split form, see issueLoad).
    template <class Tr>
    __device__ __forceinline__ uint64_t waitSlot(int fill, Tr& tr) const
    {
        const uint64_t t = tr.now();
        if (fill >= S) mbarWait(&empty[slot(fill)], (lap(fill) - 1u) & 1u);
        return t;
    }
    // Producer: `issuer` (one lane) posts the byte count on full[slot] and runs the kernel's own TMA
    // loads `loads(stageSlot, fullBarrier)`. tWait: what waitSlot returned. The two trace events are
    // written after the expect_tx (a release), so the trace's shared-memory store does not delay it.
    template <class Tr, class Loads>
    __device__ __forceinline__ void issueLoad(int fill, uint64_t tWait, uint32_t bytes, bool issuer, Tr& tr,
                                              Loads&& loads) const
    {
        const int s = slot(fill);
        const uint64_t tIssue = tr.now();
        if (issuer) {
            mbarArriveExpectTx(&full[s], bytes);
            loads(s, &full[s]);
        }
        if (fill >= S) tr.eventAt(tWait, ws::trace::kind::WaitSlot, fill, uint8_t(s));
        tr.eventAt(tIssue, ws::trace::kind::IssueLoad, fill, uint8_t(s));
    }
    // Producer of a ring whose slots a CTA barrier frees (initFull): the same without the slot wait -- the
    // caller knows the slot is free (every thread passed the barrier that ended the k-step that last read it).
    template <class Tr, class Loads>
    __device__ __forceinline__ void issueLoad(int fill, uint32_t bytes, bool issuer, Tr& tr, Loads&& loads) const
    {
        const int s = slot(fill);
        const uint64_t tIssue = tr.now();
        if (issuer) {
            mbarArriveExpectTx(&full[s], bytes);
            loads(s, &full[s]);
        }
        tr.eventAt(tIssue, ws::trace::kind::IssueLoad, fill, uint8_t(s));
    }
    // Consumer: wait for the data of `fill`; marks it ready on the trace.
    template <class Tr>
    __device__ __forceinline__ void waitData(int fill, Tr& tr) const
    {
        const int s = slot(fill);
        tr.event(ws::trace::kind::WaitData, fill, uint8_t(s));
        mbarWait(&full[s], lap(fill) & 1u);
        if constexpr (ReadyMarker) tr.event(ws::trace::kEventLoadReady, fill, uint8_t(s));
    }
    // Relayed release (session 15, the ping-pong body's traced k-step observers): the consumers arrive on barriers of
    // their own (releaseVia) and `relays` warps of each CTA, having seen them complete, free the slot for the producer
    // (relay): empty[s] counts the relays of every CTA of the cluster. One thread; follow with a cluster barrier.
    __device__ __forceinline__ void initRelayed(uint32_t relays) const
    {
        for (int s = 0; s < S; ++s) {
            mbarInit(&full[s], 1);
            mbarInit(&empty[s], relays * Cluster);
        }
        fenceBarrierInit();
    }
    // Relayed and released (the observers' experiment without the relay, WS_PP_OBSERVE_RELAY=0): empty[s] counts the
    // consumer warps' own releases and the relays. One thread; follow with a cluster barrier.
    __device__ __forceinline__ void initObserved(uint32_t consumerWarps, uint32_t relays) const
    {
        for (int s = 0; s < S; ++s) {
            mbarInit(&full[s], 1);
            mbarInit(&empty[s], (consumerWarps + relays) * Cluster);
        }
        fenceBarrierInit();
    }
    // A relay (one lane): frees the slot of `fill` in every CTA of the cluster.
    __device__ __forceinline__ void relay(int fill) const
    {
        const int s = slot(fill);
        mbarArrive(&empty[s]);
        if constexpr (Cluster > 1) mbarArriveCluster(&empty[s], peer);
    }
    // Consumer of a relayed ring: as release, but lane 0 arrives on the slot's barrier of the family at shared address
    // `via0` (slot 0's; a slot's 8 bytes further per slot) for its relay to see.
    template <class Tr>
    __device__ __forceinline__ void releaseVia(int fill, uint32_t via0, bool lane0, Tr& tr) const
    {
        const int s = slot(fill);
        const uint64_t t = tr.now();
        if (lane0) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(via0 + uint32_t(s) * 8u) : "memory");
        tr.eventAt(t, ws::trace::kind::Release, fill, uint8_t(s));
    }
    // Consumer: lane 0 of each consumer warp frees the slot of `fill` (its MMAs on it are complete).
    template <class Tr>
    __device__ __forceinline__ void release(int fill, bool lane0, Tr& tr) const
    {
        const int s = slot(fill);
        const uint64_t t = tr.now();
        if (lane0) {
            mbarArrive(&empty[s]);
            if constexpr (Cluster > 1) mbarArriveCluster(&empty[s], peer);
        }
        tr.eventAt(t, ws::trace::kind::Release, fill, uint8_t(s));
    }
};

}  // namespace ws::kern
