// The ladder's sources built into the recorder (kernels/sources, issue 10 "self-contained traces"): found
// from a folder outside the tree with no WARPSTAGE_SOURCE_DIR, byte-identical (SHA-256) to the files, and
// enough for the stall-to-stage mapping. No GPU, no CUDA.
#include "warpstage/ladder_sources.h"
#include "warpstage/stage_map.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cstdlib>
#include <unistd.h>

using namespace ws;

namespace {

const QString kRoot = QStringLiteral(WARPSTAGE_TEST_SOURCE_ROOT);

QByteArray fileBytes(const QString& rel)
{
    QFile f(kRoot + "/" + rel);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

std::string sha(const QByteArray& b)
{
    return QCryptographicHash::hash(b, QCryptographicHash::Sha256).toHex().toStdString();
}

// What the recorder must carry: kernels/src/*.cu, *.cuh and kernels/include/warpstage/*.h, *.cuh.
QStringList expectedFiles()
{
    QStringList out;
    for (const auto& [dir, filters] : {std::pair{QStringLiteral("kernels/src"), QStringList{"*.cu", "*.cuh"}},
                                       std::pair{QStringLiteral("kernels/include/warpstage"), QStringList{"*.h", "*.cuh"}}})
        for (const QString& n : QDir(kRoot + "/" + dir).entryList(filters, QDir::Files)) out << dir + "/" + n;
    return out;
}

}  // namespace

class TestLadderSources : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        // As an installed recorder runs: from elsewhere, with no hint where a checkout is.
        ::unsetenv("WARPSTAGE_SOURCE_DIR");
        QVERIFY(m_elsewhere.isValid());
        QVERIFY(::chdir(QFile::encodeName(m_elsewhere.path()).constData()) == 0);
    }

    void everyFileBuiltInAndIdentical()
    {
        const QStringList want = expectedFiles();
        QVERIFY2(want.size() >= 12, qPrintable(QString::number(want.size())));
        QCOMPARE(int(ladder::embeddedSources().size()), int(want.size()));
        for (const QString& rel : want) {
            const ladder::EmbeddedSource* e = ladder::embeddedSource(rel.toStdString());
            QVERIFY2(e, qPrintable(rel + " is not built in"));
            QCOMPARE(sha(QByteArray(e->text.data(), qsizetype(e->text.size()))), sha(fileBytes(rel)));
        }
        QVERIFY(!ladder::embeddedSource("kernels/src/nonexistent.cu"));
    }

    void rungSourcesWithoutTheTree()
    {
        const auto src = ladder::ladderSources("kernels/src/pingpong.cu");
        QCOMPARE(src.origin, std::string("built in"));
        QVERIFY2(src.problem.empty(), src.problem.c_str());
        QVERIFY(src.files.size() >= 3);  // the rung, hopper.cuh, wgmma_ops.cuh
        QCOMPARE(src.files[0].path, std::string("kernels/src/pingpong.cu"));
        QStringList paths;
        for (const auto& f : src.files) {
            paths << QString::fromStdString(f.path);
            QCOMPARE(f.sha256, sha(fileBytes(QString::fromStdString(f.path))));
            QCOMPARE(f.sha256.size(), std::size_t(64));
        }
        QVERIFY(paths.contains("kernels/src/hopper.cuh"));
        QVERIFY(paths.contains("kernels/src/wgmma_ops.cuh"));
        QVERIFY(!paths.contains("kernels/src/sync.cu"));

        // The stage map from the built-in texts is the one the checkout gives.
        const auto mine = ladder::ladderStageMap(src);
        const auto disk = decode::StageMap::fromFile("kernels/src/pingpong.cu", (kRoot + "/kernels/src/pingpong.cu").toStdString());
        QVERIFY(!mine.empty());
        QCOMPARE(mine.stageCount(), disk.stageCount());
        QCOMPARE(mine.helperFunctionCount(), disk.helperFunctionCount());
        QVERIFY(mine.helperFunctionCount() > 0);
        for (int line = 1; line < 400; ++line) QCOMPARE(mine.stageAt(line), disk.stageAt(line));
        QVERIFY(mine.matchesFile("/some/other/checkout/kernels/src/pingpong.cu"));

        // Rungs 6 and 7 run one body (kernels/src/pingpong_body.cuh): its lines map to stages like the rung's own,
        // the Ring's calls included, so the stall pass keeps the producer/consumer context there.
        QCOMPARE(mine.bodyCount(), std::size_t(1));
        const QStringList body = QString::fromUtf8(fileBytes(QStringLiteral("kernels/src/pingpong_body.cuh"))).split(QLatin1Char('\n'));
        auto stageOfLineWith = [&](const char* text) {
            std::optional<IntervalKind> st;
            for (int i = 0; i < body.size(); ++i)
                if (body[i].contains(QLatin1String(text)) && !body[i].trimmed().startsWith(QLatin1String("//"))) {
                    const bool found = mine.lineStage("/elsewhere/kernels/src/pingpong_body.cuh", i + 1, st);
                    return found ? st : std::optional<IntervalKind>();
                }
            return std::optional<IntervalKind>();
        };
        QCOMPARE(stageOfLineWith("ring.waitSlot("), std::optional<IntervalKind>(IntervalKind::WaitSlot));
        QCOMPARE(stageOfLineWith("ring.issueLoad("), std::optional<IntervalKind>(IntervalKind::IssueLoad));
        QCOMPARE(stageOfLineWith("ring.waitData("), std::optional<IntervalKind>(IntervalKind::WaitData));
        QCOMPARE(stageOfLineWith("mmaKStep<"), std::optional<IntervalKind>(IntervalKind::MmaIssue));
        QCOMPARE(stageOfLineWith("wgmmaWait<1>"), std::optional<IntervalKind>(IntervalKind::MmaWait));
        QCOMPARE(stageOfLineWith("storeAccTmaBf16<"), std::optional<IntervalKind>(IntervalKind::Store));

        // Stream-K's flag helpers are named after their stages: the finisher's spin is WaitPartial, the publish Fixup.
        const auto sk = ladder::ladderStageMap(ladder::ladderSources("kernels/src/streamk.cu"));
        const QStringList flags = QString::fromUtf8(fileBytes(QStringLiteral("kernels/src/streamk_flags.cuh"))).split(QLatin1Char('\n'));
        auto helperStageOfLineWith = [&](const char* text) {
            for (int i = 0; i < flags.size(); ++i)
                if (flags[i].contains(QLatin1String(text)) && !flags[i].trimmed().startsWith(QLatin1String("//")))
                    return sk.helperStageAt("/x/kernels/src/streamk_flags.cuh", i + 1, std::nullopt, true);
            return std::optional<IntervalKind>();
        };
        QCOMPARE(helperStageOfLineWith("ld.acquire.gpu"), std::optional<IntervalKind>(IntervalKind::WaitPartial));
        QCOMPARE(helperStageOfLineWith("st.release.gpu"), std::optional<IntervalKind>(IntervalKind::Fixup));

        // Rungs 2-5 call the shared pieces (common/ring.cuh, common/mma.cuh): their calls open the stages in the
        // rung's own file, as the event lines they replaced did.
        for (const char* rung : {"tma_sync", "multistage", "warp_specialized", "cooperative"}) {
            const QString rel = QStringLiteral("kernels/src/%1.cu").arg(QLatin1String(rung));
            const auto map = ladder::ladderStageMap(ladder::ladderSources(rel.toStdString()));
            const QStringList text = QString::fromUtf8(fileBytes(rel)).split(QLatin1Char('\n'));
            auto stageOf = [&](const char* needle) {
                for (int i = 0; i < text.size(); ++i)
                    if (text[i].contains(QLatin1String(needle)) && !text[i].trimmed().startsWith(QLatin1String("//")))
                        return map.stageAt(i + 1);
                return std::optional<IntervalKind>();
            };
            QCOMPARE(stageOf(".issueLoad("), std::optional<IntervalKind>(IntervalKind::IssueLoad));
            QCOMPARE(stageOf(".waitData("), std::optional<IntervalKind>(IntervalKind::WaitData));
            QCOMPARE(stageOf("mmaIssueBf16<"), std::optional<IntervalKind>(IntervalKind::MmaIssue));
            QCOMPARE(stageOf("mmaWait<"), std::optional<IntervalKind>(IntervalKind::MmaWait));
            if (QLatin1String(rung) == QLatin1String("warp_specialized") || QLatin1String(rung) == QLatin1String("cooperative")) {
                QCOMPARE(stageOf("ring.waitSlot("), std::optional<IntervalKind>(IntervalKind::WaitSlot));
                QCOMPARE(stageOf("ring.release("), std::optional<IntervalKind>(IntervalKind::Release));
            } else {
                QCOMPARE(stageOf("tSync = wt.now()"), std::optional<IntervalKind>(IntervalKind::Sync));  // the k-step's barrier
            }
        }
    }

    void unknownRungSaysSo()
    {
        const auto src = ladder::ladderSources("kernels/src/nonexistent.cu");
        QVERIFY(src.files.empty());
        QVERIFY(src.problem.find("not built into this recorder") != std::string::npos);
        QVERIFY(ladder::ladderStageMap(src).empty());
    }

    void sourceDirOverridesTheBuiltIn()
    {
        QTemporaryDir d;
        QVERIFY(QDir(d.path()).mkpath("kernels/src"));
        QFile f(d.path() + "/kernels/src/sync.cu");
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("// an edited checkout\n");
        f.close();
        const auto src = ladder::ladderSources("kernels/src/sync.cu", d.path().toStdString());
        QCOMPARE(src.origin, d.path().toStdString());
        QVERIFY(!src.files.empty());
        QCOMPARE(src.files[0].text, std::string("// an edited checkout\n"));
        QCOMPARE(src.files.size(), std::size_t(1));  // that checkout has no helpers
        const auto missing = ladder::ladderSources("kernels/src/pingpong.cu", d.path().toStdString());
        QVERIFY(missing.files.empty());
        QVERIFY(missing.problem.find("not found in") != std::string::npos);
    }

private:
    QTemporaryDir m_elsewhere;
};

QTEST_GUILESS_MAIN(TestLadderSources)
#include "tst_ladder_sources.moc"
