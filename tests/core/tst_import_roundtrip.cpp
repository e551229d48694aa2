// tst_import_roundtrip: `warpstage import` of Warpstage's own Chrome JSON export (traceimport.h) and the
// streaming JSON reader under it (jsonreader.h). A kernel exported and imported back has the same
// lanes and intervals (kind, start, duration, k-step, slot); bad input (not JSON, truncated JSON or gzip,
// JSON that is not a trace, another tool's trace, an SQLite file) gives a clear message and writes
// nothing.
#include "exporttestutil.h"

#include "warpstage/jsonreader.h"
#include "warpstage/traceexport.h"
#include "warpstage/traceimport.h"

#include <QFile>

#include <tuple>

using namespace ws;

namespace {

using Tok = JsonReader::Token;

std::vector<std::pair<Tok, std::string>> tokens(std::string_view json)
{
    StringSource src(json);
    JsonReader r(src);
    std::vector<std::pair<Tok, std::string>> out;
    for (Tok t = r.next(); t != Tok::End; t = r.next())
        out.emplace_back(t, r.text());
    return out;
}

QString jsonError(std::string_view json)
{
    try {
        tokens(json);
    } catch (const JsonError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

using LaneKey = std::tuple<int, int, int>;   // SM, CTA, warp
using Row = std::tuple<int, TimeNs, TimeNs, int, int>;   // kind, start, duration, kstep, slot

std::map<LaneKey, std::pair<std::string, std::vector<Row>>> lanesOf(const KernelTrace& t)
{
    std::map<LaneKey, std::pair<std::string, std::vector<Row>>> m;
    for (const Lane& l : t.lanes) {
        const Cta& c = t.ctas[std::size_t(l.ctaIndex)];
        auto& [role, rows] = m[{c.smId, c.blockLinear, l.warpIndex}];
        role = std::string(warpRoleName(l.role)) + "/" + l.roleName + "/wg" + std::to_string(l.warpgroup);
        for (std::size_t i = 0; i < l.size(); ++i)
            rows.emplace_back(int(l.kind[i]), l.start[i], TimeNs(l.duration[i]), l.kstep[i], int(l.slot[i]));
    }
    return m;
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

QByteArray readFile(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TstImportRoundtrip : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    void roundTrip(bool userPhases, const char* name)
    {
        const KernelTrace t = wstest::exportTrace(m_dir, userPhases);
        const QString json = m_dir.filePath(name);
        exportKernelTrace(t, {}, json.toStdString());
        QCOMPARE(detectImportFormat(json.toStdString()), ImportFormat::WarpstageChromeJson);
        const QString out = m_dir.filePath(QString(name) + ".wstrace");
        const auto runs = importTraces({json.toStdString()}, out.toStdString());
        QCOMPARE(runs.size(), std::size_t(1));
        QCOMPARE(runs[0].intervals, std::int64_t(t.intervalCount()));
        const KernelTrace back = wstest::loadFirstTraced(out.toStdString());
        QCOMPARE(back.intervalCount(), t.intervalCount());
        QCOMPARE(back.ctas.size(), t.ctas.size());
        QVERIFY(lanesOf(back) == lanesOf(t));
        QCOMPARE(back.launch.name, t.launch.name);
        QCOMPARE(back.launch.start, t.launch.start);
        QCOMPARE(back.launch.end, t.launch.end);
        QCOMPARE(back.phaseNames, t.phaseNames);
        QCOMPARE(back.run.variant, t.run.variant);
        QCOMPARE(back.run.m, t.run.m);
        for (std::size_t c = 0; c < t.ctas.size(); ++c) {
            QCOMPARE(back.ctas[c].start, t.ctas[c].start);
            QCOMPARE(back.ctas[c].end, t.ctas[c].end);
            QCOMPARE(back.ctas[c].smId, t.ctas[c].smId);
        }
        QVERIFY(QString::fromStdString(back.run.notes).contains("imported from"));
    }

    // The import of `path` fails with a message containing `what`, and `out` is not created.
    void refused(const QString& path, const QString& what)
    {
        const QString out = m_dir.filePath("refused.wstrace");
        try {
            importTraces({path.toStdString()}, out.toStdString());
            QFAIL(qPrintable("no error for " + path));
        } catch (const ImportError& e) {
            QVERIFY2(QString(e.what()).contains(what), e.what());
            QVERIFY2(QString(e.what()).contains(QFileInfo(path).fileName()), e.what());
        }
        QVERIFY(!QFile::exists(out));
        QVERIFY(QDir(m_dir.path()).entryList({"refused.wstrace*"}, QDir::Files | QDir::Hidden).isEmpty());
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void readerTokens()
    {
        const auto t = tokens(" {\"a\": [1, -2.5e3, true, false, null, \"x\\\"\\\\\\/\\n\\u00e9\\ud83d\\ude00\"], \"b\": {}} ");
        const std::vector<std::pair<Tok, std::string>> want = {
            {Tok::BeginObject, ""}, {Tok::Key, "a"}, {Tok::BeginArray, ""}, {Tok::Number, "1"}, {Tok::Number, "-2.5e3"},
            {Tok::True, ""}, {Tok::False, ""}, {Tok::Null, ""}, {Tok::String, "x\"\\/\n\xc3\xa9\xf0\x9f\x98\x80"},
            {Tok::EndArray, ""}, {Tok::Key, "b"}, {Tok::BeginObject, ""}, {Tok::EndObject, ""}, {Tok::EndObject, ""}};
        QCOMPARE(t.size(), want.size());
        for (std::size_t i = 0; i < t.size(); ++i) {
            QCOMPARE(int(t[i].first), int(want[i].first));
            if (t[i].first == Tok::Key || t[i].first == Tok::String || t[i].first == Tok::Number)
                QCOMPARE(t[i].second, want[i].second);
        }
        QCOMPARE(tokens("[]").size(), std::size_t(2));
        QCOMPARE(tokens("3").size(), std::size_t(1));
    }

    void readerErrors_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("message");
        QTest::newRow("empty") << "" << "empty";
        QTest::newRow("blank") << "   " << "empty";
        QTest::newRow("not json") << "hello" << "not JSON";
        QTest::newRow("text starting like a literal") << "this is text" << "not JSON";
        QTest::newRow("truncated object") << "{\"a\": [1, 2" << "truncated JSON: the input ends inside an array";
        QTest::newRow("truncated string") << "{\"a\": \"abc" << "truncated";
        QTest::newRow("truncated key") << "{\"a" << "truncated";
        QTest::newRow("truncated after colon") << "{\"a\":" << "truncated";
        QTest::newRow("truncated literal") << "[tru" << "truncated";
        QTest::newRow("truncated number") << "[1." << "truncated";
        QTest::newRow("missing comma") << "[1 2]" << "expected ',' or ']'";
        QTest::newRow("trailing comma") << "[1,]" << "expected a value";
        QTest::newRow("object trailing comma") << "{\"a\":1,}" << "expected a string key";
        QTest::newRow("missing colon") << "{\"a\" 1}" << "expected ':'";
        QTest::newRow("wrong close") << "{\"a\":1]" << "expected ',' or '}'";
        QTest::newRow("bare key") << "{a:1}" << "expected a string key";
        QTest::newRow("leading zero") << "[01]" << "expected ',' or ']'";
        QTest::newRow("bad literal") << "[nul]" << "invalid literal";
        QTest::newRow("bad escape") << "[\"\\q\"]" << "invalid escape";
        QTest::newRow("lone surrogate") << "[\"\\udc00\"]" << "surrogate";
        QTest::newRow("control char") << "[\"a\x01\"]" << "control character";
        QTest::newRow("two values") << "{} {}" << "after the JSON value";
        QTest::newRow("deep") << QString(600, '[') << "nested deeper";
    }
    void readerErrors()
    {
        QFETCH(QString, json);
        QFETCH(QString, message);
        const QString e = jsonError(json.toStdString());
        QVERIFY2(e.contains(message), qPrintable("got: " + e));
    }

    void readerSkipsAndStreams()
    {
        // skipValue skips a whole container; tiny buffer reads (1 byte at a time) give the same tokens.
        StringSource src("{\"skip\": {\"x\": [1, {\"y\": 2}]}, \"keep\": 7}");
        JsonReader r(src);
        QCOMPARE(int(r.next()), int(Tok::BeginObject));
        QCOMPARE(int(r.next()), int(Tok::Key));
        QCOMPARE(int(r.skipValue()), int(Tok::BeginObject));
        QCOMPARE(int(r.next()), int(Tok::Key));
        QCOMPARE(r.text(), std::string("keep"));
        QCOMPARE(int(r.next()), int(Tok::Number));
        QCOMPARE(r.text(), std::string("7"));
        QCOMPARE(r.depth(), std::size_t(1));
        struct OneByte : ByteSource {
            std::string s;
            std::size_t i = 0;
            std::size_t read(char* b, std::size_t) override { return i < s.size() ? (*b = s[i++], 1) : 0; }
        } one;
        one.s = "{\"k\": \"a\\u00e9b\", \"n\": [1.5, -0]}";
        JsonReader r1(one);
        std::vector<std::string> texts;
        for (Tok t = r1.next(); t != Tok::End; t = r1.next())
            texts.push_back(r1.text());
        QCOMPARE(texts.size(), std::size_t(9));
        QCOMPARE(texts[2], std::string("a\xc3\xa9" "b"));
        QCOMPARE(texts[5], std::string("1.5"));
    }

    void roundTripJson() { roundTrip(false, "k.json"); }
    void roundTripGzipWithUserPhases() { roundTrip(true, "u.json.gz"); }

    void severalInputsOneRunEach()
    {
        const KernelTrace t = wstest::exportTrace(m_dir);
        const QString a = m_dir.filePath("a.json"), b = m_dir.filePath("b.json.gz");
        TraceExportOptions o;
        o.laneMask.assign(t.lanes.size(), false);
        o.laneMask[0] = true;
        exportKernelTrace(t, o, a.toStdString());
        exportKernelTrace(t, {}, b.toStdString());
        const QString out = m_dir.filePath("two.wstrace");
        const auto runs = importTraces({a.toStdString(), b.toStdString()}, out.toStdString());
        QCOMPARE(runs.size(), std::size_t(2));
        QCOMPARE(runs[0].intervals, std::int64_t(t.lanes[0].size()));
        QCOMPARE(runs[1].intervals, std::int64_t(t.intervalCount()));
        QCOMPARE(TraceStore::openReadOnly(out.toStdString()).runs().size(), std::size_t(2));
        // The output exists now: a second import refuses to touch it.
        const QByteArray before = readFile(out);
        try {
            importTraces({a.toStdString()}, out.toStdString());
            QFAIL("no error");
        } catch (const ImportError& e) {
            QVERIFY2(QString(e.what()).contains("already exists"), e.what());
        }
        QCOMPARE(readFile(out), before);
    }

    void badInputs()
    {
        const KernelTrace t = wstest::exportTrace(m_dir);
        const QString good = m_dir.filePath("good.json"), goodGz = m_dir.filePath("good.json.gz");
        exportKernelTrace(t, {}, good.toStdString());
        exportKernelTrace(t, {}, goodGz.toStdString());
        const QByteArray g = readFile(good), gz = readFile(goodGz);

        writeFile(m_dir.filePath("binary.bin"), QByteArray("\x00\x01\x02garbage", 10));
        refused(m_dir.filePath("binary.bin"), "not JSON");
        writeFile(m_dir.filePath("empty.json"), QByteArray());
        refused(m_dir.filePath("empty.json"), "empty");
        writeFile(m_dir.filePath("half.json"), g.left(g.size() / 2));
        refused(m_dir.filePath("half.json"), "truncated JSON");
        writeFile(m_dir.filePath("half.json.gz"), gz.left(gz.size() / 2));
        refused(m_dir.filePath("half.json.gz"), "cut short");
        writeFile(m_dir.filePath("notrace.json"), "{\"name\": \"a config file\", \"values\": [1, 2]}");
        refused(m_dir.filePath("notrace.json"), "not a trace");
        writeFile(m_dir.filePath("foreign.json"), "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1, \"dur\": 2, \"pid\": 1, \"tid\": 1, \"name\": \"f\"}]}");
        refused(m_dir.filePath("foreign.json"), "not written by Warpstage");
        writeFile(m_dir.filePath("array.json"), "[{\"ph\": \"X\", \"ts\": 1, \"dur\": 2, \"pid\": 1, \"tid\": 1, \"name\": \"f\"}]");
        refused(m_dir.filePath("array.json"), "array form");
        // Our own export, damaged inside: an unknown kind, a slice without ts.
        QByteArray badKind = g;
        badKind.replace("\"kind\":\"wait_data\"", "\"kind\":\"napping\"");
        writeFile(m_dir.filePath("badkind.json"), badKind);
        refused(m_dir.filePath("badkind.json"), "napping");
        QByteArray noTs = g;
        noTs.replace("{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"ts\":", "{\"ph\":\"X\",\"pid\":1,\"tid\":0,\"t\":");
        QVERIFY(noTs != g);
        writeFile(m_dir.filePath("nots.json"), noTs);
        refused(m_dir.filePath("nots.json"), "no valid ts/dur");
        refused(m_dir.filePath("k.wstrace"), "SQLite");
        refused(m_dir.filePath("missing.json"), "cannot open");
        // A program-view export is a Warpstage export, but not a warp timeline.
        SyntheticProgramParams p;
        p.steps = 1;
        p.launchesPerStep = 5;
        exportProgramTrace(generateSyntheticProgram(p), {}, m_dir.filePath("prog.json").toStdString());
        refused(m_dir.filePath("prog.json"), "'program' view");
        // One bad input among good ones: nothing is written at all.
        const QString out = m_dir.filePath("mixed.wstrace");
        QVERIFY_THROWS_EXCEPTION(ImportError, importTraces({good.toStdString(), m_dir.filePath("half.json").toStdString()}, out.toStdString()));
        QVERIFY(!QFile::exists(out));
    }
};

QTEST_GUILESS_MAIN(TstImportRoundtrip)
#include "tst_import_roundtrip.moc"
