// CPU test (no GPU needed; registered where the CUDA toolkit builds the ladder): the ladder's shape rules
// (issue 14, "every shape"). The tensor-core rungs take any M, N >= 1 and any K that is a multiple of 8
// (partial tiles by TMA zero fill and clipped stores) and refuse only what TMA cannot do, with a sentence;
// the CUDA-core rung too (bounds-tested loads and stores, K a multiple of 8); traceGeometry counts partial tiles and a partial last k-step
// (ceil-div), so a traced launch at an odd shape has room for every event. Exit: 0 passed, 1 failed.
#include <warpstage/ladder.h>

#include "streamk_schedule.h"  // kTiles: what launchTiles must report (one source of truth)

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace ws;

namespace {

int g_fail = 0;
void expect(bool ok, const std::string& what)
{
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    if (!ok) ++g_fail;
}

std::string str(const ladder::Shape& s)
{
    return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const std::vector<std::string> kTensorCoreRungs = {"tma_sync", "multistage", "warp_specialized", "cooperative",
                                                   "pingpong", "streamk"};

}  // namespace

int main()
{
    for (const auto& r : ladder::rungs())
        expect(r.tensorCores == (r.name != "sync"), "rung " + r.name + ": tensor cores flag as the test expects");

    // Shapes the issue names (and the edges: M = 1, N = 1, K = 8, the largest dimension).
    const std::vector<ladder::Shape> odd = {{4000, 4000, 4000}, {8191, 8193, 4104}, {1, 4096, 4096}, {4096, 1, 4096},
                                            {129, 257, 72},     {256, 4096, 4096},  {1, 1, 8},       {1000, 4096, 1000},
                                            {131072, 8, 8},     {4096, 4096, 4096}};
    for (const auto& rung : kTensorCoreRungs)
        for (const auto& s : odd) {
            const std::string why = ladder::checkShape(rung, s);
            expect(why.empty(), rung + " takes " + str(s) + (why.empty() ? "" : ": " + why));
        }

    // K not a multiple of 8: TMA's 16-byte row stride; the sentence says why and echoes the shape.
    for (const auto& rung : kTensorCoreRungs) {
        const ladder::Shape s{1000, 4096, 4100};
        const std::string why = ladder::checkShape(rung, s);
        expect(has(why, rung) && has(why, "K a multiple of 8") && has(why, "16 bytes") && has(why, "1000x4096x4100"),
               rung + " refuses K = 4100 with a sentence: " + why);
        const std::string why1 = ladder::checkShape(rung, {64, 64, 1});
        expect(has(why1, "K a multiple of 8"), rung + " refuses K = 1: " + why1);
        // only the hardware rule: no tile-multiple wording any more
        expect(!has(why, "M a multiple") && !has(why, "N a multiple"), rung + ": no M/N multiple rule in: " + why);
    }

    // Out of range: every rung, one sentence with the range.
    for (const auto& r : ladder::rungs())
        for (const ladder::Shape& s : std::vector<ladder::Shape>{{0, 256, 256}, {256, -8, 256}, {256, 256, 0},
                                                                 {131073, 256, 256}, {256, 256, 262144}}) {
            const std::string why = ladder::checkShape(r.name, s);
            expect(has(why, "between 1 and 131072") && has(why, str(s)), r.name + " refuses " + str(s) + ": " + why);
        }

    // The CUDA-core rung computes partial tiles too (bounds-tested loads and stores); its one rule is K % 8 (its
    // 16-byte loads), said in a sentence.
    for (const auto& s : odd) {
        const std::string why = ladder::checkShape("sync", s);
        expect(why.empty(), "sync takes " + str(s) + (why.empty() ? "" : ": " + why));
    }
    {
        const std::string why = ladder::checkShape("sync", {1000, 4096, 4100});
        expect(has(why, "sync") && has(why, "K a multiple of 8") && has(why, "16 bytes") && has(why, "1000x4096x4100")
                   && !has(why, "M a multiple") && !has(why, "N a multiple"),
               "sync refuses K = 4100 with a sentence: " + why);
        expect(has(ladder::checkShape("sync", {64, 64, 1}), "K a multiple of 8"), "sync refuses K = 1");
        // 129x257x72: 128x128 tiles -> 2 x 3 CTAs; 3 k-steps of 32 (the last partial): 4*3+4 = 16 -> 16+1+32
        const auto g = ladder::traceGeometry("sync", {129, 257, 72}, 132);
        expect(g.numCtas == 6 && g.eventsPerWarp == 49,
               "sync geometry at 129x257x72: " + std::to_string(g.numCtas) + " CTAs, "
                   + std::to_string(g.eventsPerWarp) + " events/warp (want 6, 49)");
    }
    expect(has(ladder::checkShape("nope", {128, 128, 64}), "unknown rung 'nope'"), "unknown rung refused by name");

    // Trace geometry at 129x257x72: partial tiles and a partial last k-step are counted (ceil-div).
    // tma_sync: 128x128 tiles -> 2 x 3 CTAs; 2 k-steps: 5*2+4 = 14 events, + 14/16 + 32 margin = 46.
    const ladder::Shape s{129, 257, 72};
    {
        const auto g = ladder::traceGeometry("tma_sync", s, 132);
        expect(g.numCtas == 6 && g.warpsPerCta == 4 && g.eventsPerWarp == 46,
               "tma_sync geometry at 129x257x72: " + std::to_string(g.numCtas) + " CTAs, "
                   + std::to_string(g.eventsPerWarp) + " events/warp (want 6, 46)");
    }
    {  // multistage / warp_specialized: 128x256 tiles -> 2 x 2
        const auto g = ladder::traceGeometry("multistage", s, 132);
        expect(g.numCtas == 4 && g.eventsPerWarp == (5 * 2 + 4 + 4) + 1 + 32,
               "multistage geometry at 129x257x72: " + std::to_string(g.numCtas) + " CTAs, "
                   + std::to_string(g.eventsPerWarp) + " events/warp");
        const auto w = ladder::traceGeometry("warp_specialized", s, 132);
        expect(w.numCtas == 4 && w.eventsPerWarp == (4 * 2 + 6) + 0 + 32,
               "warp_specialized geometry at 129x257x72: " + std::to_string(w.numCtas) + " CTAs, "
                   + std::to_string(w.eventsPerWarp) + " events/warp");
    }
    {  // cooperative: 4 tiles, persistent grid min(tiles, SMs) = 4, one tile each: (4*2+6)+4 = 18 -> 18+1+32
        const auto g = ladder::traceGeometry("cooperative", s, 132);
        expect(g.numCtas == 4 && g.eventsPerWarp == 51,
               "cooperative geometry at 129x257x72: " + std::to_string(g.numCtas) + " CTAs, "
                   + std::to_string(g.eventsPerWarp) + " events/warp (want 4, 51)");
        // 8191x8193x4104: 64 x 33 = 2112 tiles over 132 CTAs = 16 each; 65 k-steps (the last partial)
        const auto b = ladder::traceGeometry("cooperative", {8191, 8193, 4104}, 132);
        const unsigned ev = 16 * (4 * 65 + 6) + 4;
        expect(b.numCtas == 132 && b.eventsPerWarp == ev + ev / 16 + 32,
               "cooperative geometry at 8191x8193x4104: " + std::to_string(b.numCtas) + " CTAs, "
                   + std::to_string(b.eventsPerWarp) + " events/warp (want 132, " + std::to_string(ev + ev / 16 + 32)
                   + ")");
    }
    {  // pingpong at 257x257x72: 256x256 pair tiles -> 2 x 2 = 4 pairs, fewer than any device's clusters: 8 CTAs;
       // one pair each: (4*2+8)+4 = 20 -> 20+1+32
        const auto g = ladder::traceGeometry("pingpong", {257, 257, 72}, 132);
        expect(g.numCtas == 8 && g.eventsPerWarp == 53,
               "pingpong geometry at 257x257x72: " + std::to_string(g.numCtas) + " CTAs, "
                   + std::to_string(g.eventsPerWarp) + " events/warp (want 8, 53)");
        const auto one = ladder::traceGeometry("pingpong", {1, 1, 8}, 132);
        expect(one.numCtas == 2 && one.eventsPerWarp == (4 * 1 + 8 + 4) + 1 + 32,
               "pingpong geometry at 1x1x8: " + std::to_string(one.numCtas) + " CTAs, "
                   + std::to_string(one.eventsPerWarp) + " events/warp");
    }
    {
        const auto g = ladder::traceGeometry("pingpong", {1000, 4096, 4100}, 132);
        expect(g.numCtas == 0 && g.bufferBytes == 0, "a refused shape has an empty trace geometry");
    }
    {  // streamk (session 9): the bytes a k-step loads follow the configuration the rule picks and A's box, shrunk to
       // M's rows (rounded up to 8) where one CTA alone covers M: 1x4096x4096 -> 128x64 blocks, A 8 rows + B 64 rows
        unsetenv("WARPSTAGE_STREAMK_TILE");
        const auto small = ladder::traceGeometry("streamk", {1, 4096, 4096}, 132);
        const auto big = ladder::traceGeometry("streamk", {4096, 4096, 4096}, 132);
        expect(small.bytesPerKStep == (8 + 64) * 128 && big.bytesPerKStep == (128 + 256) * 128,
               "streamk bytes per k-step: " + std::to_string(small.bytesPerKStep) + " at 1x4096x4096 (want 9216), "
                   + std::to_string(big.bytesPerKStep) + " at 4096^3 (want 49152)");
    }

    // launchTiles (session 9, s9-tilegeom): the tile configuration a launch runs with, for the recording's
    // [ws-tiles] tag. Stream-K forced to each of kTiles at 300x1000x1032 (a cluster's second block past M = 300).
    for (int i = 0; i < ws::kern::sk::kTileCount; ++i) {
        const auto& k = ws::kern::sk::kTiles[i];
        setenv("WARPSTAGE_STREAMK_TILE", std::to_string(i).c_str(), 1);
        const ladder::Shape s{300, 1000, 1032};
        const auto t = ladder::launchTiles("streamk", s, 132);
        const auto g = ladder::traceGeometry("streamk", s, 132);
        const int rowsM = (300 + k.bm * k.cl - 1) / (k.bm * k.cl), tn = (1000 + k.bn - 1) / k.bn;
        expect(t.blockM == k.bm && t.blockN == k.bn && t.clusterM == k.cl && t.stages == k.stages && t.blockK == 64
                   && t.config == i && t.configCount == ws::kern::sk::kTileCount && t.forced,
               "streamk forced to kTiles[" + std::to_string(i) + "]: block " + std::to_string(t.blockM) + "x"
                   + std::to_string(t.blockN) + ", cluster " + std::to_string(t.clusterM) + ", "
                   + std::to_string(t.stages) + " stages, config " + std::to_string(t.config));
        expect(t.tilesM == rowsM * k.cl && t.tilesN == tn && t.workTiles == rowsM * tn && t.kSteps == 17
                   && t.walkers == int(g.numCtas) / k.cl,
               "streamk kTiles[" + std::to_string(i) + "] grid " + std::to_string(t.tilesM) + "x"
                   + std::to_string(t.tilesN) + ", " + std::to_string(t.workTiles) + " work tiles, "
                   + std::to_string(t.walkers) + " walkers");
        // the plan in the mode the rule runs this configuration with (session 11: Auto's cluster split where M <= 512)
        const auto p = ws::kern::sk::plan(t.workTiles, t.kSteps, t.walkers,
                                          ws::kern::sk::chooseMode(k, s.m, s.n, s.k, int(g.numCtas)));
        expect(t.dpTiles == p.dpTiles && t.skClusters == p.skClusters && t.skIters == p.skIters,
               "streamk kTiles[" + std::to_string(i) + "] plan: " + std::to_string(t.dpTiles) + " data-parallel, "
                   + std::to_string(t.skIters) + " split k-steps over " + std::to_string(t.skClusters));
        expect(g.stages == std::uint32_t(k.stages) && g.bytesPerKStep == std::uint32_t((ws::kern::sk::boxRowsA(k, 300) + k.bn) * 64 * 2),
               "streamk kTiles[" + std::to_string(i) + "] trace header: " + std::to_string(g.stages) + " stages, "
                   + std::to_string(g.bytesPerKStep) + " bytes per k-step");
    }
    unsetenv("WARPSTAGE_STREAMK_TILE");
    {
        const ladder::Shape s{256, 4096, 4096};
        const auto t = ladder::launchTiles("streamk", s, 132);
        const int rule = ws::kern::sk::chooseTile(s.m, s.n, s.k, int(ladder::traceGeometry("streamk", s, 132).numCtas));
        expect(t.config == rule && !t.forced && t.blockN == ws::kern::sk::kTiles[rule].bn,
               "streamk at 256x4096x4096: the rule's configuration " + std::to_string(rule) + " (reported "
                   + std::to_string(t.config) + (t.forced ? ", forced" : ", rule") + ")");
        const auto pp = ladder::launchTiles("pingpong", {4096, 4096, 4096}, 132);
        expect(pp.blockM == 128 && pp.blockN == 256 && pp.clusterM == 2 && pp.stages == 4 && pp.config == -1
                   && pp.dpTiles == -1 && pp.tilesM == 32 && pp.tilesN == 16 && pp.workTiles == 256,
               "pingpong tiles: 128x256 blocks in clusters of 2, 4 stages, 32x16 blocks, 256 work tiles");
        expect(ladder::launchTiles("pingpong", {1000, 4096, 4100}, 132).blockM == 0,
               "a refused shape has no tile configuration");
    }

    // Instrumented-but-not-recording launches (ladder_bench --idle-cost): the top rungs offer it (streamk since session
    // 10: its traced kernel with a null buffer); any other rung is refused with a sentence, before anything is launched.
    expect(ladder::hasInstrumentedIdle("pingpong") && ladder::hasInstrumentedIdle("streamk")
               && !ladder::hasInstrumentedIdle("cooperative") && !ladder::hasInstrumentedIdle("nope"),
           "instrumented idle launches: pingpong and streamk only");
    {
        const std::string why = ladder::launchInstrumentedIdle("cooperative", {256, 256, 64}, nullptr, nullptr, nullptr, nullptr);
        expect(has(why, "'cooperative' has no instrumented-but-not-recording launch") && has(why, "streamk"),
               "cooperative's idle launch refused with a sentence: " + why);
    }

    std::printf("\n%s: %d failure(s)\n", g_fail ? "FAILED" : "PASSED", g_fail);
    return g_fail ? 1 : 0;
}
