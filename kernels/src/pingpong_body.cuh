// The ping-pong body, written once: rung 6 (pingpong.cu) and rung 7 (streamk.cu) are this body with their own
// tile walk and epilogue hook. What the body is (rung 6's idea; see pingpong.cu's header): a CTA pair (cluster
// of 2) shares each k-step's B block by TMA multicast; one producer warp feeds a ring of S stages
// (common/ring.cuh: waitSlot / issueLoad = producer acquire / commit, waitData / release = consumer wait /
// release); two consumer warpgroups each own a 64x256 tile of the CTA's 128x256 block, warpgroup 1 kept kSkew
// k-steps behind warpgroup 0 by an ordering barrier per unit; each warpgroup drains its wgmmas, releases the last
// slot and hands its accumulators to the rung's epilogue hook, then stores them through the TMA store
// (registers when N % 8 != 0). The numbers above are pingpong's tile (PpTile); the body is a template on its tile
// configuration (Tile<BN, CL, S> below: 64 x BN per warpgroup, CL CTAs per cluster, S stages), which stream-K picks
// per shape (streamk_schedule.h, kTiles).
//
// What a rung supplies:
//   Walk  the units of this cluster, in order: count() and next(i) (i = 0, 1, ... in order) returning a unit
//         with .tile (pair tile index in the grouped order), .kb, .ke (its k-steps [kb, ke)). Pingpong: whole
//         tiles (DpWalk below); stream-K: whole tiles, then pieces of tiles (streamk.cu).
//   Epi   before the store: bool operator()(acc, unit, cw, t, fill, wt) -- true: store the tile to C now; false: the
//         hook kept it (stream-K's partial sums). Pingpong: StoreC below (always true). kClusterSync: true when the
//         hook passes one cluster barrier per unit (the other warps then pass as many).
// Both are plain structs the kernel builds from its arguments; the body copies the walk once per thread.
//
// Trace (Traced = true): Setup; TileBegin (kstep = tileM, aux = tileN) / TileEnd per unit; producer WaitSlot /
// IssueLoad per k-step; consumers WaitOrder (the ordering barrier), WaitData / MmaIssue / MmaWait / Release per
// k-step, Store; kstep is the CTA-wide fill counter. The hook records its own phases.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "hopper.cuh"
#include "rungs.h"
#include "warpstage/trace_device.cuh"  // before ring.cuh: the ladder's trace layer (no module symbols)
#include "common/ring.cuh"

#ifndef WS_PP_TMA_STORE
#define WS_PP_TMA_STORE 1
#endif
// Traced builds, 1: the relay (trace_relay.cuh, session 9) -- warp 1 copies every other warp's staged events out, so
// no warp that loads or computes runs a staging flush. 0 (the default): each warp flushes its own (StagedWarp,
// sessions 2-8). The relay is cheaper at large shapes (streamk 8192^3 +5.4 -> +3.4 %) but dearer at small and
// short-K ones (1024^3 pingpong +8.9 -> +14.8 %, streamk +34.5 -> +47.0 %): worse geometric means (H200, session 9,
// docs/benchmarks.md), so it stays an experiment.
#ifndef WS_PP_TRACE_RELAY
#define WS_PP_TRACE_RELAY 0
#endif
// Session 10 (s10-tracecost) experiments, each off by default (0: the cubins are main's, byte for byte):
// WS_PP_TRACE_RELAY=2: the relay with the end done by the sources (RelayedWarp::endOwn: each warp copies its own last
//   partial half and writes its region header, in parallel; the relay carries only the full halves);
// WS_PP_TRACE_LEAN_START=1 (with WS_PP_TRACE_RELAY=0): main's staged engine without the header load at the start
//   (trace_lean.cuh: each warp checks the header in settle(), after the cluster barrier) and the CTA record's start
//   pair read at the top
//   but written by warp 1 after the cluster barrier (CtaRecordWriter::beginAt): thread 0 inits the ring and issues the
//   first TMA load without waiting for a global load; the CTA's end record needs no header load either
//   (LeanCtaRecord: warp 1 leaves its start's header check in its staging ring's unused second half);
// WS_PP_TRACE_LEAN_START=2: the same, and each warp's flush copied by its lanes 16-31 (ld.shared / st.global, no
//   fence.proxy.async, no bulk copy; lane 0, which arrives on the ring's barriers, stores nothing to global memory).
#ifndef WS_PP_TRACE_LEAN_START
#define WS_PP_TRACE_LEAN_START 0
#endif
// Session 13 (s13-tracecost, issue 14: the untraced and traced consumer k-loop both shorter; both on by default,
// measured on the H200 over the 33 shapes: tracing cost pingpong +3.57 -> +2.93 %, streamk +9.27 -> +7.84 %, untraced
// time 0.997 / 0.989 of main's; docs/kernel-notes/tracing-cost.md, session 13):
// WS_PP_DESC_ADVANCE=1: the consumer's wgmma descriptors built once (their low words for slot 0, before the units) and
//   advanced by integer adds: + slot * kStage / 16 per k-step, + 2 per k16 sub-step (hopper.cuh's mmaKStepAdvance);
//   0: each wgmma's descriptors rebuilt from the address (mmaKStep: mask, shift, or per descriptor).
// WS_PP_UNSIGNED_FILL=1: the ring's slot and phase from the fill counter as unsigned (Ring<..., UnsignedFill>): no
//   sign fix-ups in fill % S and fill / S (S = 4, 6, 8); the fill counter and the trace events' kstep are unchanged.
#ifndef WS_PP_DESC_ADVANCE
#define WS_PP_DESC_ADVANCE 1
#endif
#ifndef WS_PP_UNSIGNED_FILL
#define WS_PP_UNSIGNED_FILL 1
#endif
// Session 14 (s14-tracesmall, issue 14): WS_PP_PACK_KSTEP=1: a consumer k-step's four events (MmaWait and Release of
// fill - 2, WaitData and MmaIssue of fill) staged as ONE 16-byte record when their gaps fit 16 bits (Warp::kStepAt,
// trace_format.h's kEventKStep4), and the producer's WaitSlot + IssueLoad of a k-step as one (Warp::loadAt,
// kEventLoad2); the decoder expands them into the same events: a quarter (consumers) and half (producer) of the
// stores and of the staging flushes per k-step. 0: every event its own record (eventsAt, sessions 11-13).
#ifndef WS_PP_PACK_KSTEP
#define WS_PP_PACK_KSTEP 1
#endif
// WS_PP_TRACE_QUICK_END=1 (session 14, an experiment, off): each warp's end waits only until its last bulk copies have
// read the staging ring (cp.async.bulk.wait_group.read 0, not the writes' completion: the kernel's end completes
// them), and thread 0 writes the CTA's end record without loading the buffer header again (CtaRecordWriter::endKnown:
// warp 0's writes() says the header matched). Measured on the H200 against the packed records alone (33 shapes):
// pingpong +2.66 -> +2.72 %, streamk +6.04 -> +6.24 % (0.3-1.8 points less at the smallest kernels, noise above),
// so it stays off (docs/kernel-notes/tracing-cost.md, session 14). 0: the full waits and the reload (sessions 2-13).
#ifndef WS_PP_TRACE_QUICK_END
#define WS_PP_TRACE_QUICK_END 0
#endif
// WS_PP_TRACE_STRUCT_EXP (session 14, s14-tracestruct: experiments on the traced kernel's structure, where the
// null-buffer launch of stream-K's 128x64 configuration still costs +17 %; off, 0: the cubins are main's), a bit mask:
//   1: the traced producer loop on thread 0 alone, as untraced (its trace calls are lane 0's: the staged engine's stores,
//      flushes and end are lane 0's anyway); 2: without a buffer, warps 1-3 leave after setmaxnreg as untraced (null-
//      buffer launches only); 4: no consumer k-step records (the k-loop's kStepAt / eventsAt and the drain's); 8: no
//      producer k-step records (loadAt / eventsAt). Measured with ladder_bench --idle-cost (docs/kernel-notes/
//      tracing-cost.md, session 14, s14-tracestruct).
// WS_PP_ALONE_EARLY, WS_PP_ALONE_NO_END (sessions 15-16, issue 14): a CTA alone (CL == 1 -- stream-K's kTiles[2..6])
// whose hook passes no cluster barrier (not the cluster split: gemmStreamkK) has no peer that signals its ring or
// reads its shared memory, so
//   EARLY 2 (the default): its producer issues the first S loads right after initialising the ring, before the start
//   barrier, which is relaxed (clusterSyncRelaxed: no release fence; fenceBarrierInit orders the ring's init) -- their
//   latency overlaps the barrier, the register reallocation and the consumers' set-up; 1: the same before the full
//   barrier (session 15: 1.5-9.6 % SLOWER, its release fence waits for the loads in flight); 0: loads after the barrier;
//   NO_END 1 (the default): it leaves without the final cluster barrier; 0: it passes it.
// Measured on the H200 against both 0 (session 16, s16-gemmgap; docs/kernel-notes/gemm-shapes-s16.md): 1024^3 11.25 ->
// 10.49 us cold, 11.30 -> 10.56 hot (NO_END alone 10.98), 128x14336x4096 37.4 -> 36.8 us cold; the cluster split with
// the early loads was 0.5-1.4 % slower (256x4096x4096 21.8 -> 22.1 us), so it keeps the loads after the barrier. Pairs
// and the cluster split compile to the cubins of both 0, byte for byte (their producer loop is the written-out one).
#ifndef WS_PP_ALONE_EARLY
#define WS_PP_ALONE_EARLY 2
#endif
#ifndef WS_PP_ALONE_NO_END
#define WS_PP_ALONE_NO_END 1
#endif
#ifndef WS_PP_TRACE_STRUCT_EXP
#define WS_PP_TRACE_STRUCT_EXP 0
#endif

namespace ws::kern::pp {
using namespace geom;

constexpr bool kTmaStore = WS_PP_TMA_STORE;
// TMA-store epilogue (storeAccTmaBf16): each warpgroup writes its 64xBN tile as boxes of 64x32
// through two 4 KB staging buffers of its own.
constexpr uint32_t kEpiBox = kStoreBoxBytes;
constexpr int kWarps = kPpThreads / 32;
constexpr int kConsumerWarps = 8;
constexpr int kGoBar = 1;    // named barrier: "warpgroup 1 may start unit i" (warpgroup 0 has issued kSkew k-steps)
constexpr int kTakenBar = 2; // named barrier: "warpgroup 1 has taken its go for unit i" (keeps the two in step)
constexpr int kEpiBar0 = 3;  // named barriers 3, 4: warpgroup cw's epilogue steps (5 and up: free for the hook)
constexpr int kSkew = kPpSkew;
constexpr bool kTraceRelay = WS_PP_TRACE_RELAY != 0;
constexpr bool kRelaySourcesEnd = WS_PP_TRACE_RELAY == 2;
constexpr bool kLeanStart = WS_PP_TRACE_LEAN_START != 0 && !kTraceRelay;
constexpr bool kDescAdvance = WS_PP_DESC_ADVANCE != 0;
constexpr bool kUnsignedFill = WS_PP_UNSIGNED_FILL != 0;
constexpr bool kPackKStep = WS_PP_PACK_KSTEP != 0;
constexpr bool kQuickEnd = WS_PP_TRACE_QUICK_END != 0;
constexpr int kStructExp = WS_PP_TRACE_STRUCT_EXP;
constexpr int kCtaRecordWarp = 1;  // lean start: the warp that writes the CTA record (warpgroup 0's first idle warp)
constexpr int kRelayWarp = 1;  // warpgroup 0's first idle warp
constexpr uint32_t kRelaySources = ((1u << kWarps) - 1u) & ~(1u << kRelayWarp);  // every other warp
template <bool Traced>
using BodyCta = typename std::conditional<Traced && kLeanStart && ws::trace::kEnabled, ws::trace::LeanCtaRecord,
                                          ws::trace::CtaTrace<Traced>>::type;
template <bool Traced>
using BodyTrace = typename std::conditional<
    kTraceRelay, ws::trace::RelayWarpTrace<Traced>,
    typename std::conditional<kLeanStart, ws::trace::LeanWarpTrace<Traced, WS_PP_TRACE_LEAN_START == 2>,
                              ws::trace::WarpTrace<Traced>>::type>::type;

// The tile configuration, a template parameter of the body (issue 14, session 8: stream-K picks one per shape,
// streamk_schedule.h's kTiles): a CTA computes a 128 x BN_ block (each consumer warpgroup 64 x BN_: wgmma m64nBN_),
// CL_ CTAs along M form a cluster that shares each k-step's B block by multicast (CL_ = 1: no multicast), over a
// ring of S_ stages. Pingpong (rung 6) uses PpTile, the rung's one configuration.
// BM_ (session 9, s9-smallm): 128 (default: each warpgroup 64 rows x BN) or 64 (both warpgroups on the block's
// 64 A rows, warpgroup cw on B's columns cw * BN/2 ..: wgmma m64n{BN/2}; A's box and bytes halve, for M <= 64).
template <int BN_, int CL_, int S_, int BM_ = kPpBM, int SKEW_ = kSkew>
struct Tile {
    static constexpr int BM = BM_, BN = BN_, CL = CL_, S = S_;
    static constexpr int SKEW = SKEW_;  // k-steps warpgroup 1 runs behind warpgroup 0 (0: in step, no ordering barrier)
    static constexpr int WN = BM == 128 ? BN : BN / 2;  // a warpgroup's columns (its wgmma's N)
    static constexpr int kWgRows = BM == 128 ? 64 : 0;  // warpgroup cw's first row in the block: cw * kWgRows
    static constexpr int kWgCols = BM == 128 ? 0 : WN;  // warpgroup cw's first column in the block: cw * kWgCols
    static constexpr uint32_t kBytesA = BM * kBK * 2, kBytesB = BN * kBK * 2, kStage = kBytesA + kBytesB;
    static constexpr uint32_t kPartB = kBytesB / CL;  // the part of the B block each CTA of the cluster loads
    static constexpr uint32_t kEpiBytes = kTmaStore ? 2 * 2 * kEpiBox : 0;  // 2 warpgroups x 2 buffers
    static constexpr int kSmem = S * kStage + kEpiBytes + 1024 + 128;      // + alignment + barrier area
    using Ring = ws::kern::Ring<S, CL, /*ReadyMarker=*/false, kUnsignedFill>;
    static_assert(WN == 256 || WN == 128 || WN == 64, "wgmma m64nWNk16 with WN = 256, 128 or 64");
    static_assert(BM == 128 || BM == 64, "blocks of 128 rows (a warpgroup per 64) or 64 (both on the same rows)");
    // 64-row blocks may run in pairs along M (s13-smallk, an experiment: streamk's kTiles[7], cuBLAS's tile at
    // 256x4096x4096): each CTA loads half of the 128-row B block and multicasts it, as the 128-row blocks' pairs do
    static_assert(CL == 1 || CL == 2, "CTAs alone or in pairs");
    static_assert(2 * S * 8 <= 128, "the barrier area holds 2 x S mbarriers");
    static_assert(SKEW >= 0 && SKEW < S, "the skew must leave warpgroup 0 a slot to wait on");
    static_assert(kSmem + kWarps * ws::trace::kTraceSmemPerWarp <= 227 * 1024, "traced build must fit shared memory");
    static_assert(kWarps <= ws::trace::kRelayMaxSources, "the relay watches at most kRelayMaxSources warps");
    // Blocks of the output (partial blocks at the edges: TMA zero-fills the loads past M, N and K, and clips
    // the stores): cluster tiles along M, block columns along N.
    static __host__ __device__ __forceinline__ int pairsM(int M) { return (M + BM * CL - 1) / (BM * CL); }
    static __host__ __device__ __forceinline__ int tilesN(int N) { return (N + BN - 1) / BN; }
    // A's box rows (session 9): a CTA alone (CL = 1) on a problem of fewer rows than its block loads only the rows
    // that exist, rounded up to 8 (A's rows past M in shared memory are stale: they only feed output rows past M,
    // which are never stored nor fixed up); otherwise BM. Host (encodeMaps) and kernel (the expected bytes) agree.
    static __host__ __device__ __forceinline__ int boxRowsA(int M) { return CL == 1 && M < BM ? (M + 7) / 8 * 8 : BM; }
};
using PpTile = Tile<kPpBN, kPpCluster, kPpStages>;

constexpr int BM = PpTile::BM, BN = PpTile::BN, S = PpTile::S, CL = PpTile::CL;
constexpr uint32_t kBytesA = PpTile::kBytesA, kBytesB = PpTile::kBytesB, kStage = PpTile::kStage;
constexpr uint32_t kPartB = PpTile::kPartB;
constexpr uint32_t kEpiBytes = PpTile::kEpiBytes;
constexpr int kSmem = PpTile::kSmem;

using PpRing = PpTile::Ring;

// Pair tiles of the output (partial tiles at the edges: TMA zero-fills the loads past M, N and K, and clips
// the stores).
__host__ __device__ __forceinline__ int pairsM(int M) { return (M + BM * CL - 1) / (BM * CL); }
__host__ __device__ __forceinline__ int tilesN(int N) { return (N + BN - 1) / BN; }

// Pingpong's walk: pair tiles cluster, cluster + clusters, ... whole (the same for both CTAs of the pair).
struct DpWalk {
    struct Unit {
        int tile, kb, ke;
    };
    int cluster, clusters, numPairs, kt;
    __device__ __forceinline__ int count() const { return (numPairs - cluster + clusters - 1) / clusters; }
    __device__ __forceinline__ Unit next(int i) const { return {cluster + i * clusters, 0, kt}; }
};

// Pingpong's epilogue hook: every unit is a whole tile; store it.
struct StoreC {
    static constexpr bool kClusterSync = false;  // the hook passes no cluster barrier (see the body's end)
    template <int R, class U, class Tr>
    __device__ __forceinline__ bool operator()(float (&)[R], const U&, int, int, int, Tr&) const
    {
        return true;
    }
};

// Host: the three tensor maps of a launch (C's only where TMA can store: rows a multiple of 16 bytes; otherwise
// the kernel stores from registers, same test there: N % 8, and never reads tmC). "" or the error.
template <class T = PpTile>
inline std::string encodeMaps(const LaunchArgs& a, CUtensorMap& tmA, CUtensorMap& tmB, CUtensorMap& tmC)
{
    std::string msg = encodeTmaK64(&tmA, a.a, a.m, a.k, T::boxRowsA(a.m));
    if (msg.empty()) msg = encodeTmaK64(&tmB, a.b, a.n, a.k, T::BN / T::CL);
    std::memset(&tmC, 0, sizeof tmC);
    if (msg.empty() && a.n % 8 == 0) msg = encodeTmaStoreSw64(&tmC, a.c, a.m, a.n, 64);
    return msg;
}

#ifdef __CUDACC__
// The body, a template on tracing. The tensor maps are the kernels' __grid_constant__ parameters, passed by
// reference (the TMA instructions take their addresses).
// T: the tile configuration (Tile<>; pingpong: PpTile).
template <bool Traced, class T = PpTile, class Walk, class Epi>
__device__ __forceinline__ void body(const CUtensorMap& tmA, const CUtensorMap& tmB, const CUtensorMap& tmC,
                                     __nv_bfloat16* __restrict__ C, int M, int N, void* trace, Walk walk, Epi& epi)
{
    constexpr int BM = T::BM, BN = T::BN, S = T::S, CL = T::CL, WN = T::WN;
    constexpr uint32_t kBytesA = T::kBytesA, kStage = T::kStage, kPartB = T::kPartB, kEpiBytes = T::kEpiBytes;
    // bytes a stage receives: kStage, less A's rows past M where the box shrinks (Tile::boxRowsA)
    const uint32_t stageBytes = kStage - uint32_t(BM - T::boxRowsA(M)) * (kBK * 2);
    using PpRing = typename T::Ring;
    namespace tk = ws::trace::kind;
    namespace tr = ws::trace::role;
    extern __shared__ uint8_t smemRaw[];
    uint8_t* smem = alignSmem1024(smemRaw);
    uint8_t* staging = smem + S * kStage;  // kEpiBytes of epilogue staging (TMA store)
#ifdef WS_EXPERIMENT_UNIFORM_WARP
    const int tid = threadIdx.x, warp = __shfl_sync(0xffffffffu, tid / 32, 0), wg = warp / 4;
#else
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
#endif
    const uint32_t rank = CL > 1 ? clusterCtaRank() : 0u;
    PpRing ring;
    ring.full = reinterpret_cast<uint64_t*>(staging + kEpiBytes);
    ring.empty = ring.full + S;
    ring.peer = rank ^ 1u;
    const int numPairsM = T::pairsM(M), numTilesN = T::tilesN(N);
    // the TMA store needs C's rows 16-byte aligned (N % 8 == 0); otherwise the clipped register stores
    const bool tmaStore = kTmaStore && (N & 7) == 0;
    const int nLocal = walk.count();  // units of this cluster (the same for both CTAs)
    // sessions 15-16: see ProducerState below (a CTA alone whose hook passes no cluster barrier; not with the trace
    // experiments that set up warp 0's recording later)
    constexpr bool kEarlyLoads =
        WS_PP_ALONE_EARLY != 0 && CL == 1 && !Epi::kClusterSync && !kTraceRelay && !kLeanStart;

    BodyTrace<Traced> wt;
    BodyCta<Traced> ct;
    // traced: one 1 KB staging ring per warp after the barriers; the relay's state in the second half of its own
    uint8_t* traceStage = reinterpret_cast<uint8_t*>(ring.full) + 128;
    auto* relayState = reinterpret_cast<ws::trace::RelayShared*>(traceStage + kRelayWarp * ws::trace::kTraceSmemPerWarp
                                                                 + ws::trace::kTraceSmemPerWarp / 2);
    uint64_t ctaStart[2] = {0, 0};  // relay: the CTA record's start pair, read now, written by the relay warp
    // lean start: the CTA record writer's header check, in the unused second half of warp 1's staging ring
    auto* ctaValid = reinterpret_cast<uint32_t*>(traceStage + kCtaRecordWarp * ws::trace::kTraceSmemPerWarp
                                                 + ws::trace::kTraceSmemPerWarp / 2);
    if constexpr (Traced) {
        if constexpr (kTraceRelay || kLeanStart) {
            if (warp == (kTraceRelay ? kRelayWarp : kCtaRecordWarp)) {
                ctaStart[0] = ws::trace::readGlobalTimer();
                ctaStart[1] = ws::trace::readClock64();
            }
        } else {
            ct.begin(trace);
        }
        const uint8_t role = wg > 0 ? tr::Consumer : (warp == 0 ? tr::Producer : tr::Idle);
        wt.begin(trace, warp, role, wg, wg > 0 ? wg - 1 : 0, traceStage + warp * ws::trace::kTraceSmemPerWarp);
        if constexpr (kTraceRelay)
            if (warp != kRelayWarp) wt.attach(relayState, warp);
        wt.event(tk::Setup);
    }
    auto coords = [&](int tile, int& tm, int& tn) {
        int pm;
        tileCoords(tile, numPairsM, numTilesN, kGroupM / CL, pm, tn);
        tm = pm * CL + int(rank);
    };
    // producer: thread 0 issues; traced, all of warp 0 runs the loop (trace calls are warp-uniform)
    const bool producer = Traced && (kStructExp & 1) == 0 ? warp == 0 : tid == 0;
    // Sessions 15-16 (kEarlyLoads): a CTA alone (CL == 1: its ring is its own, no peer signals it or receives its loads)
    // issues its first S loads right after initialising the ring, before the CTA's barrier, so their latency overlaps
    // the barrier, the register reallocation and the consumers' setup. The producer's loop is then a function of its
    // state (unit i, k-step kt, fill, whether unit i has begun), run to fill S before the barrier and to the end
    // after it: the same loads and the same trace events in the same order, only earlier.
    struct ProducerState {
        int i = 0, kt = 0, ke = 0, tm = 0, tn = 0, fill = 0;
        bool open = false;  // unit i has begun (its TileBegin recorded, kt .. ke its k-steps left)
    } ps;
    auto produce = [&](int stopFill) {
        for (; ps.i < nLocal; ++ps.i) {
            if (!ps.open) {
                const auto u = walk.next(ps.i);
                coords(u.tile, ps.tm, ps.tn);
                if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, ps.tm, ws::trace::kNoSlot, int16_t(ps.tn));
                ps.kt = u.kb;
                ps.ke = u.ke;
                ps.open = true;
            }
            for (; ps.kt < ps.ke; ++ps.kt, ++ps.fill) {
                if (ps.fill >= stopFill) return;
                const uint64_t tWait = ring.waitSlot(ps.fill, wt);
                // traced: the ring's IssueLoad event is kept (issued) and staged with WaitSlot's (eventsAt)
                ws::trace::Stamp<Traced> issued;
                ring.issueLoad(ps.fill, tWait, stageBytes, tid == 0, issued, [&](int slot, uint64_t* bar) {
                    uint8_t* st = smem + slot * kStage;
                    tmaLoad2d(st, &tmA, bar, ps.kt * kBK, ps.tm * BM);
                    if constexpr (CL > 1)
                        tmaLoad2dMulticast(st + kBytesA + rank * kPartB, &tmB, bar, ps.kt * kBK,
                                           ps.tn * BN + int(rank) * (BN / CL), uint16_t((1u << CL) - 1));
                    else
                        tmaLoad2d(st + kBytesA, &tmB, bar, ps.kt * kBK, ps.tn * BN);
                });
                if constexpr (Traced && (kStructExp & 8) == 0) {  // issued.e: IssueLoad, after WaitSlot's (tWait)
                    if (ps.fill >= S) {
                        const ws::trace::StampedEvent e[2] = {
                            {tWait, ps.fill, tk::WaitSlot, uint8_t(PpRing::slot(ps.fill)), 0}, issued.e};
                        if constexpr (kPackKStep) ws::trace::loadAtOf<S>(wt, e);  // one record (session 14)
                        else ws::trace::eventsAtOf(wt, e);
                    } else {
                        const ws::trace::StampedEvent e[1] = {issued.e};
                        ws::trace::eventsAtOf(wt, e);
                    }
                }
            }
            if constexpr (Traced) wt.event(ws::trace::kEventTileEnd);
            ps.open = false;
        }
    };
    if (tid == 0) {
        tmaPrefetchDesc(&tmA);
        tmaPrefetchDesc(&tmB);
        if (tmaStore) tmaPrefetchDesc(&tmC);
        ring.init(kConsumerWarps);  // empty: the 8 consumer warps, in both CTAs
    }
    if constexpr (kEarlyLoads) {
        __syncwarp();  // (traced: the trace calls are warp-uniform; lane 0 has just initialised the ring)
        if (producer) produce(S);  // fills 0 .. S-1 need no slot wait; thread 0 initialised their barriers
        __syncwarp();
    }
    if constexpr (Traced && kTraceRelay)  // the relay's barriers: its own lane 0, beside thread 0's ring init
        if (tid == kRelayWarp * 32) relayState->init();
    // the peer's barriers are initialised before anyone signals them; with the early loads (a CTA alone) the arrive is
    // relaxed: fenceBarrierInit already ordered the init, and a release fence would wait for the loads in flight
    if constexpr (kEarlyLoads && WS_PP_ALONE_EARLY == 2) clusterSyncRelaxed();
    else clusterSync();
    if constexpr (Traced && kLeanStart) {  // the CTA record's start, read at the top, written off thread 0's path
        wt.settle();  // the header check: its load overlapped the ring init and the cluster barrier
        if (warp == kCtaRecordWarp) ct.beginAt(trace, laneId() == 0, ctaStart[0], ctaStart[1], ctaValid);
    }


    if (wg == 0) {
        setMaxNRegDec<40>();
        // Untraced, warps 1-3 have nothing to do: they leave now rather than sit at the final
        // cluster barrier (which waits only for threads that have not exited) for the whole
        // kernel, where the stall pass would sample them. Traced, they stay for the CTA record.
        if constexpr (!Traced)
            if (warp != 0) return;
        if constexpr (Traced && (kStructExp & 2) != 0)  // experiment: no buffer, warps 1-3 leave as untraced
            if (trace == nullptr && warp != 0) return;
        if constexpr (Traced && kTraceRelay)  // the relay: copies the other warps' events until they all ended
            if (warp == kRelayWarp) {
                ct.beginAt(trace, laneId() == 0, ctaStart[0], ctaStart[1]);
                ws::trace::relayRun<kRelaySourcesEnd>(trace, relayState, kRelaySources, smemAddr(traceStage));
            }
        if constexpr (kEarlyLoads) {  // CL == 1: resumes where the early part (before the barrier) stopped
            if (producer) produce(0x7fffffff);
        } else if (producer) {  // (the same loop, written out: rungs in pairs keep their code)
            int fill = 0;
            for (int i = 0; i < nLocal; ++i) {
                const auto u = walk.next(i);
                int tm, tn;
                coords(u.tile, tm, tn);
                if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, int16_t(tn));
                for (int kt = u.kb; kt < u.ke; ++kt, ++fill) {
                    const uint64_t tWait = ring.waitSlot(fill, wt);
                    // traced: the ring's IssueLoad event is kept (issued) and staged with WaitSlot's (eventsAt)
                    ws::trace::Stamp<Traced> issued;
                    ring.issueLoad(fill, tWait, stageBytes, tid == 0, issued, [&](int slot, uint64_t* bar) {
                        uint8_t* st = smem + slot * kStage;
                        tmaLoad2d(st, &tmA, bar, kt * kBK, tm * BM);
                        if constexpr (CL > 1)
                            tmaLoad2dMulticast(st + kBytesA + rank * kPartB, &tmB, bar, kt * kBK,
                                               tn * BN + int(rank) * (BN / CL), uint16_t((1u << CL) - 1));
                        else
                            tmaLoad2d(st + kBytesA, &tmB, bar, kt * kBK, tn * BN);
                    });
                    if constexpr (Traced && (kStructExp & 8) == 0) {  // issued.e: IssueLoad, after WaitSlot's (tWait)
                        if (fill >= S) {
                            const ws::trace::StampedEvent e[2] = {
                                {tWait, fill, tk::WaitSlot, uint8_t(PpRing::slot(fill)), 0}, issued.e};
                            if constexpr (kPackKStep) ws::trace::loadAtOf<S>(wt, e);  // one record (session 14)
                            else ws::trace::eventsAtOf(wt, e);
                        } else {
                            const ws::trace::StampedEvent e[1] = {issued.e};
                            ws::trace::eventsAtOf(wt, e);
                        }
                    }
                }
                if constexpr (Traced) wt.event(ws::trace::kEventTileEnd);
            }
        }
    } else {  // consumers: warpgroup cw owns rows 64*cw.. of every block
        setMaxNRegInc<232>();
        const int cw = wg - 1;
        const bool lane0 = laneId() == 0;
        const int t = tid & 127;
        int fill = 0;
        // WS_PP_DESC_ADVANCE: the low words of this warpgroup's A and B descriptors in slot 0 (a slot's are kStage / 16
        // further per slot)
        const uint32_t descA0 = wgmmaDescSw128Lo(smemAddr(smem) + cw * T::kWgRows * 128);
        const uint32_t descB0 = wgmmaDescSw128Lo(smemAddr(smem) + kBytesA + cw * T::kWgCols * 128);
        for (int i = 0; i < nLocal; ++i) {
            const auto u = walk.next(i);
            const int KU = u.ke - u.kb;                      // k-steps of this unit
            const int goAt = (KU < T::SKEW ? KU : T::SKEW) - 1;  // warpgroup 0 signals after issuing this k-step
            int tm, tn;
            coords(u.tile, tm, tn);
            if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, int16_t(tn));
            if (T::SKEW > 0 && cw == 1) {  // wait until warpgroup 0 is SKEW k-steps into this unit
                if constexpr (Traced) wt.event(tk::WaitOrder, fill);
                namedBarSync(kGoBar, 256);
                if (i + 1 < nLocal) namedBarArrive(kTakenBar, 256);
            }
            float acc[1][WN / 2];  // first k-step overwrites (accumulate = 0)
            // Traced (session 11): where a phase begins the warp only reads the clock (a Stamp keeps the event); the
            // k-step's events are staged together right after its wgmma issue, with one flush test (eventsAt): MmaWait
            // and Release of fill - 1, stamped at the end of one iteration, go with WaitData and MmaIssue of the next.
            // The same events in the same order as before; at BN = 64 (wgmmas 4x shorter than pingpong's) the
            // per-event code made the consumer warps issue-bound (docs/kernel-notes/tracing-cost.md, session 11).
            ws::trace::Stamp<Traced> mmaWaited, released;  // of fill - 1: staged with the next k-step (kt >= 2)
            for (int kt = 0; kt < KU; ++kt, ++fill) {
                ws::trace::Stamp<Traced> waited, issued;
                ring.waitData(fill, waited);
                issued.event(tk::MmaIssue, fill, PpRing::slot(fill));
                if constexpr (kDescAdvance) {
                    const uint32_t d = uint32_t(PpRing::slot(fill)) * (kStage >> 4);
                    wgmmaFence();
                    mmaKStepAdvance<1, WN>(acc, descA0 + d, descB0 + d, kt > 0);
                } else {
                    const uint32_t st = smemAddr(smem + PpRing::slot(fill) * kStage);
                    wgmmaFence();
                    mmaKStep<1, WN>(acc, st + cw * T::kWgRows * 128, st + kBytesA + cw * T::kWgCols * 128, kt > 0);
                }
                wgmmaCommit();
                if constexpr (Traced && (kStructExp & 4) == 0) {
                    if (kt >= 2) {  // (the carried events' kstep and kind spelled out: constants for the compiler)
                        const uint8_t sp = PpRing::slot(fill - 2);
                        const ws::trace::StampedEvent e[4] = {{mmaWaited.e.clock, fill - 2, tk::MmaWait, sp, 0},
                                                              {released.e.clock, fill - 2, tk::Release, sp, 0},
                                                              waited.e, issued.e};
                        if constexpr (kPackKStep) ws::trace::kStepAtOf<S, 2>(wt, e);  // one record (session 14)
                        else ws::trace::eventsAtOf(wt, e);
                    } else {
                        const ws::trace::StampedEvent e[2] = {waited.e, issued.e};
                        ws::trace::eventsAtOf(wt, e);
                    }
                }
                if (T::SKEW > 0 && cw == 0 && kt == goAt) {  // let warpgroup 1 start this unit
                    if (i > 0) {  // ... once it has taken the previous go (never two gos pending)
                        if constexpr (Traced) wt.event(tk::WaitOrder, fill);
                        namedBarSync(kTakenBar, 256);
                    }
                    namedBarArrive(kGoBar, 256);
                }
                if (kt > 0) {  // one k-step in flight: the previous one's slot is free once its wgmmas are done
                    mmaWaited.event(tk::MmaWait, fill - 1, PpRing::slot(fill - 1));
                    wgmmaWait<1>();
                    ring.release(fill - 1, lane0, released);
                }
            }
            // drain: the unit's last k-step (and the events of the one before, stamped but not staged)
            if constexpr (Traced && (kStructExp & 4) == 0) {
                if (KU >= 2) {
                    const uint8_t sp = PpRing::slot(fill - 2);
                    const ws::trace::StampedEvent e[2] = {{mmaWaited.e.clock, fill - 2, tk::MmaWait, sp, 0},
                                                          {released.e.clock, fill - 2, tk::Release, sp, 0}};
                    ws::trace::eventsAtOf(wt, e);
                }
                wt.event(tk::MmaWait, fill - 1, PpRing::slot(fill - 1));
            }
            wgmmaWait<0>();
            fenceAcc(acc[0]);
            ring.release(fill - 1, lane0, wt);
            if (epi(acc[0], u, cw, t, fill, wt)) {  // the rung's hook; true: store the tile to C
                if constexpr (Traced) wt.event(tk::Store);
                if (tmaStore)
                    storeAccTmaBf16<WN>(acc[0], &tmC, staging + cw * 2 * kEpiBox, tm * BM + cw * T::kWgRows,
                                        tn * BN + cw * T::kWgCols, t, kEpiBar0 + cw);
                else
                    storeAccBf16<WN>(acc[0], C, N, M, N, tm * BM + cw * T::kWgRows, tn * BN + cw * T::kWgCols, t);
            }
            if constexpr (Traced) wt.event(ws::trace::kEventTileEnd);
        }
        if (tmaStore)
            if (t == kStoreIssuer) bulkWait<0>();  // every bulk store of this warpgroup has landed in C
    }
    // A hook that passes a cluster barrier in each unit's epilogue (Epi::kClusterSync: stream-K's cluster split,
    // session 11): the CTA's other live warps pass as many, before the trace's end (whose __syncthreads would
    // otherwise hold them while the consumers wait for them at the cluster barrier).
    if constexpr (Epi::kClusterSync)
        if (wg == 0) {
            __syncwarp();  // warp 0's lanes rejoin after the producer's loop (the barrier is .aligned)
            for (int i = 0; i < nLocal; ++i) clusterSync();
        }
    if constexpr (Traced) {
        if constexpr (kTraceRelay) {
            if (warp == kRelayWarp) wt.endRelay(trace);  // its own events (Setup, end), after the others'
            else if constexpr (kRelaySourcesEnd) wt.endOwn(trace);
            else wt.end();
            ct.end(trace, tid == kRelayWarp * 32);  // no warp but the relay reads the trace header
        } else if constexpr (kLeanStart) {
            wt.end();
            ct.end(trace, tid == kCtaRecordWarp * 32, ctaValid);
        } else if constexpr (kQuickEnd) {  // session 14: no wait for the last copies' writes, no header load
            wt.endAsync();
            ct.endKnown(trace, tid == 0, wt.writes());  // thread 0 = warp 0's lane 0: its writes() is the header check
        } else {
            wt.end();
            ct.end(trace);
        }
    }
    // No CTA leaves while its peer may still signal its barriers (pairs: CL > 1) or read its shared memory (the cluster
    // split's hook). A CTA alone (CL == 1, a hook without cluster barriers) has no peer: its warps leave when done
    // (session 15, s15-gemmgap: the barrier's release fence, MEMBAR.ALL.GPU + ERRBAR, was ~5 % of 1024^3's samples).
    if constexpr (CL > 1 || Epi::kClusterSync || WS_PP_ALONE_NO_END == 0) clusterSync();
}
#endif

}  // namespace ws::kern::pp
