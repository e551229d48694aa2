// The tile configuration of a recording (issue 14, session 9; core/include/warpstage/tilegeom.h): the [ws-tiles] tag
// round trip and its refusals, the text a user reads for a tile ("tile (3, 5) = rows 384-511, cols 640-767 of C,
// 128x128 block, 6 stages"), hand-made stream-K buffers of two non-default configurations (128x128 and 128x64 per
// CTA) decoded and checked against their geometry (and against the default 256x256 reading, which must be flagged),
// the tag through the store, and old files (no tag): "configuration not recorded". No GPU.
#include "fixture.h"
#include "warpstage/decode.h"
#include "warpstage/report.h"
#include "warpstage/store.h"
#include "warpstage/tilegeom.h"
#include "warpstage/traceexport.h"
#include "warpstage/traceimport.h"

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

using namespace ws;
using wsfix::BufferBuilder;

namespace {

std::uint8_t k(IntervalKind kind) { return static_cast<std::uint8_t>(kind); }

// kTiles[2] (128x128 per CTA, no cluster, 6 stages) at 384x1024x1088: 3x8 blocks, 17 k-steps, 132 walkers; 24 tiles
// under 132 clusters: stream-K over all of them (plan(): rem 24, no whole wave).
TileGeometry config2()
{
    TileGeometry g;
    g.blockM = 128;
    g.blockN = 128;
    g.clusterM = 1;
    g.stages = 6;
    g.blockK = 64;
    g.config = 2;
    g.configCount = 5;
    g.pick = "forced";
    g.tilesM = 3;
    g.tilesN = 8;
    g.kSteps = 17;
    g.walkers = 132;
    g.workTiles = 24;
    g.dpTiles = 0;
    g.skClusters = 102;
    g.skIters = 408;
    return g;
}

// kTiles[4] (128x64 per CTA, 8 stages) at 400x1000x4096: 4x16 blocks, the last row and column partial.
TileGeometry config4()
{
    TileGeometry g = config2();
    g.blockN = 64;
    g.stages = 8;
    g.config = 4;
    g.pick = "rule";
    g.tilesM = 4;
    g.tilesN = 16;
    g.kSteps = 64;
    g.workTiles = 64;
    g.dpTiles = 0;
    g.skClusters = 132;
    g.skIters = 4096;
    return g;
}

// pingpong / kTiles[0]: 128x256 per CTA in clusters of 2 (256x256 per cluster), 4 stages.
TileGeometry defaultTiles(int m, int n)
{
    TileGeometry g;
    g.blockM = 128;
    g.blockN = 256;
    g.clusterM = 2;
    g.stages = 4;
    g.blockK = 64;
    g.tilesM = (m + 127) / 128;
    g.tilesN = (n + 255) / 256;
    g.kSteps = 17;
    g.walkers = 66;
    g.workTiles = ((m + 255) / 256) * g.tilesN;
    return g;
}

// Two single CTAs of a stream-K launch (no cluster): a producer and a consumer warp each, the consumer marking
// two units (tile coordinates in the configuration's blocks, as pingpong_body.cuh's TileBegin writes them).
BufferBuilder streamkBuffer(int tm0, int tn0, int tm1, int tn1)
{
    constexpr std::uint64_t gt = 1'000'000'000, clk = 10'000;
    BufferBuilder b(2, 8, 32, 6, (128 + 128) * 64 * 2);
    for (std::uint32_t c = 0; c < 2; ++c) {
        b.cta(c, gt + c * 100, clk, gt + c * 100 + 20'000, clk + 40'000, 3 + c);
        b.warp(c, 0, 1, 0, 0,
               {{clk, k(IntervalKind::Setup)},
                {clk + 100, trace::kEventTileBegin, c ? tm1 : tm0, wsfix::kNoSlot, std::int16_t(c ? tn1 : tn0)},
                {clk + 200, k(IntervalKind::IssueLoad), 0, 0},
                {clk + 300, trace::kEventTileEnd},
                {clk + 1000, trace::kEventEnd}});
        b.warp(c, 4, 2, 1, 0,
               {{clk, k(IntervalKind::Setup)},
                {clk + 100, trace::kEventTileBegin, c ? tm1 : tm0, wsfix::kNoSlot, std::int16_t(c ? tn1 : tn0)},
                {clk + 200, k(IntervalKind::WaitData), 0, 0},
                {clk + 400, k(IntervalKind::MmaIssue), 0, 0},
                {clk + 600, trace::kEventTileEnd},
                {clk + 600, trace::kEventTileBegin, c ? tm1 : tm0, wsfix::kNoSlot, std::int16_t((c ? tn1 : tn0) - 1)},
                {clk + 700, k(IntervalKind::Fixup), 1, 1},
                {clk + 900, trace::kEventTileEnd},
                {clk + 2000, trace::kEventEnd}});
    }
    return b;
}

KernelRecord decodeOrFail(BufferBuilder b)
{
    KernelLaunch l;
    l.name = "gemmStreamk";
    l.variant = "streamk";
    l.start = 500'000'000;
    l.end = l.start + 30'000;
    decode::DecodeReport rep;
    KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), l, {}, rep);
    if (!rep.ok)
        qWarning("decode: %s", rep.failureReason.c_str());
    return r;
}

}  // namespace

class TestTileGeom : public QObject {
    Q_OBJECT
private slots:
    void tagRoundTrips()
    {
        for (const TileGeometry& g : {config2(), config4(), defaultTiles(4096, 4096)}) {
            const std::string tag = formatTileTag(g);
            QVERIFY(tag.starts_with("[ws-tiles "));
            // the tag among the recorder's other notes
            const auto back = parseTileTag("traced result spot check: ok\n" + tag + "\nclock: median 0.5 ns/cycle");
            QVERIFY2(back.has_value(), tag.c_str());
            QVERIFY2(*back == g, tag.c_str());
        }
        QCOMPARE(formatTileTag(config2()),
                 std::string("[ws-tiles block=128x128 cluster=1 stages=6 bk=64 config=2/5 pick=forced grid=3x8 kt=17 "
                             "walkers=132 tiles=24 dp=0 sk_clusters=102 sk_iters=408]"));
        // not stream-K: no plan keys, and none read back
        const auto pp = parseTileTag(formatTileTag(defaultTiles(4096, 4096)));
        QVERIFY(pp && !pp->streamK() && pp->config == -1);
    }

    void tagRefusals()
    {
        QVERIFY(!parseTileTag(""));
        QVERIFY(!parseTileTag("[ws-rung family=lce rung=3 flops=1 bytes=2]"));
        QVERIFY(!parseTileTag("[ws-tiles block=128x128 grid=3x8"));                // unterminated
        QVERIFY(!parseTileTag("[ws-tiles grid=3x8]"));                             // no block
        QVERIFY(!parseTileTag("[ws-tiles block=128x128]"));                        // no grid
        QVERIFY(!parseTileTag("[ws-tiles block=128 grid=3x8]"));                   // not RxC
        QVERIFY(!parseTileTag("[ws-tiles block=0x128 grid=3x8]"));                 // empty block
        QVERIFY(!parseTileTag("[ws-tiles block=128x128 grid=3x8 stages=x]"));
        QVERIFY(!parseTileTag("[ws-tiles block=128x128 grid=3x8 config=7/5]"));    // index past the count
        QVERIFY(!parseTileTag("[ws-tiles block=128x128 grid=3x8 cluster=0]"));
        QVERIFY(!parseTileTag("[ws-tiles block=128x128 grid=3x8 dp=-4]"));
        QVERIFY(!parseTileTag("[ws-tiles block=128x128 grid=3x8 bare]"));
        const auto fut = parseTileTag("[ws-tiles block=128x128 grid=3x8 future=7]");  // newer keys ignored
        QVERIFY(fut && fut->blockN == 128 && fut->tilesN == 8);
    }

    void tileTextNamesRowsAndColumns()
    {
        const std::optional<TileGeometry> g2 = config2();
        QCOMPARE(tileText(g2, 3, 5, 1024, 1024),
                 std::string("tile (3, 5) = rows 384-511, cols 640-767 of C, 128x128 block, 6 stages"));
        // 128x64 blocks: the same indices are other columns; the edge blocks are partial (400 x 1000)
        const std::optional<TileGeometry> g4 = config4();
        QCOMPARE(tileText(g4, 3, 5, 400, 1000),
                 std::string("tile (3, 5) = rows 384-399 of 400 (partial), cols 320-383 of C, 128x64 block, 8 stages"));
        QCOMPARE(tileText(g4, 0, 15, 400, 1000),
                 std::string("tile (0, 15) = rows 0-127, cols 960-999 of 1000 (partial) of C, 128x64 block, 8 stages"));
        // read as the default 256x256 configuration, tile (3, 5) would be columns 1280-1535: outside C
        QCOMPARE(tileText(defaultTiles(400, 1000), 3, 5, 400, 1000),
                 std::string("tile (3, 5) = rows 384-399 of 400 (partial), cols 1280-1535 (outside C's 1000) of C, "
                             "128x256 block, 4 stages"));
        QCOMPARE(tileText(std::nullopt, 3, 5, 1024, 1024), std::string("tile (3, 5) (configuration not recorded)"));
        QCOMPARE(tileGeometryShort(g2), std::string("128x128 block, 6 stages, stream-K 0 + 24 split"));
        QCOMPARE(tileGeometryShort(defaultTiles(4096, 4096)),
                 std::string("256x256 cluster (2 CTAs of 128x256), 4 stages"));
        QCOMPARE(tileGeometryShort(std::nullopt), std::string("tile configuration not recorded"));
        const std::string t2 = tileGeometryText(*g2);
        QVERIFY2(t2.find("128x128 block (configuration 2 of 5, forced)") == 0, t2.c_str());
        QVERIFY2(t2.find("0 of 24 tiles data-parallel, 24 split (408 k-steps over 102 of 132 CTAs)") != std::string::npos,
                 t2.c_str());
    }

    // Hand-made stream-K buffers of two non-default configurations: the decoder keeps the kernel's block coordinates
    // (TileBegin's kstep / aux), the geometry places them, and the default reading is caught.
    void decodedTilesCheckedAgainstTheirConfiguration()
    {
        {  // kTiles[2] at 384x1024: CTA 0 on tile (2, 7) then (2, 6), CTA 1 on (0, 3) then (0, 2)
            const KernelRecord r = decodeOrFail(streamkBuffer(2, 7, 0, 3));
            QCOMPARE(int(r.ctas.size()), 2);
            QCOMPARE(r.ctas[0].tileM, 2);
            QCOMPARE(r.ctas[0].tileN, 7);
            QCOMPARE(int(r.tiles.size()), 6);  // producer 1 + consumer 2, per CTA
            QVERIFY(checkTileCoordinates(config2(), r.tiles, r.ctas).empty());
            QCOMPARE(tileText(config2(), r.ctas[0].tileM, r.ctas[0].tileN, 384, 1024),
                     std::string("tile (2, 7) = rows 256-383, cols 896-1023 of C, 128x128 block, 6 stages"));
            // read as 256x256 (128x256 per CTA: 3x4 blocks), column 7 does not exist
            const auto w = checkTileCoordinates(defaultTiles(384, 1024), r.tiles, r.ctas);
            QCOMPARE(int(w.size()), 2);
            QVERIFY2(w[0].starts_with("3 of 6 tile markers lie outside the 3x4 grid of 128x256 blocks (first: tile (2, 7))"),
                     w[0].c_str());
            QVERIFY2(w[1].starts_with("1 CTAs start at a tile outside"), w[1].c_str());
        }
        {  // kTiles[4] at 400x1000: the partial corner block (3, 15)
            const KernelRecord r = decodeOrFail(streamkBuffer(3, 15, 1, 9));
            QCOMPARE(r.ctas[0].tileM, 3);
            QCOMPARE(r.ctas[0].tileN, 15);
            QVERIFY(checkTileCoordinates(config4(), r.tiles, r.ctas).empty());
            QVERIFY(!checkTileCoordinates(config2(), r.tiles, r.ctas).empty());  // 4x16 blocks are not 3x8
            QCOMPARE(tileText(config4(), 3, 15, 400, 1000),
                     std::string("tile (3, 15) = rows 384-399 of 400 (partial), cols 960-999 of 1000 (partial) of C, "
                                 "128x64 block, 8 stages"));
        }
    }

    // The tag travels with the run through the store (it is the notes'); a run without one says so.
    void geometryThroughTheStore()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("tiles.wstrace").toStdString();
        RunRecord tagged;
        tagged.info.variant = "streamk";
        tagged.info.m = 384;
        tagged.info.n = 1024;
        tagged.info.k = 1088;
        tagged.info.synthetic = true;
        tagged.info.notes = formatTileTag(config2()) + "\ntraced result spot check: ok";
        tagged.kernels.push_back(decodeOrFail(streamkBuffer(2, 7, 0, 3)));
        RunRecord other = tagged;
        other.info.m = 400;
        other.info.n = 1000;
        other.info.notes = "clock: median 0.5 ns/cycle\n" + formatTileTag(config4());
        other.kernels = {decodeOrFail(streamkBuffer(3, 15, 1, 9))};
        RunRecord old = tagged;
        old.info.notes = "recorded before session 9";
        {
            auto st = TraceStore::openForWriting(path);
            st.writeRun(tagged);
            st.writeRun(other);
            st.writeRun(old);
        }
        const auto st = TraceStore::openReadOnly(path);
        const auto runs = st.runs();
        QCOMPARE(int(runs.size()), 3);
        const KernelTrace t0 = st.loadKernel(st.kernels(runs[0].id)[0].id);
        const auto g0 = tileGeometryOf(t0.run);
        QVERIFY(g0 && *g0 == config2());
        QVERIFY(checkTileCoordinates(*g0, t0.tiles, t0.ctas).empty());
        const KernelTrace t1 = st.loadKernel(st.kernels(runs[1].id)[0].id);
        const auto g1 = tileGeometryOf(t1.run);
        QVERIFY(g1 && *g1 == config4());
        QVERIFY(checkTileCoordinates(*g1, t1.tiles, t1.ctas).empty());
        QVERIFY(!tileGeometryOf(runs[2]));
        QCOMPARE(tileGeometryShort(tileGeometryOf(runs[2])), std::string("tile configuration not recorded"));

        // warpstage info: the configuration per run, or that it was not recorded
        const std::string info = describeFile(path, false);
        QVERIFY2(info.find("  tiles: 128x128 block (configuration 2 of 5, forced), 6 stages, 3x8 blocks of C") != std::string::npos,
                 info.c_str());
        QVERIFY2(info.find("  tiles: 128x64 block (configuration 4 of 5, chosen by the tile rule), 8 stages, 4x16 blocks")
                     != std::string::npos, info.c_str());
        QVERIFY2(info.find("  tiles: configuration not recorded") != std::string::npos, info.c_str());
        const std::string json = describeFile(path, true);
        QVERIFY(json.find("\"tiles\": {\"block_m\": 128, \"block_n\": 64, \"cluster_m\": 1, \"stages\": 8, \"config\": 4")
                != std::string::npos);
        QVERIFY(json.find("\"tiles\": null") != std::string::npos);

        // the Chrome export carries the tag and each CTA's tile text; the import reads the tag back
        const std::string exported = dir.filePath("tiles.json").toStdString();
        exportKernelTrace(t0, TraceExportOptions{}, exported);
        QFile jf(QString::fromStdString(exported));
        QVERIFY(jf.open(QIODevice::ReadOnly));
        const QByteArray body = jf.readAll();
        QVERIFY(body.contains("\"tiles\":\"[ws-tiles block=128x128 cluster=1 stages=6"));
        QVERIFY(body.contains("\"tile\":\"tile (2, 7) = rows 256-383, cols 896-1023 of C, 128x128 block, 6 stages\""));
        const RunRecord back = importWarpstageChromeJson(exported);
        const auto gb = tileGeometryOf(back.info);
        QVERIFY(gb && *gb == config2());
    }

    // Files written before the tag existed (the kept schema 1-4 files): they open, and have no configuration.
    void oldFilesSayNotRecorded()
    {
        int runsSeen = 0;
        for (const char* f : {"schema-v1.wstrace", "schema-v4.wstrace"}) {
            QTemporaryDir dir;  // the viewer migrates a copy of an old file; so does this test
            const std::string copy = dir.filePath(QString::fromLatin1(f)).toStdString();
            TraceStore::migrateCopy(std::string(WARPSTAGE_FIXTURES_DIR "/") + f, copy);
            const auto st = TraceStore::openReadOnly(copy);
            for (const RunInfo& r : st.runs()) {
                ++runsSeen;
                QVERIFY(!tileGeometryOf(r));
                for (const KernelLaunch& kl : st.kernels(r.id)) {
                    if (!kl.traced)
                        continue;
                    const KernelTrace t = st.loadKernel(kl.id);
                    for (const Cta& c : t.ctas)
                        if (c.tileM >= 0)
                            QVERIFY(tileText(tileGeometryOf(t.run), c.tileM, c.tileN, r.m, r.n)
                                        .ends_with("(configuration not recorded)"));
                }
            }
        }
        QVERIFY(runsSeen >= 2);
    }
};

QTEST_GUILESS_MAIN(TestTileGeom)
#include "tst_tilegeom.moc"
