// RecordDialog drives a fake warpstage-record (a shell script speaking the
// documented --progress-json protocol): arguments, progress, success -> the
// file to open, failure exit codes, and cancel.
#include "recorddialog.h"
#include "rungcatalog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QWidget>
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
    void lceRungsAndShape();
    void lceDisabledWithoutDriver();
    void lceDriverFoundLikeTheRecorder();
    void skippedRungsExit10IsSuccess();

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
    QTRY_VERIFY_WITH_TIMEOUT(!dlg.isRunning(), 10000);
    QVERIFY(t.elapsed() < 8000);
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

// The lce family's rungs (issue 11) the way `warpstage-record --rungs lce:...` takes them, with their shape.
void TestRecordDialog::lceRungsAndShape()
{
    const QString driver = script("lce", "exit 0\n");
    qputenv("WARPSTAGE_LCE", driver.toUtf8());
    RecordDialog dlg(m_dir.filePath("lce.wstrace"));
    qunsetenv("WARPSTAGE_LCE");
    QCOMPARE(dlg.lceUnavailableReason(), QString());
    // Nothing of the family ticked: the GEMM ladder's arguments as before.
    QStringList a = dlg.arguments();
    QCOMPARE(a.mid(a.indexOf("--rungs"), 2), QStringList({"--rungs", "all"}));
    QVERIFY(!a.contains("--lce-shape"));
    QVERIFY(!a.contains("--lce-program"));
    // Two lce rungs beside every GEMM rung: one list, both shapes, the driver the dialog found.
    dlg.setLceRungChecked(0, true);
    dlg.setLceRungChecked(3, true);
    a = dlg.arguments();
    QCOMPARE(a.mid(a.indexOf("--rungs"), 2), QStringList({"--rungs", "all,lce:0,lce:3"}));
    QCOMPARE(a.mid(a.indexOf("--shape"), 2), QStringList({"--shape", "4096x4096x4096"}));
    QCOMPARE(a.mid(a.indexOf("--lce-shape"), 2), QStringList({"--lce-shape", "433x256x1178x866x1024x70"}));  // the benchmark point
    QCOMPARE(a.mid(a.indexOf("--lce-program"), 2), QStringList({"--lce-program", driver}));
    QVERIFY(!a.contains("--lce-shuffled"));
    // The family alone, every rung, another shape: lce:all and no GEMM shape (the recorder would refuse nothing,
    // but a --shape without GEMM rungs means nothing).
    dlg.setGemmRungsChecked(false);
    for (int r = 0; r < 5; ++r)
        dlg.setLceRungChecked(r, true);
    dlg.setLceShape(200, 264, 300, 200, 64, 8);
    a = dlg.arguments();
    QCOMPARE(a.mid(a.indexOf("--rungs"), 2), QStringList({"--rungs", "lce:all"}));
    QVERIFY(!a.contains("--shape"));
    QCOMPARE(a.mid(a.indexOf("--lce-shape"), 2), QStringList({"--lce-shape", "200x264x300x200x64x8"}));
    QCOMPARE(dlg.validationError(), QString());
    for (int r = 0; r < 5; ++r)
        dlg.setLceRungChecked(r, false);
    QVERIFY(dlg.validationError().contains("at least one rung"));
    dlg.setLceRungChecked(1, true);
    dlg.setLceRungChecked(4, true);
    a = dlg.arguments();
    QCOMPARE(a.mid(a.indexOf("--rungs"), 2), QStringList({"--rungs", "lce:1,lce:4"}));
    const QString shots = qEnvironmentVariable("WARPSTAGE_SCREENSHOT_DIR");
    if (!shots.isEmpty()) {
        dlg.setGemmRungsChecked(true);
        dlg.setLceShape(433, 256, 1178, 866, 1024, 70);
        dlg.show();
        QTest::qWait(100);
        dlg.grab().save(shots + "/record-dialog-lce.png");
    }
}

void TestRecordDialog::lceDisabledWithoutDriver()
{
    qputenv("WARPSTAGE_LCE", m_dir.filePath("no-such-lce").toUtf8());
    RecordDialog dlg(m_dir.filePath("nolce.wstrace"));
    qunsetenv("WARPSTAGE_LCE");
    QVERIFY2(dlg.lceUnavailableReason().contains("not an executable file"), qPrintable(dlg.lceUnavailableReason()));
    auto* inner = dlg.findChild<QWidget*>("lceInner");
    QVERIFY(inner);
    QVERIFY(!inner->isEnabled());
    // The sentence is shown, readable (not greyed with the disabled rungs).
    bool shown = false;
    for (auto* l : dlg.findChildren<QLabel*>())
        if (l->text() == dlg.lceUnavailableReason())
            shown = l->isEnabled();
    QVERIFY(shown);
    // Ticks of the unavailable family are never sent.
    dlg.setLceRungChecked(2, true);
    QStringList a = dlg.arguments();
    QCOMPARE(a.mid(a.indexOf("--rungs"), 2), QStringList({"--rungs", "all"}));
    QVERIFY(!a.contains("--lce-shape"));
    dlg.setGemmRungsChecked(false);
    QVERIFY(dlg.validationError().contains("at least one rung"));
    // No driver anywhere (no variable, no recorder): the sentence says what to build.
    dlg.setLceDriver(QString());
    QVERIFY2(dlg.lceUnavailableReason().contains("build the target 'lce'"), qPrintable(dlg.lceUnavailableReason()));
    const QString shots = qEnvironmentVariable("WARPSTAGE_SCREENSHOT_DIR");
    if (!shots.isEmpty()) {
        dlg.setGemmRungsChecked(true);
        dlg.show();
        QTest::qWait(100);
        dlg.grab().save(shots + "/record-dialog-lce-missing.png");
    }
}

void TestRecordDialog::lceDriverFoundLikeTheRecorder()
{
    qunsetenv("WARPSTAGE_LCE");
    QVERIFY(QDir(m_dir.path()).mkpath("inst/bin"));
    QVERIFY(QDir(m_dir.path()).mkpath("inst/lib/warpstage"));
    const QString rec = script("inst/bin/warpstage-record", "exit 0\n");
    QCOMPARE(findLceDriver(rec), QString());  // nothing there yet
    const QString installed = script("inst/lib/warpstage/lce", "exit 0\n");  // an install: ../lib/warpstage/lce
    QCOMPARE(findLceDriver(rec), QFileInfo(installed).canonicalFilePath());
    const QString beside = script("inst/bin/lce", "exit 0\n");  // next to the recorder comes first
    QCOMPARE(findLceDriver(rec), QFileInfo(beside).canonicalFilePath());
    QFile(beside).setPermissions(QFile::ReadOwner);  // not executable: not a driver
    QCOMPARE(findLceDriver(rec), QFileInfo(installed).canonicalFilePath());
    qputenv("WARPSTAGE_LCE", installed.toUtf8());
    QCOMPARE(findLceDriver(QString()), installed);
    qunsetenv("WARPSTAGE_LCE");
    QCOMPARE(findLceDriver(QString()), QString());
}

// Exit 10: every run stored, but rungs that cannot take the shape were skipped -- a file to open.
void TestRecordDialog::skippedRungsExit10IsSuccess()
{
    const QString fake = script("skip.sh",
        "echo '{\"type\":\"message\",\"level\":\"warning\",\"text\":\"sync skipped: it cannot take this shape\"}'\n"
        "echo '{\"type\":\"done\",\"exit_code\":10,\"runs_written\":6,\"runs_failed\":0,\"output\":\"x\",\"error\":\"1 rung(s) skipped: sync\"}'\n"
        "exit 10\n");
    RecordDialog dlg(m_dir.filePath("skip.wstrace"));
    dlg.setRecorder(fake);
    QSignalSpy recorded(&dlg, &RecordDialog::recorded);
    dlg.startRecording();
    QVERIFY(recorded.wait(10000));
    QCOMPARE(recorded.first().at(0).toString(), m_dir.filePath("skip.wstrace"));
    QVERIFY2(dlg.statusText().contains("skipped"), qPrintable(dlg.statusText()));
    QVERIFY(dlg.logText().contains("sync skipped"));
}
