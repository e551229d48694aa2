// warpstage-trace-subset: keeps only the CTAs of chosen SMs, everything else copied (no GPU).
#include "fixture.h"

#include "warpstage/decode.h"
#include "warpstage/store.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using namespace ws;
using wsfix::BufferBuilder;

class TestTraceSubset : public QObject {
    Q_OBJECT

private slots:
    void keepsChosenSms()
    {
        // Two CTAs: block 0 on SM 3 (producer + consumer, two loads), block 1 on SM 7 (one worker).
        BufferBuilder b(2, 2, 8);
        const auto K = [](IntervalKind k) { return static_cast<std::uint8_t>(k); };
        b.cta(0, 1'000'000, 100, 1'010'000, 20'100, 3);
        b.cta(1, 1'000'500, 100, 1'009'000, 17'100, 7);
        b.warp(0, 0, 1, 0, 0, {{100, K(IntervalKind::IssueLoad), 0, 0}, {300, K(IntervalKind::IssueLoad), 1, 1}, {400, trace::kEventEnd}});
        b.warp(0, 1, 2, 0, 0, {{100, K(IntervalKind::WaitData), 0, 0}, {500, K(IntervalKind::WaitData), 1, 1},
                               {700, K(IntervalKind::MmaIssue), 1, 1}, {900, trace::kEventEnd}});
        b.warp(1, 0, 4, 0, 0, {{100, K(IntervalKind::Load), 0}, {200, K(IntervalKind::Compute), 0}, {300, trace::kEventEnd}});
        KernelLaunch l;
        l.start = 5'000'000;
        l.end = 5'011'000;
        l.variant = "fixture";
        decode::DecodeReport rep;
        KernelRecord traced = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), l, {}, rep);
        QVERIFY(rep.ok);
        QCOMPARE(int(traced.ctas.size()), 2);
        KernelRecord untraced;
        untraced.launch = l;
        untraced.launch.traced = false;
        StallSample s;
        s.reason = "smsp__pcsamp_warps_issue_stalled_wait";
        s.count = 42;
        s.stage = "wait_data";
        s.role = WarpRole::Consumer;
        untraced.stalls.push_back(s);
        RunRecord run;
        run.info.variant = "fixture";
        run.info.synthetic = true;
        run.info.notes = "SYNTHETIC: subset fixture";
        run.info.hasStalls = true;
        run.kernels = {traced, untraced};
        MemOp op;
        op.kind = MemOpKind::HtoD;
        op.bytes = 4096;
        op.start = 4'000'000;
        op.end = 4'001'000;
        run.memOps.push_back(op);

        QTemporaryDir dir;
        const QString in = dir.filePath("in.wstrace"), out = dir.filePath("out.wstrace");
        {
            auto st = TraceStore::openForWriting(in.toStdString());
            st.writeRun(run);
        }
        QProcess p;
        p.start(QStringLiteral(WARPSTAGE_SUBSET_EXE), {in, out, "--sms", "7"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);

        const auto st = TraceStore::openReadOnly(out.toStdString());
        const auto runs = st.runs();
        QCOMPARE(int(runs.size()), 1);
        QVERIFY(runs[0].synthetic);
        QVERIFY(runs[0].hasStalls);
        QVERIFY(runs[0].notes.find("subset: kept 1 of 2 CTAs") != std::string::npos);
        const auto ks = st.kernels(runs[0].id);
        QCOMPARE(int(ks.size()), 2);
        const KernelTrace t = st.loadKernel(ks[0].id);
        QCOMPARE(int(t.ctas.size()), 1);
        QCOMPARE(t.ctas[0].smId, 7);
        QCOMPARE(t.ctas[0].blockLinear, 1);
        QCOMPARE(int(t.lanes.size()), 1);
        QCOMPARE(int(t.intervalCount()), 2);
        QCOMPARE(int(t.loads.size()), 1);  // the worker's synchronous load of k-step 0
        QCOMPARE(t.launch.start, l.start);
        const auto stalls = st.stallSamples(ks[1].id);
        QCOMPARE(int(stalls.size()), 1);
        QCOMPARE(stalls[0].count, std::int64_t(42));
        QCOMPARE(stalls[0].stage, std::string("wait_data"));
        QCOMPARE(int(st.memOps(runs[0].id).size()), 1);

        // Refuses to overwrite, and bad lists are usage errors.
        p.start(QStringLiteral(WARPSTAGE_SUBSET_EXE), {in, out, "--sms", "7"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        p.start(QStringLiteral(WARPSTAGE_SUBSET_EXE), {in, dir.filePath("o2.wstrace"), "--sms", "x"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        // A file that is not a trace: exit 1 with the file named.
        p.start(QStringLiteral(WARPSTAGE_SUBSET_EXE), {dir.filePath("missing.wstrace"), dir.filePath("o3.wstrace"), "--sms", "1"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains("missing.wstrace"));
    }
};

QTEST_GUILESS_MAIN(TestTraceSubset)
#include "tst_trace_subset.moc"
