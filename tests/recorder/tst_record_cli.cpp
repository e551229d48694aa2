// warpstage-record's command line and error paths, run as a child process (no GPU needed):
// exit codes, messages naming the problem, and nothing written when it stops early.
#include "warpstage/store.h"

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {
struct Run {
    int code = -1;
    QString out, err;
};

Run runRecord(const QStringList& args)
{
    QProcess p;
    p.start(QStringLiteral(WARPSTAGE_RECORD_EXE), args);
    Run r;
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

bool haveGpu()
{
    // Without a GPU the recorder says so with exit code 3 before doing anything.
    QTemporaryDir d;
    const Run r = runRecord({"--no-stalls", "-r", "sync", "-s", "256x256x256", "-o", d.filePath("probe.wstrace")});
    return r.code != 3;
}
}  // namespace

class TestRecordCli : public QObject {
    Q_OBJECT

private slots:
    void helpAndVersion()
    {
        Run r = runRecord({"--help"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("Usage: warpstage-record"));
        QVERIFY(r.out.contains("Exit codes"));
        QVERIFY(r.out.contains("--progress-json"));
        r = runRecord({"--version"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.startsWith("warpstage-record "));
        r = runRecord({"--list-rungs"});
        QCOMPARE(r.code, 0);
        for (const char* rung : {"sync", "tma_sync", "multistage", "warp_specialized", "cooperative", "pingpong"})
            QVERIFY2(r.out.contains(rung), rung);
    }

    void badArgumentsExit2()
    {
        QTemporaryDir d;
        const QString out = d.filePath("x.wstrace");
        struct Case {
            QStringList args;
            const char* says;
        };
        const Case cases[] = {
            {{"-o", out, "--rungs", "nonsense"}, "unknown rung 'nonsense'"},
            {{"-o", out, "--shape", "4096x4096"}, "bad shape '4096x4096'"},
            {{"-o", out, "--shape", "0x1x1"}, "bad shape"},
            {{"-o", out, "-n", "0"}, "bad repetitions"},
            {{"-o", out, "--ctas", "9-3"}, "runs backwards"},
            {{"-o", out, "--sms", "x"}, "not a list of indices"},
            {{"--frobnicate"}, "unknown option '--frobnicate'"},
            {{"-r", "sync"}, "no output file"},
            {{"-o"}, "needs a file name"},
        };
        for (const auto& c : cases) {
            const Run r = runRecord(c.args);
            QVERIFY2(r.code == 2, qPrintable(c.args.join(' ') + " -> " + QString::number(r.code)));
            QVERIFY2(r.err.contains(c.says), qPrintable(r.err));
            QVERIFY2(!QFile::exists(out), "a file was written on a usage error");
        }
    }

    void notAWarpstageFileExit5()
    {
        QTemporaryDir d;
        const QString path = d.filePath("notes.txt");
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("just some text, not SQLite\n");
        }
        const Run r = runRecord({"-o", path, "-r", "sync", "-s", "256x256x256"});
        QCOMPARE(r.code, 5);
        QVERIFY2(r.err.contains(path), qPrintable(r.err));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("just some text, not SQLite\n"));  // untouched
    }

    void unwritableFolderExit5()
    {
        const Run r = runRecord({"-o", "/nonexistent-dir-ws/x.wstrace", "-r", "sync", "-s", "256x256x256"});
        QCOMPARE(r.code, 5);
        QVERIFY2(r.err.contains("/nonexistent-dir-ws"), qPrintable(r.err));
    }

    void unsupportedShapeExit2()
    {
        // Checked before anything else (no GPU needed): the rung says why.
        QTemporaryDir d;
        const Run r = runRecord({"-o", d.filePath("x.wstrace"), "-r", "pingpong", "-s", "100x100x100"});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("pingpong"), qPrintable(r.err));
        QVERIFY(!QFile::exists(d.filePath("x.wstrace")));
    }

    void noGpuExit3AndNothingWritten()
    {
        if (haveGpu()) QSKIP("a GPU is present: the no-GPU path cannot be exercised here");
        QTemporaryDir d;
        const QString out = d.filePath("new.wstrace");
        Run r = runRecord({"-o", out, "-r", "sync", "-s", "256x256x256"});
        QCOMPARE(r.code, 3);
        QVERIFY2(r.err.contains("GPU") || r.err.contains("CUDA"), qPrintable(r.err));
        QVERIFY(!QFile::exists(out));
        // Machine-readable: a message line and a final done line with the exit code.
        r = runRecord({"--progress-json", "-o", out, "-r", "sync", "-s", "256x256x256"});
        QCOMPARE(r.code, 3);
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QVERIFY(!lines.isEmpty());
        QVERIFY2(lines.last().startsWith("{\"type\":\"done\",\"exit_code\":3"), qPrintable(lines.last()));
        QVERIFY(!QFile::exists(out));
    }

    void existingFileUntouchedWithoutGpu()
    {
        if (haveGpu()) QSKIP("a GPU is present");
        QTemporaryDir d;
        const std::string path = d.filePath("keep.wstrace").toStdString();
        {
            ws::RunRecord run;
            run.info.variant = "sync";
            run.info.synthetic = true;
            run.info.notes = "SYNTHETIC: placeholder for the CLI test";
            auto store = ws::TraceStore::openForWriting(path);
            store.writeRun(run);
        }
        const Run r = runRecord({"-o", QString::fromStdString(path), "-r", "sync", "-s", "256x256x256"});
        QCOMPARE(r.code, 3);
        const auto store = ws::TraceStore::openReadOnly(path);
        QCOMPARE(int(store.runs().size()), 1);
    }
};

QTEST_GUILESS_MAIN(TestRecordCli)
#include "tst_record_cli.moc"
