// Models of the viewer shell under QAbstractItemModelTester, on a synthetic
// ladder written to a temporary file: RunsModel, MetricsModel,
// MetricDeltaModel, SourceModel; plus the recorder progress parser and CLI parsers.
#include "cli.h"
#include "metricsmodel.h"
#include "recorddialog.h"
#include "rungcatalog.h"
#include "runsmodel.h"
#include "sourcemodel.h"
#include "tracedocument.h"

#include "warpstage/program.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace ws::ui;

class TestShellModels : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void runsModelTree();
    void runsModelProgramKernelNames();
    void metricsModel();
    void deltaModel();
    void sourceModel();
    void rungCatalog_data();
    void rungCatalog();
    void documentLoadsKernelAndDropsStale();
    void documentReportsBadFile();
    void progressLine();
    void cliParsers();

private:
    QTemporaryDir m_dir;
    QString m_file;
    FileContents m_fc;
};

void TestShellModels::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_file = m_dir.filePath(QStringLiteral("ladder.warpstage"));
    QString err;
    QVERIFY2(writeSyntheticLadder(m_file, &err, 8, 8), qPrintable(err));
    m_fc = readFileContents(m_file);
    QCOMPARE(m_fc.runs.size(), size_t(4));
    QVERIFY(m_fc.synthetic);
}

void TestShellModels::runsModelTree()
{
    RunsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    model.setContents(&m_fc);
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.columnCount(), int(RunsModel::ColumnCount));
    const QStringList rungs = {"sync", "multistage", "warp_specialized", "pingpong"};
    for (int r = 0; r < 4; ++r) {
        const QModelIndex run = model.index(r, 0);
        QCOMPARE(model.index(r, RunsModel::ColRung).data().toString(), rungs[r]);
        QVERIFY(model.data(run).toString().contains("synthetic"));
        // the run row summarises: TFLOP/s of the untraced launch, overlap of the traced one
        for (const auto& k : m_fc.runs[size_t(r)].kernels)
            if (!k.summary.launch.traced)
                QCOMPARE(model.index(r, RunsModel::ColTflops).data().toString(), QString::number(k.tflops, 'f', 1));
        QVERIFY(model.index(r, RunsModel::ColOverlap).data().toString().endsWith('%'));
        const int kernels = model.rowCount(run);
        QCOMPARE(size_t(kernels), m_fc.runs[size_t(r)].kernels.size());
        QVERIFY(kernels >= 1);
        bool sawTraced = false;
        for (int k = 0; k < kernels; ++k) {
            const QModelIndex ki = model.index(k, 0, run);
            QCOMPARE(ki.parent(), run);
            const qint64 id = ki.data(RunsModel::KernelIdRole).toLongLong();
            QVERIFY(id > 0);
            QCOMPARE(model.indexOfKernel(id), ki);
            const auto& info = m_fc.runs[size_t(r)].summary.info;
            QVERIFY(info.m > 0);
            QCOMPARE(model.index(k, RunsModel::ColShape, run).data().toString(),
                     QStringLiteral("%1×%2×%3").arg(info.m).arg(info.n).arg(info.k));
            if (ki.data(RunsModel::TracedRole).toBool()) {
                sawTraced = true;
                QCOMPARE(model.index(k, RunsModel::ColRung, run).data().toString(), rungs[r]);
                // stored metrics give TFLOP/s and overlap: numbers, not dashes
                const QString tf = model.index(k, RunsModel::ColTflops, run).data().toString();
                bool ok = false;
                tf.toDouble(&ok);
                QVERIFY2(ok, qPrintable(tf));
                QVERIFY(model.index(k, RunsModel::ColOverlap, run).data().toString().endsWith('%'));
            }
        }
        QVERIFY(sawTraced);
    }
    QVERIFY(!model.indexOfKernel(999999).isValid());
    model.setContents(nullptr);
    QCOMPARE(model.rowCount(), 0);
}

// A program run's kernels have no rung: the Rung column names the kernel (its family: no namespaces, template
// arguments or parameters), not "(library)" for every row.
void TestShellModels::runsModelProgramKernelNames()
{
    const QString file = m_dir.filePath(QStringLiteral("program.wstrace"));
    {
        auto store = ws::TraceStore::openForWriting(file.toStdString());
        ws::SyntheticProgramParams p;
        p.steps = 2;
        p.launchesPerStep = 5;
        ws::writeSyntheticProgram(store, p);
    }
    FileContents fc = readFileContents(file);
    QCOMPARE(fc.runs.size(), size_t(1));
    RunsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setContents(&fc);
    const QModelIndex run = model.index(0, 0);
    QVERIFY(model.rowCount(run) > 0);
    for (int k = 0; k < model.rowCount(run); ++k) {
        const QString shown = model.index(k, RunsModel::ColRung, run).data().toString();
        const auto& launch = fc.runs[0].kernels[size_t(k)].summary.launch;
        QVERIFY(launch.variant.empty());
        QCOMPARE(shown, QString::fromStdString(ws::kernelFamily(launch.name)));
        QVERIFY2(!shown.isEmpty() && !shown.contains('('), qPrintable(shown));
    }
}

static std::shared_ptr<const ws::KernelMetrics> metricsOf(const FileContents& fc, const QString& rung, LoadedKernel* out = nullptr)
{
    for (const auto& r : fc.runs)
        for (const auto& k : r.kernels)
            if (k.summary.launch.traced && QString::fromStdString(k.summary.launch.variant) == rung) {
                LoadedKernel lk = loadKernelNow(*fc.store, k.summary.launch.id);
                if (out)
                    *out = lk;
                return lk.metrics;
            }
    return {};
}

void TestShellModels::metricsModel()
{
    MetricsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto m = metricsOf(m_fc, "warp_specialized");
    QVERIFY(m);
    model.setMetrics(m);
    QVERIFY(model.rowCount() > 10);
    int overlapRow = -1;
    for (int r = 0; r < model.rowCount(); ++r)
        if (model.index(r, MetricsModel::ColKey).data().toString() == "compute_overlap_share")
            overlapRow = r;
    QVERIFY(overlapRow >= 0);
    QCOMPARE(model.index(overlapRow, 0).data(MetricsModel::ValueRole).toDouble(), m->total.computeOverlapShare);
    QCOMPARE(model.index(overlapRow, MetricsModel::ColValue).data().toString(),
             QStringLiteral("%1 %").arg(m->total.computeOverlapShare * 100, 0, 'f', 1));
    model.clear();
    QCOMPARE(model.rowCount(), 0);
}

void TestShellModels::deltaModel()
{
    MetricDeltaModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto a = metricsOf(m_fc, "sync");
    auto b = metricsOf(m_fc, "warp_specialized");
    QVERIFY(a && b);
    model.setMetrics(a, b);
    model.setLabels("A: sync", "B: warp_specialized");
    QCOMPARE(model.headerData(MetricDeltaModel::ColA, Qt::Horizontal).toString(), QStringLiteral("A: sync"));
    bool found = false;
    for (int r = 0; r < model.rowCount(); ++r) {
        if (model.index(r, 0).data(Qt::ToolTipRole).toString() != "compute_overlap_share")
            continue;
        found = true;
        const double d = model.index(r, MetricDeltaModel::ColDelta).data(MetricDeltaModel::DeltaRole).toDouble();
        QVERIFY(std::abs(d - (b->total.computeOverlapShare - a->total.computeOverlapShare)) < 1e-12);
        // the warp-specialized synthetic rung overlaps more than the synchronous one
        QVERIFY2(d > 0, qPrintable(QString::number(d)));
        QVERIFY(model.index(r, MetricDeltaModel::ColDelta).data().toString().startsWith('+'));
    }
    QVERIFY(found);
    model.setMetrics(a, nullptr);  // one side missing: dashes, no crash
    QCOMPARE(model.index(0, MetricDeltaModel::ColDelta).data().toString(), QStringLiteral("—"));
    model.setMetrics(nullptr, nullptr);
    QCOMPARE(model.rowCount(), 0);
}

void TestShellModels::sourceModel()
{
    SourceModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    std::vector<ws::StallSample> samples(3);
    samples[0].sourceFile = "/build/kernels/src/pingpong.cu";
    samples[0].line = 2;
    samples[0].count = 30;
    samples[0].role = ws::WarpRole::Consumer;
    samples[0].stage = "wait_data";
    samples[0].reasonLabel = "barrier";
    samples[1] = samples[0];
    samples[1].line = 3;
    samples[1].count = 10;
    samples[1].role = ws::WarpRole::Producer;
    samples[1].stage = "wait_slot";
    samples[2] = samples[0];
    samples[2].sourceFile = "other.cuh";  // not this file: not attributed
    samples[2].count = 5;
    model.setSource("pingpong.cu", "line one\nline two\nline three\n", samples);
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.totalSamples(), qint64(45));
    QCOMPARE(model.attributedSamples(), qint64(40));
    QCOMPARE(model.hottestRow(), 1);
    QCOMPARE(model.index(1, SourceModel::ColSamples).data(SourceModel::SamplesRole).toLongLong(), qint64(30));
    QCOMPARE(model.index(1, 0).data(SourceModel::HeatRole).toDouble(), 1.0);
    QCOMPARE(model.index(2, 0).data(SourceModel::HeatRole).toDouble(), 10.0 / 30.0);
    QCOMPARE(model.index(0, 0).data(SourceModel::HeatRole).toDouble(), 0.0);
    QVERIFY(model.index(1, SourceModel::ColCode).data(Qt::BackgroundRole).isValid());
    QVERIFY(!model.index(0, SourceModel::ColCode).data(Qt::BackgroundRole).isValid());
    auto st = model.stageOfRow(1);
    QVERIFY(st);
    QCOMPARE(st->role, ws::WarpRole::Consumer);
    QCOMPARE(st->kind, ws::IntervalKind::WaitData);
    st = model.stageOfRow(2);
    QVERIFY(st);
    QCOMPARE(st->kind, ws::IntervalKind::WaitSlot);
    QVERIFY(!model.stageOfRow(0));
    QVERIFY(!model.stageOfRow(99));
    model.clear();
    QCOMPARE(model.rowCount(), 0);
}

void TestShellModels::rungCatalog_data()
{
    QTest::addColumn<QString>("rung");
    for (const char* r : {"sync", "tma_sync", "multistage", "warp_specialized", "cooperative", "pingpong", "streamk"})
        QTest::newRow(r) << QString::fromLatin1(r);
}

void TestShellModels::rungCatalog()
{
    QFETCH(QString, rung);
    const RungText* t = findRungText(rung);
    QVERIFY(t);
    QCOMPARE(ws::ui::rungCatalog()[rungIndex(rung)].name, rung);
    QVERIFY(t->markdown.contains("## What changed from the rung below"));
    QVERIFY(t->markdown.contains("## What to look for"));
    QVERIFY(t->markdown.contains("## Which metric proves it"));
    QVERIFY(!t->title.isEmpty() && t->title != rung);
}

void TestShellModels::documentLoadsKernelAndDropsStale()
{
    TraceDocument doc;
    QSignalSpy opened(&doc, &TraceDocument::opened);
    doc.open(m_file);
    QVERIFY(opened.wait(20000));
    QCOMPARE(doc.contents().runs.size(), size_t(4));
    const qint64 a = doc.firstKernelOfRung("sync");
    const qint64 b = doc.firstKernelOfRung("pingpong");
    QVERIFY(a > 0 && b > 0 && a != b);
    QCOMPARE(doc.firstKernelOfRung("no_such_rung"), qint64(0));
    QSignalSpy loaded(&doc, &TraceDocument::kernelLoaded);
    QSignalSpy busy(&doc, &TraceDocument::busyChanged);
    doc.loadKernel(a);
    doc.loadKernel(b);  // supersedes a: only b's result may arrive
    QTRY_VERIFY_WITH_TIMEOUT(doc.pendingJobs() == 0, 20000);
    QCOMPARE(loaded.size(), 1);
    QCOMPARE(loaded.first().at(0).toLongLong(), b);
    auto trace = loaded.first().at(1).value<std::shared_ptr<const ws::KernelTrace>>();
    QVERIFY(trace);
    QCOMPARE(trace->launch.variant, std::string("pingpong"));
    QVERIFY(trace->intervalCount() > 0);
    QCOMPARE(busy.last().at(0).toBool(), false);
    // the timeline's facts come with the kernel, found on the worker (the GUI thread never walks the intervals)
    auto facts = loaded.first().at(3).value<std::shared_ptr<const ws::ui::TraceFacts>>();
    QVERIFY(facts);
    QCOMPARE(facts->firstStart, trace->firstStart());
    QCOMPARE(facts->lastEnd, trace->lastEnd());
    QVERIFY(facts->kinds[std::size_t(trace->lanes.front().kind.front())]);

    // a time-range analysis covers less compute than the whole kernel
    QSignalSpy ready(&doc, &TraceDocument::analysisReady);
    ws::Selection sel;
    sel.t0 = trace->launch.start;
    sel.t1 = trace->launch.start + (trace->launch.end - trace->launch.start) / 4;
    doc.analyze(trace, sel, 7);
    QVERIFY(ready.wait(20000));
    QCOMPARE(ready.first().at(0).toInt(), 7);
    auto part = ready.first().at(2).value<std::shared_ptr<const ws::KernelMetrics>>();
    auto whole = loaded.first().at(2).value<std::shared_ptr<const ws::KernelMetrics>>();
    QVERIFY(part && whole);
    QVERIFY(part->total.computeNs < whole->total.computeNs);
}

void TestShellModels::documentReportsBadFile()
{
    TraceDocument doc;
    QSignalSpy failed(&doc, &TraceDocument::openFailed);
    const QString bad = m_dir.filePath("notatrace.warpstage");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is not an SQLite file, just some text\n");
    f.close();
    doc.open(bad);
    QVERIFY(failed.wait(20000));
    QCOMPARE(failed.first().at(0).toString(), bad);
    const QString msg = failed.first().at(1).toString();
    QVERIFY2(msg.contains("notatrace.warpstage"), qPrintable(msg));  // core's message names the file
    QVERIFY(!doc.isOpen());
    doc.open(m_dir.filePath("missing.warpstage"));
    QVERIFY(failed.wait(20000));
    QVERIFY(failed.last().at(1).toString().contains("missing.warpstage"));
}

void TestShellModels::progressLine()
{
    RecordProgress p = parseProgressLine(R"J({"rung":"pingpong","pass":"timeline","percent":42.5,"message":"decoding"})J");
    QCOMPARE(p.rung, QStringLiteral("pingpong"));
    QCOMPARE(p.pass, QStringLiteral("timeline"));
    QCOMPARE(p.percent, 42.5);
    QCOMPARE(p.message, QStringLiteral("decoding"));
    QVERIFY(!p.done && !p.error);
    p = parseProgressLine(R"J({"event":"done","percent":100})J");
    QVERIFY(p.done);
    p = parseProgressLine(R"J({"error":"no GPU"})J");
    QVERIFY(p.error);
    QCOMPARE(p.message, QStringLiteral("no GPU"));
    // the recorder's documented protocol (docs/recording.md)
    p = parseProgressLine(R"J({"type":"progress","rung":"pingpong","rung_index":6,"rung_count":6,"pass":"stalls","step":"PC sampling (child process)","percent":91.7})J");
    QCOMPARE(p.rung, QStringLiteral("pingpong"));
    QCOMPARE(p.pass, QStringLiteral("stalls"));
    QCOMPARE(p.message, QStringLiteral("PC sampling (child process)"));
    QCOMPARE(p.percent, 91.7);
    p = parseProgressLine(R"J({"type":"done","exit_code":0,"runs_written":6,"runs_failed":0,"output":"ladder.wstrace","error":""})J");
    QVERIFY(p.done);
    QVERIFY(!p.error);
    QVERIFY(p.message.contains("6 run(s)"));
    p = parseProgressLine(R"J({"type":"done","exit_code":3,"runs_written":0,"runs_failed":0,"output":"x","error":"no sm_90 GPU"})J");
    QVERIFY(p.done && p.error);
    QCOMPARE(p.message, QStringLiteral("no sm_90 GPU"));
    p = parseProgressLine(R"J({"type":"message","level":"warning","text":"stalls skipped: no permission"})J");
    QVERIFY(!p.error);
    QCOMPARE(p.message, QStringLiteral("stalls skipped: no permission"));
    p = parseProgressLine("plain text line");
    QCOMPARE(p.percent, -1.0);
    QCOMPARE(p.message, QStringLiteral("plain text line"));
}

void TestShellModels::cliParsers()
{
    int w = 0, h = 0;
    QVERIFY(parseSize("1600x900", &w, &h));
    QCOMPARE(w, 1600);
    QCOMPARE(h, 900);
    QVERIFY(!parseSize("1600", &w, &h));
    QVERIFY(!parseSize("0x0", &w, &h));
    QVERIFY(!parseSize("99999x10", &w, &h));
    qint64 t = 0;
    QVERIFY(parseTimeNs("250us", &t));
    QCOMPARE(t, qint64(250000));
    QVERIFY(parseTimeNs("1.5ms", &t));
    QCOMPARE(t, qint64(1500000));
    QVERIFY(parseTimeNs("42", &t));
    QCOMPARE(t, qint64(42));
    QVERIFY(!parseTimeNs("12parsecs", &t));
    QCOMPARE(formatDuration(1234567.0), QStringLiteral("1.235 ms"));
    QCOMPARE(formatDuration(std::nan("")), QStringLiteral("—"));
}

QTEST_MAIN(TestShellModels)
#include "tst_shellmodels.moc"
