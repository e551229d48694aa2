// warpstage-restage: re-assigns stored stall samples' role/stage with the current stage map (no GPU).
#include "fixture.h"

#include "warpstage/decode.h"
#include "warpstage/store.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QtTest>

using namespace ws;
using wsfix::BufferBuilder;

namespace {

// A miniature pingpong consumer: the main loop sits under the ordering wait.
const char* kMini =
    "__global__ void k() {\n"                                              // 1
    "    for (int i = 0; i < n; ++i) {\n"                                 // 2
    "        if (cw == 1) {\n"                                             // 3
    "            if constexpr (Traced) wt.event(tk::WaitOrder, fill);\n"   // 4
    "            namedBarSync(1, 256);\n"                                  // 5
    "        }\n"                                                          // 6
    "        for (int kt = 0; kt < KT; ++kt, ++fill) {\n"                  // 7
    "            if constexpr (Traced) wt.event(tk::WaitData, fill, slot);\n"  // 8
    "            mbarWait(&full[slot], phase);\n"                          // 9
    "            if constexpr (Traced) wt.event(tk::MmaIssue, fill, slot);\n"  // 10
    "        }\n"                                                          // 11
    "    }\n"                                                              // 12
    "}\n";                                                                 // 13

StallSample sample(std::uint64_t pc, int line, const char* stage, WarpRole role, std::int64_t count)
{
    StallSample s;
    s.pcOffset = pc;
    s.functionName = "_Z1kv";
    s.sourceFile = "kernels/src/mini.cu";
    s.line = line;
    s.reason = "smsp__pcsamp_warps_issue_stalled_wait";
    s.count = count;
    s.stage = stage;
    s.role = role;
    return s;
}

QByteArray sha(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

struct Result {
    int code = -1;
    QString out, err;
};

// env: the child's environment (default: this one's, where ctest sets WARPSTAGE_SOURCE_DIR to the checkout).
Result restage(const QStringList& args, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(WARPSTAGE_RESTAGE_EXE), args);
    p.waitForFinished(60000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

}  // namespace

class TestRestage : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_file;

    void writeFixture()
    {
        // The traced launch tells the roles: WaitOrder / WaitData / MmaIssue are consumer kinds.
        BufferBuilder b(1, 2, 8);
        const auto K = [](IntervalKind k) { return static_cast<std::uint8_t>(k); };
        b.cta(0, 1'000'000, 100, 1'010'000, 20'100, 0);
        b.warp(0, 0, 1, 0, 0, {{100, K(IntervalKind::IssueLoad), 0, 0}, {400, trace::kEventEnd}});
        b.warp(0, 1, 2, 1, 1,
               {{100, K(IntervalKind::WaitOrder), 0}, {200, K(IntervalKind::WaitData), 0, 0},
                {300, K(IntervalKind::MmaIssue), 0, 0}, {900, trace::kEventEnd}});
        KernelLaunch l;
        l.start = 5'000'000;
        l.end = 5'011'000;
        l.variant = "mini";
        decode::DecodeReport rep;
        KernelRecord traced = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), l, {}, rep);
        QVERIFY(rep.ok);
        KernelRecord untraced;
        untraced.launch = l;
        untraced.launch.traced = false;
        // as an older stage map filed them: the loop header (line 7) under the ordering wait above it
        untraced.stalls = {sample(0x10, 5, "wait_order", WarpRole::Consumer, 10),
                           sample(0x20, 7, "wait_order", WarpRole::Consumer, 300),
                           sample(0x30, 9, "wait_data", WarpRole::Consumer, 200)};
        RunRecord run;
        run.info.variant = "mini";
        run.info.synthetic = true;
        run.info.notes = "SYNTHETIC: restage fixture";
        run.info.hasStalls = true;
        run.kernels = {traced, untraced};
        QFile::remove(m_file);
        TraceStore::openForWriting(m_file.toStdString()).writeRun(run);
    }

    std::map<int, std::pair<std::string, WarpRole>> stagesByLine()
    {
        std::map<int, std::pair<std::string, WarpRole>> out;
        const TraceStore s = TraceStore::openReadOnly(m_file.toStdString());
        for (const auto& run : s.runs())
            for (const auto& k : s.kernels(run.id))
                for (const auto& st : s.stallSamples(k.id)) out[st.line] = {st.stage, st.role};
        return out;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY(QDir(m_dir.path()).mkpath("src/kernels/src"));
        QFile src(m_dir.filePath("src/kernels/src/mini.cu"));
        QVERIFY(src.open(QIODevice::WriteOnly));
        src.write(kMini);
        src.close();
        m_file = m_dir.filePath("mini.wstrace");
    }

    void dryRunChangesNothing()
    {
        writeFixture();
        const QByteArray before = sha(m_file);
        const Result r = restage({m_file, "--source-dir", m_dir.filePath("src"), "--dry-run"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("300 of 510 stall samples change"), qPrintable(r.out));
        QCOMPARE(sha(m_file), before);
    }

    void reassignsLoopHeaderSamples()
    {
        writeFixture();
        const Result r = restage({m_file, "--source-dir", m_dir.filePath("src")});
        QCOMPARE(r.code, 0);
        const auto st = stagesByLine();
        QCOMPARE(st.at(5).first, std::string("wait_order"));  // the ordering wait itself
        QCOMPARE(st.at(7).first, std::string("wait_data"));   // the loop header: its body's first stage
        QCOMPARE(st.at(7).second, WarpRole::Consumer);
        QCOMPARE(st.at(9).first, std::string("wait_data"));
        const TraceStore s = TraceStore::openReadOnly(m_file.toStdString());
        QVERIFY(s.runs().at(0).notes.find("re-assigned by warpstage-restage") != std::string::npos);
        // running it again finds nothing to change
        const Result again = restage({m_file, "--source-dir", m_dir.filePath("src")});
        QCOMPARE(again.code, 0);
        QVERIFY2(again.out.contains("0 samples re-assigned"), qPrintable(again.out));
    }

    // Where the sources come from: --source-dir, else WARPSTAGE_SOURCE_DIR, else the build's tree; the messages
    // say which one was used.
    void sourceDirFromOptionOrEnvironment()
    {
        writeFixture();
        const QString src = m_dir.filePath("src");
        QVERIFY(QDir(m_dir.path()).mkpath("empty"));
        const QString empty = m_dir.filePath("empty");  // a directory without kernels/src/mini.cu
        auto withSourceEnv = [](const QString& dir) {
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            if (dir.isNull())
                env.remove(QStringLiteral("WARPSTAGE_SOURCE_DIR"));
            else
                env.insert(QStringLiteral("WARPSTAGE_SOURCE_DIR"), dir);
            return env;
        };
        // the environment alone
        Result r = restage({m_file, "--dry-run"}, withSourceEnv(src));
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("300 of 510 stall samples change"), qPrintable(r.out));
        r = restage({m_file, "--dry-run"}, withSourceEnv(empty));
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("not found under " + empty + " (from WARPSTAGE_SOURCE_DIR); skipped"), qPrintable(r.out));
        // the option wins over the environment, both ways
        r = restage({m_file, "--source-dir", src, "--dry-run"}, withSourceEnv(empty));
        QVERIFY2(r.out.contains("300 of 510 stall samples change"), qPrintable(r.out));
        r = restage({m_file, "--source-dir", empty, "--dry-run"}, withSourceEnv(src));
        QVERIFY2(r.out.contains("not found under " + empty + " (from --source-dir); skipped"), qPrintable(r.out));
        // neither: this build's tree (which has no mini.cu)
        r = restage({m_file, "--dry-run"}, withSourceEnv(QString()));
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("(from this build's source tree); skipped"), qPrintable(r.out));
        // a source directory that is not one: exit 2, naming it and where it came from; the file is untouched
        const QByteArray before = sha(m_file);
        const QString nowhere = m_dir.filePath("nowhere");
        r = restage({m_file, "--source-dir", nowhere});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(nowhere + " (from --source-dir) is not a directory"), qPrintable(r.err));
        r = restage({m_file}, withSourceEnv(m_file));  // a file, not a directory
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("(from WARPSTAGE_SOURCE_DIR) is not a directory"), qPrintable(r.err));
        QCOMPARE(restage({m_file, "--source-dir"}).code, 2);
        QCOMPARE(sha(m_file), before);
    }

    // A recorded program's run (warpstage-record -- PROGRAM): its samples are re-assigned from the source texts
    // stored with the run (what their lines refer to), whatever --source-dir says; a program run without stored texts
    // is left as it is and the output says so.
    void programRunFromStoredSources()
    {
        writeFixture();
        const QString file = m_dir.filePath("program.wstrace");
        QFile::remove(file);
        BufferBuilder b(1, 2, 8);
        const auto K = [](IntervalKind k) { return static_cast<std::uint8_t>(k); };
        b.cta(0, 1'000'000, 100, 1'010'000, 20'100, 0);
        b.warp(0, 0, 1, 0, 0, {{100, K(IntervalKind::IssueLoad), 0, 0}, {400, trace::kEventEnd}});
        b.warp(0, 1, 2, 1, 1,
               {{100, K(IntervalKind::WaitOrder), 0}, {200, K(IntervalKind::WaitData), 0, 0},
                {300, K(IntervalKind::MmaIssue), 0, 0}, {900, trace::kEventEnd}});
        KernelLaunch l;
        l.start = 5'000'000;
        l.end = 5'011'000;
        l.name = "k()";
        decode::DecodeReport rep;
        KernelRecord traced = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), l, {}, rep);
        QVERIFY(rep.ok);
        traced.launch.traced = true;
        KernelRecord sampled;
        sampled.launch = l;
        sampled.launch.correlationId = 2;
        const char* where = "/home/user/proj/mini.cu";  // the line info's path: not under any source dir
        for (auto& smp : std::vector<StallSample>{sample(0x10, 5, "", WarpRole::Unknown, 10), sample(0x20, 7, "", WarpRole::Unknown, 300),
                                                  sample(0x30, 9, "", WarpRole::Unknown, 200)}) {
            smp.sourceFile = where;
            sampled.stalls.push_back(smp);
        }
        RunRecord run;
        run.info.kind = RunKind::Program;
        run.info.variant = "program";
        run.info.synthetic = true;
        run.info.hasStalls = true;
        run.kernels = {traced, sampled};
        RunRecord bare = run;  // the same without its sources
        run.sources = {{where, QCryptographicHash::hash(QByteArray(kMini), QCryptographicHash::Sha256).toHex().toStdString(), kMini}};
        {
            TraceStore out = TraceStore::openForWriting(file.toStdString());
            out.writeRun(run);
            out.writeRun(bare);
        }
        QVERIFY(QDir(m_dir.path()).mkpath("empty"));
        const Result r = restage({file, "--source-dir", m_dir.filePath("empty")});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("(program, program): 510 of 510 stall samples change role/stage (1 source file(s)"), qPrintable(r.out));
        QVERIFY2(r.out.contains("no source text stored with the run: nothing to map"), qPrintable(r.out));
        const TraceStore s = TraceStore::openReadOnly(file.toStdString());
        const auto runs = s.runs();
        QCOMPARE(runs.size(), std::size_t(2));
        std::map<int, std::pair<std::string, WarpRole>> first, second;
        for (const auto& k : s.kernels(runs[0].id))
            for (const auto& st : s.stallSamples(k.id)) first[st.line] = {st.stage, st.role};
        for (const auto& k : s.kernels(runs[1].id))
            for (const auto& st : s.stallSamples(k.id)) second[st.line] = {st.stage, st.role};
        QCOMPARE(first.at(5).first, std::string("wait_order"));
        QCOMPARE(first.at(7).first, std::string("wait_data"));
        QCOMPARE(first.at(9).first, std::string("wait_data"));
        QCOMPARE(first.at(9).second, WarpRole::Consumer);
        QCOMPARE(second.at(7).first, std::string());  // no text: nothing assigned
        QCOMPARE(second.at(7).second, WarpRole::Unknown);
    }

    void badInput()
    {
        QCOMPARE(restage({}).code, 2);
        QCOMPARE(restage({m_file, "--bogus"}).code, 2);
        const Result missing = restage({m_dir.filePath("nope.wstrace"), "--source-dir", m_dir.filePath("src")});
        QCOMPARE(missing.code, 1);
        QVERIFY2(missing.err.contains("nope.wstrace"), qPrintable(missing.err));
        QFile junk(m_dir.filePath("junk.wstrace"));
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write("not a database at all, just text");
        junk.close();
        const QByteArray before = sha(junk.fileName());
        QCOMPARE(restage({junk.fileName(), "--source-dir", m_dir.filePath("src")}).code, 1);
        QCOMPARE(sha(junk.fileName()), before);
    }
};

QTEST_GUILESS_MAIN(TestRestage)
#include "tst_restage.moc"
