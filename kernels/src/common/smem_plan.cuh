// Shared piece (kernels/src/common): the shared-memory plan of a TMA + wgmma kernel, the one place
// that knows the carve: ring stages (1024-byte aligned: 128-byte swizzle atoms), the epilogue
// staging area, the barrier area (full[S], empty[S]), then one trace staging ring per warp.
// Used by the linear-compression family (kernels/lce) and the GEMM ladder's rungs 2-5 (rungs 6-7 carve in
// pingpong_body.cuh, where the epilogue staging sits between the ring and the barriers the same way).
#pragma once

#include <cstdint>
#include <string>  // hopper.cuh declares std::string helpers

#include "../hopper.cuh"
#include "warpstage/trace.cuh"

namespace ws::kern {

template <uint32_t StageBytes, int S, uint32_t EpiBytes = 0>
struct SmemPlan {
    static_assert(StageBytes % 1024 == 0, "stages must keep the 1024-byte alignment of swizzled tiles");
    static_assert(2 * S * 8 <= 128, "the barrier area holds at most 8 stages");
    static constexpr uint32_t kStageBytes = StageBytes;
    static constexpr int kStages = S;
    static constexpr uint32_t kRingBytes = StageBytes * S;
    static constexpr uint32_t kBarrierBytes = 128;
    // Dynamic shared memory to ask for: + 1024 for the alignment of the base.
    static constexpr uint32_t bytes(bool traced, int warps)
    {
        return kRingBytes + EpiBytes + 1024 + kBarrierBytes
               + (traced ? uint32_t(warps) * ws::trace::kTraceSmemPerWarp : 0u);
    }
#ifdef __CUDACC__
    uint8_t* base;
    __device__ __forceinline__ explicit SmemPlan(uint8_t* raw) : base(alignSmem1024(raw)) {}
    __device__ __forceinline__ uint8_t* stage(int slot) const { return base + slot * StageBytes; }
    __device__ __forceinline__ uint8_t* epiStaging() const { return base + kRingBytes; }
    __device__ __forceinline__ uint64_t* full() const
    {
        return reinterpret_cast<uint64_t*>(base + kRingBytes + EpiBytes);
    }
    __device__ __forceinline__ uint64_t* empty() const { return full() + S; }
    __device__ __forceinline__ uint8_t* traceStaging(int warp) const
    {
        return base + kRingBytes + EpiBytes + kBarrierBytes + warp * ws::trace::kTraceSmemPerWarp;
    }
#endif
};

}  // namespace ws::kern
