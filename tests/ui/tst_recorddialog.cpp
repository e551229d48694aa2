// RecordDialog drives a fake warpstage-record (a shell script speaking the
// documented --progress-json protocol): arguments, progress, success -> the
// file to open, failure exit codes, and cancel.
#include "recorddialog.h"
#include "rungcatalog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace ws::ui;

class TestRecordDialog : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void arguments();
    void progressAndSuccess();
    void failureExitCode();
    void cancel();
    void unavailableReasonWithoutGpu();
    void programArguments();
    void programValidation();
    void programRunsInWorkingDirectory();

private:
    QString script(const QString& name, const QByteArray& body);
    QTemporaryDir m_dir;
};

void TestRecordDialog::initTestCase()
{
    QVERIFY(m_dir.isValid());
}

QString TestRecordDialog::script(const QString& name, const QByteArray& body)
{
    const QString path = m_dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write("#!/bin/sh\n" + body);
    f.close();
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
}

void TestRecordDialog::arguments()
{
    RecordDialog dlg(m_dir.filePath("out.wstrace"));
    const QStringList a = dlg.arguments();
    QCOMPARE(a.mid(a.indexOf("--output"), 2), QStringList({"--output", m_dir.filePath("out.wstrace")}));
    QCOMPARE(a.mid(a.indexOf("--rungs"), 2), QStringList({"--rungs", "all"}));
    QCOMPARE(a.mid(a.indexOf("--shape"), 2), QStringList({"--shape", "4096x4096x4096"}));
    QVERIFY(a.contains("--progress-json"));
    QVERIFY(!a.contains("--no-stalls"));
}

void TestRecordDialog::progressAndSuccess()
{
    const QString out = m_dir.filePath("ok.wstrace");
    const QString fake = script("ok.sh",
        "echo \"$@\" > \"$0.args\"\n"
        "echo '{\"type\":\"progress\",\"rung\":\"sync\",\"rung_index\":1,\"rung_count\":2,\"pass\":\"timeline\",\"step\":\"traced launch\",\"percent\":25}'\n"
        "echo 'human text on stderr' >&2\n"
        "echo '{\"type\":\"run\",\"rung\":\"sync\",\"run_id\":1,\"status\":\"complete\",\"has_stalls\":true}'\n"
        "echo '{\"type\":\"progress\",\"rung\":\"pingpong\",\"pass\":\"stalls\",\"step\":\"PC sampling\",\"percent\":90}'\n"
        "echo '{\"type\":\"done\",\"exit_code\":0,\"runs_written\":2,\"runs_failed\":0,\"output\":\"x\",\"error\":\"\"}'\n"
        "exit 0\n");
    QVERIFY(!fake.isEmpty());
    RecordDialog dlg(out);
    dlg.setRecorder(fake);
    QSignalSpy recorded(&dlg, &RecordDialog::recorded);
    dlg.startRecording();
    QVERIFY(dlg.isRunning());
    QVERIFY(recorded.wait(10000));
    QCOMPARE(recorded.first().at(0).toString(), out);
    QCOMPARE(dlg.progressValue(), 100);
    QVERIFY(!dlg.isRunning());
    QVERIFY(dlg.logText().contains("pingpong · stalls · PC sampling"));
    QVERIFY(dlg.logText().contains("run 1 stored (complete)"));
    QVERIFY(dlg.logText().contains("human text on stderr"));
    const QString shots = qEnvironmentVariable("WARPSTAGE_SCREENSHOT_DIR");
    if (!shots.isEmpty()) {
        dlg.show();
        QTest::qWait(50);
        dlg.grab().save(shots + "/record-dialog.png");
    }
    QFile args(fake + ".args");
    QVERIFY(args.open(QIODevice::ReadOnly));
    QVERIFY(args.readAll().contains("--progress-json"));
}

void TestRecordDialog::failureExitCode()
{
    const QString fake = script("fail.sh",
        "echo '{\"type\":\"done\",\"exit_code\":3,\"runs_written\":0,\"runs_failed\":0,\"output\":\"x\",\"error\":\"no sm_90 GPU\"}'\n"
        "exit 3\n");
    RecordDialog dlg(m_dir.filePath("fail.wstrace"));
    dlg.setRecorder(fake);
    QSignalSpy recorded(&dlg, &RecordDialog::recorded);
    dlg.startRecording();
    QTRY_VERIFY_WITH_TIMEOUT(!dlg.isRunning(), 10000);
    QCOMPARE(recorded.size(), 0);
    QVERIFY2(dlg.statusText().contains("exit code 3"), qPrintable(dlg.statusText()));
    QVERIFY(dlg.logText().contains("no sm_90 GPU"));
}

void TestRecordDialog::cancel()
{
    const QString fake = script("slow.sh",
        "echo '{\"type\":\"progress\",\"rung\":\"sync\",\"pass\":\"timeline\",\"step\":\"warm-up\",\"percent\":5}'\n"
        "exec sleep 30\n");
    RecordDialog dlg(m_dir.filePath("slow.wstrace"));
    dlg.setRecorder(fake);
    QSignalSpy recorded(&dlg, &RecordDialog::recorded);
    dlg.startRecording();
    QTRY_COMPARE_WITH_TIMEOUT(dlg.progressValue(), 5, 10000);
    QElapsedTimer t;
    t.start();
    dlg.cancelRecording();
    QTRY_VERIFY_WITH_TIMEOUT(!dlg.isRunning(), 25000);
    // the fake recorder sleeps 30 s: stopping well before that proves the cancel (20 s leaves room for a loaded
    // sanitizer run under ctest -j2; a cancel that waited for the sleep would take 30 s)
    QVERIFY2(t.elapsed() < 20000, qPrintable(QStringLiteral("%1 ms").arg(t.elapsed())));
    QCOMPARE(recorded.size(), 0);
    QVERIFY2(dlg.statusText().startsWith("Cancelled"), qPrintable(dlg.statusText()));
}

void TestRecordDialog::unavailableReasonWithoutGpu()
{
    if (QFileInfo::exists("/dev/nvidiactl") || QFileInfo::exists("/dev/nvidia0"))
        QSKIP("this machine has a GPU");
    const QString why = recordUnavailableReason();
    QVERIFY2(why.contains("GPU"), qPrintable(why));
}

QTEST_MAIN(TestRecordDialog)
#include "tst_recorddialog.moc"

void TestRecordDialog::programArguments()
{
    RecordDialog dlg(m_dir.filePath("prog.wstrace"));
    dlg.setMode(RecordDialog::Mode::Program);
    QCOMPARE(dlg.mode(), RecordDialog::Mode::Program);
    dlg.setCommandLine(QStringLiteral("python3 \"my script.py\" --steps 3"));
    dlg.setKernelRegex(QStringLiteral("gemm|flash"));
    dlg.setStallPass(false);
    QCOMPARE(dlg.arguments(), QStringList({"-o", m_dir.filePath("prog.wstrace"), "--kernels", "gemm|flash", "--no-stalls",
                                           "--progress-json", "--", "python3", "my script.py", "--steps", "3"}));
    // no regex, stall pass on: neither option; a relative output is made absolute (the program may start elsewhere)
    RecordDialog rel(QStringLiteral("rel.wstrace"));
    rel.setMode(RecordDialog::Mode::Program);
    rel.setCommandLine(QStringLiteral("./app"));
    QCOMPARE(rel.arguments(), QStringList({"-o", QDir::current().absoluteFilePath("rel.wstrace"), "--progress-json", "--", "./app"}));
    // back to the ladder: the ladder's options again
    rel.setMode(RecordDialog::Mode::Ladder);
    QVERIFY(rel.arguments().contains("--rungs"));
    QVERIFY(!rel.arguments().contains("--"));
}

void TestRecordDialog::programValidation()
{
    RecordDialog dlg(m_dir.filePath("v.wstrace"));
    dlg.setMode(RecordDialog::Mode::Program);
    QVERIFY(dlg.validationError().contains("command line"));
    dlg.setCommandLine(QStringLiteral("python3 x.py"));
    QCOMPARE(dlg.validationError(), QString());
    dlg.setKernelRegex(QStringLiteral("gemm("));
    QVERIFY(dlg.validationError().contains("regex"));
    dlg.setKernelRegex(QString());
    dlg.setWorkingDirectory(m_dir.filePath("no-such-dir"));
    QVERIFY(dlg.validationError().contains("no-such-dir"));
    // start() refuses and says why, without starting anything
    dlg.setRecorder(QStringLiteral("/bin/true"));
    dlg.startRecording();
    QVERIFY(!dlg.isRunning());
    QVERIFY(dlg.statusText().contains("no-such-dir"));
}

void TestRecordDialog::programRunsInWorkingDirectory()
{
    QVERIFY(QDir(m_dir.path()).mkpath("work"));
    const QString work = m_dir.filePath("work");
    const QString fake = script("prog.sh",
        "echo \"$@\" > \"$0.args\"\n"
        "pwd > \"$0.pwd\"\n"
        "echo '{\"type\":\"progress\",\"rung\":\"python3\",\"pass\":\"program\",\"step\":\"running\",\"percent\":40}'\n"
        "echo '{\"type\":\"run\",\"rung\":\"python3\",\"run_id\":1,\"status\":\"incomplete\"}'\n"
        "echo '{\"type\":\"done\",\"exit_code\":7,\"runs_written\":1,\"runs_failed\":0,\"output\":\"x\",\"error\":\"\"}'\n"
        "exit 7\n");
    RecordDialog dlg(m_dir.filePath("p.wstrace"));
    dlg.setRecorder(fake);
    dlg.setMode(RecordDialog::Mode::Program);
    dlg.setCommandLine(QStringLiteral("python3 train.py"));
    dlg.setWorkingDirectory(work);
    QSignalSpy recorded(&dlg, &RecordDialog::recorded);
    dlg.startRecording();
    QVERIFY(recorded.wait(10000));  // exit 7 (a run stored INCOMPLETE) is still a file to open
    QCOMPARE(recorded.first().at(0).toString(), m_dir.filePath("p.wstrace"));
    QVERIFY2(dlg.statusText().contains("INCOMPLETE"), qPrintable(dlg.statusText()));
    QFile pwd(fake + ".pwd");
    QVERIFY(pwd.open(QIODevice::ReadOnly));
    QCOMPARE(QFileInfo(QString::fromUtf8(pwd.readAll().trimmed())).canonicalFilePath(), QFileInfo(work).canonicalFilePath());
    QFile args(fake + ".args");
    QVERIFY(args.open(QIODevice::ReadOnly));
    QVERIFY(args.readAll().trimmed().endsWith("-- python3 train.py"));
}
