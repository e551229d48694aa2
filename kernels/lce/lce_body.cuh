// The kernel body of rungs 3 and 4 (epilogue_warp.cu, user_first.cu): ONE loop for both, on the transposed
// formulation out[b]^T = E[b]^T . W^T. Rung 4 is rung 3 with the user stage (UserStage = true): the tiles of
// U = W_user . E_user are computed in the same persistent launch.
// Tiles: a CTA computes 128 (N) x 224 (M) of out[b]^T -- N on the wgmma M side (two consumer warpgroups of 64 rows of
// N; a CTA pair takes the two 128-wide halves of a 256-wide N tile), M on the wgmma N side in tiles of 224
// (m64n224k16). A = E[b]^T is MN-major exactly as TMA brings E (two 64 (N) x 64 (K) boxes, 128-byte swizzle,
// imm-trans-a = 1); B = W^T K-major from W's rows (224 rows of 64 K): each CTA of the pair loads 112 of them and
// multicasts them to both. A ring stage is 16 + 28 = 44 KB. Rows of M past the tensor are zero-filled by TMA on load
// and dropped on store, as are columns of N and the K tail.
// Roles: warp 0 the producer (the ring, kernels/src/common/ring.cuh); warp 1 the epilogue warp
// (kernels/src/common/epilogue_warp.cuh: EpilogueWarp over an EpilogueStagingOf<StagingCols<...>>: it TMA-loads U's
// tile into a warpgroup's staging half ahead of time, the consumers add their accumulator to it with ldmatrix /
// stmatrix .trans and hand it over, the warp TMA-stores it); warps 2-3 idle; warps 4-11 the two consumer warpgroups.
// The walk: a unit is (b, M tile, N tile); CTA pair c of C takes units c, c + C, ... (lce_shape.h: userFirstWalk).
// Every role walks the same units and, per unit, the same sub-tiles (unitOf, subsOf, subOf below), so the ring and the
// staging halves stay in step without any other hand-shake.
// - The user-first walk (rung 4; rung 3 walks its candidate units alone): the user units come first, and a user
//   tile's halves go through the staging like a candidate's (epilogueStage: fp16(acc), no U) into U itself; the
//   epilogue warp then waits until the stores are complete and releases one ready flag per (user, M tile, N tile, CTA
//   rank, half) (storeHalfPublish, or with `eager` both halves under one completion wait: publishNow). The epilogue
//   warp of a candidate tile acquires the flag of the half it is about to load (waitOrderFlag) -- one tile ahead of
//   its consumers, so the wait hides under their main loop. Flags hold the launch's epoch (never reset).
//   No deadlock: every CTA pair is resident (the host refuses to launch otherwise), each walks its units in increasing
//   order with the user units first (which wait for no flag), and only the epilogue warp waits for a flag, never
//   holding ring slots: the pair that owes a flag reaches it without waiting for anyone.
// - The broadcast walk (rung 4 where lce_shape.h's rung4Broadcast says so: few candidates per user): a unit is
//   (user, M tile, N tile) and runs the user tile and then the tiles of the user's candidates on the same CTA pair;
//   the consumers keep the user tile's accumulator as fp16 pairs in registers (56 per thread) and add them in each
//   candidate's epilogue (epilogueAddPacked): U never goes to global memory, no flags, no U loads, no cross-CTA waits.
// The kernel's configuration: template argument V, lce_shape.h's kRung3Config / kRung4BroadcastConfig /
// kRung4UserFirstConfig, whose fields (Variant below: ring stages, staging pieces, one shared staging half, registers
// of warpgroup 0, eager publication) the body reads as compile-time constants.
// Trace: producer WaitSlot / IssueLoad (one packed record per k-step: loadAt); consumers WaitData / MmaIssue / MmaWait /
// Release per k-step (one packed record per k-step: kStepAt, the clocks read where the phases begin), WaitOrder +
// Epilogue per tile; epilogue warp WaitData / Store / WaitOrder / Load per half; tile markers tileM = b * mTiles + tm,
// tileN = n0 / 128 (+ 1000 for user tiles; b = the user there). Consumer lanes: "consumer WG0" / "consumer WG1".
// Two instances per kernel (Traced, s15-lceuntraced): the traced one (the kernels' own names) and one whose trace calls
// go to wt::Warp<wt::Off> and UntracedCta (the ...Untraced kernels: no trace code; tests/kernels/check_lce_sass.py);
// the host launches the traced one only while traceLaunches() (lce_rungs.h).
#pragma once

#include <warpstage/trace.cuh>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "../src/common/epilogue_warp.cuh"
#include "../src/common/mma.cuh"
#include "../src/common/ring.cuh"
#include "../src/common/smem_plan.cuh"
#include "../src/common/tma.cuh"
#include "lce_rungs.h"
#include "wgmma_f16_tn224.cuh"

// WS_LCE_PAIR_RECORDS (session 16, branch s16-lcepair; format version 3): 1 stages a consumer tile's two-event steps as
// one kEventPair record each -- its first two k-steps (WaitData + MmaIssue), the carried and the last MmaWait + Release,
// each staging turn's WaitOrder + Epilogue: ~29 -> ~21 records per tile. Measured on the H200 in session 17 (three
// calls, docs/kernel-notes/trace-cost-s17.md): a quarter fewer events (CTA 0 8457 -> 6441) and NO lower cost (rung 4
// +5.0-5.7 % against main's +3.9-5.7 %), so 0 stays the default: the events as before.
#ifndef WS_LCE_PAIR_RECORDS
#define WS_LCE_PAIR_RECORDS 0
#endif
// WS_LCE_TRACE_OFF (session 17, diagnostic only: the trace lacks those warps' events): bit 1 the producer's, 2 the
// epilogue warp's, 4 the consumers' trace calls compiled out of the traced kernels (body's TraceP / TraceE / TraceC) --
// which warps' trace code costs what (H200, rung 4, on session 17's one-flush-per-call build of trace.cuh, itself
// +5.7-6.2 %: 4 -> -0.9 %, 2 -> +3.5 %; docs/kernel-notes/trace-cost-s17.md)
#ifndef WS_LCE_TRACE_OFF
#define WS_LCE_TRACE_OFF 0
#endif

namespace ws::lce::body {
using namespace ws::kern;
namespace wt = ws::trace;

constexpr int kTileN = kUfTileN / 2, kTileM = kUfTileM, BK = 64, kThreads = 384, kWarps = kThreads / 32;
constexpr uint32_t kBytesE = kTileN * BK * 2, kBytesWHalf = kTileM / 2 * BK * 2, kStage = kBytesE + 2 * kBytesWHalf;
static_assert(kBytesWHalf % 1024 == 0, "each W half starts on a swizzle atom");

// A kernel configuration's fields (the defaults are rung 3's).
struct Variant {
    int stages = 3;           // ring stages
    bool broadcast = false;   // rung 4: the broadcast walk (else the user-first walk with ready flags)
    bool sharedHalf = false;  // one staging half for both warpgroups in turn (the broadcast walk loads no U into it)
    int pieces = 1;           // a warpgroup's 224 columns of M through its staging half in 1 or 2 turns (2: the
                              // second kept as fp16 in 28 registers and staged at k-step kFlushAt of the next tile)
    int regs0 = 40;           // registers of warpgroup 0 (producer, epilogue warp) after setmaxnreg; the consumers
                              // get the rest of the launch's 168 x 384
    bool eager = false;       // rung 4's user tiles published at once: both halves' stores, one completion wait
};
// Rung 3: whole halves, 3 stages.
constexpr Variant kRung3{};
// Rung 4's broadcast walk: no U goes through the staging, so one half serves both warpgroups and the 28 KB it frees
// is a 4th ring stage.
constexpr Variant kRung4Broadcast = [] {
    Variant v;
    v.broadcast = true;
    v.sharedHalf = true;
    v.stages = 4;
    return v;
}();
// Rung 4's user-first walk: each half staged in two pieces of 112 columns (14 KB), the 28 KB this frees as a 4th
// ring stage, 56 registers for warpgroup 0 (224 for the consumers), a user tile's halves published at once.
constexpr Variant kRung4UserFirst = [] {
    Variant v;
    v.stages = 4;
    v.pieces = 2;
    v.regs0 = 56;
    v.eager = true;
    return v;
}();
// Configuration V's fields (lce_shape.h: configKind(V) says which there are).
constexpr Variant variantOf(int v)
{
    return v == kRung4BroadcastConfig ? kRung4Broadcast : v == kRung4UserFirstConfig ? kRung4UserFirst : kRung3;
}
// The staging's layout: U / out boxes of 64 N x 224 / pieces M, 128-byte swizzle; U read 7 column-group pairs ahead
// in the add (EpilogueStagingOf's KB).
constexpr int kSwz = 128, kReadAhead = 7;
template <int V>
using StagingV = EpilogueStagingOf<StagingCols<kTileM / variantOf(V).pieces, kSwz>, kReadAhead,
                                   variantOf(V).sharedHalf, variantOf(V).pieces>;
template <int S, int V = kRung3Config>
using PlanOf = SmemPlan<kStage, S, StagingV<V>::kBytes>;

struct Params {
    int units, mTiles, nTiles, kSteps;  // kSteps: ceil(K_cand / 64)
    int userUnits, kStepsUser, epoch;   // rung 4's user stage: user units first, ready flags
    int perUser, batch;                 // rung 4's broadcast walk: candidates b of user u are u * perUser + i < batch
};
// One ready flag per (user, M tile, N tile, CTA rank, half) (lce_shape.h: userFirstWalk's flags).
__device__ __forceinline__ int flagIndex(const Params& p, int user, int tm, int nt, uint32_t rank, int cw)
{
    return (((user * p.mTiles + tm) * p.nTiles + nt) * 2 + int(rank)) * 2 + cw;
}

// The untraced instance's CTA trace (Traced = false): no buffer, known at compile time -- no control-word load, no CTA
// record; with wt::Warp<wt::Off> (every call empty) the instance compiles no trace code at all (check_lce_sass.py).
struct UntracedCta : wt::Cta {
    __device__ __forceinline__ UntracedCta() : wt::Cta(nullptr) {}
    __device__ __forceinline__ bool recording() const { return false; }
};

// Traced: the instance the launch runs while a trace buffer may be given (traceLaunches()); the other one compiles
// the same body with the trace calls going to the no-op types.
template <int S, bool UserStage, int V, bool Traced = true>
__device__ __forceinline__ void body(const CUtensorMap& tmWu, const CUtensorMap& tmEu, const CUtensorMap& tmWc,
                                     const CUtensorMap& tmEc, const CUtensorMap& tmU, const CUtensorMap& tmOut,
                                     const int32_t* __restrict__ userOf, int* __restrict__ flags,
                                     const Params& p)
{
    static_assert(configKind(V) != ConfigKind::None, "V: a configuration of lce_shape.h");
    using Staging = StagingV<V>;
    // Pieces: a warpgroup's 224 columns of M through its half as P pieces of kPieceM rows of the output; pieces after
    // the first are kept as fp16 and staged at k-step kFlushAt of the next tile (or before its own epilogue if it is
    // shorter, or after the walk).
    constexpr int P = variantOf(V).pieces, kPieceM = kTileM / P, kFlushAt = 6;
    static_assert(P == 1 || P == 2, "one or two pieces");
    static_assert(2 * S + Staging::kBarriers <= 16, "ring + epilogue barriers fit the barrier area");
    constexpr bool kBcast = UserStage && variantOf(V).broadcast;  // the broadcast walk (the host sets userUnits = units)
    static_assert(!kBcast || P == 1, "the broadcast walk stages whole halves");
    constexpr bool kEager = UserStage && variantOf(V).eager;  // user tiles published at once
    static_assert(!kEager || (!kBcast && !variantOf(V).sharedHalf), "eager: the user-first walk, two halves");
    using Plan = PlanOf<S, V>;
    extern __shared__ uint8_t smemRaw[];
    const Plan plan(smemRaw);
    using LRing = Ring<S, 2, false>;  // (no LoadReady marker: WaitData's end is the data's arrival on the trace)
    LRing ring{plan.full(), plan.empty()};
    const uint32_t rank = clusterCtaRank();
    ring.peer = rank ^ 1u;
    const Staging staging(plan.epiStaging(), plan.empty() + S);
    using Trace = wt::Warp<std::conditional_t<Traced, wt::Staged, wt::Off>>;
    using TraceP = std::conditional_t<(WS_LCE_TRACE_OFF & 1) != 0, wt::Warp<wt::Off>, Trace>;
    using TraceE = std::conditional_t<(WS_LCE_TRACE_OFF & 2) != 0, wt::Warp<wt::Off>, Trace>;
    using TraceC = std::conditional_t<(WS_LCE_TRACE_OFF & 4) != 0, wt::Warp<wt::Off>, Trace>;
    constexpr bool kTraced = Traced && wt::kEnabled;  // the k-loops' stamps (wt::Stamp) are staged by hand
    constexpr bool kPairs = kTraced && WS_LCE_PAIR_RECORDS != 0;
    std::conditional_t<Traced, wt::Cta, UntracedCta> cta;
    cta.pipeline(S, kStage);
#ifdef WS_EXPERIMENT_UNIFORM_WARP
    const int tid = threadIdx.x, warp = __shfl_sync(0xffffffffu, tid / 32, 0), wg = warp / 4;
#else
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32;
#endif
    const int cluster = int(blockIdx.x) / 2, clusters = int(gridDim.x) / 2;
    if (tid == 0) {
        if constexpr (UserStage) {
            tmaPrefetchDesc(&tmWu);
            tmaPrefetchDesc(&tmEu);
        }
        tmaPrefetchDesc(&tmWc);
        tmaPrefetchDesc(&tmEc);
        tmaPrefetchDesc(&tmU);
        tmaPrefetchDesc(&tmOut);
        staging.init();
        ring.init(8);  // (its fenceBarrierInit covers the staging's barriers)
    }
    clusterSync();
    // unit u: user units first (UserStage), then candidates; M tile fastest, then N tile (256 wide: this CTA's half
    // of it), then the user / candidate b
    auto unitOf = [&](int u, bool& user, int& tm, int& nt, int& n0, int& b) {
        user = UserStage && u < p.userUnits;
        const int i = user ? u : u - (UserStage ? p.userUnits : 0);
        tm = i % p.mTiles;
        const int r = i / p.mTiles;
        nt = r % p.nTiles;
        n0 = nt * 2 * kTileN + int(rank) * kTileN;
        b = r / p.nTiles;
    };
    // The sub-tiles of a unit: one in the user-first walk; in the broadcast walk (unit = a user's M and N tile) the
    // user tile (j = 0), then the tiles of the user's candidates b = user * perUser + j - 1 < batch (j = 1, 2, ...).
    // su: a user tile; z: the batch index of its E (the user or the candidate).
    auto subsOf = [&](int b) { return kBcast ? 1 + min(p.perUser, p.batch - b * p.perUser) : 1; };
    auto subOf = [&](bool user, int b, int j, bool& su, int& z) {
        su = kBcast ? j == 0 : user;
        z = kBcast && j > 0 ? b * p.perUser + j - 1 : b;
    };

    if (wg == 0) {
        // (the launch holds 168 x 384 = 64512 registers = 40 x 128 + 232 x 256: a split asking for more makes
        // setmaxnreg.inc wait forever -- s9-lcet's call 2 hung so with 48 + 232)
        setMaxNRegDec<variantOf(V).regs0>();
        if (warp == 0) {  // producer: E (this CTA's 128 N columns, two boxes) and half of W's 224 rows, multicast
            TraceP w(cta, wt::role::Producer, 0, 0, wt::kNoUserRole, plan.traceStaging(0));
            const bool issuer = laneId() == 0;
            int fill = 0;
            for (int u = cluster; u < p.units; u += clusters) {
                bool user;
                int tm, nt, n0, b;
                unitOf(u, user, tm, nt, n0, b);
                const int subs = subsOf(b);
                for (int j = 0; j < subs; ++j) {
                    bool su;
                    int z;
                    subOf(user, b, j, su, z);
                    const CUtensorMap* tmA = su ? &tmEu : &tmEc;
                    const CUtensorMap* tmB = su ? &tmWu : &tmWc;
                    const int KT = su ? p.kStepsUser : p.kSteps;
                    w.tileBegin(z * p.mTiles + tm, int16_t(n0 / kTileN + (su ? 1000 : 0)));
                    for (int kt = 0; kt < KT; ++kt, ++fill) {
                        // traced: WaitSlot (t) and IssueLoad (issued) of a k-step in ONE record (loadAt), after the
                        // loads are issued (as the GEMM ladder's producer, session 14)
                        const uint64_t t = ring.waitSlot(fill, w);
                        wt::Stamp<kTraced> issued;
                        ring.issueLoad(fill, t, kStage, issuer, issued, [&](int s, uint64_t* bar) {
                            uint8_t* st = plan.stage(s);
#pragma unroll
                            for (int q = 0; q < 2; ++q)
                                tmaLoad3d(st + q * (kBytesE / 2), tmA, bar, n0 + q * 64, kt * BK, z);
                            tmaLoad2dMulticast(st + kBytesE + rank * kBytesWHalf, tmB, bar, kt * BK,
                                               tm * kTileM + int(rank) * (kTileM / 2), uint16_t(3));
                        });
                        if constexpr (kTraced) {
                            if (fill >= S) {
                                const wt::StampedEvent e[2] = {
                                    {t, fill, wt::kind::WaitSlot, uint8_t(LRing::slot(fill)), 0}, issued.e};
                                w.template loadAt<S>(e);
                            } else {
                                const wt::StampedEvent e[1] = {issued.e};
                                w.eventsAt(e);
                            }
                        }
                    }
                    w.tileEnd();
                }
            }
            w.end();
        } else if (warp == 1) {  // the epilogue warp: lane 0 issues, the whole warp runs the loop (trace calls)
            TraceE w(cta, wt::role::Epilogue, 0, 0, wt::kNoUserRole, plan.traceStaging(1));
            EpilogueWarp<kTileM, Staging, kEager ? kModeEager : 0> ew{{}, staging, &tmOut, &tmU, laneId() == 0};
            for (int u = cluster; u < p.units; u += clusters) {
                bool user;
                int tm, nt, n0, b;
                unitOf(u, user, tm, nt, n0, b);
                if constexpr (kBcast) {  // the candidates' tiles (the user tile stays in the consumers' registers)
                    const int subs = subsOf(b);
                    for (int j = 1; j < subs; ++j) {
                        const int z = b * p.perUser + j - 1;
                        w.tileBegin(z * p.mTiles + tm, int16_t(n0 / kTileN));
                        for (int cw = 0; cw < 2; ++cw) ew.nextStaged(cw, n0 + cw * 64, tm * kTileM, z, w);
                        w.tileEnd();
                    }
                    continue;
                }
                w.tileBegin(b * p.mTiles + tm, int16_t(n0 / kTileN + (user ? 1000 : 0)));
                if (user) {  // into U[b] itself, then the half's ready flag (with its last piece)
                    for (int pc = 0; pc < P; ++pc)
                        for (int cw = 0; cw < 2; ++cw)
                            ew.nextPublished(cw, n0 + cw * 64, tm * kTileM + pc * kPieceM, b,
                                             pc == P - 1 ? &flags[flagIndex(p, b, tm, nt, rank, cw)] : nullptr,
                                             p.epoch, w);
                    if constexpr (kEager) ew.publishNow(w);  // both halves' flags after one completion wait
                    w.tileEnd();
                    continue;
                }
                const int uo = userOf[b];
                for (int pc = 0; pc < P; ++pc)
                    for (int cw = 0; cw < 2; ++cw) {
                        const int y = tm * kTileM + pc * kPieceM;
                        ew.next(cw, n0 + cw * 64, y, b, n0 + cw * 64, y, uo,
                                [&](int n) {  // rung 4: U[uo]'s half is published by the warpgroup that stored it
                                    if constexpr (UserStage)
                                        if (pc == 0)
                                            waitOrderFlag(&flags[flagIndex(p, uo, tm, nt, rank, cw)], p.epoch,
                                                          ew.issuer, n, uint8_t(cw), w);
                                },
                                w);
                    }
                w.tileEnd();
            }
            ew.finish(w);
            w.end();
        } else {  // warps 2-3: nothing to do; while recording they stay for the CTA record
            if (!cta.recording()) return;
            Trace idle(cta, wt::role::Idle, 0, uint8_t(warp), wt::kNoUserRole, plan.traceStaging(warp));
            idle.end();
            cta.end();
            return;
        }
    } else {
        setMaxNRegInc<(168 * kThreads - 128 * variantOf(V).regs0) / 256>();  // 232 with 40 (above)
        const int cw = wg - 1, tInWg = tid & 127;
        // roleIndex = the consumer warpgroup (the lane reads "consumer WG0" / "consumer WG1")
        TraceC w(cta, wt::role::Consumer, uint8_t(wg), uint8_t(cw), wt::kNoUserRole, plan.traceStaging(warp));
        const bool lane0 = laneId() == 0;
        int fill = 0, done = 0;
        uint32_t uf[kBcast ? kTileM / 4 : 1];    // the broadcast walk: the unit's user tile, fp16 pairs of acc
        uint32_t held[P > 1 ? kPieceM / 4 : 1];  // P = 2: the previous candidate tile's second piece, fp16
        bool pending = false;
        // A consumer's two events of one step, e[0] then e[1] (stamped): one pair record (kPairs) or the two events.
        auto stagePair = [&](auto stages, const wt::StampedEvent (&e)[2]) {
            if constexpr (kPairs) w.template pairAt<decltype(stages)::value>(e);
            else w.eventsAt(e);
        };
        // A staging turn: WaitOrder until the half is ready for it (waitOrderStaged), then `turn(tr)` (an epilogue
        // method, phase Epilogue) -- with kPairs the two events as ONE record, else straight into the warp's trace.
        auto orderedTurn = [&](auto&& turn) {
            if constexpr (kPairs) {
                wt::Stamp<true> wo, ep;
                staging.waitOrderStaged(cw, done, wo);
                turn(ep);
                const wt::StampedEvent e[2] = {wo.e, ep.e};
                w.template pairAt<0>(e);
            } else {
                staging.waitOrderStaged(cw, done, w);
                turn(w);
            }
        };
        auto stageHeld = [&] {  // (P = 2) the held piece: U's piece is in the half (and the last store has read it)
            if constexpr (P > 1) {
                orderedTurn([&](auto& ep) { staging.epilogueAddHeld(held, cw, done, tInWg, ep); });
                ++done;
                pending = false;
            }
        };
        // One tile (sub-tile j of a unit): su (a user tile) is a compile-time constant of each instance, so that the
        // k-step loop of rung 4 carries no user / KT select (s11-lce4: with the held piece ptxas spilled the unit
        // counter and the peer's rank and re-read them every k-step; the walk's user tiles all come first).
        auto tile = [&](auto suC, int z, int tm, int n0) {
            constexpr bool su = decltype(suC)::value;
            w.tileBegin(z * p.mTiles + tm, int16_t(n0 / kTileN + (su ? 1000 : 0)));
            const int KT = su ? p.kStepsUser : p.kSteps;
            float acc[kTileM / 2];
            // Traced (session 16, the GEMM ladder's consumer k-step of sessions 11 and 14): where a phase begins the
            // warp only reads the clock (wt::Stamp); a k-step's four events -- MmaWait and Release of fill - 2, stamped
            // at the end of the k-step before, and WaitData and MmaIssue of fill -- go into ONE packed record
            // (kStepAt) right after the wgmma issue, where the warp is about to wait anyway. `carried`: mmaWaited and
            // released hold events not staged yet (staged early before the held piece's events at kFlushAt). With
            // kPairs the tile's first two k-steps, its drain and its staging turns stage their events as pairs.
            wt::Stamp<kTraced> mmaWaited, released;
            bool carried = false;
            auto stageCarried = [&](int k) {  // k: the carried events' k-step
                if constexpr (kTraced) {
                    if (!carried) return;
                    const uint8_t sp = uint8_t(LRing::slot(k));
                    const wt::StampedEvent e[2] = {{mmaWaited.e.clock, k, wt::kind::MmaWait, sp, 0},
                                                   {released.e.clock, k, wt::kind::Release, sp, 0}};
                    stagePair(std::integral_constant<int, S>{}, e);
                    carried = false;
                }
            };
            for (int kt = 0; kt < KT; ++kt, ++fill) {
                const int s = LRing::slot(fill);
                wt::Stamp<kTraced> waited, issued;
                ring.waitData(fill, waited);
                const uint32_t st = smemAddr(plan.stage(s));
                issued.event(wt::kind::MmaIssue, fill, uint8_t(s));
                wgmmaFence();
#pragma unroll
                for (int kk = 0; kk < 4; ++kk)
                    wgmma_m64n224k16_f16tn(acc, wgmmaDescSw128Mn(st + cw * (kBytesE / 2) + kk * 2048, kBytesE / 2),
                                           wgmmaDescSw128(st + kBytesE + kk * 32), (kt == 0 && kk == 0) ? 0 : 1);
                wgmmaCommit();
                if constexpr (kTraced) {
                    if (carried) {
                        const uint8_t sp = uint8_t(LRing::slot(fill - 2));
                        const wt::StampedEvent e[4] = {{mmaWaited.e.clock, fill - 2, wt::kind::MmaWait, sp, 0},
                                                       {released.e.clock, fill - 2, wt::kind::Release, sp, 0},
                                                       waited.e, issued.e};
                        w.template kStepAt<S, 2>(e);
                    } else {
                        const wt::StampedEvent e[2] = {waited.e, issued.e};
                        stagePair(std::integral_constant<int, S>{}, e);
                    }
                }
                if (kt > 0) {
                    mmaWait<1>(fill - 1, LRing::slot(fill - 1), mmaWaited);
                    ring.release(fill - 1, lane0, released);
                    carried = true;  // (read only by the traced instance's staging)
                }
                if constexpr (P > 1)
                    if (pending && kt == kFlushAt) {  // while this k-step's MMAs run
                        stageCarried(fill - 1);       // (stamped just above)
                        stageHeld();
                    }
            }
            stageCarried(fill - 2);  // the events of the k-step before the last
            if constexpr (kPairs) {  // the last k-step's MmaWait + Release: one pair
                wt::Stamp<true> lastWait, lastRelease;
                mmaWait<0>(fill - 1, LRing::slot(fill - 1), lastWait);
                fenceAcc(acc);
                ring.release(fill - 1, lane0, lastRelease);
                const wt::StampedEvent e[2] = {lastWait.e, lastRelease.e};
                w.template pairAt<S>(e);
            } else {
                mmaWait<0>(fill - 1, LRing::slot(fill - 1), w);
                fenceAcc(acc);
                ring.release(fill - 1, lane0, w);
            }
            if constexpr (P > 1)
                if (pending) stageHeld();  // a tile shorter than kFlushAt k-steps
            if constexpr (kBcast) {
                if constexpr (su) {  // U's tile stays here, rounded to fp16 as the user-first walk stores it
#pragma unroll
                    for (int i = 0; i < kTileM / 4; ++i) uf[i] = packHalf2(acc[2 * i], acc[2 * i + 1]);
                    w.tileEnd();
                    return;
                } else {  // the half is free (the last store has read it)
                    orderedTurn([&](auto& ep) { staging.epilogueAddPacked(acc, uf, cw, done, tInWg, ep); });
                }
            } else if constexpr (P == 1) {  // U's tile is in the half (and the last store has read it)
                if constexpr (su)  // the half is free: fp16(acc)
                    orderedTurn([&](auto& ep) { staging.epilogueStage(acc, cw, done, tInWg, ep); });
                else
                    orderedTurn([&](auto& ep) { staging.epilogueAdd(acc, cw, done, tInWg, ep); });
            } else if constexpr (su) {  // both pieces now: the half's ready flag is released with the last one
                orderedTurn([&](auto& ep) { staging.template epilogueStageAt<0>(acc, cw, done, tInWg, ep); });
                ++done;  // (the second turn waits until the first piece is stored into U)
                orderedTurn([&](auto& ep) { staging.template epilogueStageAt<kPieceM / 8>(acc, cw, done, tInWg, ep); });
            } else {
                orderedTurn([&](auto& ep) { staging.template epilogueAddAt<0>(acc, cw, done, tInWg, ep); });
                Staging::template packAt<kPieceM / 8>(acc, held);
                pending = true;
            }
            ++done;
            w.tileEnd();
        };
        for (int u = cluster; u < p.units; u += clusters) {
            bool user;
            int tm, nt, n0, b;
            unitOf(u, user, tm, nt, n0, b);
            const int subs = subsOf(b);
            for (int j = 0; j < subs; ++j) {
                bool su;
                int z;
                subOf(user, b, j, su, z);
                if (su) tile(std::true_type{}, z, tm, n0);
                else tile(std::false_type{}, z, tm, n0);
            }
        }
        if constexpr (P > 1)
            if (pending) stageHeld();
        w.end();
    }
    cta.end();
    clusterSync();
}

// ---- host side
// The configuration rungs 3-4's launches are asked to run (-1: none, the rungs as built): the driver's for some launches
// (setRungVariant: lce --interleave with LCE_TVAR_B), else LCE_TVAR's (read once; lce_shape.h: parseConfigSwitch --
// the driver's option parser refuses a bad value, a library user gets the sentence and the rungs as built).
inline int& variantOverride()
{
    static int v = -1;
    return v;
}
inline int variantAsked()
{
    if (variantOverride() >= 0) return variantOverride();
    static const int v = [] {
        const char* e = std::getenv("LCE_TVAR");
        int c = -1;
        if (!e) return -1;
        const std::string err = parseConfigSwitch("LCE_TVAR", e, c);
        if (!err.empty()) std::fprintf(stderr, "lce: %s; rungs 3-4 run as built\n", err.c_str());
        else std::fprintf(stderr, "lce: rungs 3-4 run kernel configuration %d where they have it (LCE_TVAR)\n", c);
        return err.empty() ? c : -1;
    }();
    return v;
}

// How many CTA pairs of kernel `k` are resident at once (0 and a sentence in `err` if the runtime cannot tell).
inline int residentPairs(const void* k, int smem, std::string& err)
{
    if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess) {
        err = "cannot get " + std::to_string(smem) + " bytes of shared memory";
        return 0;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(2 * 256, 1, 1);
    cfg.blockDim = dim3(kThreads, 1, 1);
    cfg.dynamicSmemBytes = size_t(smem);
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, k, &cfg) != cudaSuccess || n <= 0) {
        cudaGetLastError();
        err = "cannot tell how many CTA pairs are resident";
        return 0;
    }
    return n;
}

// The tensor maps: W boxes of 64 (K) x 112 rows, E boxes of 64 (N) x 64 (K), both 128-byte swizzle; U / out boxes
// of kSwz / 2 (N) x 224 / pieces (M) in the kSwz-byte swizzle (StagingCols).
struct Maps {
    CUtensorMap wUser, eUser, wCand, eCand, u, out;
};
inline std::string encodeMaps(const Problem& p, bool userStage, const Variant& v, Maps& m)
{
    constexpr int swz = kSwz;
    const Shape& s = p.s;
    auto map2 = [&](CUtensorMap* t, const __half* base, int kp) {
        const uint64_t dims[2] = {uint64_t(kp), uint64_t(s.m)};
        const uint64_t strides[1] = {uint64_t(kp) * 2};
        const uint32_t box[2] = {uint32_t(BK), uint32_t(kTileM / 2)};
        return encodeTmaF16(t, base, 2, dims, strides, box, CU_TENSOR_MAP_SWIZZLE_128B);
    };
    auto map3 = [&](CUtensorMap* t, const void* base, int inner, int mid, int outer, uint32_t b0, uint32_t b1,
                    CUtensorMapSwizzle sw) {
        const uint64_t dims[3] = {uint64_t(inner), uint64_t(mid), uint64_t(outer)};
        const uint64_t strides[2] = {uint64_t(inner) * 2, uint64_t(mid) * inner * 2};
        const uint32_t box[3] = {b0, b1, 1};
        return encodeTmaF16(t, base, 3, dims, strides, box, sw);
    };
    const CUtensorMapSwizzle sw = swz == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    std::string err = map2(&m.wCand, p.wCandP, p.kCandP);
    if (err.empty()) err = map3(&m.eCand, p.eCand, s.n, s.kCand, s.b, 64, uint32_t(BK), CU_TENSOR_MAP_SWIZZLE_128B);
    if (err.empty() && userStage) err = map2(&m.wUser, p.wUserP, p.kUserP);
    if (err.empty() && userStage)
        err = map3(&m.eUser, p.eUser, s.n, s.kUser, p.users, 64, uint32_t(BK), CU_TENSOR_MAP_SWIZZLE_128B);
    if (!userStage) {
        m.wUser = m.wCand;
        m.eUser = m.eCand;
    }
    const uint32_t rows = uint32_t(kTileM / v.pieces);
    if (err.empty()) err = map3(&m.u, p.u, s.n, s.m, p.users, uint32_t(swz / 2), rows, sw);
    if (err.empty()) err = map3(&m.out, p.out, s.n, s.m, s.b, uint32_t(swz / 2), rows, sw);
    return err;
}

// What a launch's tensor maps and walk are computed from: the problem's buffers and shape (s15-lcebody: rung 4's launch
// keeps them from the last call while this is unchanged). Pointers and ints only, zero-initialised: compared bytewise.
struct LaunchKey {
    const void* ptr[8];
    int dim[10];
    bool operator==(const LaunchKey& o) const { return std::memcmp(this, &o, sizeof *this) == 0; }
};
static_assert(sizeof(LaunchKey) == 8 * sizeof(void*) + 10 * sizeof(int), "no padding in LaunchKey");
inline LaunchKey launchKeyOf(const Problem& p)
{
    LaunchKey k{};
    const void* ptr[8] = {p.wUserP, p.eUser, p.wCandP, p.eCand, p.u, p.out, p.userOf, p.flags};
    const Shape& s = p.s;
    const int dim[10] = {s.m, s.n, s.kUser, s.kCand, s.b, s.perUser, int(s.shuffled), p.users, p.kUserP, p.kCandP};
    std::memcpy(k.ptr, ptr, sizeof ptr);
    std::memcpy(k.dim, dim, sizeof dim);
    return k;
}

// The launch parameters of the walk (lce_shape.h: userFirstWalk) for `pairs` resident CTA pairs.
inline Params paramsOf(const Problem& p, bool userStage, const UserFirstWalk& w)
{
    Params q{};
    q.mTiles = w.mTiles;
    q.nTiles = w.nTiles;
    q.kSteps = (p.s.kCand + BK - 1) / BK;
    q.kStepsUser = (p.s.kUser + BK - 1) / BK;
    q.userUnits = userStage ? int(w.userUnits) : 0;
    q.units = int(userStage ? w.units : w.units - w.userUnits);  // (the broadcast walk: units = userUnits)
    q.perUser = p.s.perUser;
    q.batch = p.s.b;
    return q;
}

}  // namespace ws::lce::body
