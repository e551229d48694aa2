// `warpstage export` and `warpstage info` as a user runs them (child processes, no display):
// every export option must show in the output (SVG text parsed with QXmlStreamReader, PNG
// chunks), PNG/SVG/PDF are byte-identical run to run, numbers on the command line are parsed
// strictly, and every documented exit code (0..4) is reached with a message naming the problem.
#include "common/record_run.h"
#include "tracedocument.h"

#include <warpstage/store.h>
#include <warpstage/synthetic.h>

#include <sqlite3.h>

#include <QFile>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtEndian>
#include <QtTest>

#include <algorithm>

namespace {

using Run = ws::testing::RecordRun;  // code -1: crashed or timed out

// The headless environment every `warpstage` subcommand here runs in.
QProcessEnvironment headlessEnvironment()
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("DISPLAY"), QString());  // headless subcommands must not need a display
    env.insert(QStringLiteral("WAYLAND_DISPLAY"), QString());
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    return env;
}

Run warpstage(const QStringList& args)
{
    return ws::testing::runRecordExe(QStringLiteral(WARPSTAGE_EXE), args, headlessEnvironment());
}

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Everything an SVG says in words: the text of its <text>/<tspan> elements (one entry per
// element, trimmed) and its <title>.
struct SvgText {
    QStringList texts;
    QString title;
    QString viewBox;
    bool ok = false;
};

SvgText parseSvg(const QString& path)
{
    SvgText s;
    QXmlStreamReader x(readAll(path));
    QString cur;
    int depth = 0;  // inside <text>
    while (!x.atEnd()) {
        x.readNext();
        if (x.isStartElement()) {
            if (x.name() == QLatin1String("svg"))
                s.viewBox = x.attributes().value(QLatin1String("viewBox")).toString();
            else if (x.name() == QLatin1String("title"))
                s.title = x.readElementText().trimmed();
            else if (x.name() == QLatin1String("text")) {
                ++depth;
                cur.clear();
            }
        } else if (x.isCharacters() && depth > 0) {
            cur += x.text();
        } else if (x.isEndElement() && x.name() == QLatin1String("text")) {
            --depth;
            if (!cur.trimmed().isEmpty())
                s.texts << cur.trimmed();
        }
    }
    s.ok = !x.hasError() && !s.viewBox.isEmpty();
    return s;
}

QStringList matching(const QStringList& l, const QString& re)
{
    const QRegularExpression r(re);
    QStringList o;
    for (const QString& s : l)
        if (r.match(s).hasMatch())
            o << s;
    return o;
}

// Time-axis tick labels ("0 µs", "12.5 µs", "250 ns", "1.2 ms") as ns.
QList<double> tickTimes(const QStringList& texts)
{
    static const QRegularExpression re(QStringLiteral("^(-?[0-9]+(?:\\.[0-9]+)?) (ns|µs|ms|s)$"));
    QList<double> t;
    for (const QString& s : texts) {
        const auto m = re.match(s);
        if (!m.hasMatch())
            continue;
        const QString u = m.captured(2);
        const double scale = u == QLatin1String("ns") ? 1 : u == QStringLiteral("µs") ? 1e3 : u == QLatin1String("ms") ? 1e6 : 1e9;
        t << m.captured(1).toDouble() * scale;
    }
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());  // the top and the bottom axis carry the same labels
    return t;
}

// PNG: width/height from IHDR, pixels per metre from pHYs (0 if absent).
struct PngInfo {
    quint32 w = 0, h = 0, ppmX = 0, ppmY = 0;
    int unit = -1;
};

PngInfo pngInfo(const QByteArray& b)
{
    PngInfo p;
    if (!b.startsWith("\x89PNG\r\n\x1a\n"))
        return p;
    qsizetype i = 8;
    while (i + 12 <= b.size()) {
        const quint32 len = qFromBigEndian<quint32>(b.constData() + i);
        const QByteArray type = b.mid(i + 4, 4);
        const char* d = b.constData() + i + 8;
        if (type == "IHDR" && len >= 8) {
            p.w = qFromBigEndian<quint32>(d);
            p.h = qFromBigEndian<quint32>(d + 4);
        } else if (type == "pHYs" && len == 9) {
            p.ppmX = qFromBigEndian<quint32>(d);
            p.ppmY = qFromBigEndian<quint32>(d + 4);
            p.unit = quint8(d[8]);
        } else if (type == "IDAT" || type == "IEND") {
            break;
        }
        i += 12 + qsizetype(len);
    }
    return p;
}

bool rawExec(const QString& path, const std::string& sql, QString* err)
{
    sqlite3* db = nullptr;
    if (sqlite3_open(path.toUtf8().constData(), &db) != SQLITE_OK) {
        sqlite3_close(db);
        *err = QStringLiteral("cannot open %1").arg(path);
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

class TestCliExport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void runnerUsesTheHeadlessEnvironment();
    void lanesFilterShows();
    void rangeSetsTheTimeAxis();
    void runAndKernelPickTheKernel();
    void titleAppears();
    void sizeIsTheImageSize();
    void dpiIsWrittenIntoThePng();
    void deterministic_data();
    void deterministic();
    void exitCodes_data();
    void exitCodes();
    void olderSchemaExit4();
    void migrateWritesACopy();
    void whatIfAndCriticalPathInTheFigure();

private:
    QString path(const QString& n) const { return m_dir.filePath(n); }
    SvgText exportSvg(const QString& name, const QStringList& extra);

    QTemporaryDir m_dir;
    QString m_file;  // synthetic ladder, 4 runs
    QString m_v1;    // the same kind of file at schema version 1
    std::vector<ws::RunInfo> m_runs;
    std::vector<std::vector<ws::KernelLaunch>> m_kernels;  // per run, in m_runs order
};

void TestCliExport::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_file = path(QStringLiteral("ladder.warpstage"));
    QString err;
    QVERIFY2(ws::ui::writeSyntheticLadder(m_file, &err, 8, 8), qPrintable(err));
    const auto store = ws::TraceStore::openReadOnly(m_file.toStdString());
    m_runs = store.runs();
    QVERIFY(m_runs.size() >= 3);
    std::sort(m_runs.begin(), m_runs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    for (const auto& r : m_runs)
        m_kernels.push_back(store.kernels(r.id));
    // distinct rungs, so a title tells which run was drawn
    QVERIFY(m_runs.front().variant != m_runs.back().variant);

    // An older schema: a current file whose interval storage is rewritten as the version-1
    // row-per-interval table (as tests/core/tst_migration.cpp builds one).
    m_v1 = path(QStringLiteral("old-v1.warpstage"));
    ws::SyntheticParams p;
    p.ctas = 2;
    p.smCount = 2;
    p.kstepsPerTile = 4;
    p.tilesPerCta = 1;
    {
        auto st = ws::TraceStore::openForWriting(m_v1.toStdString());
        st.writeRun(ws::generateSynthetic(p));
    }
    QVERIFY2(rawExec(m_v1,
                     "BEGIN; CREATE TABLE intervals(id INTEGER PRIMARY KEY, warp_id INTEGER NOT NULL, kind INTEGER NOT NULL, "
                     "slot INTEGER NOT NULL DEFAULT -1, kstep INTEGER NOT NULL DEFAULT -1, start_ns INTEGER NOT NULL, "
                     "duration_ns INTEGER NOT NULL); DROP TABLE interval_chunks; "
                     // schema 4 packs loads: version 1 had them as rows
                     "CREATE TABLE loads(id INTEGER PRIMARY KEY, kernel_id INTEGER NOT NULL, cta_id INTEGER NOT NULL, slot INTEGER NOT NULL DEFAULT -1, kstep INTEGER NOT NULL DEFAULT -1, issue_ns INTEGER NOT NULL, ready_ns INTEGER NOT NULL, bytes INTEGER NOT NULL DEFAULT 0); DROP TABLE load_chunks; DROP TABLE metric_chunks; DROP TABLE phase_names; DROP TABLE sources; DROP TABLE source_texts; PRAGMA user_version = 1; COMMIT;",
                     &err),
             qPrintable(err));
    QCOMPARE(ws::TraceStore::checkFile(m_v1.toStdString()).fileVersion, 1);
}

SvgText TestCliExport::exportSvg(const QString& name, const QStringList& extra)
{
    const QString out = path(name + QStringLiteral(".svg"));
    QFile::remove(out);
    const Run r = warpstage(QStringList{QStringLiteral("export"), m_file, QStringLiteral("--out"), out} + extra);
    if (r.code != 0) {
        qWarning("export %s failed (%d): %s", qPrintable(extra.join(' ')), r.code, qPrintable(r.err));
        return {};
    }
    return parseSvg(out);
}

// The runner (tests/common/record_run.h) gives the child the environment it is handed: here the headless one,
// without the display variables and without the QT_QPA_PLATFORM=offscreen that ctest sets for this suite.
void TestCliExport::runnerUsesTheHeadlessEnvironment()
{
    const Run r = ws::testing::runRecordExe(
        QStringLiteral("/bin/sh"),
        {QStringLiteral("-c"), QStringLiteral("printf '[%s][%s][%s]' \"$DISPLAY\" \"$WAYLAND_DISPLAY\" \"${QT_QPA_PLATFORM-unset}\"")},
        headlessEnvironment());
    QCOMPARE(r.code, 0);
    QCOMPARE(r.out, QStringLiteral("[][][unset]"));
    // and the default is this process's own environment
    const Run d = ws::testing::runRecordExe(QStringLiteral("/bin/sh"),
                                            {QStringLiteral("-c"), QStringLiteral("printf %s \"$QT_QPA_PLATFORM\"")});
    QCOMPARE(d.out, qEnvironmentVariable("QT_QPA_PLATFORM"));
}

void TestCliExport::lanesFilterShows()
{
    // tall enough for every lane of the 8-CTA kernel
    const QStringList size{QStringLiteral("--size"), QStringLiteral("1400x6000")};
    const SvgText all = exportSvg(QStringLiteral("lanes-all"), size);
    QVERIFY(all.ok);
    const QStringList ctasAll = matching(all.texts, QStringLiteral("^CTA \\d+\\b"));
    QVERIFY2(ctasAll.size() >= 4, qPrintable(all.texts.join(" | ")));
    QVERIFY(!matching(all.texts, QStringLiteral("^CTA 3\\b")).isEmpty());

    const SvgText two = exportSvg(QStringLiteral("lanes-cta"), size + QStringList{QStringLiteral("--lanes"), QStringLiteral("cta:1-2")});
    QVERIFY(two.ok);
    const QStringList ctasTwo = matching(two.texts, QStringLiteral("^CTA \\d+\\b"));
    QCOMPARE(ctasTwo.size(), 2);
    QVERIFY2(ctasTwo[0].startsWith(QStringLiteral("CTA 1")) && ctasTwo[1].startsWith(QStringLiteral("CTA 2")),
             qPrintable(ctasTwo.join(" | ")));
    // fewer warp rows, and only those of the two CTAs
    const int warpsAll = matching(all.texts, QStringLiteral("^w\\d+ ")).size();
    const int warpsTwo = matching(two.texts, QStringLiteral("^w\\d+ ")).size();
    QVERIFY2(warpsTwo > 0 && warpsTwo * 2 < warpsAll, qPrintable(QStringLiteral("%1 vs %2").arg(warpsTwo).arg(warpsAll)));

    // role filter: every warp row left is a producer, and there were others before
    const SvgText prod = exportSvg(QStringLiteral("lanes-role"), size + QStringList{QStringLiteral("--lanes"), QStringLiteral("role:producer")});
    QVERIFY(prod.ok);
    const QStringList warpRows = matching(prod.texts, QStringLiteral("^w\\d+ "));
    QVERIFY(!warpRows.isEmpty());
    for (const QString& w : warpRows)
        QVERIFY2(w.contains(QStringLiteral("producer")), qPrintable(w));
    QVERIFY(matching(all.texts, QStringLiteral("^w\\d+ ")).size() > warpRows.size());
}

void TestCliExport::rangeSetsTheTimeAxis()
{
    // the oldest run's kernel (the longest: about 15 µs)
    const QStringList run{QStringLiteral("--run"), QString::number(m_runs.front().id)};
    const SvgText full = exportSvg(QStringLiteral("range-full"), run);
    QVERIFY(full.ok);
    const QList<double> tf = tickTimes(full.texts);
    QVERIFY2(tf.size() >= 3, qPrintable(full.texts.join(" | ")));
    const struct {
        double a, b;
        const char* spec;
    } cases[] = {{5000.0, 10000.0, "5us:10us"}, {2000.0, 3000.0, "2000:3000"}, {0.0, 4000.0, "0:0.004ms"}};
    for (const auto& c : cases) {
        const double a = c.a, b = c.b;
        const SvgText s = exportSvg(QStringLiteral("range-%1").arg(int(a)), run + QStringList{QStringLiteral("--range"), QString::fromLatin1(c.spec)});
        QVERIFY(s.ok);
        const QList<double> t = tickTimes(s.texts);
        QVERIFY2(t.size() >= 3, qPrintable(s.texts.join(" | ")));
        const double step = t[1] - t[0];
        // the ticks cover [a, b] and nothing outside it (the view is the range, relative to the kernel start)
        QVERIFY2(t.first() >= a - 1e-6 && t.last() <= b + 1e-6,
                 qPrintable(QStringLiteral("%1: ticks %2 .. %3").arg(QLatin1String(c.spec)).arg(t.first()).arg(t.last())));
        QVERIFY2(t.first() - a < step + 1e-6 && b - t.last() < step + 1e-6,
                 qPrintable(QStringLiteral("%1: ticks %2 .. %3 step %4").arg(QLatin1String(c.spec)).arg(t.first()).arg(t.last()).arg(step)));
        QVERIFY(t != tf);
    }
}

void TestCliExport::runAndKernelPickTheKernel()
{
    // default: the newest run's first traced kernel; its rung is in the default title
    auto titleOf = [&](const QStringList& extra) {
        const SvgText s = exportSvg(QStringLiteral("pick"), extra);
        return s.ok ? s.title : QStringLiteral("<export failed>");
    };
    auto firstTraced = [](const std::vector<ws::KernelLaunch>& ks) {
        return *std::find_if(ks.begin(), ks.end(), [](const auto& k) { return k.traced; });
    };
    const QString newest = QString::fromStdString(m_runs.back().variant);
    const QString oldest = QString::fromStdString(m_runs.front().variant);
    QString t = titleOf({});
    QVERIFY2(t.startsWith(newest + QLatin1Char(' ')), qPrintable(t));
    t = titleOf({QStringLiteral("--run"), QString::number(m_runs.front().id)});
    QVERIFY2(t.startsWith(oldest + QLatin1Char(' ')), qPrintable(t));
    QVERIFY2(t.contains(QString::fromStdString(firstTraced(m_kernels.front()).name)), qPrintable(t));
    // --kernel: another kernel of the same run than the default one
    const auto& ks = m_kernels[1];
    const ws::KernelLaunch def = firstTraced(ks);
    auto other = std::find_if(ks.begin(), ks.end(), [&](const auto& k) { return k.id != def.id && k.name != def.name; });
    QVERIFY2(other != ks.end(), "the synthetic run has no second, differently named kernel");
    t = titleOf({QStringLiteral("--run"), QString::number(m_runs[1].id), QStringLiteral("--kernel"), QString::number(other->id)});
    QVERIFY2(t.contains(QString::fromStdString(other->name)), qPrintable(t));
    QVERIFY2(!t.contains(QString::fromStdString(def.name) + QLatin1Char(' ')) || def.name.empty(), qPrintable(t));
}

void TestCliExport::titleAppears()
{
    const QString title = QStringLiteral("My figure 7 of the pipeline");
    const SvgText s = exportSvg(QStringLiteral("title"), {QStringLiteral("--title"), title});
    QVERIFY(s.ok);
    QCOMPARE(s.title, title);
    QVERIFY2(s.texts.contains(title), qPrintable(s.texts.join(" | ")));
    const SvgText d = exportSvg(QStringLiteral("title-default"), {});
    QVERIFY(!d.texts.contains(title));
}

void TestCliExport::sizeIsTheImageSize()
{
    for (const QString& sz : {QStringLiteral("640x480"), QStringLiteral("1234x567")}) {
        const QString out = path(QStringLiteral("size-%1.png").arg(sz));
        const Run r = warpstage({QStringLiteral("export"), m_file, QStringLiteral("--out"), out, QStringLiteral("--size"), sz});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const PngInfo p = pngInfo(readAll(out));
        QCOMPARE(QStringLiteral("%1x%2").arg(p.w).arg(p.h), sz);
    }
    // SVG: the view box is the size in logical pixels (96 dpi: the same numbers)
    const SvgText s = exportSvg(QStringLiteral("size"), {QStringLiteral("--size"), QStringLiteral("1234x567")});
    QVERIFY(s.ok);
    QCOMPARE(s.viewBox, QStringLiteral("0 0 1234 567"));
}

void TestCliExport::dpiIsWrittenIntoThePng()
{
    for (const int dpi : {96, 144, 300}) {
        const QString out = path(QStringLiteral("dpi-%1.png").arg(dpi));
        QStringList args{QStringLiteral("export"), m_file, QStringLiteral("--out"), out, QStringLiteral("--size"),
                         QStringLiteral("800x500")};
        if (dpi != 96)
            args << QStringLiteral("--dpi") << QString::number(dpi);
        const Run r = warpstage(args);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const PngInfo p = pngInfo(readAll(out));
        QCOMPARE(p.w, 800u);  // the pixel size stays; only the resolution changes
        QCOMPARE(p.unit, 1);  // pixels per metre
        const quint32 ppm = quint32(std::lround(dpi / 0.0254));
        QVERIFY2(p.ppmX == ppm && p.ppmY == ppm, qPrintable(QStringLiteral("dpi %1: pHYs %2 x %3").arg(dpi).arg(p.ppmX).arg(p.ppmY)));
    }
}

void TestCliExport::deterministic_data()
{
    QTest::addColumn<QString>("ext");
    QTest::addColumn<QStringList>("extra");
    QTest::newRow("png") << QStringLiteral("png") << QStringList{};
    QTest::newRow("svg") << QStringLiteral("svg") << QStringList{};
    QTest::newRow("pdf") << QStringLiteral("pdf") << QStringList{};
    QTest::newRow("pdf range lanes title") << QStringLiteral("pdf")
                                           << QStringList{QStringLiteral("--range"), QStringLiteral("0:20us"), QStringLiteral("--lanes"),
                                                          QStringLiteral("cta:0-3"), QStringLiteral("--title"), QStringLiteral("det")};
    QTest::newRow("svg range lanes dpi") << QStringLiteral("svg")
                                         << QStringList{QStringLiteral("--range"), QStringLiteral("0:20us"), QStringLiteral("--lanes"),
                                                        QStringLiteral("sm:0-1"), QStringLiteral("--dpi"), QStringLiteral("144")};
    QTest::newRow("png what-if critical path") << QStringLiteral("png")
                                               << QStringList{QStringLiteral("--what-if"), QStringLiteral("--stages"), QStringLiteral("2"),
                                                              QStringLiteral("--critical-path")};
}

void TestCliExport::deterministic()
{
    QFETCH(QString, ext);
    QFETCH(QStringList, extra);
    QByteArray bytes[2];
    for (int i = 0; i < 2; ++i) {
        const QString out = path(QStringLiteral("det-%1.%2").arg(i).arg(ext));
        QFile::remove(out);
        const Run r = warpstage(QStringList{QStringLiteral("export"), m_file, QStringLiteral("--out"), out,
                                            QStringLiteral("--size"), QStringLiteral("1000x600")} + extra);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        bytes[i] = readAll(out);
        QVERIFY(bytes[i].size() > 1000);
        if (i == 0)
            QTest::qWait(1100);  // a timestamp in the file would now differ by at least a second
    }
    if (ext == QLatin1String("pdf"))
        QVERIFY(bytes[0].startsWith("%PDF-"));
    if (ext == QLatin1String("svg"))
        QVERIFY(bytes[0].contains("<svg"));
    QVERIFY2(bytes[0] == bytes[1], qPrintable(QStringLiteral("two %1 exports differ").arg(ext)));
}

void TestCliExport::exitCodes_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("stderrRe");
    const QString f = QStringLiteral("@FILE@"), o = QStringLiteral("@DIR@/x.png");
    auto exp = [&](const QStringList& more) { return QStringList{QStringLiteral("export"), f, QStringLiteral("--out"), o} + more; };
    QTest::newRow("0 ok") << exp({}) << 0 << QString();
    QTest::newRow("0 info") << QStringList{QStringLiteral("info"), f} << 0 << QString();
    // 1: the command failed
    QTest::newRow("1 no such kernel") << exp({QStringLiteral("--kernel"), QStringLiteral("99999")}) << 1 << QStringLiteral("kernel 99999");
    QTest::newRow("1 no such run") << exp({QStringLiteral("--run"), QStringLiteral("99999")}) << 1 << QStringLiteral("run 99999");
    QTest::newRow("1 range outside the kernel") << exp({QStringLiteral("--range"), QStringLiteral("1ms:2ms")}) << 1
                                                << QStringLiteral("--range 1000000\\.\\.2000000 ns: empty");
    QTest::newRow("1 range before the kernel") << exp({QStringLiteral("--range"), QStringLiteral("-5us:-4us")}) << 1
                                               << QStringLiteral("empty");
    QTest::newRow("1 cannot write") << QStringList{QStringLiteral("export"), f, QStringLiteral("--out"), QStringLiteral("@DIR@/no/such/dir/x.png")}
                                    << 1 << QStringLiteral("no/such/dir/x\\.png");
    // 2: bad command line, each naming the option
    const struct {
        const char* name;
        QStringList more;
        const char* re;
    } usage[] = {
        {"--lanes bad", {"--lanes", "sm:1-x"}, "--lanes.*sm:1-x"},
        {"--lanes unknown key", {"--lanes", "colour:red"}, "--lanes"},
        {"--run abc", {"--run", "abc"}, "--run expects a positive id, got 'abc'"},
        {"--run 0", {"--run", "0"}, "--run expects a positive id"},
        {"--run -3", {"--run", "-3"}, "--run expects a positive id"},
        {"--run 1x", {"--run", "1x"}, "--run expects a positive id, got '1x'"},
        {"--run blank", {"--run", " 1"}, "--run expects a positive id"},
        {"--run +1", {"--run", "+1"}, "--run expects a positive id"},
        {"--kernel abc", {"--kernel", "abc"}, "--kernel expects a positive id, got 'abc'"},
        {"--kernel 2.5", {"--kernel", "2.5"}, "--kernel expects a positive id"},
        {"--dpi abc", {"--dpi", "abc"}, "--dpi expects a number"},
        {"--dpi nan", {"--dpi", "nan"}, "--dpi expects a number"},
        {"--dpi 1e2", {"--dpi", "1e2"}, "--dpi expects a number"},
        {"--dpi 10", {"--dpi", "10"}, "--dpi expects a number in 24\\.\\.1200"},
        {"--dpi 2000", {"--dpi", "2000"}, "--dpi expects a number in 24\\.\\.1200"},
        {"--size 10x10", {"--size", "10x10"}, "--size expects"},
        {"--size 800x", {"--size", "800x"}, "--size expects"},
        {"--range backwards", {"--range", "5us:1us"}, "--range expects"},
        {"--range junk", {"--range", "0:5parsecs"}, "--range expects"},
        {"unknown option", {"--colour", "red"}, "unknown option '--colour'"},
    };
    for (const auto& u : usage)
        QTest::newRow((QByteArray("2 ") + u.name).constData()) << exp(u.more) << 2 << QString::fromLatin1(u.re);
    for (const char* opt : {"--run", "--kernel", "--range", "--lanes", "--size", "--dpi", "--title"})
        QTest::newRow((QByteArray("2 missing value ") + opt).constData())
            << exp({QString::fromLatin1(opt)}) << 2 << QStringLiteral("%1 needs a value").arg(QLatin1String(opt));
    QTest::newRow("2 missing --out value") << QStringList{QStringLiteral("export"), f, QStringLiteral("--out")} << 2
                                           << QStringLiteral("--out needs a value");
    QTest::newRow("2 no --out") << QStringList{QStringLiteral("export"), f} << 2 << QStringLiteral("missing --out");
    QTest::newRow("2 bad extension") << QStringList{QStringLiteral("export"), f, QStringLiteral("--out"), QStringLiteral("@DIR@/x.bmp")}
                                     << 2 << QStringLiteral("must end in");
    QTest::newRow("2 two files") << exp({f}) << 2 << QStringLiteral("more than one FILE");
    // not a subcommand: the viewer's command line, which takes one FILE
    QTest::newRow("2 misspelt subcommand") << QStringList{QStringLiteral("exprt"), f} << 2 << QStringLiteral("one FILE at a time");
    QTest::newRow("2 info no file") << QStringList{QStringLiteral("info")} << 2 << QStringLiteral("missing FILE");
    // 3: the file cannot be read
    QTest::newRow("3 export missing file") << QStringList{QStringLiteral("export"), QStringLiteral("@DIR@/nope.warpstage"), QStringLiteral("--out"), o}
                                           << 3 << QStringLiteral("nope\\.warpstage");
    QTest::newRow("3 info text file") << QStringList{QStringLiteral("info"), QStringLiteral("@DIR@/text.warpstage")} << 3
                                      << QStringLiteral("text\\.warpstage");
    // a bad option wins over a bad file: the command line is checked first
    QTest::newRow("2 before 3") << QStringList{QStringLiteral("export"), QStringLiteral("@DIR@/nope.warpstage"), QStringLiteral("--out"), o,
                                               QStringLiteral("--dpi"), QStringLiteral("x")}
                                << 2 << QStringLiteral("--dpi");
}

void TestCliExport::exitCodes()
{
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, stderrRe);
    {
        QFile t(path(QStringLiteral("text.warpstage")));
        QVERIFY(t.open(QIODevice::WriteOnly));
        t.write("not a trace\n");
    }
    QFile::remove(path(QStringLiteral("x.png")));
    for (QString& a : args)
        a.replace(QStringLiteral("@FILE@"), m_file).replace(QStringLiteral("@DIR@"), m_dir.path());
    const Run r = warpstage(args);
    QVERIFY2(r.code == code, qPrintable(QStringLiteral("%1 -> %2 (expected %3)\n%4").arg(args.join(' ')).arg(r.code).arg(code).arg(r.err)));
    if (!stderrRe.isEmpty())
        QVERIFY2(QRegularExpression(stderrRe).match(r.err).hasMatch(), qPrintable(r.err));
    if (code == 0) {
        QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
    } else {
        QVERIFY2(r.err.startsWith(QStringLiteral("warpstage: ")), qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
        if (args.first() == QLatin1String("export"))
            QVERIFY2(!QFile::exists(path(QStringLiteral("x.png"))), "a failed export left an image");
    }
    if (code == 2)
        QVERIFY(r.err.contains(QStringLiteral("Try 'warpstage --help'.")));
}

void TestCliExport::olderSchemaExit4()
{
    const QByteArray before = readAll(m_v1);
    for (const QStringList& args : {QStringList{QStringLiteral("info"), m_v1}, QStringList{QStringLiteral("info"), m_v1, QStringLiteral("--json")},
                                    QStringList{QStringLiteral("export"), m_v1, QStringLiteral("--out"), path(QStringLiteral("old.png"))}}) {
        const Run r = warpstage(args);
        QVERIFY2(r.code == 4, qPrintable(QStringLiteral("%1 -> %2: %3").arg(args.join(' ')).arg(r.code).arg(r.err)));
        QVERIFY2(r.err.contains(m_v1) && r.err.contains(QStringLiteral("older Warpstage")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("warpstage migrate ") + m_v1), qPrintable(r.err));   // where to go
        QVERIFY(r.out.isEmpty());
    }
    QVERIFY(!QFile::exists(path(QStringLiteral("old.png"))));
    QCOMPARE(readAll(m_v1), before);  // never rewritten
}

void TestCliExport::migrateWritesACopy()
{
    // A real schema-1 file (tests/core/fixtures, made by the version-1 writer), copied so nothing touches the original.
    const QString v1 = path(QStringLiteral("real-v1.wstrace"));
    QFile::remove(v1);
    QVERIFY(QFile::copy(QStringLiteral(WARPSTAGE_SCHEMA_FIXTURES "/schema-v1.wstrace"), v1));
    QCOMPARE(warpstage({QStringLiteral("info"), v1}).code, 4);
    const QByteArray before = readAll(v1);
    const QString copy = path(QStringLiteral("migrated.wstrace"));
    QFile::remove(copy);
    Run r = warpstage({QStringLiteral("migrate"), v1, QStringLiteral("--out"), copy});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QStringLiteral("schema 1 -> %1").arg(ws::kSchemaVersion)), qPrintable(r.out));
    QCOMPARE(readAll(v1), before);   // the source is never changed
    r = warpstage({QStringLiteral("info"), copy});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    // the copy exists now: refused, and a current file has nothing to migrate
    r = warpstage({QStringLiteral("migrate"), v1, QStringLiteral("--out"), copy});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(QStringLiteral("already exists")), qPrintable(r.err));
    r = warpstage({QStringLiteral("migrate"), copy, QStringLiteral("--out"), path(QStringLiteral("again.wstrace"))});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains(QStringLiteral("already at the current schema")), qPrintable(r.err));
    QVERIFY(!QFile::exists(path(QStringLiteral("again.wstrace"))));
    QCOMPARE(warpstage({QStringLiteral("migrate"), m_v1}).code, 2);
    QCOMPARE(warpstage({QStringLiteral("migrate"), path(QStringLiteral("missing.wstrace")), QStringLiteral("--out"),
                        path(QStringLiteral("m2.wstrace"))}).code, 3);
}

QTEST_GUILESS_MAIN(TestCliExport)
#include "tst_cli_export.moc"

void TestCliExport::whatIfAndCriticalPathInTheFigure()
{
    // `export --what-if` draws the replay's ghost rows ("predicted", one under each warp that has phases) and
    // names the replay in the default title; --critical-path outlines the path (its gold band); neither is in a
    // plain export. Issue 13: what a user sees on screen must be in the figure.
    const QStringList tall{QStringLiteral("--size"), QStringLiteral("1400x6000")};
    const SvgText plain = exportSvg(QStringLiteral("wi-plain"), tall);
    QVERIFY(plain.ok);
    QCOMPARE(plain.texts.count(QStringLiteral("predicted")), 0);
    const int warps = matching(plain.texts, QStringLiteral("^w\\d+ ")).size();
    QVERIFY(warps > 0);

    const SvgText wi = exportSvg(QStringLiteral("wi-beside"), tall + QStringList{QStringLiteral("--what-if"), QStringLiteral("--stages"),
                                                                               QStringLiteral("2"), QStringLiteral("--load-latency"),
                                                                               QStringLiteral("1.5")});
    QVERIFY(wi.ok);
    const int ghosts = wi.texts.count(QStringLiteral("predicted"));
    QVERIFY2(ghosts > 0 && ghosts <= warps, qPrintable(QStringLiteral("%1 ghost rows for %2 warps").arg(ghosts).arg(warps)));
    const QStringList titles = matching(wi.texts, QStringLiteral("what-if --stages 2 --load-latency 1.5: predicted [0-9.]+ .s, measured"));
    QVERIFY2(titles.size() == 1, qPrintable(wi.texts.mid(0, 8).join(" | ")));

    // over: frames on the lanes, no extra rows
    const SvgText over = exportSvg(QStringLiteral("wi-over"), tall + QStringList{QStringLiteral("--what-if"), QStringLiteral("--ghost"),
                                                                               QStringLiteral("over")});
    QVERIFY(over.ok);
    QCOMPARE(over.texts.count(QStringLiteral("predicted")), 0);
    QCOMPARE(matching(over.texts, QStringLiteral("what-if as recorded: predicted")).size(), 1);
    // the load-bandwidth model is opt-in (session 9): named in the title only when turned on
    const SvgText bw = exportSvg(QStringLiteral("wi-bw"), tall + QStringList{QStringLiteral("--what-if"), QStringLiteral("--ghost"),
                                                                           QStringLiteral("over"), QStringLiteral("--load-bandwidth")});
    QVERIFY(bw.ok);
    QVERIFY2(matching(bw.texts, QStringLiteral("what-if --load-bandwidth: predicted")).size() == 1,
             qPrintable(bw.texts.mid(0, 8).join(" | ")));

    // the critical path: its gold band in the PNG, none without it
    auto goldPixels = [&](const QStringList& extra) {
        const QString out = path(QStringLiteral("wi-path-%1.png").arg(extra.size()));
        const Run r = warpstage(QStringList{QStringLiteral("export"), m_file, QStringLiteral("--out"), out,
                                            QStringLiteral("--size"), QStringLiteral("1200x2400")} + extra);
        if (r.code != 0) {
            qWarning("%s", qPrintable(r.err));
            return -1;
        }
        const QImage img = QImage(out).convertToFormat(QImage::Format_RGB32);
        int n = 0;
        for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width(); ++x)
                n += (img.pixel(x, y) & 0xFFFFFF) == 0xFFC800;
        return n;
    };
    QCOMPARE(goldPixels({}), 0);
    const int gold = goldPixels({QStringLiteral("--critical-path")});
    QVERIFY2(gold > 100, qPrintable(QStringLiteral("%1 px of the path's band").arg(gold)));

    // the command line: parameters need --what-if, bad values and the program view are refused (exit 2)
    const struct {
        QStringList args;
        const char* err;
    } bad[] = {
        {{QStringLiteral("--stages"), QStringLiteral("2")}, "need --what-if"},
        {{QStringLiteral("--ghost"), QStringLiteral("over")}, "need --what-if"},
        {{QStringLiteral("--what-if"), QStringLiteral("--stages"), QStringLiteral("0")}, "--stages expects a whole number"},
        {{QStringLiteral("--what-if"), QStringLiteral("--mma"), QStringLiteral("x")}, "--mma expects a factor"},
        {{QStringLiteral("--what-if"), QStringLiteral("--ghost"), QStringLiteral("under")}, "--ghost expects beside or over"},
        {{QStringLiteral("--view"), QStringLiteral("program"), QStringLiteral("--critical-path")}, "belong to the warp view"},
    };
    for (const auto& b : bad) {
        const QString out = path(QStringLiteral("wi-bad.png"));
        QFile::remove(out);
        const Run r = warpstage(QStringList{QStringLiteral("export"), m_file, QStringLiteral("--out"), out} + b.args);
        QVERIFY2(r.code == 2 && r.err.contains(QLatin1String(b.err)),
                 qPrintable(QStringLiteral("%1: exit %2, %3").arg(b.args.join(' ')).arg(r.code).arg(r.err)));
        QVERIFY(!QFile::exists(out));
    }
}
