// tst_export_chrome: the Chrome Trace Event JSON export (core/include/warpstage/traceexport.h). The
// output is parsed with Qt's JSON parser (independent of ours) and checked against the trace it came
// from: processes per CTA, threads per warp with their roles, one "X" event per interval with exact
// timestamps and args, the loads-in-flight counter, flows, lane and range selection, gzip, the program
// view, and that a failed export leaves no file.
#include "exporttestutil.h"

#include "warpstage/traceexport.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <zlib.h>

#include <algorithm>
#include <map>

using namespace ws;

namespace {

QJsonObject parse(const std::string& text)
{
    QJsonParseError err{};
    const QJsonDocument d = QJsonDocument::fromJson(QByteArray::fromStdString(text), &err);
    if (err.error != QJsonParseError::NoError)
        qWarning("JSON error %s at %d", qPrintable(err.errorString()), err.offset);
    return d.object();
}

std::string chrome(const KernelTrace& t, const TraceExportOptions& o = {})
{
    std::string s;
    StringSink sink(&s);
    writeChromeTrace(t, o, sink);
    return s;
}

QJsonArray events(const QJsonObject& doc) { return doc.value("traceEvents").toArray(); }

// ts/dur as written, back to ns without going through a double.
qint64 microsText(const QString& raw)
{
    const auto m = QRegularExpression("^(-?)(\\d+)\\.(\\d{3})$").match(raw);
    if (!m.hasMatch())
        return LLONG_MIN;
    const qint64 v = m.captured(2).toLongLong() * 1000 + m.captured(3).toLongLong();
    return m.captured(1).isEmpty() ? v : -v;
}

// Every `"key":value` number of the text, as written (Qt would turn them into doubles).
QStringList rawNumbers(const std::string& text, const char* key)
{
    QStringList out;
    const QRegularExpression re(QStringLiteral("\"%1\":(-?[0-9.]+)").arg(key));
    auto it = re.globalMatch(QString::fromStdString(text));
    while (it.hasNext())
        out << it.next().captured(1);
    return out;
}

std::string gunzip(const QByteArray& gz)
{
    z_stream z{};
    inflateInit2(&z, 15 + 16);
    std::string out;
    char buf[65536];
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
    z.avail_in = uInt(gz.size());
    int rc = Z_OK;
    while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, sizeof buf - z.avail_out);
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END ? out : std::string();
}

}  // namespace

class TstExportChrome : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    KernelTrace m_trace;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = wstest::exportTrace(m_dir);
        QVERIFY(m_trace.intervalCount() > 50);
        QVERIFY(!m_trace.loads.empty());
    }

    void formatByName()
    {
        QCOMPARE(traceFormatForPath("a/b.json"), std::optional(TraceFormat::ChromeJson));
        QCOMPARE(traceFormatForPath("B.JSON.GZ"), std::optional(TraceFormat::ChromeJsonGz));
        QCOMPARE(traceFormatForPath("x.perfetto-trace"), std::optional(TraceFormat::Perfetto));
        QCOMPARE(traceFormatForPath("x.pftrace"), std::optional(TraceFormat::Perfetto));
        QVERIFY(!traceFormatForPath("x.png"));
        QVERIFY(!traceFormatForPath("json"));
        QVERIFY(!traceFormatForPath("x.gz"));
    }

    void documentAndMetadata()
    {
        const std::string text = chrome(m_trace);
        const QJsonObject doc = parse(text);
        QVERIFY(!doc.isEmpty());
        QCOMPARE(doc.value("displayTimeUnit").toString(), QString("ns"));
        const QJsonObject ws = doc.value("otherData").toObject().value("warpstage").toObject();
        QCOMPARE(ws.value("view").toString(), QString("warp"));
        QCOMPARE(qint64(ws.value("origin_ns").toDouble()), exportOrigin(m_trace));
        QCOMPARE(ws.value("kernel").toObject().value("name").toString(), QString::fromStdString(m_trace.launch.name));

        // One process per CTA (name, sort index in trace order), one thread per warp (name with role).
        std::map<int, QString> procs;
        std::map<int, int> sortIndex;
        std::map<std::pair<int, int>, QJsonObject> threads;
        for (const auto& v : events(doc)) {
            const QJsonObject e = v.toObject();
            if (e.value("ph").toString() != "M")
                continue;
            const int pid = e.value("pid").toInt();
            const QString name = e.value("name").toString();
            if (name == "process_name")
                procs[pid] = e.value("args").toObject().value("name").toString();
            else if (name == "process_sort_index")
                sortIndex[pid] = e.value("args").toObject().value("sort_index").toInt();
            else if (name == "thread_name")
                threads[{pid, e.value("tid").toInt()}] = e.value("args").toObject();
        }
        QCOMPARE(procs.size(), m_trace.ctas.size());
        for (std::size_t c = 0; c < m_trace.ctas.size(); ++c) {
            const Cta& cta = m_trace.ctas[c];
            QCOMPARE(procs[int(c) + 1], QStringLiteral("SM %1 / CTA %2").arg(cta.smId).arg(cta.blockLinear));
            QCOMPARE(sortIndex[int(c) + 1], int(c));
        }
        QCOMPARE(threads.size(), m_trace.lanes.size());
        for (const Lane& l : m_trace.lanes) {
            const QJsonObject a = threads[{l.ctaIndex + 1, l.warpIndex}];
            QCOMPARE(a.value("name").toString(), QString::fromStdString(warpTrackName(l)));
            QVERIFY(a.value("name").toString().startsWith(QStringLiteral("w%1 ").arg(l.warpIndex)));
            QVERIFY(a.value("name").toString().endsWith(QStringLiteral("(wg%1)").arg(l.warpgroup)));
            QCOMPARE(a.value("role").toString(), QString::fromStdString(std::string(warpRoleName(l.role))));
        }
    }

    void oneCompleteEventPerInterval()
    {
        const std::string text = chrome(m_trace);
        const QJsonArray ev = events(parse(text));
        const TimeNs origin = exportOrigin(m_trace);
        // Collect the X events per (pid, tid) in order; compare with the lanes.
        std::map<std::pair<int, int>, std::vector<QJsonObject>> byLane;
        for (const auto& v : ev)
            if (v.toObject().value("ph").toString() == "X")
                byLane[{v.toObject().value("pid").toInt(), v.toObject().value("tid").toInt()}].push_back(v.toObject());
        std::size_t n = 0;
        for (const Lane& l : m_trace.lanes) {
            const auto& xs = byLane[{l.ctaIndex + 1, l.warpIndex}];
            QCOMPARE(xs.size(), l.size());
            for (std::size_t i = 0; i < l.size(); ++i) {
                const QJsonObject a = xs[i].value("args").toObject();
                QCOMPARE(xs[i].value("name").toString(), QString::fromStdString(std::string(intervalKindLabel(l.kind[i]))));
                QCOMPARE(a.value("kind").toString(), QString::fromStdString(std::string(intervalKindName(l.kind[i]))));
                QCOMPARE(a.value("kstep").toInt(), l.kstep[i]);
                QCOMPARE(a.value("slot").toInt(), int(l.slot[i]));
                QCOMPARE(qint64(std::llround(xs[i].value("ts").toDouble() * 1000)), l.start[i] - origin);
            }
            n += l.size();
        }
        QCOMPARE(n, m_trace.intervalCount());
        // Exact: every ts and dur has three decimals and the ns values sum up to the trace's.
        const QStringList ts = rawNumbers(text, "ts"), dur = rawNumbers(text, "dur");
        QCOMPARE(std::size_t(dur.size()), m_trace.intervalCount());
        qint64 sumDur = 0, sumTrace = 0;
        for (const QString& d : dur) {
            QVERIFY2(microsText(d) != LLONG_MIN, qPrintable(d));
            sumDur += microsText(d);
        }
        for (const QString& t : ts)
            QVERIFY2(microsText(t) >= 0, qPrintable(t));
        for (const Lane& l : m_trace.lanes)
            for (std::size_t i = 0; i < l.size(); ++i)
                sumTrace += l.duration[i];
        QCOMPARE(sumDur, sumTrace);
    }

    void loadsInFlightCounter()
    {
        const QJsonArray ev = events(parse(chrome(m_trace)));
        for (std::size_t c = 0; c < m_trace.ctas.size(); ++c) {
            // Reference: the number of loads with issue <= t < ready, at every issue time.
            int refMax = 0;
            for (const LoadTransfer& a : m_trace.loads) {
                if (a.ctaId != int(c))
                    continue;
                int n = 0;
                for (const LoadTransfer& b : m_trace.loads)
                    n += b.ctaId == int(c) && b.issue <= a.issue && a.issue < b.ready;
                refMax = std::max(refMax, n);
            }
            int seenMax = -1, last = -1, samples = 0;
            double prevTs = -1;
            for (const auto& v : ev) {
                const QJsonObject e = v.toObject();
                if (e.value("ph").toString() != "C" || e.value("pid").toInt() != int(c) + 1)
                    continue;
                QCOMPARE(e.value("name").toString(), QString("loads in flight"));
                QVERIFY(e.value("ts").toDouble() > prevTs);
                prevTs = e.value("ts").toDouble();
                last = e.value("args").toObject().value("loads").toInt();
                seenMax = std::max(seenMax, last);
                ++samples;
            }
            QVERIFY(samples > 0);
            QCOMPARE(seenMax, refMax);
            QCOMPARE(last, 0);
        }
        TraceExportOptions o;
        o.counters = false;
        for (const auto& v : events(parse(chrome(m_trace, o))))
            QVERIFY(v.toObject().value("ph").toString() != "C");
    }

    void flowsFromIssueToWait()
    {
        TraceExportOptions o;
        QVERIFY(!QString::fromStdString(chrome(m_trace, o)).contains("\"ph\":\"s\""));
        o.flows = true;
        const QJsonArray ev = events(parse(chrome(m_trace, o)));
        std::map<int, QJsonObject> starts, finishes;
        for (const auto& v : ev) {
            const QJsonObject e = v.toObject();
            if (e.value("ph").toString() == "s")
                starts[e.value("id").toInt()] = e;
            else if (e.value("ph").toString() == "f")
                finishes[e.value("id").toInt()] = e;
        }
        QVERIFY(!starts.empty());
        QCOMPARE(starts.size(), finishes.size());
        for (const auto& [id, s] : starts) {
            const QJsonObject f = finishes[id];
            QCOMPARE(f.value("bp").toString(), QString("e"));
            QVERIFY(f.value("ts").toDouble() >= s.value("ts").toDouble());
            QCOMPARE(f.value("pid").toInt(), s.value("pid").toInt());   // a load stays in its CTA
            QVERIFY(f.value("tid").toInt() != s.value("tid").toInt());  // producer -> consumer warp
        }
    }

    void laneMaskAndRange()
    {
        TraceExportOptions o;
        o.laneMask.assign(m_trace.lanes.size(), false);
        std::size_t pick = 0;
        while (m_trace.lanes[pick].size() < 3)
            ++pick;
        o.laneMask[pick] = true;
        QJsonArray ev = events(parse(chrome(m_trace, o)));
        int x = 0, threads = 0;
        for (const auto& v : ev) {
            x += v.toObject().value("ph").toString() == "X";
            threads += v.toObject().value("name").toString() == "thread_name";
        }
        QCOMPARE(threads, 1);
        QCOMPARE(std::size_t(x), m_trace.lanes[pick].size());

        // A range of 1 ns at the start of an interval that no other interval of the lane touches: that
        // interval alone, unclipped.
        const Lane& l = m_trace.lanes[pick];
        std::size_t i = 0;
        while (i < l.size() && !(l.duration[i] > 1 && (i == 0 || l.end(i - 1) < l.start[i]) &&
                                 (i + 1 == l.size() || l.start[i + 1] > l.start[i] + 1)))
            ++i;
        QVERIFY(i < l.size());
        o.range = std::pair(l.start[i] - m_trace.launch.start, l.start[i] - m_trace.launch.start + 1);
        ev = events(parse(chrome(m_trace, o)));
        x = 0;
        for (const auto& v : ev)
            if (v.toObject().value("ph").toString() == "X") {
                ++x;
                QCOMPARE(qint64(std::llround(v.toObject().value("dur").toDouble() * 1000)), qint64(l.duration[i]));
            }
        QCOMPARE(x, 1);

        o.range = std::pair(TimeNs(-1'000'000'000), TimeNs(-999'999'000));
        QVERIFY_THROWS_EXCEPTION(ExportError, chrome(m_trace, o));
        o.range.reset();
        o.laneMask.assign(m_trace.lanes.size(), false);
        QVERIFY_THROWS_EXCEPTION(ExportError, chrome(m_trace, o));
        o.laneMask.assign(2, true);
        QVERIFY_THROWS_EXCEPTION(ExportError, chrome(m_trace, o));
    }

    void rangeWithNestedIntervals()
    {
        // One warp whose user phase holds shorter phases: a range inside the second inner one keeps the outer
        // and that one, not the first inner one (which lies between them in start order).
        KernelTrace t;
        t.launch.start = 1000;
        t.launch.end = 1300;
        Cta c;
        c.smId = 2;
        c.blockLinear = 5;
        t.ctas.push_back(c);
        Lane l;
        l.role = WarpRole::Worker;
        for (auto [s, d] : {std::pair<TimeNs, int>{1000, 100}, {1010, 10}, {1030, 10}, {1200, 10}}) {
            l.start.push_back(s);
            l.duration.push_back(d);
            l.kind.push_back(IntervalKind::Compute);
            l.slot.push_back(-1);
            l.kstep.push_back(int(s));
        }
        t.lanes.push_back(l);
        TraceExportOptions o;
        o.range = std::pair(TimeNs(35), TimeNs(36));
        std::vector<int> ksteps;
        for (const auto& v : events(parse(chrome(t, o))))
            if (v.toObject().value("ph").toString() == "X")
                ksteps.push_back(v.toObject().value("args").toObject().value("kstep").toInt());
        QCOMPARE(ksteps, (std::vector<int>{1000, 1030}));
    }

    void userPhasesByTheirNames()
    {
        QTemporaryDir dir;
        const KernelTrace t = wstest::exportTrace(dir, true);
        const QJsonArray ev = events(parse(chrome(t)));
        int softmax = 0, rescale = 0;
        for (const auto& v : ev) {
            const QJsonObject e = v.toObject();
            if (e.value("name").toString() == "softmax (user)") {
                ++softmax;
                QCOMPARE(e.value("args").toObject().value("kind").toString(), QString("user:0"));
                QCOMPARE(e.value("cat").toString(), QString("user"));
            }
            rescale += e.value("name").toString() == "rescale";
        }
        QVERIFY(softmax > 0);
        QVERIFY(rescale > 0);
    }

    void gzipFileEqualsPlain()
    {
        const QString gz = m_dir.filePath("t.json.gz"), js = m_dir.filePath("t.json");
        const ExportStats a = exportKernelTrace(m_trace, {}, gz.toStdString());
        const ExportStats b = exportKernelTrace(m_trace, {}, js.toStdString());
        QCOMPARE(a.intervals, std::int64_t(m_trace.intervalCount()));
        QFile fg(gz), fj(js);
        QVERIFY(fg.open(QIODevice::ReadOnly) && fj.open(QIODevice::ReadOnly));
        const QByteArray g = fg.readAll(), j = fj.readAll();
        QCOMPARE(quint8(g[0]), quint8(0x1f));
        QCOMPARE(quint8(g[1]), quint8(0x8b));
        QVERIFY(g.size() < j.size() / 4);
        QCOMPARE(QByteArray::fromStdString(gunzip(g)), j);
        QCOMPARE(b.bytes, std::int64_t(j.size()));
        QCOMPARE(j.toStdString(), chrome(m_trace));
        QVERIFY(QDir(m_dir.path()).entryList({"*.tmp-*"}, QDir::Files | QDir::Hidden).isEmpty());
    }

    void failedExportLeavesNoFile()
    {
        const QString out = m_dir.filePath("empty-range.json");
        TraceExportOptions o;
        o.range = std::pair(TimeNs(-1'000'000'000), TimeNs(-999'999'000));
        try {
            exportKernelTrace(m_trace, o, out.toStdString());
            QFAIL("no error");
        } catch (const ExportError& e) {
            QVERIFY2(QString(e.what()).contains("empty-range.json"), e.what());
            QVERIFY2(QString(e.what()).contains("range"), e.what());
        }
        QVERIFY(!QFile::exists(out));
        QVERIFY(QDir(m_dir.path()).entryList({"*.tmp-*"}, QDir::Files | QDir::Hidden).isEmpty());
        QVERIFY_THROWS_EXCEPTION(ExportError, exportKernelTrace(m_trace, {}, m_dir.filePath("no/such/dir/x.json").toStdString()));
        QVERIFY_THROWS_EXCEPTION(ExportError, exportKernelTrace(m_trace, {}, m_dir.filePath("x.png").toStdString()));
    }

    void programView()
    {
        SyntheticProgramParams p;
        p.steps = 2;
        p.launchesPerStep = 20;
        const ProgramTrace prog = generateSyntheticProgram(p);
        std::string s;
        StringSink sink(&s);
        const ExportStats st = writeChromeProgram(prog, {}, sink);
        const QJsonObject doc = parse(s);
        QCOMPARE(doc.value("otherData").toObject().value("warpstage").toObject().value("view").toString(), QString("program"));
        int kernels = 0, mem = 0, nvtx = 0, api = 0;
        QStringList procs;
        for (const auto& v : events(doc)) {
            const QJsonObject e = v.toObject();
            if (e.value("name").toString() == "process_name")
                procs << e.value("args").toObject().value("name").toString();
            const QString cat = e.value("cat").toString();
            kernels += cat == "kernel";
            mem += cat == "memory";
            nvtx += cat == "nvtx";
            api += cat == "api";
        }
        QCOMPARE(std::size_t(kernels), prog.kernels.size());
        QCOMPARE(std::size_t(mem), prog.memOps.size());
        QCOMPARE(std::size_t(nvtx), prog.nvtx.size());
        QCOMPARE(std::size_t(api), prog.apiSpans.size());
        QCOMPARE(st.intervals, std::int64_t(kernels + mem + nvtx + api));
        QVERIFY(procs.contains("NVTX"));
        QVERIFY(procs.contains("CUDA API"));
        QVERIFY(procs.first().startsWith("GPU "));
        QVERIFY_THROWS_EXCEPTION(ExportError, exportProgramTrace(prog, {}, m_dir.filePath("p.perfetto-trace").toStdString()));
    }
};

QTEST_GUILESS_MAIN(TstExportChrome)
#include "tst_export_chrome.moc"
