// Hopper (sm_90a) building blocks shared by the tensor-core rungs of the ladder:
// TMA tensor maps (host), mbarriers, bulk tensor copies, wgmma descriptors and
// instructions, fences, named barriers, setmaxnreg, and the register-to-global
// epilogue of a wgmma accumulator. Inline PTX only; no CUTLASS/CuTe.
#pragma once

#include <cstdint>
#include <cuda.h>  // CUtensorMap and its enums (types only: the driver entry point is fetched at run time)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "wgmma_ops.cuh"

namespace ws::kern {

// ---------------------------------------------------------------------------
// Host: TMA tensor maps.

// Encodes a 2-D tensor map for a K-major bf16 matrix of `rows` x `cols` (cols = K
// contiguous), loaded in boxes of boxRows x 64 (64 bf16 = 128 bytes, the 128-byte
// swizzle span). Returns "" or an error. cuTensorMapEncodeTiled comes from
// cudaGetDriverEntryPoint, so nothing links against libcuda.
std::string encodeTmaK64(CUtensorMap* map, const void* base, int rows, int cols, int boxRows);
// Tensor map for a row-major bf16 C (rows x cols) stored in boxes of boxRows x 32 columns
// (64-byte rows) with the 64-byte swizzle (used by the TMA-store epilogue: see
// staging64Offset for the matching shared-memory layout).
std::string encodeTmaStoreSw64(CUtensorMap* map, const void* base, int rows, int cols, int boxRows);

#ifdef __CUDACC__
// ---------------------------------------------------------------------------
// Device helpers.

__device__ __forceinline__ uint32_t smemAddr(const void* p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// First 1024-byte aligned address in the dynamic shared memory (128-byte swizzle atoms).
__device__ __forceinline__ uint8_t* alignSmem1024(uint8_t* raw)
{
    const uint32_t a = smemAddr(raw);
    return raw + ((1024u - (a & 1023u)) & 1023u);
}

__device__ __forceinline__ uint32_t laneId() { return threadIdx.x & 31u; }

// --- mbarrier
__device__ __forceinline__ void mbarInit(uint64_t* bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smemAddr(bar)), "r"(count) : "memory");
}
// Makes barrier initialisation visible to the async proxy (TMA) and the cluster.
__device__ __forceinline__ void fenceBarrierInit()
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbarArriveExpectTx(uint64_t* bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smemAddr(bar)), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void mbarArrive(uint64_t* bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smemAddr(bar)) : "memory");
}
// Arrive on the barrier at the same shared-memory offset in CTA `ctaRank` of the cluster.
// Default (release, CTA) semantics, as for a local arrive: what it publishes is that this
// warp's wgmma reads of the slot completed (wgmma.wait_group), not data written by it;
// a cluster-scope release here made the pingpong rung 2.6x slower (device log, run 2).
__device__ __forceinline__ void mbarArriveCluster(uint64_t* bar, uint32_t ctaRank)
{
    asm volatile(
        "{\n.reg .b32 ra;\n"
        "mapa.shared::cluster.u32 ra, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}" ::"r"(smemAddr(bar)),
        "r"(ctaRank)
        : "memory");
}
__device__ __forceinline__ bool mbarTryWait(uint64_t* bar, uint32_t parity)
{
    uint32_t ok;
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}"
        : "=r"(ok)
        : "r"(smemAddr(bar)), "r"(parity)
        : "memory");
    return ok != 0;
}
__device__ __forceinline__ void mbarWait(uint64_t* bar, uint32_t parity)
{
    while (!mbarTryWait(bar, parity)) {
    }
}
// --- TMA (bulk tensor copy engine)
__device__ __forceinline__ void tmaPrefetchDesc(const CUtensorMap* map)
{
    asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
// Global (x = inner/K coordinate, y = row) -> shared, completing `bytes` on `bar`.
__device__ __forceinline__ void tmaLoad2d(void* dst, const CUtensorMap* map, uint64_t* bar, int x, int y)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];" ::"r"(smemAddr(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(smemAddr(bar)), "r"(x), "r"(y)
        : "memory");
}
// Same, written to the same offset in every CTA of the cluster named in ctaMask, each
// CTA's barrier at `bar`'s offset receiving the bytes.
__device__ __forceinline__ void tmaLoad2dMulticast(void* dst, const CUtensorMap* map, uint64_t* bar, int x,
                                                   int y, uint16_t ctaMask)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(smemAddr(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(smemAddr(bar)), "r"(x), "r"(y), "h"(ctaMask)
        : "memory");
}
// Shared -> global TMA store of one box; the caller commits and waits on the bulk group.
__device__ __forceinline__ void tmaStore2d(const CUtensorMap* map, const void* src, int x, int y)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(smemAddr(src)), "r"(x), "r"(y)
                 : "memory");
}
__device__ __forceinline__ void bulkCommit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void bulkWaitRead()
{
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void bulkWait()
{
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}
// Byte offset of (row, 16-byte unit `unit`, byte `b`) in a staging box of 64-byte rows laid out
// with the TMA 64-byte swizzle (16-byte unit index XOR bits 1-2 of the row; the box must be
// 512-byte aligned). Writing a wgmma accumulator this way is free of bank conflicts.
__device__ __forceinline__ uint32_t staging64Offset(int row, int unit, int b)
{
    return uint32_t(row * 64 + ((unit ^ ((row >> 1) & 3)) << 4) + b);
}
// Generic-proxy shared-memory writes -> visible to the async proxy (TMA, wgmma).
__device__ __forceinline__ void fenceProxyAsync()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// --- wgmma
// Shared-memory matrix descriptor for a K-major tile written by TMA with the 128-byte
// swizzle: rows of 64 bf16 (128 B), 8-row core groups 1024 B apart (stride byte offset),
// leading byte offset unused for swizzled K-major layouts. The tile base must be
// 1024-byte aligned; advancing K by 16 elements adds 32 bytes to the start address.
__device__ __forceinline__ uint64_t wgmmaDescSw128(uint32_t addr)
{
    uint64_t d = 0;
    d |= uint64_t((addr & 0x3FFFF) >> 4);
    d |= uint64_t(1) << 16;           // leading byte offset (ignored for this layout)
    d |= uint64_t(1024 >> 4) << 32;   // stride byte offset: 8 rows x 128 B
    d |= uint64_t(1) << 62;           // 128-byte swizzle
    return d;
}
__device__ __forceinline__ void wgmmaFence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmmaCommit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmmaWait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Registers the accumulator as read/written here, so the compiler keeps its uses after a wait.
template <int R>
__device__ __forceinline__ void fenceAcc(float (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

template <int N>
__device__ __forceinline__ void wgmmaTile(float (&d)[N / 2], uint64_t descA, uint64_t descB, int scaleD)
{
    if constexpr (N == 256) wgmma_m64n256k16(d, descA, descB, scaleD);
    else if constexpr (N == 128) wgmma_m64n128k16(d, descA, descB, scaleD);
    else wgmma_m64n64k16(d, descA, descB, scaleD);
}

// One 64-deep k-step for a warpgroup: MB blocks of 64 rows (A rows 64*mb.. of the stage's
// A tile) times N columns of the stage's B tile, 4 x k16. accumulate = 0 on a tile's first
// k-step: the first wgmma then overwrites the accumulator (no zeroing instructions, which
// would make ptxas serialize the wgmma pipeline).
template <int MB, int N>
__device__ __forceinline__ void mmaKStep(float (&acc)[MB][N / 2], uint32_t aTile, uint32_t bTile, int accumulate = 1)
{
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
        for (int mb = 0; mb < MB; ++mb) {
            wgmmaTile<N>(acc[mb], wgmmaDescSw128(aTile + mb * 64 * 128 + kk * 32),
                         wgmmaDescSw128(bTile + kk * 32), kk == 0 ? accumulate : 1);
        }
    }
}

// The same k-step from descriptors built once (session 13, issue 14: the ping-pong body, WS_PP_DESC_ADVANCE): a
// descriptor of wgmmaDescSw128 is a low word (start address >> 4 in bits 0-13, leading byte offset 1 in bits 16-29)
// and a constant high word (stride 1024 B, 128-byte swizzle), so the caller passes the low words of the k-step's A and
// B tiles (wgmmaDescSw128Lo) and each k16 sub-step adds kDescK16 (32 bytes = 2 units of 16) to them: one integer add
// per descriptor instead of rebuilding it (mask, shift, or) per wgmma. The start field cannot carry into bit 14: shared
// addresses stay under 228 KB (>> 4: under 0x3900).
inline constexpr uint32_t kDescSw128Hi = (1024u >> 4) | (1u << 30);  // wgmmaDescSw128's bits 32-63
inline constexpr uint32_t kDescK16 = 32u >> 4;                       // k16 of bf16 in a 128-byte row: 32 bytes
__device__ __forceinline__ uint32_t wgmmaDescSw128Lo(uint32_t addr) { return ((addr & 0x3FFFF) >> 4) | (1u << 16); }
__device__ __forceinline__ uint64_t wgmmaDescOfLo(uint32_t lo) { return (uint64_t(kDescSw128Hi) << 32) | lo; }
template <int MB, int N>
__device__ __forceinline__ void mmaKStepAdvance(float (&acc)[MB][N / 2], uint32_t descALo, uint32_t descBLo,
                                                int accumulate = 1)
{
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
        for (int mb = 0; mb < MB; ++mb) {
            wgmmaTile<N>(acc[mb], wgmmaDescOfLo(descALo + mb * (64 * 128 >> 4) + kk * kDescK16),
                         wgmmaDescOfLo(descBLo + kk * kDescK16), kk == 0 ? accumulate : 1);
        }
    }
}

// --- barriers and registers
__device__ __forceinline__ void namedBarSync(uint32_t id, uint32_t threads)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void namedBarArrive(uint32_t id, uint32_t threads)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
template <int R>
__device__ __forceinline__ void setMaxNRegInc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void setMaxNRegDec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R));
}
__device__ __forceinline__ uint32_t clusterCtaRank()
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
// Distributed shared memory: the address of `addr` (this CTA's shared::cta address) in cluster CTA `rank`'s shared
// memory, and a 16-byte load from such an address.
__device__ __forceinline__ uint32_t mapaShared(uint32_t addr, uint32_t rank)
{
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
__device__ __forceinline__ float4 ldSharedCluster4(uint32_t addr)
{
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}
__device__ __forceinline__ void clusterSync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// The same barrier without the release fence on the arrive (no MEMBAR.ALL.GPU / ERRBAR: a thread's memory operations in
// flight, its TMA loads too, do not hold its arrive); for orderings some other fence already gives (fenceBarrierInit).
__device__ __forceinline__ void clusterSyncRelaxed()
{
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;" ::: "memory");
}

// --- epilogue: one warpgroup's 64 x N accumulator block (wgmma m64nN layout) -> bf16 C.
// Thread t of the warpgroup holds rows 16*(t/32) + (t%32)/4 and +8, columns 8*j + 2*(t%4) + {0,1}.
// Clipped to rows x cols (partial tiles: the block's rows >= rows and columns >= cols are not written).
// A whole block inside C with an even ldc takes the unclipped path (paired 4-byte stores, no tests);
// a block over an edge tests each pair, and with an odd ldc (pairs not 4-byte aligned) stores
// single elements.
template <int N>
__device__ __forceinline__ void storeAccBf16(const float (&d)[N / 2], __nv_bfloat16* C, int ldc, int rows, int cols,
                                             int row0, int col0, int tInWg)
{
    const int warp = tInWg >> 5, lane = tInWg & 31;
    const int r = row0 + warp * 16 + (lane >> 2);
    const int c = col0 + 2 * (lane & 3);
    __nv_bfloat16* p0 = C + size_t(r) * ldc + c;
    __nv_bfloat16* p1 = p0 + size_t(8) * ldc;
    if (row0 + 64 <= rows && col0 + N <= cols && (ldc & 1) == 0) {  // warpgroup-uniform
#pragma unroll
        for (int j = 0; j < N / 8; ++j) {
            *reinterpret_cast<__nv_bfloat162*>(p0 + 8 * j) = __floats2bfloat162_rn(d[4 * j + 0], d[4 * j + 1]);
            *reinterpret_cast<__nv_bfloat162*>(p1 + 8 * j) = __floats2bfloat162_rn(d[4 * j + 2], d[4 * j + 3]);
        }
        return;
    }
    const bool pairs = (ldc & 1) == 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if (r + 8 * h >= rows) continue;
        __nv_bfloat16* p = h ? p1 : p0;
#pragma unroll
        for (int j = 0; j < N / 8; ++j) {
            const int cc = c + 8 * j;
            if (cc >= cols) break;
            const float v0 = d[4 * j + 2 * h], v1 = d[4 * j + 2 * h + 1];
            if (pairs && cc + 1 < cols) {
                *reinterpret_cast<__nv_bfloat162*>(p + 8 * j) = __floats2bfloat162_rn(v0, v1);
            } else {
                p[8 * j] = __float2bfloat16_rn(v0);
                if (cc + 1 < cols) p[8 * j + 1] = __float2bfloat16_rn(v1);
            }
        }
    }
}

// --- epilogue through the TMA engine (rung 6): the same 64 x N block, converted to bf16 box by
// box (64 rows x 32 columns: 64-byte rows with the 64-byte swizzle, see staging64Offset) into
// two 4 KB staging buffers of the warpgroup (`staging`, 1024-byte aligned), each box handed to
// the TMA engine (tmC: encodeTmaStoreSw64 with 64-row boxes) as soon as it is written. The bulk
// stores run on while the warpgroup continues; a buffer is rewritten only once the TMA engine
// has read it. Thread kStoreIssuer of the warpgroup owns the bulk groups: it must bulkWait<0>()
// before the kernel exits. It is lane 1, not lane 0: lane 0 of each warp is the trace writer,
// whose bulk groups (the trace copies) would otherwise share one queue with the stores.
// Partial tiles: the TMA engine drops the parts of a box outside C (no clipping code here); C's row
// stride must be a multiple of 16 bytes (cols % 8 == 0), else the caller uses storeAccBf16.
// `barId`: a named barrier of the warpgroup's 128 threads.
// (The barrier is spelled out here rather than namedBarSync so that the stall pass's stage map
// files its samples under the store.)
inline constexpr int kStoreBoxCols = 32;
inline constexpr uint32_t kStoreBoxBytes = 64 * kStoreBoxCols * 2;
inline constexpr int kStoreIssuer = 1;
__device__ __forceinline__ void storeBarrier(uint32_t barId)
{
    asm volatile("bar.sync %0, 128;" ::"r"(barId) : "memory");
}
// Boxes [b0, b1) only (stream-K's cluster split, session 11: a piece stores its slice of the tile): the same stores.
template <int N>
__device__ __forceinline__ void storeAccTmaBf16Boxes(const float (&d)[N / 2], const CUtensorMap* tmC, uint8_t* staging,
                                                     int row0, int col0, int tInWg, uint32_t barId, int b0, int b1)
{
    const int warp = tInWg >> 5, lane = tInWg & 31;
    const int r0 = warp * 16 + (lane >> 2), t = lane & 3;
#pragma unroll
    for (int c = 0; c < N / kStoreBoxCols; ++c) {
        if (c < b0 || c >= b1) continue;  // warpgroup-uniform
        uint8_t* buf = staging + (c & 1) * kStoreBoxBytes;
        if (tInWg == kStoreIssuer) bulkWaitRead<1>();  // the store that last read `buf` (two boxes ago) is done
        storeBarrier(barId);
#pragma unroll
        for (int u = 0; u < 4; ++u) {  // 16-byte unit u of the 64-byte rows = accumulator column group 4c+u
            const int j = 4 * c + u;
            *reinterpret_cast<__nv_bfloat162*>(buf + staging64Offset(r0, u, 4 * t)) =
                __floats2bfloat162_rn(d[4 * j + 0], d[4 * j + 1]);
            *reinterpret_cast<__nv_bfloat162*>(buf + staging64Offset(r0 + 8, u, 4 * t)) =
                __floats2bfloat162_rn(d[4 * j + 2], d[4 * j + 3]);
        }
        fenceProxyAsync();  // the writes above, visible to the TMA engine
        storeBarrier(barId);
        if (tInWg == kStoreIssuer) {
            tmaStore2d(tmC, buf, col0 + c * kStoreBoxCols, row0);
            bulkCommit();
        }
    }
}
template <int N>
__device__ __forceinline__ void storeAccTmaBf16(const float (&d)[N / 2], const CUtensorMap* tmC, uint8_t* staging,
                                                int row0, int col0, int tInWg, uint32_t barId)
{
    storeAccTmaBf16Boxes<N>(d, tmC, staging, row0, col0, tInWg, barId, 0, N / kStoreBoxCols);
}

// Grouped (L2-friendly) order of output tiles: walks `group` tile-rows down M before moving
// along N, so the CTAs working at one time share A row-blocks and B column-blocks.
__device__ __forceinline__ void tileCoords(int tile, int tilesM, int tilesN, int group, int& tm, int& tn)
{
    const int perGroup = group * tilesN;
    const int g = tile / perGroup;
    const int firstM = g * group;
    const int rows = min(tilesM - firstM, group);
    const int in = tile - g * perGroup;
    tm = firstM + in % rows;
    tn = in / rows;
}
#endif  // __CUDACC__

}  // namespace ws::kern
