// Run families (core/runfamily.h): the [ws-rung] tag round trip and its refusals, the family of a run with and
// without the tag (files recorded before it existed), the rung's iterations found in a program run's launches,
// and the roofline against the H200's limits (docs/recording.md, "The linear-compression family").
#include "common/lce_fixture.h"
#include "warpstage/report.h"
#include "warpstage/runfamily.h"

#include <QTemporaryDir>

#include <QtTest>

#include <cmath>

using namespace ws;

namespace {
KernelLaunch launch(const char* name, TimeNs start, TimeNs end)
{
    KernelLaunch k;
    k.name = name;
    k.start = start;
    k.end = end;
    return k;
}
}  // namespace

class TestRunFamily : public QObject {
    Q_OBJECT
private slots:
    void tagRoundTrip()
    {
        RungTag t;
        t.family = "lce";
        t.rung = 3;
        t.rungName = "fused-epilogue";
        t.usefulFlops = 200.5e9;
        t.bytesMoved = 922.1e6;
        t.compulsoryBytes = 691.9e6;
        t.warmup = 2;
        t.iterations = 5;
        t.shape = "433x256x1178x866x1024x70";
        t.setupKernels = {"fillUniform", "padCopy"};
        const std::string notes = "; " + formatRungTag(t) + "; stalls: not recorded (--no-stalls)";
        const auto p = parseRungTag(notes);
        QVERIFY(p);
        QCOMPARE(p->family, t.family);
        QCOMPARE(p->rung, 3);
        QCOMPARE(p->rungName, t.rungName);
        QVERIFY(std::abs(p->usefulFlops - t.usefulFlops) < 1e-5 * t.usefulFlops);
        QVERIFY(std::abs(p->bytesMoved - t.bytesMoved) < 1e-5 * t.bytesMoved);
        QCOMPARE(p->warmup, 2);
        QCOMPARE(p->iterations, 5);
        QCOMPARE(p->shape, t.shape);
        QCOMPARE(p->setupKernels, t.setupKernels);
        // refusals: no tag, no closing bracket, a missing number, a bad number
        QVERIFY(!parseRungTag("stalls: not recorded"));
        QVERIFY(!parseRungTag("[ws-rung family=lce rung=3 flops=1 bytes=2"));
        QVERIFY(!parseRungTag("[ws-rung family=lce rung=3 bytes=2]"));
        QVERIFY(!parseRungTag("[ws-rung family=lce rung=x flops=1 bytes=2]"));
        QVERIFY(!parseRungTag("[ws-rung family=lce rung=1 flops=-1 bytes=2]"));
        QVERIFY(parseRungTag("[ws-rung family=lce rung=1 flops=1 bytes=2 future=7]"));  // newer keys ignored
    }

    void family()
    {
        RunInfo ladder;
        ladder.variant = "pingpong";
        QCOMPARE(familyOf(ladder).family, RunFamily::GemmLadder);
        RunInfo tagged;
        tagged.kind = RunKind::Program;
        tagged.program = "/opt/lce";
        tagged.notes = "[ws-rung family=lce rung=2 name=padded flops=1e9 bytes=1e6]";
        QCOMPARE(familyOf(tagged).family, RunFamily::Lce);
        QCOMPARE(familyOf(tagged).rung, 2);
        QCOMPARE(familyOf(tagged).rungName, std::string("padded"));
        // Recorded before the tag: `warpstage-record --kernels lceUserFirst -- lce --rung 4 --time`.
        RunInfo old;
        old.kind = RunKind::Program;
        old.program = "/work/main/build-lce/lce";
        old.variant = "lce";
        old.commandLine = "warpstage-record --kernels lceUserFirst --launch-range 0:0 -- ./lce --rung 4 --time";
        QCOMPARE(familyOf(old).family, RunFamily::Lce);
        QCOMPARE(familyOf(old).rung, 4);
        QCOMPARE(familyOf(old).rungName, std::string("persistent"));
        old.commandLine = "warpstage-record -- ./lce --rung all";
        QCOMPARE(familyOf(old).family, RunFamily::Program);  // all rungs in one run: no rung of its own
        RunInfo user;
        user.kind = RunKind::Program;
        user.program = "python3";
        user.commandLine = "warpstage-record -- python3 train.py --rung 3";
        QCOMPARE(familyOf(user).family, RunFamily::Program);
        QCOMPARE(familyTitle(RunFamily::Lce), std::string_view("Linear compression (lce)"));
    }

    // Set-up launches dropped, the rest split into warmup + timed groups, each group's span.
    void iterations()
    {
        RungTag t;
        t.warmup = 1;
        t.iterations = 2;
        t.setupKernels = {"fillUniform"};
        std::vector<KernelLaunch> ks = {launch("void ws::lce::(anonymous namespace)::fillUniform(__half*, unsigned long)", 0, 50),
                                        // iteration 0 (warmup, traced: slow)
                                        launch("gatherConcat", 100, 200), launch("gemm", 210, 900),
                                        // iteration 1
                                        launch("gatherConcat", 1000, 1050), launch("gemm", 1060, 1300),
                                        // iteration 2
                                        launch("gemm", 2070, 2400), launch("gatherConcat", 2000, 2060)};
        const auto it = rungIterationNs(ks, t);
        QCOMPARE(it.size(), std::size_t(2));
        QCOMPARE(it[0], 300.0);
        QCOMPARE(it[1], 400.0);
        QCOMPARE(medianOf(it), 350.0);
        ks.pop_back();  // 5 rung launches do not split into 3 iterations
        QVERIFY(rungIterationNs(ks, t).empty());
        QVERIFY(std::isnan(medianOf({})));
    }

    void roofline()
    {
        // lce rung 2 at the benchmark point: 200.5 GFLOP, 1376 MB, 0.4526 ms (docs/benchmarks.md).
        const RooflinePoint p = ws::roofline(200.5e9, 1376e6, 0.4526e-3);
        QVERIFY(std::abs(p.tflops - 443.0) < 0.2);
        QVERIFY(std::abs(p.tbps - 3.04) < 0.01);
        QVERIFY(std::abs(p.intensity - 145.7) < 0.1);
        QVERIFY(std::abs(p.ridge - 989.0 / 4.8) < 1e-9);
        QVERIFY(!p.computeBound);  // 146 FLOP/B < ridge 206: the bandwidth roof is the limit at this intensity
        QVERIFY(std::abs(p.roofTflops - 145.7 * 4.8) < 0.5);
        QVERIFY(std::abs(p.fractionOfRoof - 443.0 / (145.7 * 4.8)) < 0.01);
        QVERIFY(std::abs(p.boundSeconds - 1376e6 / 4.8e12) < 1e-12);
        // rung 4: 695 MB -> 288 FLOP/B, above the ridge: compute-bound
        const RooflinePoint q = ws::roofline(200.5e9, 695e6, 0.4537e-3);
        QVERIFY(q.computeBound);
        QVERIFY(std::abs(q.roofTflops - 989.0) < 1e-6);
        QVERIFY(std::abs(q.fractionOfRoof - q.tflops / 989.0) < 1e-9);
        const QString text = QString::fromStdString(rooflineText(q, {}, 5));
        QVERIFY2(text.contains(QLatin1String("compute-bound")) && text.contains(QLatin1String("median of 5"))
                     && text.contains(QLatin1String("0.4537 ms")), qPrintable(text));
        QCOMPARE(ws::roofline(1, 1, 0).tflops, 0.0);  // no time: nothing claimed
    }

    // `warpstage info`: a roofline line per tagged lce run (text), and the same numbers in --json.
    void infoReport()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("lce.wstrace")).toStdString();
        ws::testing::writeLceFixture(path);
        const QString text = QString::fromStdString(describeFile(path, false));
        QVERIFY2(text.contains(QLatin1String("roofline (H200 (989 TFLOP/s dense fp16, 4.8 TB/s HBM3e)): lce rung 0 (original), 2 launches "
                                             "per iteration: 2.4600 ms per iteration (median of 12): 81.5 TFLOP/s, 2999 MB moved (1.22 TB/s)")),
                 qPrintable(text));
        QVERIFY(text.contains(QLatin1String("memory-bound, 25.4 % of the 321 TFLOP/s roof")));
        QVERIFY(text.contains(QLatin1String("lce rung 4 (persistent), 1 launch per iteration: 0.4520 ms per iteration (median of 12): 443.6 TFLOP/s")));
        QVERIFY(text.contains(QLatin1String("compute-bound, 44.9 % of the 989 TFLOP/s roof")));
        QCOMPARE(text.count(QLatin1String("roofline (")), 3);  // lce rungs 0, 3, 4; not the ladder or the user program
        const QString json = QString::fromStdString(describeFile(path, true));
        QVERIFY(json.contains(QLatin1String("\"family\": \"lce\", \"rung\": 4, \"roofline\": {\"ms_per_iteration\": 0.452, \"iterations\": 12, "
                                            "\"launches_per_iteration\": 1")));
        QVERIFY(json.contains(QLatin1String("\"bound\": \"memory\"")));
        QVERIFY(json.contains(QLatin1String("\"family\": \"program\", \"rung\": -1,")));
    }
};

QTEST_GUILESS_MAIN(TestRunFamily)
#include "tst_runfamily.moc"
