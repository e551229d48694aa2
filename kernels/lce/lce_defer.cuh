// Rung 4's deferred U (s13-lcefirst; lce_body.cuh's variant 16 = 11 + Variant::defer): the epilogue warp's side.
// A candidate piece whose user tile is not yet published when the epilogue warp prepares its staging half does not
// wait for it: the half is zeroed instead of loaded with U's tile (stageZero), so the consumers' epilogue (unchanged:
// epilogueAdd / epilogueAddHeld) writes fp16(acc) + 0, and the warp stores that to out as usual. When the half's
// store is committed the piece enters a FIFO (lce_shape.h: DeferQueue, with the number of its bulk group). Later --
// before preparing a piece 0, in the half it just freed, and at the end of the walk -- the warp takes the FIFO's head
// if its user tile's flag is published and its store may be complete (DeferQueue::waitDepth >= 1): wait_group so that
// the store is complete, TMA-load U's piece into the half, TMA reduce-add it onto out (fp16 + fp16, rounded once: the
// held piece's rounding, s11-lcering), wait until the reduce has read the half. The end of the walk drains the FIFO
// (spinning on the flags: every user tile is published by a pair that waits for nothing before it).
// The consumers and the producer do not change; only the epilogue warp's order of work does.
#pragma once

#include <cstdint>

#include "../src/common/epilogue_warp.cuh"
#include "lce_shape.h"

namespace ws::lce::body {
using namespace ws::kern;

// Fix = false (variant 17, timing only): the FIFO is emptied without the reduce-adds (output wrong).
template <class Staging, bool Fix = true>
struct DeferU {
    const Staging& st;
    uint64_t* bar;  // the fix-up's U load: 1 arrival + the half's bytes, phase `fixes`
    DeferQueue q;
    int commits = 0, fixes = 0;
    int pend[2] = {-1, -1};          // half cw holds a piece staged without U: u * 2 + pc (-1: none)
    bool known[2] = {false, false};  // half cw's last piece 0 found its flag published (piece 1 needs no poll)

    // Before the epilogue warp flushes half cw (any EpilogueWarp::next*, flush): count the store's bulk group and
    // queue the piece if it was staged without U. `done` = ew.done[cw] (a flush happens when it is > 0).
    __device__ __forceinline__ void beforeFlush(int done, int cw)
    {
        if (done > 0) {
            ++commits;
            if (pend[cw] >= 0) {
                q.push(pend[cw] >> 1, pend[cw] & 1, cw, commits);
                pend[cw] = -1;
            }
        }
    }
    // Room for one more deferred piece (the pieces in the halves are queued later).
    __device__ __forceinline__ bool canDefer() const
    {
        return q.count + (pend[0] >= 0 ? 1 : 0) + (pend[1] >= 0 ? 1 : 0) < kDeferCap;
    }
    // Whole warp: half cw (free: its last store has read it) zeroed, then uFull completed with no bytes (phase Load,
    // as loadStaging).
    template <class Tr>
    __device__ __forceinline__ void stageZero(int cw, int n, bool issuer, Tr& tr) const
    {
        tr.event(ws::trace::kind::Load, n, uint8_t(cw));
        uint4* h = reinterpret_cast<uint4*>(st.half(cw));
        for (int i = int(laneId()); i < int(Staging::kHalfBytes / 16); i += 32) h[i] = make_uint4(0u, 0u, 0u, 0u);
        __syncwarp();
        if (issuer) mbarArrive(&st.uFull[cw]);
        __syncwarp();
    }
    // Whole warp, half cwFree free: one fix-up (above) of the FIFO's head, if it may go now (drain: the end of the
    // walk, wait for its flag). where(u, pc, cw, x, y, b, uo, flag): the piece's box in out / U and its user's flag.
    template <class Where>
    __device__ __forceinline__ void fixOne(int cwFree, const CUtensorMap* tmU, const CUtensorMap* tmOut, int epoch,
                                           bool issuer, bool drain, Where&& where)
    {
        if (q.count == 0) return;
        if constexpr (!Fix) {
            q.pop();
            return;
        }
        const int depth = q.waitDepth(commits);
        if (depth < 0 || (!drain && depth < 1)) return;
        int x, y, b, uo;
        const int* f;
        where(q.headUnit(), q.headPiece(), q.headHalf(), x, y, b, uo, f);
        int ok = 1;
        if (issuer) {
            if (drain) {
                while (acquireFlag(f) != epoch) {
                }
            } else {
                ok = acquireFlag(f) == epoch ? 1 : 0;
            }
        }
        ok = __shfl_sync(0xffffffffu, ok, 0);
        if (!ok) return;
        if (issuer) {
            fenceProxyAsyncGlobal();  // U's tile (published) for the TMA load below
            if (depth >= 2) bulkWait<2>();  // the piece's store complete (it is not among the `depth` latest groups)
            else if (depth == 1) bulkWait<1>();
            else bulkWait<0>();
            uint8_t* h = st.half(cwFree);
            mbarArriveExpectTx(bar, Staging::kHalfBytes);
#pragma unroll
            for (int c = 0; c < Staging::kBoxes; ++c)
                tmaLoad3d(h + c * Staging::Layout::kBoxBytes, tmU, bar, x + c * Staging::Layout::kBoxCols, y, uo);
            mbarWait(bar, uint32_t(fixes & 1));
            fenceProxyAsync();
#pragma unroll
            for (int c = 0; c < Staging::kBoxes; ++c)
                tmaReduceAdd3d(tmOut, h + c * Staging::Layout::kBoxBytes, x + c * Staging::Layout::kBoxCols, y, b);
            bulkCommit();
            bulkWaitRead<0>();  // the half may be written again
        }
        __syncwarp();
        ++commits;
        ++fixes;
        q.pop();
    }
};

}  // namespace ws::lce::body
