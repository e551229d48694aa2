// Traced launches in the sink (issue 10): the injection library's TraceLaunch / TraceChunk / TraceNote
// records (RecType 40-42) written with sink_encode.h, read back by readSink() and decoded by toRuns()
// into the launch's KernelRecord (attachTraces): warps with user roles, user phase names, the kernel's
// source text with its SHA-256, buffers split over several chunks, a sink cut off inside a buffer,
// overflow per warp and the injection library's notes in the run.
#include "fixture.h"

#include "warpstage/sink_encode.h"
#include "warpstage/sink_reader.h"
#include "warpstage/store.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace ws;
using namespace ws::sink;
using wsfix::BufferBuilder;

namespace {

constexpr std::uint64_t kT0 = 1796000000000000000ull;
constexpr std::uint64_t kClk0 = 1000;
constexpr std::uint32_t kCorr = 42;
std::uint8_t k(IntervalKind kind) { return static_cast<std::uint8_t>(kind); }

// The row-sum kernel's buffer: loader warp + 2 reducers, user phases 0 ("reduce") and 1 ("combine").
BufferBuilder rowSumBuffer(std::uint32_t cap = 16, long reducerCount = -1)
{
    BufferBuilder b(1, 3, cap, 2, 8192);
    b.cta(0, kT0 - 200'000 + 1000, kClk0, kT0 - 200'000 + 11'000, kClk0 + 10'000, 5);  // globaltimer ~ CUPTI - 200 us
    b.warp(0, 0, 1, 0, 0,
           {{kClk0, k(IntervalKind::IssueLoad), 0, 0}, {kClk0 + 100, k(IntervalKind::WaitSlot), 1, 1},
            {kClk0 + 900, trace::kEventEnd}},
           -1, 0);
    for (std::uint8_t c = 0; c < 2; ++c)
        b.warp(0, 1u + c, 2, 0, c,
               {{kClk0, k(IntervalKind::WaitData), 0, 0}, {kClk0 + 500, trace::kEventLoadReady, 0, 0},
                {kClk0 + 500, std::uint8_t(kUserPhaseBase), 0, 0}, {kClk0 + 800, std::uint8_t(kUserPhaseBase + 1)},
                {kClk0 + 2000, trace::kEventEnd}},
               c == 1 ? reducerCount : -1, 1);
    return b;
}

struct Sink {
    std::string out;
    explicit Sink(const std::string& cwd)
    {
        appendFileHeader(out);
        ProcessRec p{};
        p.pid = 4242;
        p.ppid = 1;
        p.realtimeNs = kT0;
        p.cuptiNs = kT0;
        appendProcess(out, p, "/usr/bin/ws_rowsum", cwd, {"./ws_rowsum"});
        appendString(out, 1, "NVIDIA H200");
        appendString(out, 2, "_Z8wsRowSumPKfPfi");
        DeviceRec d{};
        d.nameId = 1;
        d.ccMajor = 9;
        d.smCount = 132;
        d.coreClockKHz = 1'980'000;
        appendPod(out, RecType::Device, d);
        KernelRec kr{};
        kr.start = kT0 + 1000;
        kr.end = kT0 + 12'000;
        kr.correlationId = kCorr;
        kr.streamId = 7;
        kr.nameId = 2;
        kr.grid[0] = 1, kr.grid[1] = 1, kr.grid[2] = 1;
        kr.block[0] = 96, kr.block[1] = 1, kr.block[2] = 1;
        appendPod(out, RecType::Kernel, kr);
    }
    void trace(BufferBuilder& b, std::uint32_t cap, const std::string& source, std::uint32_t corr = kCorr, std::uint32_t warps = 3)
    {
        TraceLaunchRec r{};
        r.correlationId = corr;
        r.bufferBytes = b.bytes().size();
        r.numCtas = 1;
        r.warpsPerCta = warps;
        r.eventsPerWarp = cap;
        r.formatVersion = trace::kFormatVersion;
        appendTraceLaunch(out, r, "_Z8wsRowSumPKfPfi", {"reduce", "combine"}, {"loader", "reducer"}, source, b.bytes().data(),
                          b.bytes().size());
    }
    void end()
    {
        EndRec e{kT0, kT0, 0, 0};
        appendPod(out, RecType::End, e);
    }
    std::string write(const QTemporaryDir& dir, std::size_t cut = 0) const
    {
        const std::string path = dir.filePath("4242-1.wsink").toStdString();
        std::ofstream f(path, std::ios::binary);
        f.write(out.data(), std::streamsize(cut ? cut : out.size()));
        return path;
    }
};

ConvertResult convert(const std::string& path)
{
    ConvertOptions o;
    o.outcome.rootPid = 4242;
    o.outcome.exitCode = 0;
    return toRuns({readSink(path)}, o);
}

}  // namespace

class TestSinkTraces : public QObject {
    Q_OBJECT
private slots:
    void tracedLaunchDecodesIntoItsKernel()
    {
        QTemporaryDir dir;
        const std::string cwd = dir.path().toStdString();
        { std::ofstream(cwd + "/rowsum.cu") << "abc"; }
        Sink s(cwd);
        auto b = rowSumBuffer();
        s.trace(b, 16, "rowsum.cu");  // relative: read from the process's cwd
        s.end();
        const auto sp = readSink(s.write(dir));
        QVERIFY2(sp.error.empty(), sp.error.c_str());
        QCOMPARE(int(sp.traces.size()), 1);
        QVERIFY(sp.traces[0].complete());
        QCOMPARE(sp.traces[0].phaseNames, (std::vector<std::string>{"reduce", "combine"}));
        QCOMPARE(sp.traces[0].sourcePath, std::string("rowsum.cu"));

        const auto res = convert(dir.filePath("4242-1.wsink").toStdString());
        QCOMPARE(int(res.runs.size()), 1);
        const RunRecord& run = res.runs[0];
        QVERIFY2(run.info.status == RunStatus::Complete, run.info.failureReason.c_str());
        QVERIFY(run.info.hasTimeline);
        QCOMPARE(int(run.kernels.size()), 1);
        const KernelRecord& kr = run.kernels[0];
        QVERIFY(kr.launch.traced);
        QCOMPARE(kr.launch.correlationId, kCorr);
        QCOMPARE(kr.launch.name, std::string("wsRowSum(float const*, float*, int)"));
        QCOMPARE(kr.phaseNames, (std::vector<std::string>{"reduce", "combine"}));
        QCOMPARE(int(kr.warps.size()), 3);
        QCOMPARE(kr.warps[0].roleName, std::string("loader"));
        QCOMPARE(kr.warps[2].roleName, std::string("reducer 1"));
        QCOMPARE(int(kr.ctas.size()), 1);
        // CTA span aligned into CUPTI's kernel time (the buffer's globaltimer was 200 us off).
        QVERIFY(kr.ctas[0].start >= kr.launch.start && kr.ctas[0].end <= kr.launch.end);
        bool reduce = false;
        for (const auto& iv : kr.intervals) reduce = reduce || iv.kind == IntervalKind(kUserPhaseBase);
        QVERIFY(reduce);
        // The source file, with its SHA-256 (FIPS 180-2 test vector of "abc").
        QCOMPARE(int(run.sources.size()), 1);
        QCOMPARE(run.sources[0].path, std::string("rowsum.cu"));
        QCOMPARE(run.sources[0].text, std::string("abc"));
        QCOMPARE(run.sources[0].sha256, std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        QVERIFY2(run.info.notes.find("traced wsRowSum(float const*, float*, int) #0") != std::string::npos, run.info.notes.c_str());
    }

    void bigBufferSpansChunks()
    {
        QTemporaryDir dir;
        Sink s(dir.path().toStdString());
        const std::uint32_t cap = 200'000;  // 3 warps x 200k x 16 B = 9.6 MB: two chunks
        auto b = rowSumBuffer(cap);
        QVERIFY(b.bytes().size() > kTraceChunkBytes);
        s.trace(b, cap, "missing.cu");
        s.end();
        const auto sp = readSink(s.write(dir));
        QCOMPARE(int(sp.traces.size()), 1);
        QVERIFY(sp.traces[0].complete());
        QVERIFY(sp.traces[0].data == std::string(reinterpret_cast<const char*>(b.bytes().data()), b.bytes().size()));
        const auto res = convert(dir.filePath("4242-1.wsink").toStdString());
        QVERIFY(res.runs[0].kernels[0].launch.traced);
        QVERIFY(res.runs[0].sources.empty());
        QVERIFY2(res.runs[0].info.notes.find("source missing.cu not found") != std::string::npos, res.runs[0].info.notes.c_str());
    }

    void sinkCutInsideABufferFailsTheRun()
    {
        QTemporaryDir dir;
        Sink s(dir.path().toStdString());
        const std::uint32_t cap = 200'000;
        auto b = rowSumBuffer(cap);
        s.trace(b, cap, "");
        const std::string path = s.write(dir, s.out.size() - 1000);  // the second chunk is cut off
        const auto sp = readSink(path);
        QVERIFY(sp.truncated);
        QCOMPARE(int(sp.traces.size()), 1);
        QVERIFY(!sp.traces[0].complete());
        const auto res = convert(path);
        QCOMPARE(res.runs[0].info.status, RunStatus::Failed);
        QVERIFY2(res.runs[0].info.failureReason.find("cut short") != std::string::npos, res.runs[0].info.failureReason.c_str());
        QVERIFY(!res.runs[0].kernels[0].launch.traced);
    }

    void claimedSizeAllocatesNothingUntilChunksArrive()
    {
        QTemporaryDir dir;
        Sink s(dir.path().toStdString());
        TraceLaunchRec r{};
        r.correlationId = kCorr;
        r.bufferBytes = std::uint64_t(60) << 30;  // 60 GiB claimed, nothing sent
        r.numCtas = 1, r.warpsPerCta = 3, r.eventsPerWarp = 16;
        appendTraceLaunch(s.out, r, "_Z8wsRowSumPKfPfi", {}, {}, "", nullptr, 0);
        s.end();
        const std::string path = s.write(dir);
        const auto sp = readSink(path);
        QVERIFY2(sp.error.empty(), sp.error.c_str());
        QCOMPARE(int(sp.traces.size()), 1);
        QVERIFY(sp.traces[0].data.empty());
        QVERIFY(!sp.traces[0].complete());
        const auto res = convert(path);
        QCOMPARE(res.runs[0].info.status, RunStatus::Failed);
        QVERIFY(res.runs[0].info.failureReason.find("cut short (0 of 64424509440 bytes") != std::string::npos);
    }

    void overflowAndNotesReachTheRun()
    {
        QTemporaryDir dir;
        Sink s(dir.path().toStdString());
        auto b = rowSumBuffer(16, /*reducer 1 attempted*/ 99);
        s.trace(b, 16, "");
        appendTraceNote(s.out, 43, 0, "kernel foo was built with trace format version 9; this recorder reads version 1: not traced");
        s.trace(b, 16, "", /*corr*/ 777);  // no kernel record with that correlation id
        s.end();
        const auto res = convert(s.write(dir));
        const RunRecord& run = res.runs[0];
        QCOMPARE(run.info.status, RunStatus::Failed);
        QVERIFY2(run.info.failureReason.find("CTA 0 warp 2 (99 events)") != std::string::npos, run.info.failureReason.c_str());
        QVERIFY2(run.info.notes.find("trace format version 9") != std::string::npos, run.info.notes.c_str());
        QVERIFY2(run.info.notes.find("correlation 777) has no kernel record") != std::string::npos, run.info.notes.c_str());
        QCOMPARE(run.kernels[0].launch.droppedEvents, std::int64_t(99 - 16));
    }

    // A warp that declared no role is kept as an empty "no role" lane, said per warp in the notes, and stored.
    void warpWithoutRoleIsShownAsNoRole()
    {
        QTemporaryDir dir;
        Sink s(dir.path().toStdString());
        BufferBuilder b(1, 4, 16, 2, 8192);  // the row sum's three warps, and warp 3 that never declares a role
        b.cta(0, kT0 - 200'000 + 1000, kClk0, kT0 - 200'000 + 11'000, kClk0 + 10'000, 5);
        b.warp(0, 0, 1, 0, 0, {{kClk0, k(IntervalKind::IssueLoad), 0, 0}, {kClk0 + 900, trace::kEventEnd}}, -1, 0);
        for (std::uint8_t c = 0; c < 2; ++c)
            b.warp(0, 1u + c, 2, 0, c, {{kClk0, k(IntervalKind::WaitData), 0, 0}, {kClk0 + 2000, trace::kEventEnd}}, -1, 1);
        s.trace(b, 16, "", kCorr, 4);
        s.end();
        const auto res = convert(s.write(dir));
        const RunRecord& run = res.runs[0];
        QCOMPARE(run.info.status, RunStatus::Complete);
        const KernelRecord& kr = run.kernels[0];
        QCOMPARE(int(kr.warps.size()), 4);
        QCOMPARE(kr.warps[3].warpIndex, 3);
        QCOMPARE(kr.warps[3].role, WarpRole::Unknown);
        QCOMPARE(kr.warps[3].roleName, std::string("no role"));
        for (const auto& iv : kr.intervals) QVERIFY(iv.warpId != kr.warps[3].id);
        QVERIFY2(run.info.notes.find("1 warps declared no role (shown as 'no role' lanes, empty): warp 3 in 1 CTA")
                     != std::string::npos, run.info.notes.c_str());
        // The viewer's lane for it: stored and loaded like any other warp, under its name.
        const std::string file = dir.filePath("t.wstrace").toStdString();
        RowId kernelId = 0;
        {
            TraceStore st = TraceStore::openForWriting(file);
            const RowId runId = st.writeRun(run);
            kernelId = st.kernels(runId).at(0).id;
        }
        const KernelTrace t = TraceStore::openReadOnly(file).loadKernel(kernelId);
        QCOMPARE(int(t.lanes.size()), 4);
        int noRole = 0;
        for (const auto& l : t.lanes)
            if (l.roleName == "no role") {
                ++noRole;
                QCOMPARE(l.warpIndex, 3);
                QCOMPARE(l.size(), std::size_t(0));
            }
        QCOMPARE(noRole, 1);
    }

    // A kernel built against another trace-format version is not traced; the run fails with the injection
    // library's message, so warpstage-record prints it and exits 6.
    void headerVersionMismatchFailsTheRun()
    {
        QTemporaryDir dir;
        Sink s(dir.path().toStdString());
        auto b = rowSumBuffer();
        s.trace(b, 16, "");
        const std::string text = std::string("kernel wsRowSum(float const*, float*, int) ") + kTraceNoteVersionMismatch
            + " 9; this recorder reads version 1: not traced (rebuild the kernel against this Warpstage's <warpstage/trace.cuh>)";
        appendTraceNote(s.out, 0, 0, text);
        s.end();
        const auto res = convert(s.write(dir));
        const RunRecord& run = res.runs[0];
        QCOMPARE(run.info.status, RunStatus::Failed);
        QVERIFY2(run.info.failureReason.find("format version 9; this recorder reads version 1") != std::string::npos,
                 run.info.failureReason.c_str());
        QVERIFY2(run.info.notes.find("rebuild the kernel") != std::string::npos, run.info.notes.c_str());
        QVERIFY(run.kernels[0].launch.traced);  // the other, matching launch is kept
    }

    void chunkOutsideItsBufferIsCorrupt()
    {
        QTemporaryDir dir;
        Sink s(dir.path().toStdString());
        TraceChunkRec c{kCorr, 0, 0};
        std::string payload(reinterpret_cast<const char*>(&c), sizeof c);
        payload += "xxxx";
        appendRecord(s.out, RecType::TraceChunk, payload.data(), std::uint32_t(payload.size()));  // no TraceLaunch before it
        const auto sp = readSink(s.write(dir));
        QVERIFY(sp.error.find("corrupt record (type 41") != std::string::npos);
    }

    // A build tree compiled through ccache (CCACHE_BASEDIR) or by hand records __BASE_FILE__ relative to the folder
    // the compiler ran in; the recorder finds it from the binary's folders, and --source-dir remaps the rest.
    void sourceFoundFromTheBinarysFoldersAndSourceDirs()
    {
        QTemporaryDir tmp;
        const std::string root = tmp.path().toStdString();
        QVERIFY(QDir().mkpath(tmp.filePath("src/kern")) && QDir().mkpath(tmp.filePath("build/tests/bin"))
                && QDir().mkpath(tmp.filePath("run")) && QDir().mkpath(tmp.filePath("moved/kern")));
        std::ofstream(root + "/src/kern/k.cu") << "__global__ void k() {}\n";
        std::ofstream(root + "/moved/kern/m.cu") << "// moved\n";
        ws::sink::SinkProcess p;
        p.cwd = root + "/run";
        p.exe = root + "/build/tests/bin/prog";
        p.argv = {"../build/tests/bin/prog"};
        int tried = 0;
        // relative to the build folder (two levels above the binary), not to the process's cwd
        QCOMPARE(ws::sink::findSource("../../src/kern/k.cu", p, {}, &tried), root + "/build/tests/../../src/kern/k.cu");
        // absolute paths are taken as they are, and a missing one is not searched for elsewhere without --source-dir
        QCOMPARE(ws::sink::findSource(root + "/src/kern/k.cu", p, {}), root + "/src/kern/k.cu");
        QCOMPARE(ws::sink::findSource("/nonexistent/kern/m.cu", p, {}, &tried), std::string());
        QCOMPARE(tried, 1);
        // --source-dir: path with its leading ../ dropped, then the file name alone
        QCOMPARE(ws::sink::findSource("../../kern/m.cu", p, {root + "/moved"}), root + "/moved/kern/m.cu");
        QCOMPARE(ws::sink::findSource("/old/checkout/m.cu", p, {root + "/nowhere", root + "/moved/kern"}),
                 root + "/moved/kern/m.cu");
        QCOMPARE(ws::sink::findSource("nope.cu", p, {root}, &tried), std::string());
        QVERIFY(tried > 5);
    }
};

QTEST_GUILESS_MAIN(TestSinkTraces)
#include "tst_sink_traces.moc"
