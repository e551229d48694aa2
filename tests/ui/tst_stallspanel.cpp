// StallsPanel's source view shows the source text recorded in the trace (issue 10: self-contained traces), not
// today's file: for a ladder rung whose bundled source has changed since, and for a user's kernel that has no
// bundled source at all.
#include "rungcatalog.h"
#include "sourcemodel.h"
#include "stallspanel.h"

#include <QComboBox>
#include <QtTest>

using namespace ws;
using namespace ws::ui;

class TestStallsPanel : public QObject {
    Q_OBJECT

    static std::shared_ptr<KernelTrace> trace(const std::string& variant, const std::string& file, int line)
    {
        auto t = std::make_shared<KernelTrace>();
        t->launch.variant = variant;
        StallSample s;
        s.sourceFile = file;
        s.line = line;
        s.count = 7;
        s.reason = "smsp__pcsamp_warps_issue_stalled_long_scoreboard";
        t->stalls.push_back(s);
        return t;
    }
    static QString lineText(const SourceModel* m, int row)
    {
        return m->data(m->index(row, SourceModel::ColCode)).toString();
    }

private slots:
    void recordedTextWinsOverTheBundledCopy()
    {
        const QString bundled = kernelSourceText(QStringLiteral("pingpong.cu"));
        if (bundled.isEmpty())
            QSKIP("this build bundles no ladder sources");
        auto t = trace("pingpong", "/build/kernels/src/pingpong.cu", 2);
        t->sources.push_back({"kernels/src/pingpong.cu", "", "// as recorded, line 1\nrecorded_line_two();\n"});
        StallsPanel p;
        p.setKernel(t, nullptr);
        const SourceModel* m = p.sourceModel();
        QVERIFY(m->rowCount() >= 2 && m->rowCount() <= 3);  // a final newline may give an empty last row
        QCOMPARE(lineText(m, 1), QStringLiteral("recorded_line_two();"));
        QCOMPARE(m->data(m->index(1, SourceModel::ColSamples), SourceModel::SamplesRole).toLongLong(), 7);
        QVERIFY(p.sourceFileBox()->toolTip().contains(QStringLiteral("recorded")));
        // without a recorded text, the bundled copy, and the tooltip says it may differ
        auto u = trace("pingpong", "/build/kernels/src/pingpong.cu", 2);
        p.setKernel(u, nullptr);
        QVERIFY(m->rowCount() > 10);
        QVERIFY(p.sourceFileBox()->toolTip().contains(QStringLiteral("may differ")));
    }

    void usersKernelShowsItsRecordedFile()
    {
        auto t = trace("", "../../examples/rowsum/rowsum.cu", 3);
        t->sources.push_back({"../../examples/rowsum/rowsum.cu", "", "a\nb\nhot_line();\nd\n"});
        StallsPanel p;
        p.setKernel(t, nullptr);
        QCOMPARE(p.sourceFileBox()->currentData().toString(), QStringLiteral("rowsum.cu"));
        const SourceModel* m = p.sourceModel();
        QVERIFY(m->rowCount() >= 4 && m->rowCount() <= 5);
        QCOMPARE(m->hottestRow(), 2);
        QCOMPARE(lineText(m, 2), QStringLiteral("hot_line();"));
        // nothing recorded and nothing bundled: says so instead of showing another file
        auto u = trace("", "/home/me/other.cu", 1);
        p.setKernel(u, nullptr);
        QCOMPARE(p.sourceFileBox()->currentData().toString(), QStringLiteral("other.cu"));
        QVERIFY(lineText(m, 0).contains(QStringLiteral("neither stored in this trace nor bundled")));
    }

    // A family rung recorded as a program (warpstage-record --rungs lce:3) carries a variant such as
    // "lce_fused_epilogue" that names no file: the panel shows the kernel's recorded file, not a missing one.
    void familyRungVariantIsNotAFileName()
    {
        auto t = trace("lce_fused_epilogue", "/work/kernels/lce/epilogue_warp.cu", 2);
        t->sources.push_back({"/work/kernels/lce/epilogue_warp.cu", "", "a\nhot();\n"});
        StallsPanel p;
        p.setKernel(t, nullptr);
        QCOMPARE(p.sourceFileBox()->currentData().toString(), QStringLiteral("epilogue_warp.cu"));
        QCOMPARE(lineText(p.sourceModel(), 1), QStringLiteral("hot();"));
    }

    // A kernel whose body lives in a header (the lce rungs: user_first.cu holds the __global__, lce_body.cuh the loop
    // almost every sample lands in): the panel opens on the file with the samples, not on the kernel's file, which
    // holds under a tenth of them (the bundled lce-h200.wstrace: 45 of 70,757 samples in user_first.cu).
    void opensTheFileWhereTheSamplesAre()
    {
        auto t = trace("lce_persistent", "/work/kernels/lce/lce_body.cuh", 3);
        t->sources.push_back({"/work/kernels/lce/user_first.cu", "", "__global__ void lceUserFirst();\n"});
        t->sources.push_back({"/work/kernels/lce/lce_body.cuh", "", "a\nb\nhot_loop();\n"});
        StallsPanel p;
        p.setKernel(t, nullptr);
        QCOMPARE(p.sourceFileBox()->currentData().toString(), QStringLiteral("lce_body.cuh"));
        QCOMPARE(lineText(p.sourceModel(), 2), QStringLiteral("hot_loop();"));
        // with a sample in the kernel's own file as well, its own file comes first again (the rule above)
        StallSample own;
        own.sourceFile = "/work/kernels/lce/user_first.cu";
        own.line = 1;
        own.count = 1;  // 1 of 8 attributed samples, over a tenth: the kernel's own file again
        own.reason = "smsp__pcsamp_warps_issue_stalled_barrier";
        t->stalls.push_back(own);
        p.setKernel(t, nullptr);
        QCOMPARE(p.sourceFileBox()->currentData().toString(), QStringLiteral("user_first.cu"));
        // a few samples in the entry file, most in the body: the body (1 of 71 is under a tenth)
        t->stalls[0].count = 70;
        p.setKernel(t, nullptr);
        QCOMPARE(p.sourceFileBox()->currentData().toString(), QStringLiteral("lce_body.cuh"));
        // more samples still in Warpstage's own trace header (inlined): never the file it opens on, but in the box
        StallSample tr;
        tr.sourceFile = "/work/kernels/include/warpstage/trace.cuh";
        tr.line = 1;
        tr.count = 500;
        tr.reason = "smsp__pcsamp_warps_issue_stalled_long_scoreboard";
        t->stalls.push_back(tr);
        t->sources.push_back({"/work/kernels/include/warpstage/trace.cuh", "", "clock();\n"});
        p.setKernel(t, nullptr);
        QCOMPARE(p.sourceFileBox()->currentData().toString(), QStringLiteral("lce_body.cuh"));
        QVERIFY(p.sourceFileBox()->findData(QStringLiteral("trace.cuh")) >= 0);
    }
};

QTEST_MAIN(TestStallsPanel)
#include "tst_stallspanel.moc"
