// warpstage-record's command line and error paths, run as a child process (no GPU needed):
// exit codes, messages naming the problem, and nothing written when it stops early.
#include "warpstage/recorder.h"
#include "warpstage/rung_plan.h"
#include "warpstage/store.h"

#include <algorithm>
#include <atomic>
#include <sqlite3.h>

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "common/gpu_skip.h"
#include "common/record_run.h"

namespace {
using Run = ws::testing::RecordRun;

Run runRecord(const QStringList& args)
{
    return ws::testing::runRecordExe(QStringLiteral(WARPSTAGE_RECORD_EXE), args);
}

// Is there a CUDA GPU? Asked of the driver directly (libcuda: cuInit + cuDeviceGetCount), never of
// the recorder: a recorder that crashed or returned a wrong code must fail the no-GPU tests, not
// turn them into SKIPs. No libcuda.so.1, a failing cuInit or zero devices: no GPU.
bool haveGpu()
{
    static const bool have = ws::testing::gpuProblem().empty();  // (libcuda stays loaded: see gpu_skip.h)
    return have;
}

// What the recorder says when there is no GPU (checkEnvironment in kernels/recorder/recorder.cpp).
bool saysNoGpu(const QString& err)
{
    return err.contains("warpstage-record: error: no usable CUDA driver/GPU: cudaGetDeviceCount failed with ")
        || err.contains("warpstage-record: error: no CUDA device found");
}
}  // namespace

class TestRecordCli : public QObject {
    Q_OBJECT

private slots:
    void libraryRefusesBadOptionsBeforeTheGpu()
    {
        // ws::rec::record() is also called by programs other than warpstage-record (gpu_recorder, the GUI's
        // future in-process path): it checks its options itself, before any GPU or file access, whatever the
        // command line parser already did.
        QTemporaryDir dir;
        const std::atomic<bool> stop{false};
        auto run = [&](ws::rec::Options o) {
            o.output = (dir.path() + QStringLiteral("/lib.wstrace")).toStdString();
            return ws::rec::record(o, {}, stop);
        };
        ws::rec::Options o;
        o.rungs = {"no_such_rung"};
        auto r = run(o);
        QCOMPARE(r.exitCode, int(ws::rec::kExitUsage));
        QVERIFY2(QString::fromStdString(r.error).contains("no_such_rung"), r.error.c_str());
        o = {};
        o.rungs = {"pingpong"};
        o.repetitions = 101;
        r = run(o);
        QCOMPARE(r.exitCode, int(ws::rec::kExitUsage));
        QVERIFY2(QString::fromStdString(r.error).contains("repetitions"), r.error.c_str());
        o.repetitions = 0;
        QCOMPARE(run(o).exitCode, int(ws::rec::kExitUsage));
        QVERIFY(!QFile::exists(dir.path() + QStringLiteral("/lib.wstrace")));
    }

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
        for (const char* rung : {"sync", "tma_sync", "multistage", "warp_specialized", "cooperative", "pingpong", "streamk"})
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
            // numbers: the whole string must be a number in range (no atoi/strtol leniency)
            {{"-o", out, "--device", "abc"}, "bad --device 'abc'"},
            {{"-o", out, "--device", "1x"}, "bad --device '1x'"},
            {{"-o", out, "--device", "-1"}, "bad --device '-1'"},
            {{"-o", out, "--device", " 0"}, "bad --device ' 0'"},
            {{"-o", out, "--device", ""}, "bad --device ''"},
            {{"-o", out, "--device", "99999999999999999999"}, "bad --device"},
            {{"-o", out, "--device"}, "--device needs a number"},
            // past 2^64: a parser that wraps instead of refusing would read 0 / 1 / 1000
            {{"-o", out, "--device", "18446744073709551616"}, "bad --device '18446744073709551616'"},
            {{"-o", out, "-n", "18446744073709551617"}, "bad repetitions"},
            {{"-o", out, "--stall-samples", "18446744073709552616"}, "bad --stall-samples"},
            {{"-o", out, "--shape", "4294967552x256x256"}, "bad shape"},  // 2^32 + 256 as an int: 256
            {{"-o", out, "-n", "abc"}, "bad repetitions 'abc'"},
            {{"-o", out, "-n", "2.5"}, "bad repetitions '2.5'"},
            {{"-o", out, "-n", "101"}, "bad repetitions '101'"},
            {{"-o", out, "-n", "+3"}, "bad repetitions '+3'"},
            {{"-o", out, "--repetitions"}, "--repetitions needs a number"},
            {{"-o", out, "--stall-samples", "5k"}, "bad --stall-samples '5k'"},
            {{"-o", out, "--stall-samples", "999"}, "bad --stall-samples '999'"},
            {{"-o", out, "--stall-samples", "100000001"}, "bad --stall-samples"},
            {{"-o", out, "--stall-samples"}, "--stall-samples needs a number"},
            {{"-o", out, "--shape", "4096x4096x4096x1"}, "bad shape '4096x4096x4096x1'"},
            {{"-o", out, "--shape", "4096x4096x4096junk"}, "bad shape"},
            {{"-o", out, "--shape", "4096x-4096x4096"}, "bad shape"},
            {{"-o", out, "--shape", "4096x 4096x4096"}, "bad shape"},
            {{"-o", out, "--shape", "99999999999x256x256"}, "bad shape"},
            {{"-o", out, "--shape", "4096xx4096"}, "bad shape"},
            {{"-o", out, "--shape"}, "--shape needs MxNxK"},
            {{"-o", out, "--rungs"}, "--rungs needs"},
            {{"-o", out, "--ctas"}, "--ctas needs a list"},
            {{"-o", out, "--sms"}, "--sms needs a list"},
            {{"-o", out, "--ctas", "99999999999999999999"}, "too large"},
            {{"-o", out, "--sms", "0-99999999999"}, "too large"},
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

    void olderSchemaOutputExit5()
    {
        // A version-1 file is never appended to (nor migrated) by the recorder: exit 5, byte-identical.
        QTemporaryDir d;
        const QString path = d.filePath("old.wstrace");
        {
            ws::RunRecord run;
            run.info.variant = "sync";
            run.info.synthetic = true;
            auto store = ws::TraceStore::openForWriting(path.toStdString());
            store.writeRun(run);
        }
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
        const int rc = sqlite3_exec(db,
                                    "BEGIN; CREATE TABLE intervals(id INTEGER PRIMARY KEY, warp_id INTEGER NOT NULL, "
                                    "kind INTEGER NOT NULL, slot INTEGER NOT NULL DEFAULT -1, kstep INTEGER NOT NULL DEFAULT -1, "
                                    "start_ns INTEGER NOT NULL, duration_ns INTEGER NOT NULL); DROP TABLE interval_chunks; "
                                    "CREATE TABLE loads(id INTEGER PRIMARY KEY, kernel_id INTEGER NOT NULL, cta_id INTEGER NOT NULL, slot INTEGER NOT NULL DEFAULT -1, kstep INTEGER NOT NULL DEFAULT -1, issue_ns INTEGER NOT NULL, ready_ns INTEGER NOT NULL, bytes INTEGER NOT NULL DEFAULT 0); DROP TABLE load_chunks; DROP TABLE metric_chunks; DROP TABLE phase_names; DROP TABLE sources; DROP TABLE source_texts; "
                                    "PRAGMA user_version = 1; COMMIT;",
                                    nullptr, nullptr, nullptr);
        sqlite3_close(db);
        QCOMPARE(rc, SQLITE_OK);
        QCOMPARE(ws::TraceStore::checkFile(path.toStdString()).fileVersion, 1);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray before = f.readAll();
        f.close();
        const Run r = runRecord({"-o", path, "-r", "sync", "-s", "256x256x256"});
        QCOMPARE(r.code, 5);
        QVERIFY2(r.err.contains(path + ": schema version 1 is older"), qPrintable(r.err));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll() == before);
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

    // Issue 14: every rung on every shape. Every GEMM rung, the CUDA-core sync rung included, computes partial tiles,
    // so on 1000x1000x1000 all are recorded; a rung that cannot take a shape (K % 8 != 0: 16-byte rows) is skipped with
    // its sentence (exit 10 at the end: tst_lce_record mixes refused GEMM rungs with lce rungs); only when no selected
    // rung can take the shape: exit 2, nothing run.
    void rungsThatCannotTakeTheShapeAreSkipped()
    {
        const ws::ladder::Shape odd{1000, 1000, 1000};
        ws::rec::GemmRungPlan p = ws::rec::planGemmRungs({}, odd);  // --rungs all
        QVERIFY(p.error.empty());
        QVERIFY(p.skipped.empty());
        QCOMPARE(p.record.size(), ws::ladder::rungs().size());
        for (const auto& r : ws::ladder::rungs()) QCOMPARE(std::count(p.record.begin(), p.record.end(), r.name), 1L);
        p = ws::rec::planGemmRungs({"pingpong", "sync", "tma_sync"}, odd);  // the order given is kept
        QCOMPARE(p.record, (std::vector<std::string>{"pingpong", "sync", "tma_sync"}));
        p = ws::rec::planGemmRungs({}, ws::ladder::Shape{4096, 4096, 4096});
        QVERIFY(p.skipped.empty());
        QCOMPARE(p.record.size(), ws::ladder::rungs().size());
        const ws::ladder::Shape badK{1000, 1000, 1004};
        p = ws::rec::planGemmRungs({}, badK);  // K % 8 != 0: no rung can
        QVERIFY(p.record.empty());
        QCOMPARE(p.skipped.size(), ws::ladder::rungs().size());
        QCOMPARE(QString::fromStdString(p.skipped[0].rung), QStringLiteral("sync"));
        QVERIFY2(QString::fromStdString(p.skipped[0].why).contains("sync needs K a multiple of 8"), p.skipped[0].why.c_str());
        p = ws::rec::planGemmRungs({"sync", "nope"}, odd);
        QVERIFY(QString::fromStdString(p.error).contains("unknown rung 'nope'"));

        // The library: nothing it can record is a usage error before any GPU or file access.
        QTemporaryDir dir;
        const std::atomic<bool> stop{false};
        ws::rec::Options o;
        o.output = dir.filePath("odd.wstrace").toStdString();
        o.rungs = {"sync"};
        o.shape = badK;
        const auto r = ws::rec::record(o, {}, stop);
        QCOMPARE(r.exitCode, int(ws::rec::kExitUsage));
        QCOMPARE(r.rungsSkipped, 1);
        QVERIFY2(QString::fromStdString(r.error).contains("no selected rung can take the shape 1000x1000x1004: sync: sync needs"), r.error.c_str());
        QVERIFY(!QFile::exists(dir.filePath("odd.wstrace")));

        // The command line: sync alone on a K it cannot take is refused (2); on 1000x1000x1000 every rung goes past the
        // shape check (here to the GPU check), none skipped.
        Run c = runRecord({"-o", dir.filePath("odd.wstrace"), "-r", "sync", "-s", "1000x1000x1004"});
        QCOMPARE(c.code, 2);
        QVERIFY2(c.err.contains("no selected rung can take the shape"), qPrintable(c.err));
        if (haveGpu()) return;  // there it would record seven rungs: gpu_recorder's territory
        c = runRecord({"-o", dir.filePath("odd.wstrace"), "-s", "1000x1000x1000"});
        QVERIFY2(c.code == 3, qPrintable(QString::number(c.code) + ": " + c.err));
        QVERIFY2(!c.err.contains("skipped"), qPrintable(c.err));
        QVERIFY2(saysNoGpu(c.err), qPrintable(c.err));
        QVERIFY(!QFile::exists(dir.filePath("odd.wstrace")));
        // The exit code is documented in --help.
        c = runRecord({"--help"});
        QVERIFY2(c.out.contains("  10  finished, every run stored complete, but selected rungs that cannot take the shape"), qPrintable(c.out));
    }

    void noGpuExit3AndNothingWritten()
    {
        if (haveGpu()) QSKIP("a GPU is present (libcuda lists one): the no-GPU path cannot be exercised here");
        QTemporaryDir d;
        const QString out = d.filePath("new.wstrace");
        Run r = runRecord({"-o", out, "-r", "sync", "-s", "256x256x256"});
        QCOMPARE(r.code, 3);
        QVERIFY2(saysNoGpu(r.err), qPrintable(r.err));
        QVERIFY(!QFile::exists(out));
        // Valid numbers in every numeric option pass the parser and reach the GPU check (3, not 2).
        r = runRecord({"-o", out, "-r", "sync,pingpong", "-s", "1024x1024x512", "-n", "100", "--device", "0",
                       "--stall-samples", "1000", "--ctas", "0-3,7", "--sms", "0"});
        QVERIFY2(r.code == 3, qPrintable(QString::number(r.code) + ": " + r.err));
        QVERIFY2(saysNoGpu(r.err), qPrintable(r.err));
        QVERIFY(!QFile::exists(out));
        // A device index that does not exist is not a command-line error either: no GPU at all here.
        r = runRecord({"-o", out, "-r", "sync", "-s", "256x256x256", "--device", "7"});
        QCOMPARE(r.code, 3);
        QVERIFY2(saysNoGpu(r.err), qPrintable(r.err));
        // Machine-readable: a message line and a final done line with the exit code.
        r = runRecord({"--progress-json", "-o", out, "-r", "sync", "-s", "256x256x256"});
        QCOMPARE(r.code, 3);
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QVERIFY(!lines.isEmpty());
        QVERIFY2(lines.last().startsWith("{\"type\":\"done\",\"exit_code\":3"), qPrintable(lines.last()));
        QVERIFY2(lines.last().contains("\"runs_written\":0"), qPrintable(lines.last()));
        QVERIFY2(lines.first().startsWith("{\"type\":"), qPrintable(lines.first()));  // stdout: JSON lines only
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
        const QByteArray before = [&] {
            QFile f(QString::fromStdString(path));
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        QVERIFY(!before.isEmpty());
        const Run r = runRecord({"-o", QString::fromStdString(path), "-r", "sync", "-s", "256x256x256"});
        QCOMPARE(r.code, 3);
        QVERIFY2(saysNoGpu(r.err), qPrintable(r.err));
        QFile f(QString::fromStdString(path));
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll() == before);  // byte-identical
        const auto store = ws::TraceStore::openReadOnly(path);
        QCOMPARE(int(store.runs().size()), 1);
    }
};

QTEST_GUILESS_MAIN(TestRecordCli)
#include "tst_record_cli.moc"
