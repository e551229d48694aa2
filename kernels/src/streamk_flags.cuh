// Stream-K's fixup flags (rung 7, streamk.cu): one per workspace slot, holding the epoch of the launch whose partial
// the slot holds. Named after the stage they belong to: the stall pass classifies a sampled line of a helper header by
// its function's name (kernels/decode/stage_map.cpp: `fixup*` -> fixup, `waitPartial*` -> wait_partial), so the
// finisher's spin shows as WaitPartial, not as the code above the rung's first event.
#pragma once

#include <cstdint>

namespace ws::kern {

// A piece's partial is in its slot: publish the launch's epoch (after the warpgroup's barrier and a __threadfence).
__device__ __forceinline__ void fixupPublishFlag(uint32_t* flag, uint32_t epoch)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(epoch) : "memory");
}

// A finisher waits until an earlier piece's slot holds this launch's partial (ld.acquire.gpu spin).
__device__ __forceinline__ void waitPartialFlag(const uint32_t* flag, uint32_t epoch)
{
    uint32_t v;
    do {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
    } while (v != epoch);
}

// The cluster split (session 11, s11-skinny2): every piece of the tile has written its partial to its own shared memory
// -- the cluster barrier (release / acquire: the peers' writes are visible after it). The CTA's other live warps pass
// one cluster barrier per unit too (pingpong_body.cuh, Epi::kClusterSync).
__device__ __forceinline__ void waitPartialsCluster()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

}  // namespace ws::kern
