// Rung 7's tile walk (stream-K), as a pure function of the problem: the host test (tst_streamk_schedule)
// and the kernel (streamk.cu) use the same code. No CUDA or Qt types; compiled for host and device.
//
// A *unit* is (pair tile, k-begin, k-end). The first `dpTiles` pair tiles are data-parallel: cluster c
// computes tiles c, c + clusters, ... whole (pingpong's walk). The k-steps of the remaining tiles
// (`skIters` = their count x KT) are cut into `skClusters` contiguous ranges, one per cluster, that may
// cross tile boundaries (stream-K). Cluster c walks its range BACKWARDS (highest k-step first), so the
// one piece it computes that does not reach its tile's last k-step (it writes a partial sum) comes
// first, and the piece that does (the finisher: it adds the others' partials) comes last: a finisher
// never waits for a cluster that is itself waiting. Each cluster has at most one partial piece, so a
// cluster's workspace slot is its own index. Split-K plans (session 11, SplitMode below) reuse the same ranges
// with tiles x s clusters: every range is then one piece of one tile.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define WS_SK_HD __host__ __device__ __forceinline__
#else
#define WS_SK_HD inline
#endif

namespace ws::kern::sk {

inline constexpr int kMinIters = 4;  // a cluster's stream-K range is never shorter than this (k-steps)

// The tile configurations of the rung (issue 14, session 8): one ping-pong body (pingpong_body.cuh, pp::Tile),
// instantiated for these. A CTA computes a 128 x bn block (two consumer warpgroups of 64 x bn); `cl` CTAs along M
// form a cluster sharing B by multicast (cl = 1: no cluster -- for M <= 128 the pair's second CTA would only
// compute rows past M); `stages` ring stages fill the same shared memory (smaller blocks: a deeper ring).
// Session 9 (s9-smallm): `bm` = 64 configurations for M <= 64: a CTA computes a 64 x bn block, both consumer
// warpgroups on the same 64 A rows, each on half of B's columns (wgmma m64n{bn/2}k16): A's box is 64 rows, half the
// bytes (and zero fill) of a 128-row box per k-step.
struct TileConfig {
    int bn;        // block columns: 256, 128 or 64 (wgmma m64n{bn}k16; bm = 64: m64n{bn/2}k16 per warpgroup)
    int cl;        // CTAs per cluster along M: 2 or 1
    int stages;    // ring stages
    int bm = 128;  // block rows: 128 (a warpgroup per 64 rows) or 64 (both warpgroups on the same rows)
    int skew = -1; // k-steps consumer warpgroup 1 runs behind warpgroup 0: -1 = pingpong's (kPpSkew, 2); 0 = in step
    bool rule = true;  // the rule (chooseLaunch) considers it; false: experiments (WARPSTAGE_STREAMK_TILE) only
};
inline constexpr TileConfig kTiles[] = {
    {256, 2, 4, 128, 0},  // 0: pingpong's tile (256 x 256 per cluster): large problems
    {128, 2, 6, 128, 0},  // 1: 256 x 128 per cluster
    {128, 1, 6, 128, 0},  // 2: 128 x 128 per CTA, no cluster
    {256, 1, 4, 128, 0},  // 3: 128 x 256 per CTA, no cluster
    {64, 1, 8, 128, 0},   // 4: 128 x 64 per CTA, no cluster
    {128, 1, 8, 64, 0},   // 5: 64 x 128 per CTA, no cluster (session 9: M <= 64)
    {256, 1, 4, 64, 0},   // 6: 64 x 256 per CTA, no cluster (session 9: M <= 64)
    {128, 2, 8, 64, 0, false},  // 7: 64 x 128 per CTA in pairs along M (B multicast): an experiment, forced only
};
// The skew (session 13): every configuration runs its two consumer warpgroups in step (skew 0: no ordering barrier).
// Pingpong's skew staggers the two warpgroups' wgmma bursts and epilogues of a 256-column block; the small blocks'
// k-steps are short (a quarter of a 256-column k-step at bn = 64) and their runs few, so the barrier per unit and the
// second warpgroup's late start cost more than the stagger gains: session 12's s12-smallm measured 3-9 % faster with
// skew 0 at small shapes (1x4096x4096 18.4 -> 16.7 us, 256x4096x4096 24.1 -> 22.5 us, H200; docs/benchmarks.md).
// s13-smallk: configurations 0 and 1 too -- 1 (256 x 128 pairs): 512x4096x4096 35.7 -> 29.4 us, 256x4096x4096 27.7 ->
// 24.9, 1024x1024x16384 split-K 58.0 us; 0 (pingpong's tile): 0.8-2.3 % faster at every shape timed, 4096^3 180.9 ->
// 179.5 us and 8192^3 1395.3 -> 1383.3 us included (H200, interleaved in one process;
// docs/benchmarks/gemm-small-shapes.md).
// Pingpong (rung 6) keeps its skew: it is that rung's idea.
// kTiles[7] (s13-smallk, rule = false): cuBLAS's tile at 256x4096x4096 and 1024^3 (nvjet 128x64_64x8_1x2: 64 rows x
// 128 columns per CTA, pairs along M sharing B, 8 stages) in this body: slower at 256x4096x4096 (25.7 vs the rule's
// 22.3 us) and 128x4096x4096 (20.6 vs 18.0), faster at 129x777x2056 (17.7 vs 24.0), 1024^3 (11.5 vs 11.8) and
// 128x4096x14336 (43.8 vs 44.6): not in the rule until a wider measurement places it.
inline constexpr int kTileCount = int(sizeof kTiles / sizeof kTiles[0]);

// Output tiles (units of the walk: a cluster's block) of config `t` for an M x N output.
WS_SK_HD int tileCountOf(const TileConfig& t, int m, int n)
{
    return ((m + t.bm * t.cl - 1) / (t.bm * t.cl)) * ((n + t.bn - 1) / t.bn);
}

struct Plan {
    int tiles = 0;          // pair tiles of the output
    int kt = 0;             // k-steps per tile
    int clusters = 0;       // clusters launched
    int dpTiles = 0;        // tiles [0, dpTiles): whole, data-parallel
    int skClusters = 0;     // clusters [0, skClusters) share the k-steps of tiles [dpTiles, tiles)
    long long skIters = 0;  // (tiles - dpTiles) * kt
    int split = 0;          // > 0: split-K (session 11): every tile in `split` pieces, one per cluster (below)
    int clusterK = 0;       // 1: the split's pieces of a tile are one cluster of `split` CTAs (SplitMode::Cluster)
};

// How a lone partial wave of tiles is split along K (session 11, s11-skinny). StreamK: the ranges above (balanced to
// the k-step, a piece's partial summed by the tile's finisher, which reads every earlier piece's partial in turn).
// SplitK: each tile cut into s = clusters / tiles equal pieces, one per cluster (skClusters = tiles x s: a range never
// crosses a tile), and every piece of a tile sums 1/s of it (its own slice: it reads that slice of the s - 1 other
// pieces' partials) -- the fixup's reads are spread over the tile's s clusters instead of queued on one. Auto: the
// rule below (splitKWanted).
// Cluster (session 11, s11-skinny2): split-K whose pieces of a tile are ONE thread-block cluster along K (2..kMaxClusterK
// CTAs, configurations of one CTA per block: TileConfig::cl == 1) and sum through distributed shared memory after a
// cluster barrier -- no workspace, no flags (streamk.cu: SkFixup::clusterK). Its pieces: splitKPieces, at most
// kMaxClusterK and a divisor of the clusters launched (a cluster launch's grid is whole clusters). Global: Auto without
// the cluster reduction (session 11 s11-skinny's rule; the reference in benchmarks). The rule's Auto takes Cluster for
// a configuration where its estimate is lower (chooseMode).
// Dp (s13-smallk): no split at all -- every tile whole, data-parallel (the last, partial wave left partial). Auto takes
// it (kAutoDp) for a configuration with at least one whole wave of tiles where its estimate is lower than the hybrid's.
enum class SplitMode : int { Auto = 0, StreamK = 1, SplitK = 2, Cluster = 3, Global = 4, Dp = 5 };
inline constexpr int kMaxClusterK = 8;  // the portable cluster size

// Split-K pieces per tile for a lone wave of `tiles` tiles of kt k-steps on `clusters` clusters (0: none): every
// cluster at most one piece, every piece >= kMinIters k-steps.
WS_SK_HD int splitKPieces(int tiles, int kt, int clusters)
{
    if (tiles <= 0 || kt <= 0 || tiles > clusters) return 0;
    int s = clusters / tiles;
    if (s > kt / kMinIters) s = kt / kMinIters;
    return s >= 2 ? s : 0;
}

// Cluster pieces per tile (SplitMode::Cluster; 0: none): splitKPieces', at most kMaxClusterK, dividing `clusters`.
WS_SK_HD int clusterKPieces(int tiles, int kt, int clusters)
{
    int s = splitKPieces(tiles, kt, clusters);
    if (s > kMaxClusterK) s = kMaxClusterK;
    while (s >= 2 && clusters % s != 0) --s;
    return s >= 2 ? s : 0;
}

// Auto's choice: split-K where its pieces keep nearly every cluster busy (tiles x s >= 7/8 of the clusters: the
// busiest cluster walks <= 8/7 of stream-K's k-steps).
WS_SK_HD bool splitKWanted(int tiles, int kt, int clusters)
{
    const int s = splitKPieces(tiles, kt, clusters);
    return s >= 2 && 8 * tiles * s >= 7 * clusters;
}

struct Unit {
    int tile = 0;  // pair tile index (the grouped tile order)
    int kb = 0;    // first k-step
    int ke = 0;    // one past the last k-step
};

// The hybrid rule (CUTLASS's stream-K "data-parallel + one or two stream-K waves"): whole waves stay
// data-parallel; the remainder wave is split along K unless it is already >= 80% full (also when it is the only,
// partial wave: a balanced sub-wave gains nothing from fixups); when there are whole waves, the last one joins the
// split, so every cluster's range holds >= KT k-steps.
WS_SK_HD Plan plan(int tiles, int kt, int clusters, SplitMode mode = SplitMode::Auto)
{
    Plan p;
    p.tiles = tiles;
    p.kt = kt;
    p.clusters = clusters;
    p.dpTiles = tiles;
    if (tiles <= 0 || kt <= 0 || clusters <= 0) return p;
    const int full = tiles / clusters, rem = tiles % clusters;
    if (rem == 0 || rem * 5 >= clusters * 4) return p;  // all data-parallel
    if (mode == SplitMode::Dp) return p;                // s13-smallk: every tile whole (kAutoDp)
    // a lone wave of tiles shorter than kMinIters k-steps (session 9): a stream-K range could only group whole tiles
    // onto fewer clusters (or cut them), never shorten the busiest one's path -- every tile gets its own cluster
    if (full == 0 && kt < kMinIters) return p;
    // a lone wave split into equal pieces per tile (session 11): see SplitMode
    if (full == 0 && mode == SplitMode::Cluster && clusterKPieces(tiles, kt, clusters) >= 2) {
        p.split = clusterKPieces(tiles, kt, clusters);
        p.clusterK = 1;
        p.dpTiles = 0;
        p.skIters = (long long)tiles * kt;
        p.skClusters = tiles * p.split;
        return p;
    }
    if (full == 0 && mode != SplitMode::StreamK && mode != SplitMode::Cluster
        && (mode == SplitMode::SplitK ? splitKPieces(tiles, kt, clusters) >= 2 : splitKWanted(tiles, kt, clusters))) {
        p.split = splitKPieces(tiles, kt, clusters);
        p.dpTiles = 0;
        p.skIters = (long long)tiles * kt;
        p.skClusters = tiles * p.split;
        return p;
    }
    const int skTiles = rem + (full >= 1 ? clusters : 0);
    p.dpTiles = tiles - skTiles;
    p.skIters = (long long)skTiles * kt;
    long long c = p.skIters / kMinIters;  // fewer clusters where there are fewer than kMinIters k-steps each
    if (c > clusters) c = clusters;
    if (c < 1) c = 1;
    p.skClusters = int(c);
    return p;
}

// First global stream-K k-step of cluster c's range (c in [0, skClusters]).
WS_SK_HD long long rangeStart(const Plan& p, int c) { return p.skIters * c / p.skClusters; }

// The cluster whose range holds stream-K k-step i.
WS_SK_HD int clusterOf(const Plan& p, long long i)
{
    int c = int(i * p.skClusters / p.skIters);
    while (c + 1 < p.skClusters && rangeStart(p, c + 1) <= i) ++c;
    while (c > 0 && rangeStart(p, c) > i) --c;
    return c;
}

// Data-parallel tiles of cluster c.
WS_SK_HD int dpCount(const Plan& p, int c) { return c < p.dpTiles ? (p.dpTiles - c + p.clusters - 1) / p.clusters : 0; }

// Walks cluster c's stream-K units, highest first: `e` starts at rangeStart(c + 1) (skBegin) and goes down.
struct SkCursor {
    long long s = 0, e = 0;
};
WS_SK_HD SkCursor skBegin(const Plan& p, int c)
{
    SkCursor r;
    if (c < p.skClusters) {
        r.s = rangeStart(p, c);
        r.e = rangeStart(p, c + 1);
    }
    return r;
}
WS_SK_HD bool skNext(const Plan& p, SkCursor& cur, Unit& u)
{
    if (cur.e <= cur.s) return false;
    const long long t = (cur.e - 1) / p.kt, t0 = t * p.kt;
    const long long b = cur.s > t0 ? cur.s : t0;
    u.tile = p.dpTiles + int(t);
    u.kb = int(b - t0);
    u.ke = int(cur.e - t0);
    cur.e = b;
    return true;
}

// Units of cluster c in all (data-parallel + stream-K).
WS_SK_HD int unitCount(const Plan& p, int c)
{
    int n = dpCount(p, c);
    SkCursor cur = skBegin(p, c);
    Unit u;
    while (skNext(p, cur, u)) ++n;
    return n;
}

// The i-th data-parallel unit of cluster c.
WS_SK_HD Unit dpUnit(const Plan& p, int c, int i)
{
    Unit u;
    u.tile = c + i * p.clusters;
    u.kb = 0;
    u.ke = p.kt;
    return u;
}

// Clusters that hold a piece of stream-K tile `tile` (a global tile index >= dpTiles): [first, last]; the
// last is the finisher, the others wrote partials to their slots.
WS_SK_HD void contributors(const Plan& p, int tile, int& first, int& last)
{
    const long long t = tile - p.dpTiles;
    first = clusterOf(p, t * p.kt);
    last = clusterOf(p, (t + 1) * p.kt - 1);
}

// Host only. The tile rule (issue 14, sessions 8-9): the configuration of kTiles whose estimated time is least, ties
// to the lower index (kTiles[0], the large tile). The estimate is the critical path of the busiest cluster under plan():
//   k-steps x (a x rowsA/128 + b x bn/256) a k-step's time: the bytes the CTA receives per k-step, A's rowsA x 64
//                                          block + B's bn x 64 (session 8: every configuration at 4096^3 fits one
//                                          rate per SM, the MMAs just under it). rowsA = the rows A's box loads: the
//                                          block's rows, or M's rounded up to 8 where one CTA block covers M
//                                          (Tile::boxRowsA; session 9: the zero-filled rows of a 128-row box cost like
//                                          loaded ones -- 1x4096x4096 29.4 -> 21.4 us with 128x128 blocks)
//   + units x unitNs                       per unit: pipeline fill, drain, epilogue
//   + partials written x partNs x bn/256   a piece short of its tile's last k-step writes its fp32 accumulators
//   + partials read x readNs x bn/256      a finisher adds every earlier piece's (through L2)
//   + splitNs x bn/256 x (s - 1)/s         split-K (plan().split = s > 0): every piece writes all but its own slice
//     + splitLatencyNs                     of its partial and reads that slice of the s - 1 others', a chain of
//                                          round trips that no k-step hides
// with the k-step part (the first line) of every cluster stretched, where the busiest cluster's would take less, to
// the DRAM floor 2 (MK + KN + MN) bytes / dramBytesPerNs (s14-gemmsmall): A, B and C cross DRAM at least once, and
// the machine's k-loops together pull at most that rate -- skinny long shapes (M <= 128, N K >= 16M: 117 MB of B at
// 128x4096x14336) are DRAM-bound, and there the plan with the least work outside its k-loop is the fastest.
// The constants are fitted to the H200 (session 9's exploratory call: seven configurations forced at 17 shapes, plus
// session 8's timings at M >= 128, which the session-9 changes leave alone; objective: the time lost by the pick,
// then the log error; docs/kernel-notes.md "Session 9, s9-smallm"). Kept out of the fit and checked after it:
// 8x4096x4096, 512x4096x4096, 128x4096x14336, 2048x4096x4096 (the rule loses 6 % at 512x4096x4096, none at the
// others). On the fitted shapes it picks the fastest or one within 0.5 %, except 16x4096x14336 (9 %) and
// 1x14336x4096 (2 %), where the 64-row blocks (kTiles 5-6) are fastest and not picked. Session 11 (s11-skinny):
// splitNs and splitLatencyNs chosen (the others kept) to lose the least time over the exploratory call's seven
// configurations forced to split-K at the ten shapes below 90 % of cuBLAS plus session 9's stream-K timings where the
// plan is unchanged (splitNs 10-14 us and a latency of 4-8 us lose the same; without the latency term the rule split
// 256x4096x4096 in 256x128 pairs, 27.7 us in the final call against 26.7 for 128x64 blocks data-parallel). It loses
// <= 2.5 % there except 1x4096x4096 (6 %: 128x64 blocks, 64x128 fastest). `ctas`: the CTAs launched.
struct TileCost {
    double kstepANs;  // a: A's 128 x 64 block (16 KB) per k-step
    double kstepBNs;  // b: a 256-wide B block's 32 KB per k-step
    double unitNs;
    double partNs;
    double readNs;
    double splitNs;   // split-K (session 11): a piece's fixup, x bn/256 x (s - 1)/s (it writes and reads that much)
    double splitLatencyNs;  // split-K: the fixup's chain of round trips (write, fence, flag, the peers' flags, read,
                            // store), overlapped with no k-step (a piece is its cluster's only unit)
    double clusterNs;         // Cluster split (s11-skinny2): the exchange through distributed shared memory, x bn/256 x
                              // (s - 1)/s
    double clusterLatencyNs;  // Cluster split: the cluster barrier and the slice's store, per piece
    double pairB = 1.0;       // s13-smallk: b's factor for a pair (cl = 2: each CTA reads half of B from L2 and
                              // multicasts it), fitted to flip the least: 512x4096x4096 measured 31.9 us (128x256
                              // cluster split) -> 29.4 us (256x128 pairs, data-parallel), H200
    double dramBytesPerNs = 0;  // s14-gemmsmall: the rate at which the k-loops together stream from DRAM (0: none)
    double pairB128 = 1.0;      // s16-gemmgap: pairB for pairs of 128-column blocks (kTiles[1], [7]) in data-parallel
                                // and split-K plans; see kTileCost
};
// clusterNs / clusterLatencyNs: s11-skinny2's first guesses, kept: with Auto's cluster split limited to where it was
// measured (autoClusterAllowed below) they pick the measured winners; a fit over the regime is future work.
inline constexpr TileCost kTileCost = {125.0,  600.0,  1000.0, 7000.0, 500.0, 10000.0,
                                       5000.0, 3000.0, 2000.0, 0.95,  4000.0, 0.85};
// pairB128 = 0.85 (s16-gemmgap): a pair of 128-column blocks (256 x 128 per cluster) gains more from B's multicast than
// pairB's 5 % -- in data-parallel and split-K plans (estimateNs applies it only there): measured against 128x128 blocks
// alone with the same plan, 55.5 vs 62.1 us at 1024x1024x16384 (split-K 2, H200, cold, one process) and 29.4-29.7 vs
// 33.8 at 512x4096x4096 (data-parallel, s13-smallk) -- 11-13 % where the estimate had 3-4 %; the other configurations'
// estimates at 1024x1024x16384 were within 1.3 us of the times measured beside them (256x256 pairs split-K 4: 58.0 est
// / 58.3 us; 128x256 alone split-K 4 59.9 / 58.7; 128x128 alone split-K 2 62.9 / 62.1), the 256x128 pairs' 5.5 us too
// high (61.0 / 55.5). The largest factor that moves 1024x1024x16384 to them (0.9 does not); measured with it (call 2,
// against the old pick forced in one process): 1024x1024x16384 59.2 -> 56.6 us, 256x4096x16384 61.6 -> 58.2 (split-K 2
// for split-K 4), but 192x14336x14336 149.6 -> 180.6 us, a stream-K plan over two waves of 112 tiles replacing a
// data-parallel wave of 56 (the pairs' stream-K estimate there was already within 3 % of the old pick's with pairB):
// so not for plans with stream-K ranges. Of the 33-shape sweep it moves only 1024x1024x16384; of the 972-shape grid
// 21 picks, all to kTiles[1] split-K or data-parallel (M <= 512 with K >= 8192 or N >= 8192, 1024..2048 x 1024..2048 x
// >= 14336, 384x4096x4096): docs/kernel-notes/gemm-shapes-s16.md lists them; 256x4096x16384 is the one measured.
// dramBytesPerNs = 4000 (4.0 TB/s; the H200's HBM3e peaks at 4.8): fitted by hand to s13-smallk's forced timings at
// 128x4096x14336 (H200, one process): with ~5 us of launch and prologue outside the model, 128x128 split-K 4
// (44.6 us), 128x256 split-K 8 (53.0) and 128x64 cluster split 2 (39.1) are estimated 40.3 / 45.3 / 34.2 us with the
// floor and 33.5 / 35.0 / 34.2 without it -- without it the rule picked the split-K 4 (the estimates 2 % apart), with
// it the cluster split (+14 %). It also brings 1x4096x4096's 128x64 cluster split (16.8 us; 32 MB of B) from 8.4 to
// 11.8 us estimated. Over a grid of 714 shapes (M 1..8192 x N 1024..28672 x K 256..14336) it moves 35 picks, all at
// M <= 128 with N K >= 32M (and 96..128 x 2048 x 14336); of the 33-shape sweep only 128x4096x14336.
// Whether Auto may take the cluster split (chooseMode), and where. The lead's call of session 11 (06:18 UTC, H200,
// scripts/device/s11-skinny2.sh: every configuration's cluster split beside split-K, the rule and cuBLAS in one process,
// cold): clusters of TWO pieces won at every small-M shape timed -- 1x4096x4096 21.7 -> 18.6 us (128x64 blocks),
// 128x4096x4096 22.4 -> 19.6 (128x64), 256x4096x4096 26.8 -> 24.4 (128x128), 512x4096x4096 35.8 -> 32.4 (128x256) --
// while clusters of four lost badly (43-55 % of cuBLAS: 128x256 blocks at 256x4096x4096, 128x128 at 1x4096x4096: both
// 32 clusters of four, and only 30 fit at once -- s14-gemmsmall, cudaOccupancyMaxActiveClusters at 214 KB per
// CTA: 66 of two, 39 of three, 30 of four, 17 of six, 15 of eight -- so two ran as a second wave) and
// 1024x1024x16384 (M = 1024) kept its pairs' split-K (60.1 us vs 67.9 for 128x128 clusters of two). So Auto takes it
// only in clusters of two and where M <= 512.
// The lead's check of that rule (06:23 UTC, scripts/device/s11-final2.sh: the rule vs the rule without it, `/global`,
// in one process): faster at 8 of 10 changed shapes (+3.1 to +16.3 %), level at 128x4096x14336 (+0.1 %), and 7.8 %
// SLOWER at 128x14336x4096 (128x256 clusters against 112 data-parallel 128x128 blocks): so also N <= 8192 (measured
// wins all have N = 4096; the regime past that is not measured).
inline constexpr bool kAutoCluster = true;
inline constexpr int kAutoClusterMaxM = 512, kAutoClusterMaxN = 8192;
// Whether Auto may drop the hybrid's stream-K part (SplitMode::Dp, s13-smallk): where there are whole waves and the
// estimate says the tail wave's fixups cost more than its idle SMs -- short K (K <= 1024 on the grid the test walks),
// where a stream-K piece is a few k-steps and a partial costs a tile's worth. Measured (H200, interleaved with the
// hybrid in one process, docs/benchmarks/gemm-small-shapes.md): 8192x8192x512 123.0 -> 115.5 us, 8192x8192x1024
// 203.0 -> 197.6, 2048x14336x512 63.2 -> 53.8, 1536x2048x1024 and 768x4096x1024 23.4 -> 19.5 (128x64 blocks with the
// hybrid -> 256x128 pairs whole). Lone waves keep their split: a Dp plan there only idles clusters.
inline constexpr bool kAutoDp = true;

// A's rows a CTA's k-step loads (pingpong_body.cuh's Tile::boxRowsA): M's rounded up to 8 where one CTA alone covers
// every row of M, else the block's.
WS_SK_HD int boxRowsA(const TileConfig& t, int m) { return t.cl == 1 && m < t.bm ? (m + 7) / 8 * 8 : t.bm; }

inline double estimateNs(const TileConfig& t, int m, int n, int k, int ctas, const TileCost& cost = kTileCost,
                         SplitMode mode = SplitMode::Auto)
{
    const int clusters = ctas / t.cl;
    const int kt = (k + 63) / 64;
    const Plan p = plan(tileCountOf(t, m, n), kt, clusters, mode);
    const double w = t.bn / 256.0;
    // pairB128: data-parallel and split-K plans only (see kTileCost)
    const double pairB = t.bn == 128 && (p.skIters == 0 || p.split > 0) ? cost.pairB128 : cost.pairB;
    const double ks = cost.kstepANs * boxRowsA(t, m) / 128.0 + cost.kstepBNs * w * (t.cl == 2 ? pairB : 1.0);
    // per cluster: the k-steps it streams (kloop) and the rest of its path (units, fixups)
    auto walk = [&](int c, double& kloop, double& rest) {
        kloop = 0;
        rest = 0;
        const int dp = dpCount(p, c);
        kloop += double(dp) * kt * ks;
        rest += dp * cost.unitNs;
        SkCursor cur = skBegin(p, c);
        Unit u;
        while (skNext(p, cur, u)) {
            kloop += (u.ke - u.kb) * ks;
            rest += cost.unitNs;
            if (p.split > 0 && p.clusterK)  // the same through distributed shared memory, no round trip to L2
                rest += cost.clusterNs * w * (p.split - 1) / p.split + cost.clusterLatencyNs;
            else if (p.split > 0)  // all but its own slice, and the latency of the exchange
                rest += cost.splitNs * w * (p.split - 1) / p.split + cost.splitLatencyNs;
            else if (u.ke < kt) rest += cost.partNs * w;  // writes its partial
            else if (u.kb > 0) {                          // the finisher: reads the earlier pieces'
                int first, last;
                contributors(p, u.tile, first, last);
                rest += (last - first) * cost.readNs * w;
            }
        }
    };
    int busy = p.skClusters > p.dpTiles ? p.skClusters : p.dpTiles;  // the clusters from `busy` on have nothing
    if (busy > clusters) busy = clusters;
    // s14-gemmsmall: the k-loops of all clusters together stream A, B (and C) from DRAM at most at cost.dramBytesPerNs:
    // where the busiest cluster's k-loop is shorter than that, every k-loop stretches to it (the fixups do not)
    double maxKloop = 0, kl, rs;
    for (int c = 0; c < busy; ++c) {
        walk(c, kl, rs);
        if (kl > maxKloop) maxKloop = kl;
    }
    const double bytes = 2.0 * (double(m) * k + double(k) * n + double(m) * n);
    const double dramNs = cost.dramBytesPerNs > 0 ? bytes / cost.dramBytesPerNs : 0;
    const double stretch = maxKloop > 0 && dramNs > maxKloop ? dramNs / maxKloop : 1.0;
    double worst = 0;
    for (int c = 0; c < busy; ++c) {
        walk(c, kl, rs);
        const double ns = kl * stretch + rs;
        if (ns > worst) worst = ns;
    }
    return worst;
}

// The mode configuration `t` runs with (s11-skinny2): Cluster needs one CTA per block (t.cl == 1: the cluster is
// then the tile's pieces alone; pairs stay on split-K's workspace); Auto takes Cluster where that plan exists and its
// estimate is lower than Auto's plan (only with kAutoCluster); Global is Auto without it; the forced modes are kept.
// Where Auto may consider the cluster split for configuration `t` (see kAutoCluster): one CTA per block, M <= 512,
// N <= 8192, and the plan's clusters are of two pieces.
inline bool autoClusterAllowed(const TileConfig& t, int m, int n, int k, int ctas)
{
    if (!kAutoCluster || t.cl != 1 || m > kAutoClusterMaxM || n > kAutoClusterMaxN) return false;
    const Plan p = plan(tileCountOf(t, m, n), (k + 63) / 64, ctas, SplitMode::Cluster);
    return p.clusterK && p.split == 2;
}

inline SplitMode chooseMode(const TileConfig& t, int m, int n, int k, int ctas, SplitMode mode = SplitMode::Auto)
{
    if (mode == SplitMode::Cluster) return t.cl == 1 ? SplitMode::Cluster : SplitMode::SplitK;
    if (mode == SplitMode::Global) return SplitMode::Auto;
    if (mode != SplitMode::Auto) return mode;
    SplitMode best = mode;
    double bestNs = estimateNs(t, m, n, k, ctas, kTileCost, mode);
    if (autoClusterAllowed(t, m, n, k, ctas)) {
        const double ns = estimateNs(t, m, n, k, ctas, kTileCost, SplitMode::Cluster);
        if (ns < bestNs) best = SplitMode::Cluster, bestNs = ns;
    }
    if (kAutoDp && tileCountOf(t, m, n) >= ctas / t.cl  // whole waves: Dp only drops the hybrid's stream-K part
        && estimateNs(t, m, n, k, ctas, kTileCost, SplitMode::Dp) < bestNs)
        best = SplitMode::Dp;
    return best;
}

// The rule: the configuration (and, chooseMode, its split mode) estimated fastest.
struct Launch {
    int tile = 0;
    SplitMode mode = SplitMode::Auto;
};
inline Launch chooseLaunch(int m, int n, int k, int ctas, SplitMode mode = SplitMode::Auto)
{
    Launch best{0, chooseMode(kTiles[0], m, n, k, ctas, mode)};
    double bestNs = estimateNs(kTiles[0], m, n, k, ctas, kTileCost, best.mode);
    for (int i = 1; i < kTileCount; ++i) {
        if (!kTiles[i].rule) continue;
        const SplitMode mi = chooseMode(kTiles[i], m, n, k, ctas, mode);
        const double ns = estimateNs(kTiles[i], m, n, k, ctas, kTileCost, mi);
        if (ns < bestNs) {
            bestNs = ns;
            best = {i, mi};
        }
    }
    return best;
}

inline int chooseTile(int m, int n, int k, int ctas, SplitMode mode = SplitMode::Auto)
{
    return chooseLaunch(m, n, k, ctas, mode).tile;
}

}  // namespace ws::kern::sk
