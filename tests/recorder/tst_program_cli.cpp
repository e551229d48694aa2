// `warpstage-record -- PROGRAM` without a GPU: bad input (missing / non-executable program, no CUDA call,
// bad output file, usage errors) with its exit codes and the output untouched; and the whole path
// spawn -> sinks -> runs -> file with tests/recorder/programs/fake_cuda_program, which writes what the
// injection library would (clean exit, exit code 3, SIGKILL, --timeout on a hang, a child process).
#include "warpstage/store.h"

#include <dlfcn.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

namespace {
struct Run {
    int code = -1;
    QString out, err;
};

Run runRecord(const QStringList& args, int timeoutMs = 60000)
{
    QProcess p;
    p.start(QStringLiteral(WARPSTAGE_RECORD_EXE), args);
    Run r;
    if (!p.waitForFinished(timeoutMs)) {
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
    static const bool have = [] {
        void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return false;
        using InitFn = int (*)(unsigned);
        using CountFn = int (*)(int*);
        auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
        auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
        int n = 0;
        return init && count && init(0) == 0 && count(&n) == 0 && n > 0;
    }();
    return have;
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

const QString kFake = QStringLiteral(WARPSTAGE_FAKE_PROGRAM);
}  // namespace

class TstProgramCli : public QObject {
    Q_OBJECT
private slots:
    void missingProgram_data()
    {
        QTest::addColumn<QString>("program");
        QTest::addColumn<QString>("message");
        QTest::newRow("absolute, missing") << "/nonexistent/prog" << "program '/nonexistent/prog' not found";
        QTest::newRow("not executable") << "/etc/passwd" << "program '/etc/passwd' is not an executable file";
        QTest::newRow("a folder") << "/tmp" << "program '/tmp' is not an executable file";
        QTest::newRow("not in PATH") << "warpstage-no-such-program-xyz" << "program 'warpstage-no-such-program-xyz' not found in PATH";
    }
    void missingProgram()
    {
        QFETCH(QString, program);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString out = dir.filePath("t.wstrace");
        const Run r = runRecord({"-o", out, "--", program, "arg"});
        QCOMPARE(r.code, 9);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY(!QFile::exists(out));
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).size(), 0);
    }

    void noCudaCall_data()
    {
        QTest::addColumn<QStringList>("program");
        QTest::newRow("/bin/true") << QStringList{"/bin/true"};
        QTest::newRow("sh exit 3") << QStringList{"/bin/sh", "-c", "exit 3"};
        QTest::newRow("NVTX only") << QStringList{kFake, "nvtxonly"};
    }
    void noCudaCall()
    {
        QFETCH(QStringList, program);
        QTemporaryDir dir;
        const QString out = dir.filePath("t.wstrace");
        const Run r = runRecord(QStringList{"-o", out, "--"} + program);
        QCOMPARE(r.code, haveGpu() ? 8 : 3);
        QVERIFY2(r.err.contains("the program made no CUDA call, nothing recorded"), qPrintable(r.err));
        QVERIFY(!QFile::exists(out));
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).size(), 0);  // sinks removed
    }

    void outputNotATrace()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("notes.txt");
        {
            QFile f(out);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("my notes, not a trace\n");
        }
        const QByteArray before = readAll(out);
        const Run r = runRecord({"-o", out, "--", kFake, "ok"});
        QCOMPARE(r.code, 5);
        QVERIFY2(r.err.contains("not an SQLite database") || r.err.contains("not a Warpstage"), qPrintable(r.err));
        QCOMPARE(readAll(out), before);
        // refused before the program ran: no sink folder, no "recording ..." line
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), QStringList{"notes.txt"});
        QVERIFY2(!r.err.contains("recording "), qPrintable(r.err));
    }

    void injectionLibraryMissing()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("t.wstrace");
        QProcess p;
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert("WARPSTAGE_INJECT_LIB", dir.filePath("no-such-libwarpstage-inject.so"));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(WARPSTAGE_RECORD_EXE), {"-o", out, "--", kFake, "ok"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains("libwarpstage-inject.so not found"));
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).size(), 0);
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("nothing after --") << QStringList{"-o", "x.ws", "--"};
        QTest::newRow("ladder option with a program") << QStringList{"-o", "x.ws", "-r", "sync", "--", "/bin/true"};
        QTest::newRow("program option without a program") << QStringList{"-o", "x.ws", "--timeout", "5"};
        QTest::newRow("timeout 0") << QStringList{"-o", "x.ws", "--timeout", "0", "--", "/bin/true"};
        QTest::newRow("timeout junk") << QStringList{"-o", "x.ws", "--timeout", "5s", "--", "/bin/true"};
        QTest::newRow("duration negative") << QStringList{"-o", "x.ws", "--duration", "-1", "--", "/bin/true"};
        QTest::newRow("launch range reversed") << QStringList{"-o", "x.ws", "--launch-range", "5:2", "--", "/bin/true"};
        QTest::newRow("launch range junk") << QStringList{"-o", "x.ws", "--launch-range", "a:b", "--", "/bin/true"};
        QTest::newRow("bad regex") << QStringList{"-o", "x.ws", "--kernels", "gemm(", "--", "/bin/true"};
        QTest::newRow("empty nvtx range") << QStringList{"-o", "x.ws", "--nvtx-range", "", "--", "/bin/true"};
        QTest::newRow("no output") << QStringList{"--", "/bin/true"};
    }
    void usageErrors()
    {
        QFETCH(QStringList, args);
        QTemporaryDir dir;
        QProcess p;
        p.setWorkingDirectory(dir.path());
        p.start(QStringLiteral(WARPSTAGE_RECORD_EXE), args);
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 2);
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).size(), 0);
    }

    // The whole path with the fake program: how it ends -> exit code, runs, reasons.
    void recordFake_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<int>("runs");
        QTest::addColumn<QString>("reason");
        QTest::newRow("ok") << QStringList{"--", kFake, "ok"} << 0 << 1 << "";
        QTest::newRow("exit 3") << QStringList{"--", kFake, "exit", "3"} << 7 << 1 << "exit code 3";
        QTest::newRow("SIGKILL") << QStringList{"--", kFake, "kill"} << 7 << 1 << "killed by SIGKILL (signal 9)";
        QTest::newRow("timeout") << QStringList{"--timeout", "1", "--", kFake, "hang"} << 7 << 1 << "timeout after 1 s";
        QTest::newRow("child") << QStringList{"--", kFake, "child"} << 0 << 2 << "";
    }
    void recordFake()
    {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(int, runs);
        QFETCH(QString, reason);
        QTemporaryDir dir;
        const QString out = dir.filePath("t.wstrace");
        QElapsedTimer t;
        t.start();
        const Run r = runRecord(QStringList{"-o", out} + args, 30000);
        QVERIFY2(r.code == code, qPrintable(QString("exit %1, stderr: %2").arg(r.code).arg(r.err)));
        QVERIFY(t.elapsed() < 15000);  // --timeout 1 stops the hang well before this
        auto store = ws::TraceStore::openReadOnly(out.toStdString());
        const auto all = store.runs();
        QCOMPARE(int(all.size()), runs);
        for (const auto& run : all) {
            QCOMPARE(store.kernels(run.id).size(), std::size_t(3));
            QCOMPARE(store.kernels(run.id)[0].name, std::string("fake()"));
        }
        QVERIFY2(QString::fromStdString(all[0].failureReason).startsWith(reason), all[0].failureReason.c_str());
        if (reason.isEmpty()) QCOMPARE(all[0].status, ws::RunStatus::Complete);
        QVERIFY(all[0].status != ws::RunStatus::Failed);
        // the sink folder is gone after a successful write
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), QStringList{"t.wstrace"});
    }

    void appendsAndKeepsEarlierRuns()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath("t.wstrace");
        QCOMPARE(runRecord({"-o", out, "--", kFake, "ok"}).code, 0);
        QCOMPARE(runRecord({"-o", out, "--", kFake, "kill"}).code, 7);
        QCOMPARE(runRecord({"-o", out, "--", "/bin/true"}).code, haveGpu() ? 8 : 3);  // nothing added, nothing lost
        auto store = ws::TraceStore::openReadOnly(out.toStdString());
        QCOMPARE(store.runs().size(), std::size_t(2));
    }

    // The stall pass with the fake program: its second run writes what the injection library's stall pass
    // would (samples of each selected fake() launch: a long_scoreboard and a _not_issued duplicate, count
    // 100 + launch index, pc 0x10 * (index + 1); a "cubin" that is none: no source lines).
    void stallPass_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("expected");  // launch index -> samples, for the 3 launches
        QTest::addColumn<QString>("stderrHas");
        QTest::addColumn<QString>("notesHave");
        QTest::newRow("all launches") << QStringList{"--kernels", "fak", "--", kFake, "ok"} << "100 101 102"
                                      << "stall pass: running the program a second time" << "303 samples on 3 launch(es)";
        QTest::newRow("launch range") << QStringList{"--kernels", "fak", "--launch-range", "1:1", "--", kFake, "ok"} << "0 101 0"
                                      << "(launches 1:1)" << "--launch-range 1:1";
        QTest::newRow("no stalls") << QStringList{"--kernels", "fak", "--no-stalls", "--", kFake, "ok"} << "0 0 0" << ""
                                   << "stalls: not recorded (--no-stalls)";
        QTest::newRow("no --kernels") << QStringList{"--", kFake, "ok"} << "0 0 0" << "" << "stalls: not recorded (no --kernels";
        QTest::newRow("no match") << QStringList{"--kernels", "^gemm", "--", kFake, "ok"} << "0 0 0"
                                  << "--kernels '^gemm' matched no kernel launch" << "--kernels matched no kernel launch";
        QTest::newRow("not deterministic") << QStringList{"--kernels", "fak", "--", kFake, "nondet"} << "100 101 102"
                                           << "'fake()' launched 3 time(s) in the timeline run and 4 in the stall run"
                                           << "the program is not deterministic?";
    }
    void stallPass()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, expected);
        QFETCH(QString, stderrHas);
        QFETCH(QString, notesHave);
        QTemporaryDir dir;
        const QString out = dir.filePath("t.wstrace");
        const Run r = runRecord(QStringList{"-o", out} + args, 30000);
        QVERIFY2(r.code == 0, qPrintable(QString("exit %1, stderr: %2").arg(r.code).arg(r.err)));
        QVERIFY2(r.err.contains(stderrHas), qPrintable(r.err));
        if (stderrHas.isEmpty()) QVERIFY2(!r.err.contains("stall pass"), qPrintable(r.err));
        auto store = ws::TraceStore::openReadOnly(out.toStdString());
        const auto runs = store.runs();
        QCOMPARE(int(runs.size()), 1);
        QVERIFY2(runs[0].notes.find(notesHave.toStdString()) != std::string::npos, runs[0].notes.c_str());
        const auto kernels = store.kernels(runs[0].id);
        QCOMPARE(int(kernels.size()), 3);
        QStringList got;
        for (const auto& k : kernels) {
            std::int64_t n = 0;
            for (const auto& s : store.stallSamples(k.id)) {
                // only the plain reason: the _not_issued duplicate is dropped; pc and missing source kept
                QCOMPARE(s.reason, std::string("smsp__pcsamp_warps_issue_stalled_long_scoreboard"));
                QVERIFY(!s.reasonLabel.empty());
                QCOMPARE(s.pcOffset, std::uint64_t(0x10 * (k.launchIndex + 1)));
                QCOMPARE(s.functionName, std::string("_Z4fakev"));
                QCOMPARE(s.line, 0);
                n += s.count;
            }
            got << QString::number(n);
        }
        QCOMPARE(got.join(' '), expected);
        QCOMPARE(runs[0].hasStalls, expected != "0 0 0");
        if (runs[0].hasStalls) QVERIFY2(runs[0].notes.find("without a source line") != std::string::npos, runs[0].notes.c_str());
        // no line, no source: the program path's stage mapping assigns nothing and says so (program_stages.h)
        if (runs[0].hasStalls)
            QVERIFY2(runs[0].notes.find("stage mapping: no source text of the sampled kernel(s) found") != std::string::npos,
                     runs[0].notes.c_str());
        // both sink folders are gone
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), QStringList{"t.wstrace"});
    }

    void stallPassProgressJson()
    {
        QTemporaryDir dir;
        const Run r = runRecord({"-o", dir.filePath("t.wstrace"), "--progress-json", "--kernels", "fake", "--", kFake, "ok"});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("\"pass\":\"program\"") && r.out.contains("\"pass\":\"stalls\""), qPrintable(r.out));
        QVERIFY2(r.out.contains("\"has_stalls\":true"), qPrintable(r.out));
        QVERIFY2(r.out.contains("{\"type\":\"message\",\"level\":\"info\",\"text\":\"stall pass: running the program a second time"),
                 qPrintable(r.out));
        for (const QString& line : r.out.split('\n', Qt::SkipEmptyParts)) QVERIFY2(line.startsWith('{'), qPrintable(line));
    }

    void progressJson()
    {
        QTemporaryDir dir;
        const Run r = runRecord({"-o", dir.filePath("t.wstrace"), "--progress-json", "--", kFake, "exit", "3"});
        QCOMPARE(r.code, 7);
        QVERIFY2(r.out.contains("\"type\":\"run\"") && r.out.contains("\"status\":\"incomplete\""), qPrintable(r.out));
        QVERIFY(r.out.contains("{\"type\":\"done\",\"exit_code\":7,\"runs_written\":1"));
        for (const QString& line : r.out.split('\n', Qt::SkipEmptyParts)) QVERIFY2(line.startsWith('{'), qPrintable(line));
    }
};

QTEST_GUILESS_MAIN(TstProgramCli)
#include "tst_program_cli.moc"
