// The stall pass's matching (warpstage/stall_match.h) on plain data, no GPU: samples of the second run go to
// the timeline launch with the same (process, device, kernel name, launch index in call order); graph
// launches are not counted; runs that disagree (other counts, names only one run has, a process without
// counterpart) keep what matches and say what did not, in the warnings and the run's notes.
#include "sink_builder.h"
#include "warpstage/sink_reader.h"
#include "warpstage/stall_match.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <map>

using namespace ws;
using namespace ws::sink;

namespace {

const std::string kLong = "smsp__pcsamp_warps_issue_stalled_long_scoreboard";
const std::string kBar = "smsp__pcsamp_warps_issue_stalled_barrier";

SinkProcess load(const QTemporaryDir& dir, const Builder& b, const std::string& name)
{
    return readSink(b.save(dir.path(), name));
}

std::vector<RunRecord> runsOf(const std::vector<SinkProcess>& sinks)
{
    ConvertOptions co;
    co.outcome.rootPid = sinks.front().pid;
    co.outcome.exitCode = 0;
    return toRuns(sinks, co).runs;
}

// Samples per launch, as "name#corr:count" in launch order.
std::string samplesOf(const RunRecord& r)
{
    std::string s;
    for (const auto& k : r.kernels) {
        std::int64_t n = 0;
        for (const auto& x : k.stalls) n += x.count;
        if (n) s += (s.empty() ? "" : " ") + k.launch.name + "#" + std::to_string(k.launch.correlationId) + ":" + std::to_string(n);
    }
    return s;
}

bool anyContains(const std::vector<std::string>& v, const std::string& what)
{
    for (const auto& s : v)
        if (s.find(what) != std::string::npos) return true;
    return false;
}

StallFinish labelOnly()
{
    return [](StallSample& s, std::uint64_t, const SinkProcess&) {
        s.reasonLabel = "label:" + s.reason;
        return true;
    };
}

// Timeline: spin() 3 times on stream 7 and once on stream 8, other() twice, spin() once inside a graph.
// Call order (correlation ids) is not start order: corr 3 (stream 8) starts first.
Builder timeline(std::int64_t pid, std::vector<std::string> argv = {"./app", "--x"})
{
    Builder b(pid, 1, argv);
    b.device(0, "NVIDIA H200");
    // in the file in start order, as CUPTI hands them over
    b.kernel("_Z4spinv", 50, 10, 5, 0, 7, 9);  // in a CUDA graph: not counted
    b.kernel("_Z4spinv", 100, 10, 3, 0, 8);    // 2nd call, 1st to start
    b.kernel("_Z4spinv", 500, 10, 1);
    b.kernel("_Z5otherv", 520, 10, 2);
    b.kernel("_Z4spinv", 540, 10, 4);
    b.kernel("_Z5otherv", 560, 10, 6);
    b.kernel("_Z4spinv", 580, 10, 7);
    b.end();
    return b;
}

}  // namespace

class TstStallMatch : public QObject {
    Q_OBJECT
private slots:
    void samplesGoToTheLaunchOfTheSameCallIndex()
    {
        QTemporaryDir dir;
        std::vector<SinkProcess> tl = {load(dir, timeline(10), "a.wsink")};
        auto runs = runsOf(tl);
        QCOMPARE(int(runs.size()), 1);
        Builder st(20);
        st.stallSample("_Z4spinv", 1, 0x40, kLong, 30);  // call index 1 = corr 3 (it started first: launchIndex 0)
        st.stallSample("_Z4spinv", 1, 0x80, kBar, 12);
        st.stallLaunch("_Z4spinv", 1);
        st.stallSample("_Z4spinv", 3, 0x40, kLong, 7);   // call index 3 = corr 7 (the graph launch is not counted)
        st.stallLaunch("_Z4spinv", 3);
        st.stallCount("_Z4spinv", 4, 2);
        st.end();
        const StallMatchResult m = attachStalls(runs, tl, {load(dir, st, "b.wsink")}, {"spin"}, labelOnly());
        QCOMPARE(samplesOf(runs[0]), std::string("spin()#3:42 spin()#7:7"));
        QCOMPARE(m.launchesWithSamples, 2);
        QCOMPARE(m.kernelsSampled, 1);
        QCOMPARE(m.samples, std::int64_t(49));
        QVERIFY2(!m.mismatch, m.warnings.empty() ? "" : m.warnings.front().c_str());
        QVERIFY(m.warnings.empty());
        QVERIFY(runs[0].info.hasStalls);
        for (const auto& k : runs[0].kernels)
            if (k.launch.correlationId == 3) {
                QCOMPARE(int(k.stalls.size()), 2);
                QCOMPARE(k.stalls[0].reasonLabel, "label:" + k.stalls[0].reason);
                QCOMPARE(k.stalls[0].functionName, std::string("_Z4spinv"));
            }
        QVERIFY2(runs[0].info.notes.find("stall pass (--kernels 'spin')") != std::string::npos, runs[0].info.notes.c_str());
        QVERIFY2(runs[0].info.notes.find("49 samples on 2 launch(es)") != std::string::npos, runs[0].info.notes.c_str());
        // no line info in these samples: said so
        QCOMPARE(m.samplesWithoutSource, std::int64_t(49));
        QVERIFY(runs[0].info.notes.find("without a source line") != std::string::npos);
    }

    void sourceLinesAndDroppedReasonsComeFromTheCallback()
    {
        QTemporaryDir dir;
        std::vector<SinkProcess> tl = {load(dir, timeline(10), "a.wsink")};
        auto runs = runsOf(tl);
        Builder st(20);
        st.stallSample("_Z5otherv", 0, 0x10, kLong, 5);
        st.stallSample("_Z5otherv", 0, 0x10, kLong + "_not_issued", 4);
        st.stallCount("_Z5otherv", 2, 1);
        st.end();
        const StallMatchResult m = attachStalls(runs, tl, {load(dir, st, "b.wsink")}, {"other"},
                                                [](StallSample& s, std::uint64_t crc, const SinkProcess&) {
                                                    if (s.reason.find("_not_issued") != std::string::npos) return false;
                                                    s.sourceFile = "/src/k.cu";
                                                    s.line = int(crc);  // 77: the builder's CRC
                                                    return true;
                                                });
        QCOMPARE(samplesOf(runs[0]), std::string("other()#2:5"));
        QCOMPARE(m.samplesWithoutSource, std::int64_t(0));
        for (const auto& k : runs[0].kernels)
            for (const auto& s : k.stalls) {
                QCOMPARE(s.line, 77);
                QCOMPARE(s.sourceFile, std::string("/src/k.cu"));
            }
        QVERIFY(runs[0].info.notes.find("without a source line") == std::string::npos);
    }

    void launchRangeKeepsOnlyThoseIndices()
    {
        QTemporaryDir dir;
        std::vector<SinkProcess> tl = {load(dir, timeline(10), "a.wsink")};
        auto runs = runsOf(tl);
        Builder st(20);
        for (std::uint32_t i = 0; i < 4; ++i) st.stallSample("_Z4spinv", i, 0x40, kLong, 10 + i);
        st.stallCount("_Z4spinv", 4, 4);
        st.end();
        StallMatchOptions o{"spin", 2, 3};
        attachStalls(runs, tl, {load(dir, st, "b.wsink")}, o, labelOnly());
        QCOMPARE(samplesOf(runs[0]), std::string("spin()#4:12 spin()#7:13"));
        QVERIFY(runs[0].info.notes.find("--launch-range 2:3") != std::string::npos);
    }

    void differentCountsKeepWhatMatchesAndSaySo()
    {
        QTemporaryDir dir;
        std::vector<SinkProcess> tl = {load(dir, timeline(10), "a.wsink")};
        auto runs = runsOf(tl);
        Builder st(20);
        st.stallSample("_Z4spinv", 0, 0x40, kLong, 8);
        st.stallSample("_Z4spinv", 4, 0x40, kLong, 9);  // a 5th call: the timeline run has 4
        st.stallCount("_Z4spinv", 5, 5);
        st.end();
        const StallMatchResult m = attachStalls(runs, tl, {load(dir, st, "b.wsink")}, {"spin"}, labelOnly());
        QCOMPARE(samplesOf(runs[0]), std::string("spin()#1:8"));
        QVERIFY(m.mismatch);
        QCOMPARE(m.samplesUnmatched, 1);
        QVERIFY(anyContains(m.warnings, "'spin()' launched 4 time(s) in the timeline run and 5 in the stall run"));
        QVERIFY(anyContains(m.warnings, "not deterministic"));
        QVERIFY(runs[0].info.notes.find("launched 4 time(s) in the timeline run and 5") != std::string::npos);
    }

    void namesOnlyOneRunHas()
    {
        QTemporaryDir dir;
        std::vector<SinkProcess> tl = {load(dir, timeline(10), "a.wsink")};
        auto runs = runsOf(tl);
        Builder st(20);
        st.stallSample("_Z5freshv", 0, 0x40, kLong, 8);  // only in the stall run
        st.stallCount("_Z5freshv", 1, 1);
        st.end();  // and other() matches the regex but never ran in the stall run
        const StallMatchResult m = attachStalls(runs, tl, {load(dir, st, "b.wsink")}, {"fresh|other"}, labelOnly());
        QCOMPARE(samplesOf(runs[0]), std::string());
        QVERIFY(m.mismatch);
        QVERIFY(anyContains(m.warnings, "'fresh()' ran 1 time(s) on device 0 in the stall run but never in the timeline run"));
        QVERIFY(anyContains(m.warnings, "'other()' launched 2 time(s) on device 0 in the timeline run but never in the stall run"));
        QVERIFY(!runs[0].info.hasStalls);
    }

    void noMatchingKernel()
    {
        QTemporaryDir dir;
        std::vector<SinkProcess> tl = {load(dir, timeline(10), "a.wsink")};
        auto runs = runsOf(tl);
        Builder st(20);
        st.end();
        const StallMatchResult m = attachStalls(runs, tl, {load(dir, st, "b.wsink")}, {"nomatch"}, labelOnly());
        QVERIFY(!m.mismatch);
        QVERIFY(anyContains(m.warnings, "--kernels 'nomatch' matched no kernel launch"));
        QVERIFY(runs[0].info.notes.find("--kernels matched no kernel launch") != std::string::npos);
        QVERIFY(!runs[0].info.hasStalls);
    }

    void whatTheStallRunCouldNotDoIsNoted()
    {
        QTemporaryDir dir;
        std::vector<SinkProcess> tl = {load(dir, timeline(10), "a.wsink")};
        auto runs = runsOf(tl);
        Builder st(20);
        appendStallNote(st.out, 35, "device 0: PC sampling not permitted: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)");
        st.stallCount("_Z4spinv", 4, 1);
        st.end();
        const StallMatchResult m = attachStalls(runs, tl, {load(dir, st, "b.wsink")}, {"spin"}, labelOnly());
        QVERIFY(anyContains(m.warnings, "stall run pid 20 (./app): device 0: PC sampling not permitted"));
        QVERIFY2(runs[0].info.notes.find("PC sampling not permitted") != std::string::npos, runs[0].info.notes.c_str());
        QVERIFY(!runs[0].info.hasStalls);
    }

    void processesPairByCommandLine()
    {
        QTemporaryDir dir;
        // two workers: different argv; the stall run's sinks come in the other order, with other pids
        std::vector<SinkProcess> tl = {load(dir, timeline(10, {"./w", "0"}), "a.wsink"), load(dir, timeline(11, {"./w", "1"}), "b.wsink")};
        auto runs = runsOf(tl);
        QCOMPARE(int(runs.size()), 2);
        Builder s1(21, 1, {"./w", "1"});
        s1.stallSample("_Z4spinv", 0, 0x40, kLong, 11);
        s1.stallCount("_Z4spinv", 4, 1);
        s1.end();
        Builder s0(20, 1, {"./w", "0"});
        s0.stallSample("_Z4spinv", 0, 0x40, kLong, 10);
        s0.stallCount("_Z4spinv", 4, 1);
        s0.end();
        Builder stray(22, 1, {"./other"});
        stray.stallSample("_Z4spinv", 0, 0x40, kLong, 99);
        stray.end();
        const StallMatchResult m =
            attachStalls(runs, tl, {load(dir, s1, "c.wsink"), load(dir, s0, "d.wsink"), load(dir, stray, "e.wsink")}, {"spin"}, labelOnly());
        for (const auto& r : runs) QCOMPARE(samplesOf(r), std::string(r.info.pid == 10 ? "spin()#1:10" : "spin()#1:11"));
        QVERIFY(m.mismatch);
        QVERIFY(anyContains(m.warnings, "pid 22 (./other) has no counterpart"));
    }

    void devicesAreMatchedSeparately()
    {
        QTemporaryDir dir;
        Builder b(10);
        b.device(0, "NVIDIA H200");
        b.device(1, "NVIDIA H200");
        b.kernel("_Z4spinv", 100, 10, 1, 0);
        b.kernel("_Z4spinv", 100, 10, 2, 1);
        b.kernel("_Z4spinv", 200, 10, 3, 1);
        b.end();
        std::vector<SinkProcess> tl = {load(dir, b, "a.wsink")};
        auto runs = runsOf(tl);
        QCOMPARE(int(runs.size()), 2);
        Builder st(20);
        st.stallSample("_Z4spinv", 1, 0x40, kLong, 6, 1);  // device 1, its 2nd launch
        st.stallCount("_Z4spinv", 1, 0, 0);
        st.stallCount("_Z4spinv", 2, 1, 1);
        st.end();
        const StallMatchResult m = attachStalls(runs, tl, {load(dir, st, "b.wsink")}, {"spin"}, labelOnly());
        QVERIFY(!m.mismatch);
        for (const auto& r : runs) {
            QCOMPARE(samplesOf(r), std::string(r.info.deviceOrdinal == 1 ? "spin()#3:6" : ""));
            QCOMPARE(r.info.hasStalls, r.info.deviceOrdinal == 1);
        }
    }
    // Self-contained traces: the text of every file the samples point into is stored with its sha256, found by
    // its path, or through --source-dir by its path under that folder or by its name; the files that are
    // nowhere are named in the notes; a file is stored once however many samples point into it.
    void sourcesOfTheSamplesAreStored()
    {
        QTemporaryDir dir, src, moved;
        auto write = [](const QString& path, const QByteArray& text) {
            QDir().mkpath(QFileInfo(path).path());
            QFile f(path);
            return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
        };
        const QByteArray kText = "__global__ void other() { /* k.cu */ }\n";
        const QByteArray hText = "__device__ inline void wait() {}\n";
        QVERIFY(write(src.path() + "/kern/k.cu", kText));
        QVERIFY(write(moved.path() + "/helper.cuh", hText));  // the build named /old/checkout/lib/helper.cuh
        const std::string kPath = (src.path() + "/kern/k.cu").toStdString();
        std::vector<SinkProcess> tl = {load(dir, timeline(10), "a.wsink")};
        auto runs = runsOf(tl);
        Builder st(20);
        st.stallSample("_Z5otherv", 0, 0x10, kLong, 5);
        st.stallSample("_Z5otherv", 0, 0x20, kLong, 4);
        st.stallSample("_Z5otherv", 0, 0x30, kBar, 3);
        st.stallSample("_Z5otherv", 0, 0x40, kBar, 2);
        st.stallSample("_Z5otherv", 0, 0x50, kBar, 1);
        st.stallCount("_Z5otherv", 2, 1);
        st.end();
        StallMatchOptions o{"other"};
        o.sourceDirs = {moved.path().toStdString()};
        attachStalls(runs, tl, {load(dir, st, "b.wsink")}, o, [&](StallSample& s, std::uint64_t, const SinkProcess&) {
            if (s.pcOffset <= 0x20) s.sourceFile = kPath, s.line = 1;
            else if (s.pcOffset == 0x30) s.sourceFile = "/old/checkout/lib/helper.cuh", s.line = 1;
            else if (s.pcOffset == 0x40) s.sourceFile = "/nowhere/gone.cu", s.line = 3;
            else s.sourceFile = "", s.line = 0;  // no line info for this one
            return true;
        });
        const RunRecord& r = runs[0];
        QCOMPARE(int(r.sources.size()), 2);
        std::map<std::string, const SourceFile*> byPath;
        for (const auto& f : r.sources) byPath[f.path] = &f;
        QVERIFY(byPath.count(kPath));
        QCOMPARE(byPath[kPath]->text, kText.toStdString());
        QCOMPARE(byPath[kPath]->sha256, QCryptographicHash::hash(kText, QCryptographicHash::Sha256).toHex().toStdString());
        QVERIFY(byPath.count("/old/checkout/lib/helper.cuh"));
        QCOMPARE(byPath["/old/checkout/lib/helper.cuh"]->text, hText.toStdString());
        QCOMPARE(byPath["/old/checkout/lib/helper.cuh"]->sha256, QCryptographicHash::hash(hText, QCryptographicHash::Sha256).toHex().toStdString());
        const std::string& n = r.info.notes;
        QVERIFY2(n.find("2 source file(s) of the samples stored in the trace") != std::string::npos, n.c_str());
        QVERIFY2(n.find("1 source file(s) of the samples not found") != std::string::npos, n.c_str());
        QVERIFY2(n.find("source /nowhere/gone.cu not found") != std::string::npos, n.c_str());
        QVERIFY2(n.find("1 samples without a source line") != std::string::npos, n.c_str());
        QVERIFY2(n.find("source mapping missing") == std::string::npos, n.c_str());
        QVERIFY2(n.find("k.cu not found") == std::string::npos, n.c_str());
        // Without --source-dir the moved helper is not found, and said so.
        auto runs2 = runsOf(tl);
        Builder st2(20);
        st2.stallSample("_Z5otherv", 0, 0x30, kBar, 3);
        st2.stallCount("_Z5otherv", 2, 1);
        st2.end();
        attachStalls(runs2, tl, {load(dir, st2, "c.wsink")}, {"other"}, [&](StallSample& s, std::uint64_t, const SinkProcess&) {
            s.sourceFile = "/old/checkout/lib/helper.cuh", s.line = 1;
            return true;
        });
        QVERIFY(runs2[0].sources.empty());
        QVERIFY2(runs2[0].info.notes.find("source /old/checkout/lib/helper.cuh not found") != std::string::npos, runs2[0].info.notes.c_str());
    }

    // A program built without line info: the stalls are kept, the notes say why there is no source mapping.
    void withoutLineInfoStallsAreKeptAndTheNotesSayWhy()
    {
        QTemporaryDir dir;
        std::vector<SinkProcess> tl = {load(dir, timeline(10), "a.wsink")};
        auto runs = runsOf(tl);
        Builder st(20);
        st.stallSample("_Z5otherv", 0, 0x10, kLong, 5);
        st.stallSample("_Z5otherv", 1, 0x20, kBar, 4);
        st.stallCount("_Z5otherv", 2, 2);
        st.end();
        const StallMatchResult m = attachStalls(runs, tl, {load(dir, st, "b.wsink")}, {"other"}, labelOnly());
        QCOMPARE(samplesOf(runs[0]), std::string("other()#2:5 other()#6:4"));
        QCOMPARE(m.samplesWithoutSource, std::int64_t(9));
        QVERIFY(runs[0].sources.empty());
        const std::string& n = runs[0].info.notes;
        QVERIFY2(n.find("source mapping missing: all 9 samples are without a source line (the program was built without line info")
                     != std::string::npos, n.c_str());
        QVERIFY2(n.find("not found") == std::string::npos, n.c_str());
        QVERIFY(runs[0].info.hasStalls);
    }
};

QTEST_GUILESS_MAIN(TstStallMatch)
#include "tst_stall_match.moc"
