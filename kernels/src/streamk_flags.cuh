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

}  // namespace ws::kern
