// `warpstage info` text: runs, kernels and metrics, text and JSON.
#include "testutil.h"
#include "warpstage/analysis.h"
#include "warpstage/report.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace ws;

class TestReport : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::string m_path;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_path = (m_dir.path() + "/report \"quoted\".wstrace").toStdString();
        SyntheticParams p;
        p.ctas = 4;
        p.smCount = 4;
        p.kstepsPerTile = 8;
        auto st = TraceStore::openForWriting(m_path);
        const RowId run = st.writeRun(generateSynthetic(p));
        st.writeMetrics(run, computeRunMetrics(st, run));
    }

    void text()
    {
        const std::string t = describeFile(m_path, false);
        QVERIFY(t.find("1 run") != std::string::npos);
        QVERIFY(t.find("warp_specialized") != std::string::npos);
        QVERIFY(t.find("SYNTHETIC") != std::string::npos);
        QVERIFY(t.find("[traced]") != std::string::npos);
        QVERIFY(t.find("compute_overlap_share = ") != std::string::npos);
        QVERIFY(t.find("achieved_tflops = ") != std::string::npos);
    }

    void json()
    {
        const std::string j = describeFile(m_path, true);
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(j), &err);
        QVERIFY2(err.error == QJsonParseError::NoError, qPrintable(err.errorString() + "\n" + QString::fromStdString(j)));
        const QJsonObject o = doc.object();
        QCOMPARE(o["file"].toString().toStdString(), m_path);
        QCOMPARE(o["schema_version"].toInt(), kSchemaVersion);
        const QJsonArray runs = o["runs"].toArray();
        QCOMPARE(runs.size(), 1);
        const QJsonObject r = runs[0].toObject();
        QCOMPARE(r["synthetic"].toBool(), true);
        QCOMPARE(r["kind"].toString(), QStringLiteral("ladder"));
        QCOMPARE(r["launches"].toInteger(), 2);
        QCOMPARE(r["status"].toString(), QStringLiteral("complete"));
        QCOMPARE(r["kernels"].toArray().size(), 2);
        QVERIFY(r["kernels"].toArray()[0].toObject()["intervals"].toInteger() > 0);
        bool overlap = false;
        for (const auto& m : r["metrics"].toArray()) {
            const QJsonObject mo = m.toObject();
            if (mo["scope"].toString() == "kernel" && mo["name"].toString() == "compute_overlap_share") {
                overlap = true;
                QVERIFY(mo["value"].toDouble() > 0 && mo["value"].toDouble() <= 1);
            }
        }
        QVERIFY(overlap);
    }

    void emptyFileJsonIsValid()
    {
        const auto p = (m_dir.path() + "/empty.wstrace").toStdString();
        { auto st = TraceStore::openForWriting(p); }
        const std::string j = describeFile(p, true);
        QJsonParseError err;
        QJsonDocument::fromJson(QByteArray::fromStdString(j), &err);
        QVERIFY2(err.error == QJsonParseError::NoError, j.c_str());
        QVERIFY(describeFile(p, false).find("0 runs") != std::string::npos);
    }

    void errors()
    {
        QVERIFY_THROWS_EXCEPTION(StoreError, describeFile((m_dir.path() + "/nope.wstrace").toStdString(), false));
    }

    void jsonEscaping()
    {
        QCOMPARE(jsonEscape("a\"b\\c\n\x01"), std::string("a\\\"b\\\\c\\n\\u0001"));
    }
};

QTEST_GUILESS_MAIN(TestReport)
#include "tst_report.moc"
