// The bundled real recording (resources/samples/ladder-h200-4096.wstrace, opened in place, or its
// migrated copy in WARPSTAGE_SAMPLES_DIR once the schema moves on): what must hold for a real H200 recording of
// the whole ladder. Built only when the sample is in the tree (tests/recorder/CMakeLists.txt);
// a missing file is a failure, not a skip.
#include "warpstage/analysis.h"
#include "warpstage/store.h"

#include <QFileInfo>
#include <QtTest>

#include <cmath>
#include <map>

using namespace ws;

namespace {
const char* const kRungs[] = {"sync", "tma_sync", "multistage", "warp_specialized", "cooperative", "pingpong"};
const std::string kSample = std::string(WARPSTAGE_SAMPLES_DIR) + "/ladder-h200-4096.wstrace";

struct RungData {
    RunInfo run;
    KernelLaunch traced, untraced;
    KernelMetrics metrics;
    std::int64_t stallSamples = 0;
    std::int64_t stallSamplesWithStage = 0;
};
}  // namespace

class TestSample : public QObject {
    Q_OBJECT

    std::map<std::string, RungData> m_rungs;

private slots:
    void initTestCase()
    {
        QVERIFY2(QFileInfo::exists(QString::fromStdString(kSample)),
                 qPrintable(QString::fromStdString(kSample) + " missing: the sample archive was not unpacked (re-run cmake)"));
        const auto store = TraceStore::openReadOnly(kSample);
        for (const RunInfo& run : store.runs()) {
            RungData d;
            d.run = run;
            for (const auto& k : store.kernels(run.id)) {
                if (k.traced && d.traced.id == 0) d.traced = k;
                if (!k.traced && d.untraced.id == 0) d.untraced = k;
            }
            if (d.traced.id != 0) {
                const KernelTrace t = store.loadKernel(d.traced.id);
                d.metrics = analyze(t);
                for (const auto& s : t.stalls) {
                    d.stallSamples += s.count;
                    if (!s.stage.empty()) d.stallSamplesWithStage += s.count;
                }
                // The trace itself: CTAs and intervals inside CUPTI's kernel window.
                QVERIFY2(!t.ctas.empty(), run.variant.c_str());
                for (const auto& c : t.ctas) {
                    QVERIFY2(c.start >= d.traced.start && c.end <= d.traced.end,
                             qPrintable(QString("%1: CTA %2 [%3, %4] outside CUPTI [%5, %6]")
                                            .arg(run.variant.c_str()).arg(c.blockLinear).arg(c.start).arg(c.end)
                                            .arg(d.traced.start).arg(d.traced.end)));
                    QVERIFY(c.nsPerCycle > 0.3 && c.nsPerCycle < 1.5);
                }
                QVERIFY2(t.firstStart() >= d.traced.start && t.lastEnd() <= d.traced.end, run.variant.c_str());
                // Every warp role that is not idle has intervals.
                std::map<WarpRole, std::size_t> perRole;
                for (const auto& lane : t.lanes) perRole[lane.role] += lane.size();
                QVERIFY2(!perRole.empty(), run.variant.c_str());
                for (const auto& [role, n] : perRole)
                    if (role != WarpRole::Idle)
                        QVERIFY2(n > 0, qPrintable(QString("%1: %2 warps have no intervals")
                                                       .arg(run.variant.c_str()).arg(std::string(warpRoleName(role)).c_str())));
                QVERIFY2(!t.loads.empty(), run.variant.c_str());
                // Nanosecond timestamps: a decoder that adds %globaltimer-epoch offsets (~1.8e18 ns) in
                // doubles puts every time on a 256 ns grid, so every duration is a multiple of 256 ns
                // (the first recordings: 100%). With real resolution it is about 1 in 256.
                std::size_t all = 0, onGrid = 0;
                for (const auto& lane : t.lanes)
                    for (std::size_t i = 0; i < lane.size(); ++i, ++all)
                        if (lane.duration[i] % 256 == 0) ++onGrid;
                QVERIFY(all > 0);
                QVERIFY2(double(onGrid) / double(all) < 0.05,
                         qPrintable(QString("%1: %2 of %3 interval durations are multiples of 256 ns")
                                        .arg(run.variant.c_str()).arg(onGrid).arg(all)));
            }
            m_rungs[run.variant] = std::move(d);
        }
    }

    void deviceAndProvenance()
    {
        QVERIFY(!m_rungs.empty());
        for (const auto& [name, d] : m_rungs) {
            QVERIFY2(d.run.device.name.find("H200") != std::string::npos, d.run.device.name.c_str());
            QVERIFY(!d.run.synthetic);
            QCOMPARE(d.run.status, RunStatus::Complete);
            QCOMPARE(d.run.m, 4096);
            QCOMPARE(d.run.n, 4096);
            QCOMPARE(d.run.k, 4096);
            QVERIFY(d.run.device.smCount == 132);
            QVERIFY(!d.run.driverVersion.empty());
            QVERIFY(!d.run.cudaVersion.empty());
            QVERIFY(!d.run.cuptiVersion.empty());
            QVERIFY(d.run.commandLine.find("warpstage-record") != std::string::npos);
            QVERIFY(!d.run.startedAt.empty());
        }
    }

    void everyRungPresentWithBothPasses()
    {
        for (const char* r : kRungs) {
            QVERIFY2(m_rungs.count(r), r);
            const auto& d = m_rungs.at(r);
            QVERIFY2(d.run.hasTimeline && d.traced.id != 0, r);
            QVERIFY2(d.untraced.id != 0, r);
            QVERIFY2(d.traced.alignResidualNs >= 0 && d.traced.alignResidualNs < 20000, r);
            QCOMPARE(d.traced.droppedEvents, std::int64_t(0));
            // Stall samples: a few hundred thousand per rung, mostly mapped to a pipeline stage.
            QVERIFY2(d.run.hasStalls, qPrintable(QString("%1: %2").arg(r).arg(d.run.notes.c_str())));
            QVERIFY2(d.stallSamples > 50000, qPrintable(QString("%1: %2 samples").arg(r).arg(d.stallSamples)));
            QVERIFY2(d.stallSamplesWithStage * 2 > d.stallSamples, r);
        }
    }

    void overlapRisesUpTheLadder()
    {
        auto overlap = [&](const char* r) { return m_rungs.at(r).metrics.total.computeOverlapShare; };
        for (const char* r : kRungs) {
            QVERIFY2(m_rungs.count(r), r);
            qInfo("%-17s overlap %.3f  load hidden %.3f  exposed wait %.3f  %.1f TFLOP/s", r, overlap(r),
                  m_rungs.at(r).metrics.total.loadHiddenShare, m_rungs.at(r).metrics.total.exposedLoadWaitShare,
                  m_rungs.at(r).metrics.achievedTflops);
        }
        const double syncMax = std::max(overlap("sync"), overlap("tma_sync"));
        QVERIFY2(syncMax < 0.2, "the synchronous rungs overlap compute with loads");
        QVERIFY2(overlap("multistage") > syncMax, "multistage overlaps no more than the synchronous rungs");
        for (const char* r : {"warp_specialized", "cooperative", "pingpong"})
            QVERIFY2(overlap(r) > syncMax + 0.2, r);
        // And it pays: the top of the ladder is faster than the bottom.
        QVERIFY(m_rungs.at("pingpong").metrics.achievedTflops > 2 * m_rungs.at("sync").metrics.achievedTflops);
    }

    // The second bundled recording: a user's own kernel (examples/softmax-ws built from the installed package,
    // recorded on the H200 by the installed recorder). What the real tool decoded and stored: user phase and
    // role names, every warp's intervals inside CUPTI's window, loads, no overflow, the example's source.
    void userKernelSample()
    {
        const std::string path = std::string(WARPSTAGE_SAMPLES_DIR) + "/softmax-ws-h200.wstrace";
        QVERIFY2(QFileInfo::exists(QString::fromStdString(path)), path.c_str());
        const auto store = TraceStore::openReadOnly(path);
        const auto runs = store.runs();
        QCOMPARE(runs.size(), std::size_t(1));
        QVERIFY2(runs[0].notes.find("overflow") == std::string::npos, runs[0].notes.c_str());
        int traced = 0;
        for (const auto& k : store.kernels(runs[0].id)) {
            if (!k.traced) continue;
            ++traced;
            QVERIFY2(k.name.find("softmaxWs") != std::string::npos, k.name.c_str());
            const KernelTrace t = store.loadKernel(k.id);
            QCOMPARE(t.ctas.size(), std::size_t(16));
            QCOMPARE(t.lanes.size(), std::size_t(80));   // 16 CTAs x (1 streamer + 4 softmax warps)
            QCOMPARE(t.intervalCount(), std::size_t(8208));
            // The user's phase names, in the order of WARPSTAGE_PHASE_NAMES, and both are used.
            QCOMPARE(t.phaseNames.size(), std::size_t(2));
            QCOMPARE(t.phaseNames[0], std::string("combine"));
            QCOMPARE(t.phaseNames[1], std::string("write"));
            std::map<int, std::size_t> perUser;
            std::map<std::string, std::size_t> perRoleName;
            for (const auto& lane : t.lanes) {
                perRoleName[lane.roleName] += 1;
                for (std::size_t i = 0; i < lane.size(); ++i)
                    if (isUserPhase(lane.kind[i])) ++perUser[int(lane.kind[i]) - int(kUserPhaseBase)];
                QVERIFY(lane.size() > 0);
                QVERIFY(lane.start.front() >= k.start && lane.end(lane.size() - 1) <= k.end);
            }
            QVERIFY2(perUser[0] > 0 && perUser[1] > 0, "both user phases appear");
            QCOMPARE(perRoleName.size(), std::size_t(5));   // "streamer", "softmax 0" .. "softmax 3"
            QCOMPARE(perRoleName["streamer"], std::size_t(16));
            // Loads: the streamer's issue/ready pairs feed the overlap metrics as for the ladder.
            QVERIFY(!t.loads.empty());
            const KernelMetrics m = analyze(t);
            QVERIFY2(m.total.loadHiddenShare > 0.05 && m.total.loadHiddenShare < 1.0, qPrintable(QString::number(m.total.loadHiddenShare)));
            // Self-contained: the example's source travelled with the trace.
            bool source = false;
            for (const auto& f : t.sources) source = source || f.path.find("softmax_ws.cu") != std::string::npos;
            QVERIFY2(source, "examples/softmax-ws/softmax_ws.cu is stored in the run");
        }
        QCOMPARE(traced, 2);
    }
};

QTEST_GUILESS_MAIN(TestSample)
#include "tst_sample.moc"
