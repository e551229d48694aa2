// Shared piece (kernels/src/common): TMA for fp16 tensors of rank 2 or 3 (the GEMM ladder's
// hopper.cuh covers 2-D bf16 K-major maps): the host encoder and the 3-D load wrapper.
#pragma once

#include <cstdint>
#include <string>
#include <cuda.h>  // CUtensorMap (types only; the encoder comes from the driver at run time)

#include "../hopper.cuh"

namespace ws::kern {

// Encodes a tiled tensor map for an fp16 tensor. dims[0] is the contiguous dimension;
// strideBytes[i] is the byte stride of dims[i + 1] (multiples of 16: TMA's rule, checked here);
// box[i] elements per load in each dimension. Out-of-bounds elements of a box read as zero.
// Returns "" or a sentence.
std::string encodeTmaF16(CUtensorMap* map, const void* base, int rank, const uint64_t* dims,
                         const uint64_t* strideBytes, const uint32_t* box, CUtensorMapSwizzle swizzle);

#ifdef __CUDACC__
// Global (x = contiguous coordinate, y, z) -> shared, completing the box's bytes on `bar`.
__device__ __forceinline__ void tmaLoad3d(void* dst, const CUtensorMap* map, uint64_t* bar, int x, int y, int z)
{
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(smemAddr(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(smemAddr(bar)), "r"(x), "r"(y), "r"(z)
        : "memory");
}
// Same, written to the same offset in every CTA of the cluster named in ctaMask (each CTA's barrier at
// `bar`'s offset receives the bytes).
__device__ __forceinline__ void tmaLoad3dMulticast(void* dst, const CUtensorMap* map, uint64_t* bar, int x, int y,
                                                   int z, uint16_t ctaMask)
{
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4, %5}], [%2], %6;" ::"r"(smemAddr(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(smemAddr(bar)), "r"(x), "r"(y), "r"(z), "h"(ctaMask)
        : "memory");
}
// Shared -> global TMA store of one box at (x, y, z); the caller commits and waits on the bulk group.
// Parts of the box outside the tensor are not written (partial tiles need no clipping code).
__device__ __forceinline__ void tmaStore3d(const CUtensorMap* map, const void* src, int x, int y, int z)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(smemAddr(src)), "r"(x), "r"(y), "r"(z)
                 : "memory");
}
// Shared -> global TMA reduce-add of one box at (x, y, z) (element type and rounding those of the tensor map: fp16
// adds rounded once per element); committed and waited on like tmaStore3d (s12-lce: rung 4's split user tiles).
__device__ __forceinline__ void tmaReduceAdd3d(const CUtensorMap* map, const void* src, int x, int y, int z)
{
    asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(smemAddr(src)), "r"(x), "r"(y), "r"(z)
                 : "memory");
}
#endif

}  // namespace ws::kern
