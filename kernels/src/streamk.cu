// Rung 7 — stream-K.
// IDEA: the last wave is split along K. Pingpong hands each cluster whole 256x256 pair tiles; when the
// tiles do not fill the machine evenly (256x4096x4096: 16 pair tiles on 66 clusters), most SMs sit idle
// through the whole run or the last wave. Here a work unit is (pair tile, k-begin, k-end): whole waves stay
// data-parallel, and the k-steps of the remaining tiles are divided evenly among ALL clusters, each taking a
// contiguous range that may cross tile boundaries (streamk_schedule.h, a pure host/device function).
// A cluster whose piece does not reach its tile's last k-step writes its fp32 partial (each warpgroup its
// 64x256 accumulators) to a workspace slot and releases a flag (the launch's epoch, st.release.gpu: no
// memset between launches); the cluster computing the tile's last k-steps (the finisher) acquires the
// flags of the earlier pieces (ld.acquire.gpu spin), adds their partials in cluster order (deterministic:
// traced = untraced bit for bit) and stores C. Each cluster walks its range backwards, so the pieces a
// finisher waits for are the first things their clusters compute.
// Everything else is pingpong's, and is pingpong's code: the ping-pong body (pingpong_body.cuh: CTA pairs sharing
// B by TMA multicast, two consumer warpgroups on vertically adjacent 64x256 tiles kept out of step, TMA-store
// epilogue, setmaxnreg) called with this rung's walk (SkWalk) and epilogue hook (SkFixup).
// The tile is chosen for the shape (session 8): the body is instantiated for each of streamk_schedule.h's kTiles
// (256x256 per CTA pair down to 128x64 per CTA) and the host launches the one sk::chooseTile estimates fastest.
// A lone wave may instead be cut into equal pieces per tile, one per cluster (split-K, session 11: sk::SplitMode),
// where every piece sums and stores its own slice of the tile (SkFixup::splitK): no finisher reads them all.
// Or (s11-skinny2, SplitMode::Cluster, configurations of one CTA per block) the tile's pieces are one cluster along K
// that sums through distributed shared memory after a cluster barrier (SkFixup::clusterK, kernel gemmStreamkK): no
// workspace, no flags.
// Trace: pingpong's events, plus the two phases of this rung: Fixup (a piece writing its partial; a finisher
// adding the others') and WaitPartial (a finisher waiting for the earlier pieces' flags); TileBegin
// (kstep = tileM, aux = tileN) marks every unit.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "pingpong_body.cuh"
#include "streamk_flags.cuh"
#include "streamk_schedule.h"

// WS_SK_OBSERVE_KSTEPS (session 15, issue 14's tracing cost): 1, the traced kernels' consumer k-steps are stamped by
// three observer warps from the ring's barriers, not by the consumers (pingpong_body.cuh's Observe;
// docs/kernel-notes/tracing-cost-2.md, session 15); 0 (the default): the consumers record them (packed kEventKStep4
// records, session 14); 2 (a test build only): both, for gpu_ladder_trace --fidelity (the rebuilt k-steps against the
// consumers' own). Measured on the H200 (33 shapes): 1 costs +5.59 % against 0's +6.66 % (kTiles[4]'s shapes -9 to +4
// points), but its rebuilt phases are off by 40-390 cycles and move the consumers' Release time into MmaWait (1.4 ->
// 16 % of a warp's time at 1024^3): less cost for less truth, so 0 stays the default.
#ifndef WS_SK_OBSERVE_KSTEPS
#define WS_SK_OBSERVE_KSTEPS 0
#endif

namespace ws::kern {
namespace r_streamk {
constexpr int kObserveKSteps = WS_SK_OBSERVE_KSTEPS;
using namespace pp;
namespace tk = ws::trace::kind;

constexpr int kFixBar0 = 5;  // named barriers 5, 6: warpgroup cw's partial written / flags seen
constexpr int kSlotFloats = 64 * 256;  // room for one warpgroup's fp32 partial (64 x WN, WN <= 256)

// The tile configuration of kTiles[I] (streamk_schedule.h) as the body's Tile<>.
template <int I>
using TileOf = Tile<sk::kTiles[I].bn, sk::kTiles[I].cl, sk::kTiles[I].stages, sk::kTiles[I].bm,
                    sk::kTiles[I].skew < 0 ? kSkew : sk::kTiles[I].skew>;

// The schedule and the fixup workspace (host: launchStreamk).
struct SkParams {
    sk::Plan plan;
    float* partials;   // per CTA and consumer warpgroup: one 64x256 fp32 partial (slot = blockIdx.x * 2 + cw)
    uint32_t* flags;   // per slot: the epoch of the launch whose partial the slot holds
    uint32_t epoch;    // this launch's (host counter, never 0)
};

// The tile walk: this cluster's data-parallel tiles, then its stream-K range backwards (streamk_schedule.h);
// next(i) is called with i = 0, 1, 2, ... in order.
struct SkWalk {
    const sk::Plan& plan;
    int cluster, nDp;
    sk::SkCursor cursor;
    __device__ __forceinline__ SkWalk(const sk::Plan& p, int c)
        : plan(p), cluster(c), nDp(sk::dpCount(p, c)), cursor(sk::skBegin(p, c)) {}
    __device__ __forceinline__ int count() const { return sk::unitCount(plan, cluster); }
    __device__ __forceinline__ sk::Unit next(int i)
    {
        sk::Unit u;
        if (i < nDp) u = sk::dpUnit(plan, cluster, i);
        else sk::skNext(plan, cursor, u);
        return u;
    }
};

// One bf16 pair of C at (row, col), col even, clipped at `rows` and at ldc (= N) columns.
__device__ __forceinline__ void storePairBf16(__nv_bfloat16* C, int ldc, int rows, int row, int col, float v0, float v1)
{
    if (row >= rows || col >= ldc) return;
    __nv_bfloat16* p = C + size_t(row) * ldc + col;
    if ((ldc & 1) == 0 && col + 1 < ldc) {
        *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(v0, v1);
    } else {
        p[0] = __float2bfloat16_rn(v0);
        if (col + 1 < ldc) p[1] = __float2bfloat16_rn(v1);
    }
}

// The epilogue hook, the fixup: a piece short of its tile's last k-step writes its fp32 partial to the
// cluster's workspace slot and raises the slot's flag (the tile is not stored); the finisher (the piece that
// reaches the last k-step but not the first) waits for the earlier pieces' flags and adds their partials, in
// cluster order, before the store. Split-K plans (session 11) take the other path, splitK() below.
// Partials (session 9): each thread's accumulators are stored contiguously, 16 bytes at a time (float4 q of thread t
// at q * 128 + t: a warpgroup's store or load is 2 KB of consecutive bytes), and a thread whose rows all lie past M
// (one block of rows covers M: M < BM, so the block is at row 0) neither writes nor reads them (at M = 1 one
// thread in 32 of warpgroup 0 does).
template <class T, bool KCluster = false>
struct SkFixup {
    const SkParams& P;
    int kt;        // k-steps per tile
    uint32_t rank;
    int M, N;
    __nv_bfloat16* C;  // split-K stores its slices itself
    const CUtensorMap* tmC = nullptr;  // the cluster split stores its slice through the TMA store (N % 8 == 0)
    static constexpr bool kClusterSync = KCluster;  // clusterK: one cluster barrier per unit (pingpong_body.cuh)

    // thread t of warpgroup cw holds rows cw * kWgRows + 16 * (t / 32) + (t % 32) / 4 (and + 8) of the block
    __device__ __forceinline__ bool rowsLive(int cw, int t) const
    {
        return T::CL > 1 || M >= T::BM || cw * T::kWgRows + 16 * (t >> 5) + ((t & 31) >> 2) < M;
    }

    template <class Tr>
    __device__ __forceinline__ bool operator()(float (&acc)[T::WN / 2], const sk::Unit& u, int cw, int t, int fill, Tr& wt) const
    {
        constexpr int CL = T::CL, Q = T::WN / 8;  // float4s per thread
        const int mySlot = int(blockIdx.x) * 2 + cw;
        const bool live = rowsLive(cw, t);
        if constexpr (KCluster) return clusterK(acc, u, cw, t, fill, wt, live);
        if (P.plan.split > 0) return splitK(acc, u, cw, t, fill, wt, live);
        if (u.ke != kt) {  // a piece short of the tile's last k-step: write the partial, raise the flag
            wt.event(tk::Fixup, fill);
            float4* dst = reinterpret_cast<float4*>(P.partials + size_t(mySlot) * kSlotFloats);
            if (live) {
#pragma unroll
                for (int q = 0; q < Q; ++q)
                    __stcg(dst + q * 128 + t, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
            }
            namedBarSync(kFixBar0 + cw, 128);  // the warpgroup's 128 threads have written
            if (t == 0) {
                __threadfence();
                fixupPublishFlag(P.flags + mySlot, P.epoch);
            }
            return false;
        }
        if (u.kb > 0) {  // the finisher: add the earlier pieces' partials, in cluster order
            int first, lastC;
            sk::contributors(P.plan, u.tile, first, lastC);
            wt.event(tk::WaitPartial, fill);
            if (t == 0)
                for (int c = first; c < lastC; ++c) waitPartialFlag(P.flags + (c * CL + int(rank)) * 2 + cw, P.epoch);
            namedBarSync(kFixBar0 + cw, 128);
            wt.event(tk::Fixup, fill);
            if (live)
                for (int c = first; c < lastC; ++c) {
                    const float4* src =
                        reinterpret_cast<const float4*>(P.partials + size_t((c * CL + int(rank)) * 2 + cw) * kSlotFloats);
#pragma unroll
                    for (int q = 0; q < Q; ++q) {
                        const float4 v = __ldcg(src + q * 128 + t);
                        acc[4 * q] += v.x;
                        acc[4 * q + 1] += v.y;
                        acc[4 * q + 2] += v.z;
                        acc[4 * q + 3] += v.w;
                    }
                }
        }
        return true;
    }

    // Split-K (session 11, P.plan.split > 0): every piece of a tile is one cluster's only unit. Piece i of the tile's
    // p pieces sums the slice of the tile made of each thread's float4s [Q i / p, Q (i + 1) / p): it writes the rest of
    // its accumulators to its slot and raises its flag, waits for the p - 1 others' flags, adds their slices to its
    // own in piece order (deterministic, whichever piece sums: traced = untraced bit for bit) and stores the slice
    // to C from registers (clipped at M and N). The tile is never stored by the body.
    template <class Tr>
    __device__ __forceinline__ bool splitK(float (&acc)[T::WN / 2], const sk::Unit& u, int cw, int t, int fill, Tr& wt,
                                           bool live) const
    {
        constexpr int CL = T::CL, Q = T::WN / 8;
        const int cluster = int(blockIdx.x) / CL;
        int first, lastC;
        sk::contributors(P.plan, u.tile, first, lastC);
        const int pieces = lastC - first + 1, me = cluster - first;
        const int q0 = Q * me / pieces, q1 = Q * (me + 1) / pieces;
        const int mySlot = int(blockIdx.x) * 2 + cw;
        wt.event(tk::Fixup, fill);
        if (live) {
            float4* dst = reinterpret_cast<float4*>(P.partials + size_t(mySlot) * kSlotFloats);
#pragma unroll
            for (int q = 0; q < Q; ++q)
                if (q < q0 || q >= q1)
                    __stcg(dst + q * 128 + t, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
        }
        namedBarSync(kFixBar0 + cw, 128);  // the warpgroup's 128 threads have written
        if (t == 0) {
            __threadfence();
            fixupPublishFlag(P.flags + mySlot, P.epoch);
        }
        wt.event(tk::WaitPartial, fill);
        if (t == 0)
            for (int c = first; c <= lastC; ++c)
                if (c != cluster) waitPartialFlag(P.flags + (c * CL + int(rank)) * 2 + cw, P.epoch);
        namedBarSync(kFixBar0 + cw, 128);
        wt.event(tk::Fixup, fill);
        if (!live) return false;
        int tm, tn;
        tileCoords(u.tile, T::pairsM(M), T::tilesN(N), kGroupM / CL, tm, tn);
        tm = tm * CL + int(rank);
        const int warp = t >> 5, lane = t & 31;
        const int r = tm * T::BM + cw * T::kWgRows + warp * 16 + (lane >> 2);
        const int cBase = tn * T::BN + cw * T::kWgCols + 2 * (lane & 3);
        for (int c = first; c <= lastC; ++c) {  // the slice: its own piece first, then the others in piece order
            if (c == cluster) continue;
            const float4* src =
                reinterpret_cast<const float4*>(P.partials + size_t((c * CL + int(rank)) * 2 + cw) * kSlotFloats);
#pragma unroll
            for (int q = 0; q < Q; ++q)
                if (q >= q0 && q < q1) {
                    const float4 v = __ldcg(src + q * 128 + t);
                    acc[4 * q] += v.x;
                    acc[4 * q + 1] += v.y;
                    acc[4 * q + 2] += v.z;
                    acc[4 * q + 3] += v.w;
                }
        }
#pragma unroll
        for (int q = 0; q < Q; ++q)
            if (q >= q0 && q < q1) {
                storePairBf16(C, N, M, r, cBase + 8 * q, acc[4 * q], acc[4 * q + 1]);
                storePairBf16(C, N, M, r + 8, cBase + 8 * q, acc[4 * q + 2], acc[4 * q + 3]);
            }
        return false;
    }

    // The cluster split (s11-skinny2, P.plan.clusterK; the kernel gemmStreamkK): the tile's s pieces are one cluster
    // along K, piece = the CTA's rank. The ring is free once both warpgroups have drained (warpgroup 1 runs kSkew
    // k-steps behind): each warpgroup writes its fp32 accumulators there (thread t's float4 q at q * 128 + t), the
    // cluster barrier, then piece i sums the boxes [B i / s, B (i + 1) / s) of its warpgroup's 64 x WN tile (B 64 x 32
    // boxes) -- its own accumulators, then the peers' in piece order, read from their shared memory (deterministic:
    // traced = untraced bit for bit) -- and stores them through the TMA store (clipped by the engine; from registers
    // when N % 8 != 0). No workspace, no flags, no fence; the body's final cluster barrier keeps every CTA's shared
    // memory alive until its peers have read it.
    template <class Tr>
    __device__ __forceinline__ bool clusterK(float (&acc)[T::WN / 2], const sk::Unit& u, int cw, int t, int fill, Tr& wt,
                                             bool live) const
    {
        constexpr int Q = T::WN / 8, B = T::WN / kStoreBoxCols;  // float4s per thread, boxes per warpgroup
        static_assert(2 * Q * 128 * 16 <= T::S * int(T::kStage), "both warpgroups' partials fit in the ring");
        const int s = P.plan.split;
        const int me = int(clusterCtaRank());
        const int b0 = B * me / s, b1 = B * (me + 1) / s;
        extern __shared__ uint8_t smemRaw[];
        uint8_t* smem = alignSmem1024(smemRaw);
        const uint32_t mine = smemAddr(smem) + uint32_t(cw * Q * 128 + t) * 16u;  // + q * 2048: float4 q
        wt.event(tk::Fixup, fill);
        namedBarSync(kFixBar0, 256);  // both consumer warpgroups are done with the ring
        if (live) {
            float4* dst = reinterpret_cast<float4*>(smem) + cw * Q * 128 + t;
#pragma unroll
            for (int q = 0; q < Q; ++q)
                if (q < 4 * b0 || q >= 4 * b1)
                    dst[q * 128] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
        }
        wt.event(tk::WaitPartial, fill);
        waitPartialsCluster();  // every piece's partial is in its shared memory
        wt.event(tk::Fixup, fill);
        if (live)
            for (int j = 0; j < s; ++j) {  // the peers in piece order
                if (j == me) continue;
                const uint32_t src = mapaShared(mine, uint32_t(j));
#pragma unroll
                for (int b = 0; b < B; ++b) {
                    if (b < b0 || b >= b1) continue;
                    float4 v[4];
#pragma unroll
                    for (int x = 0; x < 4; ++x) v[x] = ldSharedCluster4(src + uint32_t(4 * b + x) * 2048u);
#pragma unroll
                    for (int x = 0; x < 4; ++x) {
                        const int q = 4 * b + x;
                        acc[4 * q] += v[x].x;
                        acc[4 * q + 1] += v[x].y;
                        acc[4 * q + 2] += v[x].z;
                        acc[4 * q + 3] += v[x].w;
                    }
                }
            }
        int tm, tn;
        tileCoords(u.tile, T::pairsM(M), T::tilesN(N), kGroupM, tm, tn);
        const int row0 = tm * T::BM + cw * T::kWgRows, col0 = tn * T::BN + cw * T::kWgCols;
        if (kTmaStore && (N & 7) == 0) {  // every thread of the warpgroup: the store's barriers
            storeAccTmaBf16Boxes<T::WN>(acc, tmC, smem + T::S * T::kStage + cw * 2 * kEpiBox, row0, col0, t,
                                        kEpiBar0 + cw, b0, b1);
            return false;
        }
        if (!live) return false;
        const int r = row0 + (t >> 5) * 16 + ((t & 31) >> 2), c0 = col0 + 2 * (t & 3);
#pragma unroll
        for (int q = 0; q < Q; ++q)
            if (q >= 4 * b0 && q < 4 * b1) {
                storePairBf16(C, N, M, r, c0 + 8 * q, acc[4 * q], acc[4 * q + 1]);
                storePairBf16(C, N, M, r + 8, c0 + 8 * q, acc[4 * q + 2], acc[4 * q + 3]);
            }
        return false;
    }
};

// The whole rung: the ping-pong body (pingpong_body.cuh) over the stream-K walk, with the fixup as its
// epilogue hook; TileI: the tile configuration (kTiles[TileI], chosen per shape on the host: sk::chooseTile).
template <bool Traced, int TileI = 0>
__global__ void __cluster_dims__(sk::kTiles[TileI].cl, 1, 1) __launch_bounds__(kPpThreads, 1)
    gemmStreamk(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                const __grid_constant__ CUtensorMap tmC, __nv_bfloat16* __restrict__ C, int M, int N, int K,
                void* trace, const SkParams P)
{
    using T = TileOf<TileI>;
    const int cluster = int(blockIdx.x) / T::CL;
    SkFixup<T> fixup{P, (K + kBK - 1) / kBK, T::CL > 1 ? clusterCtaRank() : 0u, M, N, C};
    body<Traced, T, kObserveKSteps>(tmA, tmB, tmC, C, M, N, trace, SkWalk(P.plan, cluster), fixup);
}

// The cluster split (s11-skinny2): the same rung for configurations of one CTA per block (cl = 1), launched with the
// cluster dimension (P.plan.split, 1, 1) as a launch attribute; every CTA's one unit is a piece of a tile, reduced in
// the cluster (SkFixup::clusterK).
template <bool Traced, int TileI>
__global__ void __launch_bounds__(kPpThreads, 1)
    gemmStreamkK(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                 const __grid_constant__ CUtensorMap tmC, __nv_bfloat16* __restrict__ C, int M, int N, int K,
                 void* trace, const SkParams P)
{
    using T = TileOf<TileI>;
    static_assert(T::CL == 1, "the cluster is the tile's pieces along K");
    SkFixup<T, true> fixup{P, (K + kBK - 1) / kBK, 0u, M, N, C, &tmC};
    body<Traced, T, kObserveKSteps>(tmA, tmB, tmC, C, M, N, trace, SkWalk(P.plan, int(blockIdx.x)), fixup);
}

}  // namespace r_streamk
using namespace r_streamk;

// The fixup workspace: grown on demand (flags zeroed when it grows), one per process; launches on one
// stream at a time (two concurrent launches would share the slots).
namespace {
float* g_partials = nullptr;
uint32_t* g_flags = nullptr;
size_t g_slots = 0;
uint32_t g_epoch = 0;

cudaError_t ensureWorkspace(size_t slots, cudaStream_t stream)
{
    if (slots <= g_slots) return cudaSuccess;
    if (g_partials) cudaFree(g_partials);
    if (g_flags) cudaFree(g_flags);
    g_partials = nullptr;
    g_flags = nullptr;
    g_slots = 0;
    cudaError_t e = cudaMalloc(&g_partials, slots * kSlotFloats * sizeof(float));
    if (e == cudaSuccess) e = cudaMalloc(&g_flags, slots * sizeof(uint32_t));
    if (e == cudaSuccess) e = cudaMemsetAsync(g_flags, 0, slots * sizeof(uint32_t), stream);  // before the kernel
    if (e == cudaSuccess) g_slots = slots;
    return e;
}

template <int I>
cudaError_t launchTile(const LaunchArgs& a, sk::SplitMode mode, const char** err)
{
    using T = TileOf<I>;
    static thread_local std::string msg;
    CUtensorMap tmA, tmB, tmC;
    msg = encodeMaps<T>(a, tmA, tmB, tmC);
    if (!msg.empty()) {
        *err = msg.c_str();
        return cudaErrorInvalidValue;
    }
    SkParams P;
    P.plan = sk::plan(T::pairsM(a.m) * T::tilesN(a.n), (a.k + kBK - 1) / kBK, a.gridCtas / T::CL, mode);
    cudaError_t e =
        P.plan.skIters > 0 && !P.plan.clusterK ? ensureWorkspace(size_t(a.gridCtas) * 2, a.stream) : cudaSuccess;
    if (e != cudaSuccess) return e;
    P.partials = g_partials;
    P.flags = g_flags;
    if (++g_epoch == 0) ++g_epoch;  // 0 is the value of a fresh flag
    P.epoch = g_epoch;
    auto* C = static_cast<__nv_bfloat16*>(a.c);
    // a.instrumented (ladder_bench --idle-cost, session 10): the traced kernel with a null buffer -- every trace call
    // on its path, clock reads included, nothing loaded or stored (pingpong's is a dispatch kernel: see ladder.h)
    const bool inst = a.trace != nullptr || a.instrumented;
    const bool kc = T::CL == 1 && P.plan.clusterK;  // the cluster split (sk::chooseMode gives it only to cl = 1)
    if (kc && inst && kTraceRelay) {  // the relay warp would sit in relayRun, never at the cluster barrier
        *err = "streamk: the cluster split is not traced under the trace relay (WS_PP_TRACE_RELAY experiment)";
        return cudaErrorNotSupported;
    }
    auto kern = inst ? gemmStreamk<true, I> : gemmStreamk<false, I>;
    if constexpr (T::CL == 1)
        if (kc) kern = inst ? gemmStreamkK<true, I> : gemmStreamkK<false, I>;
    // WARPSTAGE_EXP_UNTRACED_SMEM=BYTES (session 14, s14-tracestruct, an experiment): the untraced kernel launched with
    // BYTES more dynamic shared memory than it uses (the traced build's extra 12 KB: does the size alone cost?)
    static const int extraSmem = [] {
        const char* e = std::getenv("WARPSTAGE_EXP_UNTRACED_SMEM");
        return e && *e ? std::atoi(e) : 0;
    }();
    const int smem = T::kSmem + (inst ? kWarps * int(ws::trace::kTraceSmemPerWarp) + (kObserveKSteps ? int(kObserverSmem) : 0)
                                      : extraSmem);
    // per instantiation and device: set once (it is host time in every small GEMM's launch)
    static thread_local int attrDevice[4] = {-1, -1, -1, -1};
    int dev = 0;
    e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return e;
    const int which = (inst ? 1 : 0) + (kc ? 2 : 0);
    if (attrDevice[which] != dev) {
        e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (e != cudaSuccess) return e;
        attrDevice[which] = dev;
    }
    if (!kc) {
        kern<<<a.gridCtas, kPpThreads, smem, a.stream>>>(tmA, tmB, tmC, C, a.m, a.n, a.k, a.trace, P);
        return cudaGetLastError();
    }
    // the cluster split: clusters of P.plan.split CTAs along x (a divisor of the grid: sk::clusterKPieces)
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(unsigned(a.gridCtas));
    cfg.blockDim = dim3(unsigned(kPpThreads));
    cfg.dynamicSmemBytes = size_t(smem);
    cfg.stream = a.stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = unsigned(P.plan.split);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, kern, tmA, tmB, tmC, C, a.m, a.n, a.k, a.trace, P);
}

template <int... I>
cudaError_t launchTileOf(int tile, sk::SplitMode mode, const LaunchArgs& a, const char** err,
                         std::integer_sequence<int, I...>)
{
    cudaError_t e = cudaErrorInvalidValue;
    ((tile == I ? (e = launchTile<I>(a, mode, err), true) : false) || ...);
    return e;
}
}  // namespace

sk::SplitMode streamkSplitMode()
{
    // WARPSTAGE_STREAMK_SPLIT=streamk|splitk|cluster|global|dp forces how a lone wave is split (experiments, tests);
    // else the rule's
    if (const char* f = std::getenv("WARPSTAGE_STREAMK_SPLIT"); f && *f) {
        if (std::strcmp(f, "streamk") == 0) return sk::SplitMode::StreamK;
        if (std::strcmp(f, "splitk") == 0) return sk::SplitMode::SplitK;
        if (std::strcmp(f, "cluster") == 0) return sk::SplitMode::Cluster;
        if (std::strcmp(f, "global") == 0) return sk::SplitMode::Global;
        if (std::strcmp(f, "dp") == 0) return sk::SplitMode::Dp;
        static bool told = false;  // (once per process: the rule is asked on every launch)
        if (!told)
            std::fprintf(stderr, "streamk: WARPSTAGE_STREAMK_SPLIT=%s is not streamk, splitk, cluster, global or dp; "
                                 "the rule chooses\n", f);
        told = true;
    }
    return sk::SplitMode::Auto;
}

namespace {
// The rule's launch for a shape: the configuration (WARPSTAGE_STREAMK_TILE=i forces kTiles[i]: experiments and tests
// of every configuration) and its split mode (sk::chooseMode). The rule walks every cluster's units for each
// configuration: remembered for the last shape (a small GEMM launched again and again pays it once).
sk::Launch streamkLaunch(int m, int n, int k, int ctas)
{
    struct Last {
        int m = -1, n = -1, k = -1, ctas = -1, forced = -1;
        sk::SplitMode mode = sk::SplitMode::Auto;
        sk::Launch pick;
    };
    static thread_local Last last;
    const sk::SplitMode mode = streamkSplitMode();
    int forced = -1;
    if (const char* f = std::getenv("WARPSTAGE_STREAMK_TILE"); f && *f) {
        const int i = std::atoi(f);
        if (i >= 0 && i < sk::kTileCount) forced = i;
    }
    if (m != last.m || n != last.n || k != last.k || ctas != last.ctas || mode != last.mode || forced != last.forced) {
        sk::Launch pick;
        if (forced >= 0) pick = {forced, sk::chooseMode(sk::kTiles[forced], m, n, k, ctas, mode)};
        else pick = sk::chooseLaunch(m, n, k, ctas, mode);
        last = {m, n, k, ctas, forced, mode, pick};
    }
    return last.pick;
}
}  // namespace

int streamkTile(int m, int n, int k, int ctas) { return streamkLaunch(m, n, k, ctas).tile; }

sk::SplitMode streamkPlanMode(int m, int n, int k, int ctas) { return streamkLaunch(m, n, k, ctas).mode; }

cudaError_t launchStreamk(const LaunchArgs& a, const char** err)
{
    const sk::Launch l = streamkLaunch(a.m, a.n, a.k, a.gridCtas);
    return launchTileOf(l.tile, l.mode, a, err, std::make_integer_sequence<int, sk::kTileCount>{});
}

const void* kernelStreamk(bool traced)  // the default configuration's (kTiles[0]: large problems)
{
    return traced ? reinterpret_cast<const void*>(&gemmStreamk<true>)
                  : reinterpret_cast<const void*>(&gemmStreamk<false>);
}

}  // namespace ws::kern
