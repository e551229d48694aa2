// The viewer's migrate-a-copy path (MainWindow::onOpenFailed): opening a file of an older schema
// asks whether to migrate a copy (answered here through setMigrationPrompt, no dialog); "yes"
// writes NAME.v<current>.warpstage next to it and opens it, "no" writes nothing. Either way the
// original stays byte-identical.
#include "mainwindow.h"

#include <warpstage/store.h>
#include <warpstage/synthetic.h>

#include <sqlite3.h>

#include <QCryptographicHash>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <tuple>

using namespace ws::ui;

namespace {

QByteArray fileHash(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

ws::RunRecord record()
{
    ws::SyntheticParams p;
    p.ctas = 3;
    p.smCount = 2;
    p.kstepsPerTile = 6;
    p.tilesPerCta = 2;
    return ws::generateSynthetic(p);
}

// A version-1 file built by hand (as tests/core/tst_migration.cpp does): write a current file, then
// replace the chunked interval storage by the old row-per-interval table with plain SQL.
bool makeVersion1(const QString& path, const ws::RunRecord& rec, QString* err)
{
    {
        auto st = ws::TraceStore::openForWriting(path.toStdString());
        st.writeRun(rec);
    }
    std::string sql = "BEGIN; CREATE TABLE intervals(id INTEGER PRIMARY KEY, warp_id INTEGER NOT NULL, kind INTEGER NOT NULL, "
                      "slot INTEGER NOT NULL DEFAULT -1, kstep INTEGER NOT NULL DEFAULT -1, start_ns INTEGER NOT NULL, "
                      "duration_ns INTEGER NOT NULL); ";
    // schema 4 packs loads (and per-CTA metrics): version 1 had loads as rows
    sql += "CREATE TABLE loads(id INTEGER PRIMARY KEY, kernel_id INTEGER NOT NULL, cta_id INTEGER NOT NULL, slot INTEGER NOT NULL DEFAULT -1, kstep INTEGER NOT NULL DEFAULT -1, issue_ns INTEGER NOT NULL, ready_ns INTEGER NOT NULL, bytes INTEGER NOT NULL DEFAULT 0); DROP TABLE load_chunks; DROP TABLE metric_chunks; DROP TABLE phase_names; DROP TABLE sources; DROP TABLE source_texts; ";
    {
        auto st = ws::TraceStore::openReadOnly(path.toStdString());
        for (const ws::KernelLaunch& k : st.kernels(st.runs()[0].id)) {
            const ws::KernelTrace t = st.loadKernel(k.id);
            for (const ws::LoadTransfer& x : t.loads)
                sql += "INSERT INTO loads(kernel_id, cta_id, slot, kstep, issue_ns, ready_ns, bytes) VALUES(" +
                       std::to_string(k.id) + "," + std::to_string(t.ctas[std::size_t(x.ctaId)].id) + "," +
                       std::to_string(x.slot) + "," + std::to_string(x.kstep) + "," + std::to_string(x.issue) + "," +
                       std::to_string(x.ready) + "," + std::to_string(x.bytes) + "); ";
            for (const ws::Lane& l : t.lanes)
                for (std::size_t i = 0; i < l.size(); ++i)
                    sql += "INSERT INTO intervals(warp_id, kind, slot, kstep, start_ns, duration_ns) VALUES(" +
                           std::to_string(l.warpId) + "," + std::to_string(int(l.kind[i])) + "," + std::to_string(l.slot[i]) +
                           "," + std::to_string(l.kstep[i]) + "," + std::to_string(l.start[i]) + "," +
                           std::to_string(l.duration[i]) + "); ";
        }
    }
    // and what schema 3 added (docs/schema.md): a version-1 file has none of it
    // and what schema 5 added (names interned, views in place of nvtx_ranges / api_spans)
    // and what schema 6 added (scope_spans)
    sql += "DROP TABLE scope_spans; ";
    sql += "DROP VIEW api_spans; DROP VIEW nvtx_ranges; DROP TABLE api_calls; DROP TABLE nvtx_events; DROP TABLE names; ";
    sql += "DROP TABLE interval_chunks; DROP TABLE streams; ";
    for (const char* c : {"kind", "pid", "parent_pid", "program", "working_dir", "device_ordinal", "device_uuid",
                          "process_start_ns", "process_end_ns", "exit_code", "exit_signal", "api_first_id", "api_last_id",
                          "nvtx_first_id", "nvtx_last_id"})
        sql += std::string("ALTER TABLE runs DROP COLUMN ") + c + "; ";
    for (const char* c : {"context_id", "graph_id", "graph_node_id", "launch_index"})
        sql += std::string("ALTER TABLE kernels DROP COLUMN ") + c + "; ";
    for (const char* c : {"context_id", "graph_id", "graph_node_id"})
        sql += std::string("ALTER TABLE memops DROP COLUMN ") + c + "; ";
    sql += "PRAGMA user_version = 1; COMMIT; VACUUM;";
    sqlite3* db = nullptr;
    if (sqlite3_open(path.toUtf8().constData(), &db) != SQLITE_OK) {
        *err = QStringLiteral("cannot open %1").arg(path);
        sqlite3_close(db);
        return false;
    }
    char* msg = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg);
    if (rc != SQLITE_OK)
        *err = QString::fromUtf8(msg ? msg : "sqlite error");
    sqlite3_free(msg);
    sqlite3_close(db);
    return rc == SQLITE_OK;
}

}  // namespace

class TestMigrateCopy : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void yesWritesACopyAndOpensIt();
    void noWritesNothing();

private:
    QTemporaryDir m_dir;
};

void TestMigrateCopy::initTestCase()
{
    QCoreApplication::setOrganizationName("WarpstageTest");
    QCoreApplication::setApplicationName("tst_migratecopy");
    qputenv("WARPSTAGE_NO_DIALOGS", "1");  // no box may ever block: the prompt is injected below
    QVERIFY(m_dir.isValid());
}

void TestMigrateCopy::yesWritesACopyAndOpensIt()
{
    const ws::RunRecord rec = record();
    const QString old = m_dir.filePath(QStringLiteral("old.warpstage"));
    QString err;
    QVERIFY2(makeVersion1(old, rec, &err), qPrintable(err));
    QCOMPARE(ws::TraceStore::checkFile(old.toStdString()).fileVersion, 1);
    const QByteArray before = fileHash(old);
    const QString expectedCopy = m_dir.filePath(QStringLiteral("old.v%1.warpstage").arg(ws::kSchemaVersion));
    QVERIFY(!QFile::exists(expectedCopy));

    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QStringList asked;
    w.setMigrationPrompt([&](const QString& message, const QString& copyPath) {
        asked << message << copyPath;
        return true;
    });
    QSignalSpy failed(&w, &MainWindow::fileOpenFailed);
    QSignalSpy opened(&w, &MainWindow::fileOpened);
    QSignalSpy shown(&w, &MainWindow::kernelShown);
    w.openFile(old);
    QTRY_VERIFY_WITH_TIMEOUT(opened.size() >= 1, 30000);
    // asked once, naming the file, the version and the copy it will write
    QCOMPARE(asked.size(), 2);
    QVERIFY2(asked[0].contains(old) && asked[0].contains(QStringLiteral("older Warpstage")), qPrintable(asked[0]));
    QCOMPARE(asked[1], expectedCopy);
    QCOMPARE(failed.size(), 1);  // the original itself did not open
    QCOMPARE(failed.first().at(0).toString(), old);
    // the copy is what opened, at the current schema; the original is unchanged
    QCOMPARE(opened.first().at(0).toString(), expectedCopy);
    QVERIFY(QFile::exists(expectedCopy));
    QCOMPARE(fileHash(old), before);
    QCOMPARE(ws::TraceStore::checkFile(old.toStdString()).fileVersion, 1);
    QCOMPARE(ws::TraceStore::checkFile(expectedCopy.toStdString()).fileVersion, ws::kSchemaVersion);
    // and it loads: the first traced kernel is shown with every interval of the record
    QTRY_VERIFY_WITH_TIMEOUT(shown.size() >= 1, 30000);
    QVERIFY(w.currentTrace());
    std::size_t expected = 0;
    for (const auto& k : rec.kernels)
        if (k.launch.traced) {
            expected = k.intervals.size();
            break;
        }
    QVERIFY(expected > 0);
    QCOMPARE(w.currentTrace()->intervalCount(), expected);
    QVERIFY2(!w.bannerText().contains(QStringLiteral("Migration failed")), qPrintable(w.bannerText()));

    // Opening the old file again: the first copy is kept, a second one gets the next free name.
    const QByteArray firstCopy = fileHash(expectedCopy);
    const QString second = m_dir.filePath(QStringLiteral("old.v%1-2.warpstage").arg(ws::kSchemaVersion));
    asked.clear();
    opened.clear();
    w.openFile(old);
    QTRY_VERIFY_WITH_TIMEOUT(opened.size() >= 1, 30000);
    QCOMPARE(asked.size(), 2);
    QCOMPARE(asked[1], second);
    QCOMPARE(opened.first().at(0).toString(), second);
    QCOMPARE(fileHash(expectedCopy), firstCopy);
    QCOMPARE(fileHash(old), before);
    QCOMPARE(ws::TraceStore::checkFile(second.toStdString()).fileVersion, ws::kSchemaVersion);
    QVERIFY2(!w.bannerText().contains(QStringLiteral("Migration failed")), qPrintable(w.bannerText()));
}

void TestMigrateCopy::noWritesNothing()
{
    const QString old = m_dir.filePath(QStringLiteral("keep.warpstage"));
    QString err;
    QVERIFY2(makeVersion1(old, record(), &err), qPrintable(err));
    const QByteArray before = fileHash(old);
    const QString copy = m_dir.filePath(QStringLiteral("keep.v%1.warpstage").arg(ws::kSchemaVersion));

    MainWindow w;
    w.show();
    int asked = 0;
    w.setMigrationPrompt([&](const QString&, const QString&) {
        ++asked;
        return false;
    });
    QSignalSpy failed(&w, &MainWindow::fileOpenFailed);
    QSignalSpy opened(&w, &MainWindow::fileOpened);
    w.openFile(old);
    QTRY_VERIFY_WITH_TIMEOUT(failed.size() >= 1, 30000);
    QCOMPARE(asked, 1);
    QTest::qWait(200);
    QCOMPARE(opened.size(), 0);
    QVERIFY(!QFile::exists(copy));
    QCOMPARE(fileHash(old), before);
    QVERIFY2(w.bannerText().contains(QStringLiteral("older Warpstage")), qPrintable(w.bannerText()));
}

QTEST_MAIN(TestMigrateCopy)
#include "tst_migratecopy.moc"
