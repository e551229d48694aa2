// CPU test (no GPU needed): rung 7's tile walk (kernels/src/streamk_schedule.h, issue 14). For problems
// from one tile to thousands, on 66 clusters (H200) and a few others: every (tile, k-step) is computed by
// exactly one unit; no cluster's stream-K range is shorter than kMinIters k-steps; every cluster has work
// when there are at least clusters x kMinIters stream-K k-steps; every cluster has at most one partial
// piece (its workspace slot), walked first among its stream-K units, and its finisher piece last; the
// finisher of every split tile is the last cluster of contributors(); the hybrid rule keeps whole waves
// data-parallel (256x4096x4096: all 16 tiles split; 4096^3: all data-parallel); the tile rule (chooseTile, session 8)
// picks the configurations measured fastest and every configuration's walk covers its tiles; split-K plans (session 11:
// a lone wave in equal pieces, one per cluster) in every mode. Exit: 0 passed, 1 failed.
#include "streamk_schedule.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

using namespace ws::kern;

namespace {

int g_fail = 0;
int g_pass = 0;
void expect(bool ok, const std::string& what)
{
    if (!ok) {
        std::printf("FAIL %s\n", what.c_str());
        ++g_fail;
    } else
        ++g_pass;
}

const char* modeName(sk::SplitMode m)
{
    return m == sk::SplitMode::Auto      ? "auto"
           : m == sk::SplitMode::StreamK ? "stream-K"
           : m == sk::SplitMode::SplitK  ? "split-K"
           : m == sk::SplitMode::Cluster ? "cluster"
           : m == sk::SplitMode::Dp      ? "dp"
                                         : "global";
}

std::string name(int tiles, int kt, int clusters, sk::SplitMode mode = sk::SplitMode::Auto)
{
    return std::to_string(tiles) + " tiles x " + std::to_string(kt) + " k-steps on " + std::to_string(clusters)
        + " clusters (" + modeName(mode) + ")";
}

// Split-K plans (session 11): every tile in p.split equal pieces, one per cluster, none crossing a tile; the pieces of
// tile j are clusters [j s, (j + 1) s), which contributors() reports; every piece >= kMinIters k-steps.
void checkSplit(const sk::Plan& p, const std::string& n)
{
    expect(p.split >= 2 && p.dpTiles == 0 && p.skClusters == p.tiles * p.split && p.skClusters <= p.clusters
               && p.skIters == (long long)p.tiles * p.kt,
           n + ": split-K covers every tile in split pieces on tiles x split clusters");
    for (int c = 0; c < p.skClusters; ++c) {
        sk::SkCursor cur = sk::skBegin(p, c);
        sk::Unit u;
        int units = 0;
        while (sk::skNext(p, cur, u)) {
            ++units;
            expect(u.tile == c / p.split && u.ke - u.kb >= sk::kMinIters,
                   n + ": split-K cluster " + std::to_string(c) + " holds a piece of tile c / split, >= kMinIters long");
            int first, last;
            sk::contributors(p, u.tile, first, last);
            expect(first == u.tile * p.split && last == first + p.split - 1,
                   n + ": split-K tile " + std::to_string(u.tile) + "'s pieces are clusters [tile x s, (tile + 1) x s)");
        }
        expect(units == 1, n + ": split-K cluster " + std::to_string(c) + " has exactly one piece");
    }
}

void checkPlan(int tiles, int kt, int clusters, sk::SplitMode mode = sk::SplitMode::Auto)
{
    const sk::Plan p = sk::plan(tiles, kt, clusters, mode);
    const std::string n = name(tiles, kt, clusters, mode);
    if (mode == sk::SplitMode::StreamK) expect(p.split == 0, n + ": stream-K never splits into equal pieces");
    if (mode == sk::SplitMode::Dp)  // s13-smallk: every tile whole, nothing split along K
        expect(p.dpTiles == tiles && p.skIters == 0 && p.skClusters == 0 && p.split == 0, n + ": dp: every tile whole");
    expect(p.clusterK == (mode == sk::SplitMode::Cluster && p.split > 0),
           n + ": the cluster reduction exactly where the cluster split is asked for and possible");
    if (p.clusterK)  // s11-skinny2: the tile's pieces are one whole cluster launch's cluster (a divisor of the grid)
        expect(p.split <= sk::kMaxClusterK && clusters % p.split == 0 && p.split == sk::clusterKPieces(tiles, kt, clusters),
               n + ": cluster pieces <= kMaxClusterK and dividing the clusters");
    if (mode == sk::SplitMode::Cluster && !p.clusterK)  // where it cannot: stream-K's plan
        expect(p.split == 0 && p.dpTiles == sk::plan(tiles, kt, clusters, sk::SplitMode::StreamK).dpTiles
                   && p.skClusters == sk::plan(tiles, kt, clusters, sk::SplitMode::StreamK).skClusters,
               n + ": no cluster split possible -> stream-K's plan");
    if (p.split > 0) {
        checkSplit(p, n);
        if (mode == sk::SplitMode::Auto)
            expect(8 * p.skClusters >= 7 * clusters, n + ": auto splits only where >= 7/8 of the clusters get a piece");
    }
    std::vector<int> cover(std::size_t(tiles) * kt, 0);
    bool ok = true;
    for (int c = 0; c < clusters; ++c) {
        int partials = 0, units = 0;
        bool finisherSeen = false;
        for (int i = 0; i < sk::dpCount(p, c); ++i, ++units) {
            const sk::Unit u = sk::dpUnit(p, c, i);
            ok = ok && u.tile >= 0 && u.tile < p.dpTiles && u.kb == 0 && u.ke == kt;
            for (int k = u.kb; k < u.ke && ok; ++k) ++cover[std::size_t(u.tile) * kt + k];
        }
        sk::SkCursor cur = sk::skBegin(p, c);
        sk::Unit u;
        long long iters = 0;
        bool firstSk = true;
        while (sk::skNext(p, cur, u)) {
            ++units;
            iters += u.ke - u.kb;
            if (u.tile < p.dpTiles || u.tile >= tiles || u.kb < 0 || u.ke > kt || u.kb >= u.ke) {
                expect(false, n + ": cluster " + std::to_string(c) + " has a unit outside the stream-K tiles");
                return;
            }
            for (int k = u.kb; k < u.ke; ++k) ++cover[std::size_t(u.tile) * kt + k];
            if (u.ke != kt) {  // a partial piece
                ++partials;
                expect(firstSk, n + ": cluster " + std::to_string(c) + "'s partial piece is its first stream-K unit");
            }
            if (u.ke == kt && u.kb > 0) {  // a finisher
                int first, last;
                sk::contributors(p, u.tile, first, last);
                expect(last == c && first < c,
                       n + ": tile " + std::to_string(u.tile) + "'s finisher is the last of its contributors");
                finisherSeen = true;
            } else if (finisherSeen)
                expect(false, n + ": cluster " + std::to_string(c) + " walks a unit after its finisher piece");
            firstSk = false;
        }
        expect(partials <= 1, n + ": cluster " + std::to_string(c) + " has at most one partial (one slot)");
        if (c < p.skClusters)
            expect(iters >= sk::kMinIters || p.skIters < sk::kMinIters,
                   n + ": cluster " + std::to_string(c) + "'s stream-K range has >= kMinIters k-steps");
        expect(sk::unitCount(p, c) == units, n + ": unitCount matches the walk");
        if (p.split == 0 && (p.skIters >= (long long)clusters * sk::kMinIters || p.dpTiles >= clusters))
            expect(units > 0, n + ": cluster " + std::to_string(c) + " is busy");
    }
    for (std::size_t i = 0; i < cover.size() && ok; ++i)
        if (cover[i] != 1) {
            expect(false, n + ": (tile " + std::to_string(i / kt) + ", k " + std::to_string(i % kt) + ") computed "
                              + std::to_string(cover[i]) + " times");
            ok = false;
        }
    expect(ok, n + ": every (tile, k-step) exactly once");
}

}  // namespace

int main()
{
    const int clusterCounts[] = {66, 64, 1, 2, 7};
    for (int clusters : clusterCounts)
        for (int tiles : {1, 2, 3, 15, 16, 17, 63, 64, 65, 66, 67, 100, 131, 132, 133, 256, 1024, 1055})
            for (int kt : {1, 2, 3, 4, 5, 16, 17, 64, 65, 128, 224})
                for (sk::SplitMode mode : {sk::SplitMode::Auto, sk::SplitMode::StreamK, sk::SplitMode::SplitK,
                                           sk::SplitMode::Cluster, sk::SplitMode::Global, sk::SplitMode::Dp})
                    checkPlan(tiles, kt, clusters, mode);
    // s11-skinny2: the cluster split's pieces -- split-K's, at most 8 and dividing the grid (132 = 2 x 2 x 3 x 11)
    expect(sk::clusterKPieces(64, 64, 132) == 2 && sk::clusterKPieces(32, 64, 132) == 4
               && sk::clusterKPieces(16, 224, 132) == 6 && sk::clusterKPieces(16, 64, 128) == 8
               && sk::clusterKPieces(26, 64, 132) == 4 && sk::clusterKPieces(16, 12, 132) == 3
               && sk::clusterKPieces(64, 4, 132) == 0 && sk::clusterKPieces(140, 64, 132) == 0,
           "clusterKPieces: min(split-K's, 8), lowered to a divisor of the clusters");
    // the mode a configuration runs: Cluster only with one CTA per block (pairs keep split-K's workspace)
    for (int i = 0; i < sk::kTileCount; ++i)
        for (sk::SplitMode m : {sk::SplitMode::Auto, sk::SplitMode::Cluster, sk::SplitMode::Global})
            for (int mm : {1, 128, 256, 1024})
                expect((sk::chooseMode(sk::kTiles[i], mm, 4096, 4096, 132, m) == sk::SplitMode::Cluster)
                           <= (sk::kTiles[i].cl == 1 && m != sk::SplitMode::Global
                               && (m == sk::SplitMode::Cluster || sk::kAutoCluster)),
                       "chooseMode: kTiles[" + std::to_string(i) + "] at M = " + std::to_string(mm) + " (" + modeName(m)
                           + "): the cluster split only for cl = 1, never in Global, in Auto only with kAutoCluster");
    // forced, the cluster split is what a cl = 1 configuration runs; pairs run split-K's workspace instead
    expect(sk::chooseMode(sk::kTiles[4], 1, 4096, 4096, 132, sk::SplitMode::Cluster) == sk::SplitMode::Cluster
               && sk::chooseMode(sk::kTiles[0], 1, 4096, 4096, 132, sk::SplitMode::Cluster) == sk::SplitMode::SplitK
               && sk::chooseMode(sk::kTiles[4], 1, 4096, 4096, 132, sk::SplitMode::Global) == sk::SplitMode::Auto,
           "chooseMode: forced cluster on cl = 1 -> Cluster, on pairs -> SplitK; Global -> Auto");
    // Auto takes the cluster split only where it was measured to win (kAutoCluster: clusters of two, M <= 512); elsewhere
    // its picks are Global's (s11-skinny's rule), tile and mode; where it does take it, the tile is a cl = 1 one
    for (int mm : {1, 40, 128, 256, 512, 513, 1024, 2048})
        for (int nn : {1024, 4096, 14336})
            for (int kk : {1024, 4096, 14336, 16384}) {
                const sk::Launch a = sk::chooseLaunch(mm, nn, kk, 132), g = sk::chooseLaunch(mm, nn, kk, 132, sk::SplitMode::Global);
                const std::string at = "M = " + std::to_string(mm) + ", N = " + std::to_string(nn) + ", K = " + std::to_string(kk);
                if (a.mode == sk::SplitMode::Cluster) {
                    const sk::Plan p = sk::plan(sk::tileCountOf(sk::kTiles[a.tile], mm, nn), (kk + 63) / 64, 132,
                                                sk::SplitMode::Cluster);
                    expect(mm <= sk::kAutoClusterMaxM && nn <= sk::kAutoClusterMaxN && sk::kTiles[a.tile].cl == 1
                               && p.clusterK && p.split == 2,
                           "Auto's cluster split: M <= 512, N <= 8192, one CTA per block, clusters of two (" + at + ")");
                } else if (a.mode != sk::SplitMode::Dp)  // (Auto's dp: checked below)
                    expect(a.tile == g.tile && a.mode == g.mode, "Auto = Global where it takes no cluster split (" + at + ")");
            }
    // s13-smallk: Auto's Dp (kAutoDp) only where there are whole waves (it drops the hybrid's stream-K part, never
    // leaves a lone wave's clusters idle); configurations with rule = false (experiments) never picked; the measured
    // pick at 8192x8192x512 (kTiles[0] data-parallel: 122.5 -> 115.9 us, H200)
    for (int mm : {1, 128, 384, 768, 1536, 4096, 8192})
        for (int nn : {1024, 4096, 14336, 28672})
            for (int kk : {256, 512, 1024, 4096, 16384}) {
                const sk::Launch l = sk::chooseLaunch(mm, nn, kk, 132);
                const sk::TileConfig& t = sk::kTiles[l.tile];
                const std::string at = "M = " + std::to_string(mm) + ", N = " + std::to_string(nn) + ", K = " + std::to_string(kk);
                expect(t.rule, "the rule picks only configurations with rule = true (" + at + ")");
                if (l.mode == sk::SplitMode::Dp)
                    expect(sk::tileCountOf(t, mm, nn) >= 132 / t.cl
                               && sk::estimateNs(t, mm, nn, kk, 132, sk::kTileCost, sk::SplitMode::Dp)
                                      < sk::estimateNs(t, mm, nn, kk, 132, sk::kTileCost, sk::SplitMode::Global),
                           "Auto's dp: whole waves, and estimated faster than the hybrid (" + at + ")");
            }
    // 256x777x4096: the experiment kTiles[7] (64 x 128 pairs) has the lowest estimate of all, and is not picked
    expect(!sk::kTiles[7].rule && sk::kTiles[sk::chooseLaunch(256, 777, 4096, 132).tile].rule,
           "an experiment (rule = false) is never the rule's pick, also where its estimate is the lowest");
    {
        const sk::Launch l = sk::chooseLaunch(8192, 8192, 512, 132);
        expect(l.tile == 0 && l.mode == sk::SplitMode::Dp, "the measured pick at 8192x8192x512: kTiles[0], dp");
    }
    // the measured picks (the lead's call of session 11: streamk_schedule.h, kAutoCluster)
    {
        struct Pin { int m, n, k, tile; bool cluster; };
        // s13-smallk: 512x4096x4096 -> kTiles[1] data-parallel (the pair discount, TileCost::pairB: 31.9 us for the
        // 128x256 cluster split -> 29.4 us, H200, docs/benchmarks/gemm-small-shapes.md)
        for (const Pin& q : {Pin{1, 4096, 4096, 4, true}, Pin{128, 4096, 4096, 4, true}, Pin{256, 4096, 4096, 2, true},
                             Pin{512, 4096, 4096, 1, false}, Pin{1024, 1024, 16384, 1, false},
                             Pin{128, 14336, 4096, 2, false}, Pin{512, 4096, 14336, 3, true},
                             // s14-gemmsmall: the DRAM floor (TileCost::dramBytesPerNs): 128x128 split-K 4 (44.6 us) ->
                             // 128x64 cluster split 2 (39.1 us, s13-smallk's forced timing, H200)
                             Pin{128, 4096, 14336, 4, true},
                             // ... and where it moved picks measured faster than main's, forced in one process (H200):
                             // 128x2048x14336 33.6 -> 28.6 us, 128x8192x4096 26.9 -> 25.2, 128x14336x14336 123.2 ->
                             // 108.0, 32x14336x14336 113.2 -> 105.2, 1x14336x8192 68.8 -> 62.8, 16x28672x8192 122.5 ->
                             // 117.6 (docs/benchmarks/gemm-small-shapes.md, session 14)
                             Pin{128, 2048, 14336, 4, false}, Pin{128, 8192, 4096, 4, false},
                             Pin{128, 14336, 14336, 2, false}, Pin{32, 14336, 14336, 2, false},
                             Pin{1, 14336, 8192, 2, false}, Pin{16, 28672, 8192, 3, false},
                             // s16-gemmgap: TileCost::pairB128 (H200, the new pick against the old one forced in one
                             // process): 256x4096x16384 -> 256x128 pairs split-K 2 (61.6 -> 58.2 us); 192x14336x14336
                             // keeps 256x256 pairs data-parallel (149.6 us; 256x128 pairs' stream-K plan 180.6)
                             Pin{256, 4096, 16384, 1, false}, Pin{192, 14336, 14336, 0, false}}) {
            const sk::Launch l = sk::chooseLaunch(q.m, q.n, q.k, 132);
            expect((q.tile < 0 || l.tile == q.tile) && (l.mode == sk::SplitMode::Cluster) == q.cluster,
                   "the measured pick at " + std::to_string(q.m) + "x" + std::to_string(q.n) + "x" + std::to_string(q.k)
                       + ": kTiles[" + std::to_string(l.tile) + "], " + modeName(l.mode));
        }
    }

    // The hybrid rule on the shapes (pair tiles of 256x256, 66 clusters on the H200).
    {
        const sk::Plan p = sk::plan(16, 64, 66, sk::SplitMode::StreamK);  // 256x4096x4096: 16 tiles, nothing data-parallel
        expect(p.dpTiles == 0 && p.skClusters == 66 && p.skIters == 1024, "256x4096x4096: all 16 tiles split over 66 clusters");
        long long lo = 1 << 30, hi = 0;
        for (int c = 0; c < 66; ++c) {
            const long long n = sk::rangeStart(p, c + 1) - sk::rangeStart(p, c);
            lo = n < lo ? n : lo;
            hi = n > hi ? n : hi;
        }
        expect(lo == 15 && hi == 16, "256x4096x4096: every cluster gets 15-16 k-steps (pingpong: 64 on 16 clusters)");
    }
    {
        const sk::Plan p = sk::plan(256, 64, 66);  // 4096^3: 3 waves + 58 tiles (>= 80% of a wave)
        expect(p.dpTiles == 256 && p.skIters == 0, "4096^3: all data-parallel (remainder wave 58/66 >= 80%)");
    }
    {
        const sk::Plan p = sk::plan(111, 64, 66);  // one wave + 45 tiles (68% of a wave): the last two waves split
        expect(p.dpTiles == 0 && p.skIters == 111LL * 64, "111 tiles on 66 clusters: the 68%-full last wave is split");
        const sk::Plan q = sk::plan(119, 64, 66);  // one wave + 53 tiles (80%): data-parallel
        expect(q.dpTiles == 119 && q.skIters == 0, "119 tiles on 66 clusters: the 80%-full last wave stays whole");
    }
    {
        const sk::Plan p = sk::plan(1024, 128, 66);  // 8192^3: 15 waves + 34 tiles
        expect(p.dpTiles == 1024 - 100 && p.skIters == 100LL * 128,
               "8192^3: 14 whole waves data-parallel, the last wave + 34 tiles split");
    }
    {
        const sk::Plan p = sk::plan(64, 16, 66);  // 1000x4096x1000: 64 tiles of 16 k-steps, one 97%-full sub-wave
        expect(p.dpTiles == 64 && p.skIters == 0, "1000x4096x1000: the 97%-full lone wave stays data-parallel");
        const sk::Plan q = sk::plan(16, 64, 66, sk::SplitMode::StreamK);  // 256x4096x4096: a 24%-full lone wave: split
        expect(q.dpTiles == 0 && q.skIters == 16LL * 64, "256x4096x4096: the 24%-full lone wave is split");
        // session 11: auto cuts it into equal pieces instead (4 per tile: 64 of the 66 clusters, 16 k-steps each)
        const sk::Plan r = sk::plan(16, 64, 66);
        expect(r.split == 4 && r.skClusters == 64 && r.dpTiles == 0 && sk::rangeStart(r, 1) == 16,
               "256x4096x4096 (auto): split-K, 4 pieces of 16 k-steps per tile on 64 clusters");
        // ... but not where whole pieces would leave more than 1/8 of the clusters idle (50 tiles on 132: s = 2, 100)
        const sk::Plan t = sk::plan(50, 64, 132);
        expect(t.split == 0 && t.skClusters == 132, "50 tiles on 132 clusters (auto): stream-K (split-K would idle 32)");
        expect(sk::plan(50, 64, 132, sk::SplitMode::SplitK).split == 2, "50 tiles on 132 clusters, split-K forced: 2 pieces");
        // pieces never shorter than kMinIters: 16 tiles of 12 k-steps on 132 clusters -> 3 pieces, not 8
        expect(sk::plan(16, 12, 132, sk::SplitMode::SplitK).split == 3, "16 tiles of 12 k-steps, split-K: 3 pieces of 4");
        // data-parallel waves before the last one: never split-K (only a lone wave is)
        expect(sk::plan(140, 64, 132, sk::SplitMode::SplitK).split == 0, "140 tiles on 132 clusters: no split-K");
    }
    {
        const sk::Plan p = sk::plan(2, 6, 66);  // 12 k-steps of work: three clusters (never a range < kMinIters)
        expect(p.skClusters == 3, "2 tiles of 6 k-steps: three stream-K clusters of 4");
        // session 9: a lone wave of tiles shorter than kMinIters stays whole (1x4096x64 with 128x64 blocks: 64
        // one-k-step tiles on 64 CTAs, not 16 CTAs of 4 tiles each)
        const sk::Plan q = sk::plan(64, 1, 132);
        expect(q.dpTiles == 64 && q.skIters == 0, "64 tiles of one k-step on 132 clusters: all data-parallel");
        const sk::Plan r = sk::plan(3, 3, 66);
        expect(r.dpTiles == 3 && r.skIters == 0, "3 tiles of 3 k-steps: all data-parallel");
    }
    // The tile rule (sessions 8-9): the large tile where the machine is full, smaller blocks where it is not; on the
    // H200's 132 CTAs. The picks are what the exploratory calls measured fastest or within 0.5 % of it
    // (docs/kernel-notes.md, s8-gemmtiles and s9-smallm; 512x4096x4096 is 6 % behind the fastest, 16x4096x14336 9 %).
    {
        struct Case {
            int m, n, k, tile;
            const char* why;
        };
        const Case cases[] = {
            {4096, 4096, 4096, 0, "4096^3: 256x256 pair tiles, all data-parallel"},
            {8192, 8192, 8192, 0, "8192^3: 256x256 pair tiles"},
            {8192, 8192, 512, 0, "8192x8192x512: enough tiles for the large one"},
            {1000, 4096, 1000, 0, "1000x4096x1000: a 97%-full wave of large tiles"},
            {1024, 1024, 1024, 4, "1024^3: 128 blocks of 128x64, one per CTA, no split"},
            {128, 14336, 4096, 2, "128x14336x4096: one 128-row block per CTA, 112 of 128 columns (session 11: clusters of two 7.8 % slower)"},
            {128, 4096, 14336, 4, "128x4096x14336: 128x64 blocks, the cluster split in two (s14-gemmsmall: DRAM floor)"},
            {128, 28672, 8192, 3, "128x28672x8192: 112 blocks of 128x256, no pair (M = 128)"},
            {512, 4096, 4096, 1, "512x4096x4096: 256x128 pairs, one wave, data-parallel (s13-smallk: 29.4 us, 128x256 blocks in clusters of two 31.9)"},
            {1, 4096, 4096, 4, "1x4096x4096: 128x64 blocks, A's box 8 rows (session 9)"},
            {64, 4096, 4096, 4, "64x4096x4096: 128x64 blocks, A's box 64 rows (session 9)"},
            {1, 14336, 4096, 2, "1x14336x4096: 128x128 blocks, A's box 8 rows (session 9)"},
            {256, 4096, 4096, 2, "256x4096x4096: 128x128 blocks in clusters of two (session 11: 24.4 us, was 26.8)"},
            {16, 4096, 14336, 4, "16x4096x14336: 128x64 blocks, A's box 16 rows (session 9)"},
            {128, 4096, 4096, 4, "128x4096x4096: 128x64 blocks in clusters of two (session 11: 19.6 us, was 22.4)"},
            {1024, 1024, 16384, 1, "1024x1024x16384: 256x128 pairs, split-K in 2 (s16-gemmgap: 55.5 us, 256x256 pairs split-K 4 58.3)"},
            {512, 4096, 14336, 3, "512x4096x14336: 128x256 blocks in clusters of two (session 11, kAutoCluster)"},
        };
        // session 11: where the rule's plan is split-K (the explored shapes where split-K was measured faster)
        {
            struct SplitCase {
                int m, n, k, split;
            };
            for (const SplitCase& c : {SplitCase{128, 4096, 4096, 2}, SplitCase{128, 4096, 14336, 2},
                                       SplitCase{1024, 1024, 16384, 2}, SplitCase{512, 4096, 14336, 2},
                                       SplitCase{4096, 4096, 4096, 0}, SplitCase{1000, 4096, 1000, 0},
                                       SplitCase{256, 4096, 4096, 2}}) {
                const sk::Launch l = sk::chooseLaunch(c.m, c.n, c.k, 132);
                const sk::TileConfig& t = sk::kTiles[l.tile];
                const sk::Plan p = sk::plan(sk::tileCountOf(t, c.m, c.n), (c.k + 63) / 64, 132 / t.cl, l.mode);
                expect(p.split == c.split, std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k)
                                               + ": the rule's plan splits each tile in " + std::to_string(p.split)
                                               + " (expected " + std::to_string(c.split) + ")");
            }
        }
        for (const Case& c : cases) {
            const int t = sk::chooseTile(c.m, c.n, c.k, 132);
            expect(t == c.tile, std::string(c.why) + " (chose " + std::to_string(t) + ", expected "
                                    + std::to_string(c.tile) + ")");
        }
        // every configuration: its own walk covers its own tiles (the same plan, other tile counts and clusters)
        for (int i = 0; i < sk::kTileCount; ++i) {
            const sk::TileConfig& t = sk::kTiles[i];
            expect(t.cl == 1 || t.cl == 2, "kTiles[" + std::to_string(i) + "]: clusters of 1 or 2 CTAs");
            for (int m : {1, 128, 300, 1024})
                for (int n : {64, 1000, 4096})
                    checkPlan(sk::tileCountOf(t, m, n), 17, 132 / t.cl);
        }
        // session 9: 64-row blocks (kTiles 5-6) count 64-row block rows; A's box rows (boxRowsA) shrink to M's,
        // rounded up to 8, only where one CTA alone covers M
        expect(sk::kTiles[5].bm == 64 && sk::kTiles[6].bm == 64 && sk::kTiles[5].cl == 1 && sk::kTiles[6].cl == 1
                   && sk::tileCountOf(sk::kTiles[5], 65, 4096) == 64 && sk::tileCountOf(sk::kTiles[6], 64, 4096) == 16,
               "64-row blocks: alone (no cluster), ceil(M / 64) x ceil(N / bn)");
        expect(sk::boxRowsA(sk::kTiles[4], 1) == 8 && sk::boxRowsA(sk::kTiles[4], 64) == 64
                   && sk::boxRowsA(sk::kTiles[4], 127) == 128 && sk::boxRowsA(sk::kTiles[4], 128) == 128
                   && sk::boxRowsA(sk::kTiles[4], 300) == 128 && sk::boxRowsA(sk::kTiles[0], 1) == 128
                   && sk::boxRowsA(sk::kTiles[5], 33) == 40 && sk::boxRowsA(sk::kTiles[5], 64) == 64,
               "boxRowsA: M rounded up to 8 where one CTA alone covers M, else the block's rows");
        expect(sk::estimateNs(sk::kTiles[4], 1, 4096, 4096, 132) < sk::estimateNs(sk::kTiles[4], 64, 4096, 4096, 132)
                   && sk::estimateNs(sk::kTiles[4], 64, 4096, 4096, 132) < sk::estimateNs(sk::kTiles[4], 128, 4096, 4096, 132),
               "estimateNs: fewer A rows loaded, a shorter k-step");
        expect(sk::tileCountOf(sk::kTiles[0], 256, 4096) == 16 && sk::tileCountOf(sk::kTiles[4], 1024, 1024) == 128
                   && sk::tileCountOf(sk::kTiles[2], 129, 129) == 4,
               "tileCountOf: ceil(M / (128 x cl)) x ceil(N / bn)");
        // the estimate grows with the work, and the rule never picks a configuration estimated slower than another
        for (int i = 0; i < sk::kTileCount; ++i)
            expect(sk::estimateNs(sk::kTiles[i], 4096, 4096, 8192, 132) > sk::estimateNs(sk::kTiles[i], 4096, 4096, 4096, 132),
                   "estimateNs: twice the K takes longer, kTiles[" + std::to_string(i) + "]");
        for (const Case& c : cases) {
            const sk::Launch l = sk::chooseLaunch(c.m, c.n, c.k, 132);
            const double chosen = sk::estimateNs(sk::kTiles[l.tile], c.m, c.n, c.k, 132, sk::kTileCost, l.mode);
            for (int i = 0; i < sk::kTileCount; ++i)
                for (sk::SplitMode m : {sk::SplitMode::Auto, sk::SplitMode::Cluster})
                    if (m == sk::SplitMode::Auto || sk::autoClusterAllowed(sk::kTiles[i], c.m, c.n, c.k, 132))
                        expect(chosen <= sk::estimateNs(sk::kTiles[i], c.m, c.n, c.k, 132, sk::kTileCost, m),
                               std::string(c.why) + ": the least estimate");
        }
    }
    // s14-gemmsmall: the DRAM floor. Where the k-loops are DRAM-bound (128x4096x14336: 121 MB), every cluster's k-loop
    // stretches to bytes / dramBytesPerNs and its fixups stay as they are; where they are not (4096^3), the estimate is
    // the one without the floor; a split-K plan's fixup no longer hides behind a k-loop shorter than the floor.
    {
        sk::TileCost none = sk::kTileCost;
        none.dramBytesPerNs = 0;
        const double bytes = 2.0 * (128.0 * 14336 + 14336.0 * 4096 + 128.0 * 4096);
        const double floorNs = bytes / sk::kTileCost.dramBytesPerNs;
        const sk::Launch l = sk::chooseLaunch(128, 4096, 14336, 132);
        const double withFloor = sk::estimateNs(sk::kTiles[l.tile], 128, 4096, 14336, 132, sk::kTileCost, l.mode);
        expect(sk::kTileCost.dramBytesPerNs > 0 && withFloor > floorNs
                   && withFloor >= sk::estimateNs(sk::kTiles[l.tile], 128, 4096, 14336, 132, none, l.mode),
               "128x4096x14336: the estimate is at least the DRAM floor, and never below the one without it");
        // kTiles[2] split-K 4 (s13-smallk: 44.6 us): its k-loop (56 k-steps of 425 ns) is under the floor: stretched to
        // it, plus the split-K fixup (10 us x 0.5 x 3/4 + 5 us) and a unit
        const double sk4 = sk::estimateNs(sk::kTiles[2], 128, 4096, 14336, 132, sk::kTileCost, sk::SplitMode::SplitK);
        expect(std::fabs(sk4 - (floorNs + 10000.0 * 0.5 * 3 / 4 + 5000.0 + 1000.0)) < 1.0,
               "128x4096x14336, kTiles[2] split-K: the DRAM floor + the fixup + a unit (" + std::to_string(sk4) + " ns)");
        for (int i = 0; i < sk::kTileCount; ++i)
            expect(sk::estimateNs(sk::kTiles[i], 4096, 4096, 4096, 132) == sk::estimateNs(sk::kTiles[i], 4096, 4096, 4096, 132, none),
                   "4096^3: not DRAM-bound, the floor changes nothing (kTiles[" + std::to_string(i) + "])");
    }
    // A stream-K plan's finisher reads the earlier pieces' partial sums: the estimate charges them (readNs per piece),
    // where the finisher is on the busiest cluster's path (3072^3 on 256-wide pairs, 1024^3 on 128x128 blocks alone).
    // Since the DRAM floor no pick of the other cases depends on this term alone.
    {
        sk::TileCost dearReads = sk::kTileCost;
        dearReads.readNs *= 2;
        for (const auto& c : {std::pair{0, 3072}, std::pair{2, 1024}}) {
            const int i = c.first, x = c.second;
            expect(sk::estimateNs(sk::kTiles[i], x, x, x, 132, dearReads, sk::SplitMode::StreamK)
                       > sk::estimateNs(sk::kTiles[i], x, x, x, 132, sk::kTileCost, sk::SplitMode::StreamK),
                   std::to_string(x) + "^3, kTiles[" + std::to_string(i) + "] stream-K: the finisher's reads are charged");
        }
    }
    std::printf("%s: %d passed, %d failed\n", g_fail ? "FAIL" : "OK", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
