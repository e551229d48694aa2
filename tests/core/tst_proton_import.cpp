// Proton intra-kernel trace import (core/include/warpstage/proton.h) against the real Triton 3.6 traces
// made on the H200 (tests/fixtures/proton/README.md): pid/tid parsing, mapping defaults and files,
// nesting, roles, inferred loads, cycles -> ns, the overlap metric of the imported gluon_ws matmul.
#include "warpstage/analysis.h"
#include "warpstage/proton.h"
#include "warpstage/query.h"
#include "warpstage/store.h"
#include "warpstage/traceexport.h"
#include "warpstage/traceimport.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

using namespace ws;

namespace {

// The fixtures read with Qt's JSON (test code only: the product reads them with its streaming reader).
std::vector<ProtonEvent> fixtureEvents(const char* name)
{
    QFile f(QStringLiteral(WARPSTAGE_PROTON_FIXTURES "/") + QString::fromLatin1(name));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const auto doc = QJsonDocument::fromJson(f.readAll());
    std::vector<ProtonEvent> out;
    for (const auto& v : doc.object().value("traceEvents").toArray()) {
        const auto o = v.toObject();
        ProtonEvent e;
        e.name = o.value("name").toString().toStdString();
        e.pid = o.value("pid").toString().toStdString();
        e.tid = o.value("tid").toString().toStdString();
        e.ts = o.value("ts").toDouble();
        e.dur = o.value("dur").toDouble();
        e.frequencyMhz = o.value("args").toObject().value("Frequency (MHz)").toDouble(1000.0);
        out.push_back(e);
    }
    return out;
}

std::map<IntervalKind, int> kindCounts(const KernelRecord& k)
{
    std::map<IntervalKind, int> m;
    for (const auto& iv : k.intervals)
        ++m[iv.kind];
    return m;
}

const ScopeRule* rule(const ScopeMapping& m, const char* name)
{
    return m.match(name);
}

std::string errorOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const ProtonError& e) {
        return e.what();
    } catch (const ImportError& e) {
        return e.what();
    }
    return "(no error)";
}

std::string fixturePath(const char* name)
{
    return std::string(WARPSTAGE_PROTON_FIXTURES "/") + name;
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(f.write(bytes), qint64(bytes.size()));
}

// A file with several launches of one kernel, built from a real fixture's structure: Proton's writer puts
// the launches one after the other in the file, each CTA's events together (warp by warp), and the
// timestamps of all launches on one time base (each CTA at its global-timer start minus the earliest one).
// Launch i is the fixture's events, `ts` shifted by i x shift µs, and with `moveSm` each CTA on another SM.
QByteArray multiLaunch(const char* name, int launches, double shiftUs, bool moveSm)
{
    QFile f(QStringLiteral(WARPSTAGE_PROTON_FIXTURES "/") + QString::fromLatin1(name));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const auto events = QJsonDocument::fromJson(f.readAll()).object().value("traceEvents").toArray();
    QJsonArray out;
    for (int i = 0; i < launches; ++i)
        for (const auto& v : events) {
            QJsonObject o = v.toObject();
            o["ts"] = o.value("ts").toDouble() + i * shiftUs;
            if (moveSm) {
                const auto p = parseProtonPid(o.value("pid").toString().toStdString());
                o["pid"] = QString::fromStdString(p->kernel + " Core" + std::to_string((p->sm + 7 * i) % 132) + " CTA"
                                                  + std::to_string(p->cta));
            }
            out.append(o);
        }
    QJsonObject doc;
    doc["displayTimeUnit"] = "ns";
    doc["traceEvents"] = out;
    return QJsonDocument(doc).toJson(QJsonDocument::Compact);
}

}  // namespace

class TestProtonImport : public QObject {
    Q_OBJECT
private slots:
    void pidAndTid()
    {
        auto p = parseProtonPid("ws_kernel Core124 CTA0");
        QVERIFY(p);
        QCOMPARE(p->kernel, std::string("ws_kernel"));
        QCOMPARE(p->sm, 124);
        QCOMPARE(p->cta, 0);
        p = parseProtonPid("my kernel name Core7 CTA12");   // a kernel name with blanks
        QVERIFY(p);
        QCOMPARE(p->kernel, std::string("my kernel name"));
        QCOMPARE(p->sm, 7);
        QCOMPARE(p->cta, 12);
        QVERIFY(!parseProtonPid("Kernel Call Path"));
        QVERIFY(!parseProtonPid("k Core CTA1"));
        QVERIFY(!parseProtonPid("k Core1 CTAx"));
        QVERIFY(!parseProtonPid("k Core-1 CTA1"));
        QVERIFY(!parseProtonPid("1234"));

        auto t = parseProtonTid("warp 6 (line 2)");
        QVERIFY(t);
        QCOMPARE(t->warp, 6);
        QCOMPARE(t->line, 2);
        QVERIFY(!parseProtonTid("warp 6"));
        QVERIFY(!parseProtonTid("warp x (line 0)"));
        QVERIFY(!parseProtonTid("thread 1 (line 0)"));
        QVERIFY(!parseProtonTid("warp 1 (line 0"));
    }

    void globs()
    {
        QVERIFY(globMatch("*wait*", "tma_wait"));
        QVERIFY(globMatch("*WAIT*", "tma_wait"));   // case-insensitive
        QVERIFY(globMatch("tma_?ait", "tma_wait"));
        QVERIFY(globMatch("*", ""));
        QVERIFY(!globMatch("*wait", "wait_ready"));
        QVERIFY(globMatch("*mma*wait*", "wgmma_last_wait"));
        QVERIFY(!globMatch("wgmma", "wgmma_wait"));
    }

    void defaultMapping()
    {
        const auto m = ScopeMapping::defaults();
        const std::map<std::string, IntervalKind> want = {
            {"tma_wait", IntervalKind::WaitData},     {"wait_ready", IntervalKind::WaitData},
            {"mbarrier_wait", IntervalKind::WaitData}, {"wait_full", IntervalKind::WaitData},
            {"wgmma_wait", IntervalKind::MmaWait},    {"wgmma_last_wait", IntervalKind::MmaWait},
            {"wait_empty", IntervalKind::WaitSlot},   {"free_slot", IntervalKind::WaitSlot},
            {"tma_issue", IntervalKind::IssueLoad},   {"load_x", IntervalKind::IssueLoad},
            {"wgmma_issue", IntervalKind::MmaIssue},  {"wgmma", IntervalKind::MmaIssue},
            {"tl_dot", IntervalKind::MmaIssue},       {"epilogue", IntervalKind::Epilogue},
            {"store", IntervalKind::Epilogue},
        };
        for (const auto& [name, kind] : want) {
            const auto* r = rule(m, name.c_str());
            QVERIFY2(r, name.c_str());
            QVERIFY2(r->kind == kind, (name + " -> " + std::string(intervalKindName(r->kind))).c_str());
            QVERIFY(!r->role);
        }
        QVERIFY(!rule(m, "kernel"));          // stays a user-named phase
        QVERIFY(!rule(m, "softmax"));
    }

    void mappingFile()
    {
        const auto m = ScopeMapping::parse("# my kernel\n"
                                           "kernel = setup\n"
                                           "\n"
                                           "load_*  =  load   worker   # synchronous loads\n"
                                           "tma_wait = user\n",
                                           "my.map");
        QCOMPARE(rule(m, "kernel")->kind, IntervalKind::Setup);
        QCOMPARE(rule(m, "kernel")->line, 2);
        QCOMPARE(rule(m, "load_x")->kind, IntervalKind::Load);
        QCOMPARE(*rule(m, "load_x")->role, WarpRole::Worker);
        QVERIFY(rule(m, "tma_wait")->userPhase);
        QCOMPARE(rule(m, "wgmma")->kind, IntervalKind::MmaIssue);   // the defaults still follow
        QCOMPARE(rule(m, "wgmma")->line, 0);
    }

    void mappingErrors_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("no '='") << "# ok\nkernel setup\n" << "m.map:2: expected 'GLOB = KIND [ROLE]', found no '='";
        QTest::newRow("empty glob") << "= setup\n" << "m.map:1: empty scope-name pattern before '='";
        QTest::newRow("blank in glob") << "a b = setup" << "m.map:1: the pattern 'a b' contains blanks";
        QTest::newRow("no kind") << "\n\n\nx =   # nothing\n" << "m.map:4: no phase kind after '='";
        QTest::newRow("unknown kind") << "x = waiting\n" << "m.map:1: unknown phase kind 'waiting' (known: other, setup";
        QTest::newRow("unknown role") << "x = setup boss\n" << "m.map:1: unknown role 'boss'";
        QTest::newRow("extra words") << "x = setup producer now\n" << "m.map:1: too many words after '='";
    }
    void mappingErrors()
    {
        QFETCH(QString, text);
        QFETCH(QString, message);
        const auto what = errorOf([&] { ScopeMapping::parse(text.toStdString(), "m.map"); });
        QVERIFY2(QString::fromStdString(what).startsWith(message), what.c_str());
    }

    void gluonWarpSpecialized()
    {
        const auto ev = fixtureEvents("gluon_ws.chrome_trace");
        QCOMPARE(ev.size(), std::size_t(656));
        ProtonImportOptions o;
        o.sourceName = "gluon_ws.chrome_trace";
        const auto imp = importProtonEvents(ev, o);
        QCOMPARE(imp.run.kernels.size(), std::size_t(1));
        const KernelRecord& k = imp.run.kernels[0];
        QCOMPARE(k.launch.name, std::string("ws_kernel"));
        QCOMPARE(k.ctas.size(), std::size_t(4));
        QCOMPARE(k.warps.size(), std::size_t(20));
        std::vector<int> sms;
        for (const auto& c : k.ctas)
            sms.push_back(c.smId);
        QCOMPARE(sms, (std::vector<int>{124, 126, 128, 130}));
        std::map<int, WarpRole> roles;
        for (const auto& w : k.warps)
            roles[w.warpIndex] = w.role;
        QCOMPARE(roles.size(), std::size_t(5));
        for (int w : {0, 1, 2, 3})
            QCOMPARE(roles[w], WarpRole::Consumer);
        QCOMPARE(roles[6], WarpRole::Producer);
        QCOMPARE(k.warps[4].warpgroup, 1);   // warp 6
        QCOMPARE(k.warps[0].roleName, std::string("consumer WG0"));
        // One interval per scope: nothing nests in this kernel.
        const auto kinds = kindCounts(k);
        QCOMPARE(kinds.at(IntervalKind::WaitData), 256);
        QCOMPARE(kinds.at(IntervalKind::MmaIssue), 256);
        QCOMPARE(kinds.at(IntervalKind::WaitSlot), 64);
        QCOMPARE(kinds.at(IntervalKind::IssueLoad), 64);
        QCOMPARE(kinds.at(IntervalKind::Epilogue), 16);
        QCOMPARE(k.intervals.size(), std::size_t(656));
        QVERIFY(k.phaseNames.empty());
        QVERIFY(imp.run.kernels[0].scopes.empty());
        // 16 k-steps per CTA, one issue and one wait each: 16 loads per CTA, k-steps 0..15.
        QCOMPARE(k.loads.size(), std::size_t(64));
        QCOMPARE(imp.report.loadsInferred, std::int64_t(64));
        std::set<int> ks;
        for (const auto& l : k.loads) {
            QVERIFY(l.ready >= l.issue);
            if (l.ctaId == 0)
                ks.insert(l.kstep);
        }
        QCOMPARE(int(ks.size()), 16);
        QCOMPARE(*ks.begin(), 0);
        QCOMPARE(*ks.rbegin(), 15);
        // Cycles -> ns at the assumed 1980 MHz: CTA0's first event is at ts 0.032 (32 ns of global timer),
        // warp 0's first wait_ready at ts 0.168 lasts 0.924 "µs" = 924 cycles.
        QCOMPARE(imp.report.clockMhz, 1980.0);
        QVERIFY(imp.run.info.notes.find("1980 MHz, assumed") != std::string::npos);
        QVERIFY(imp.run.info.notes.find("INFERRED") != std::string::npos);
        QCOMPARE(k.ctas[0].start, TimeNs(32));
        const Interval& first = k.intervals[0];   // warp 0 of CTA 0
        QCOMPARE(first.kind, IntervalKind::WaitData);
        QCOMPARE(first.start, TimeNs(std::llround(32 + (168 - 32) * 1000.0 / 1980)));
        QCOMPARE(first.duration, TimeNs(std::llround(924 * 1000.0 / 1980)));
    }

    void smClockOption()
    {
        const auto ev = fixtureEvents("gluon_ws.chrome_trace");
        ProtonImportOptions o;
        o.smClockMhz = 1000.0;   // Proton's own assumption: ns = the file's numbers × 1000
        const auto imp = importProtonEvents(ev, o);
        QCOMPARE(imp.report.clockSource, std::string("--sm-clock-mhz"));
        QCOMPARE(imp.run.kernels[0].intervals[0].start, TimeNs(168));
        QCOMPARE(imp.run.kernels[0].intervals[0].duration, TimeNs(924));
        QCOMPARE(imp.run.info.device.smClockKHz, 1000000);
        o.smClockMhz = -5;
        QVERIFY(errorOf([&] { importProtonEvents(ev, o); }).find("--sm-clock-mhz") != std::string::npos);
    }

    void overlapOfImportedMatmul()
    {
        // The pipeline metrics on the imported warp-specialized matmul, through the store like a user's file.
        const auto imp = importProtonEvents(fixtureEvents("gluon_ws.chrome_trace"), {});
        QTemporaryDir dir;
        const std::string path = dir.filePath("ws.wstrace").toStdString();
        RowId kernelId = 0;
        {
            auto store = TraceStore::openForWriting(path);
            const RowId runId = store.writeRun(imp.run);
            kernelId = store.kernels(runId).at(0).id;
        }
        const auto trace = TraceStore::openReadOnly(path).loadKernel(kernelId);
        const auto m = analyze(trace);
        const auto& g = m.total;
        QCOMPARE(g.producerLanes, std::int64_t(4));
        QCOMPARE(g.computeLanes, std::int64_t(16));
        QCOMPARE(g.loadCount, std::int64_t(64));
        // A 3-slot ring feeding synchronous wgmma: the MMAs run while the next loads are in flight most of
        // the time, the consumers wait little, the producer mostly waits for a free slot.
        qInfo("gluon_ws: compute_overlap_share %.3f load_hidden_share %.3f exposed_load_wait_share %.3f "
              "back_pressure_share %.3f consumer_busy_share %.3f max_loads_in_flight %lld",
              g.computeOverlapShare, g.loadHiddenShare, g.exposedLoadWaitShare, g.backPressureShare,
              g.consumerBusyShare, static_cast<long long>(m.maxLoadsInFlight));
        QVERIFY(g.computeOverlapShare > 0.5 && g.computeOverlapShare <= 1.0);
        QVERIFY(g.exposedLoadWaitShare > 0.0 && g.exposedLoadWaitShare < 0.5);
        QVERIFY(g.backPressureShare > 0.3);
        QVERIFY(m.maxLoadsInFlight >= 2 && m.maxLoadsInFlight <= 4 * 3);
    }

    void nestedScopes()
    {
        const auto imp = importProtonEvents(fixtureEvents("triton_add.chrome_trace"), {});
        const KernelRecord& k = imp.run.kernels.at(0);
        QCOMPARE(k.launch.name, std::string("add_kernel"));
        QCOMPARE(k.ctas.size(), std::size_t(16));
        QCOMPARE(k.warps.size(), std::size_t(64));
        QCOMPARE(k.launch.grid[0], 16);
        QCOMPARE(k.launch.block[0], 128);
        QCOMPARE(k.ctas[0].smId, 128);      // CTA0 ran on Core128
        QCOMPARE(k.ctas[8].smId, 0);
        QCOMPARE(k.phaseNames, std::vector<std::string>{"kernel"});   // the one unmapped scope
        QCOMPARE(imp.report.unmappedScopes, std::vector<std::string>{"kernel"});
        // Warp 0 of CTA 0 (ns at 1980 MHz, from the file: kernel ⊃ load_and_add ⊃ load_x, load_y; store):
        // the innermost scope at each instant, outer ones filling the gaps between their children.
        std::vector<std::pair<std::string, TimeNs>> lane;
        for (const auto& iv : k.intervals)
            if (iv.warpId == 0)
                lane.push_back({isUserPhase(iv.kind) ? k.phaseNames[static_cast<std::uint8_t>(iv.kind) - kUserPhaseBase]
                                                     : std::string(intervalKindName(iv.kind)),
                                iv.start});
        const std::vector<std::string> want = {"kernel",     "issue_load", "issue_load", "issue_load", "issue_load",
                                               "issue_load", "kernel",     "epilogue",   "kernel"};
        QCOMPARE(int(lane.size()), int(want.size()));
        for (std::size_t i = 0; i < want.size(); ++i)
            QCOMPARE(lane[i].first, want[i]);
        for (std::size_t i = 1; i < lane.size(); ++i)
            QVERIFY(lane[i].second > lane[i - 1].second);
        // The pieces tile the outer scope exactly: kernel 70..679 ns.
        TimeNs lo = 1 << 30, hi = 0;
        for (const auto& iv : k.intervals)
            if (iv.warpId == 0) {
                lo = std::min(lo, iv.start);
                hi = std::max(hi, iv.start + iv.duration);
            }
        QCOMPARE(lo, TimeNs(70));
        QCOMPARE(hi, TimeNs(70 + 609));
        // Brackets: kernel (depth 0) and load_and_add (depth 1) on every warp.
        QCOMPARE(imp.run.kernels[0].scopes.size(), std::size_t(2 * 64));
        QCOMPARE(imp.run.kernels[0].scopes[0].name, std::string("kernel"));
        QCOMPARE(imp.run.kernels[0].scopes[0].depth, 0);
        QCOMPARE(imp.run.kernels[0].scopes[1].name, std::string("load_and_add"));
        QCOMPARE(imp.run.kernels[0].scopes[1].depth, 1);
        QCOMPARE(imp.run.kernels[0].scopes[1].start, TimeNs(102));
        // No waits: no loads are inferred, and the notes say so.
        QVERIFY(k.loads.empty());
        QVERIFY(imp.run.info.notes.find("Loads: none inferred") != std::string::npos);
    }

    // The nesting goes through the store (schema 6, scope_spans): imported triton_add, written and loaded, gives
    // on every one of the 64 warps the rows kernel (depth 0) and load_and_add (depth 1), each around the warp's
    // phases; load_x / load_y / store are innermost (intervals), not brackets.
    void nestedScopesStored()
    {
        const auto imp = importProtonEvents(fixtureEvents("triton_add.chrome_trace"), {});
        QTemporaryDir dir;
        const std::string path = dir.filePath("add.wstrace").toStdString();
        RowId kernelId = 0;
        {
            auto store = TraceStore::openForWriting(path);
            kernelId = store.kernels(store.writeRun(imp.run)).at(0).id;
        }
        const KernelTrace t = TraceStore::openReadOnly(path).loadKernel(kernelId);
        QCOMPARE(t.lanes.size(), std::size_t(64));
        QCOMPARE(t.scopes.size(), std::size_t(2 * 64));
        std::map<RowId, std::vector<const ScopeSpan*>> perWarp;
        for (const ScopeSpan& s : t.scopes)
            perWarp[s.warpId].push_back(&s);
        QCOMPARE(perWarp.size(), std::size_t(64));
        for (const Lane& l : t.lanes) {
            const auto& v = perWarp[l.warpId];
            QCOMPARE(v.size(), std::size_t(2));
            QCOMPARE(v[0]->name, std::string("kernel"));
            QCOMPARE(v[0]->depth, 0);
            QCOMPARE(v[1]->name, std::string("load_and_add"));
            QCOMPARE(v[1]->depth, 1);
            QVERIFY(v[0]->start <= v[1]->start && v[1]->end <= v[0]->end);
            QVERIFY(v[1]->end > v[1]->start);
            // the outer scope spans the lane's phases exactly (its pieces fill the gaps)
            QCOMPARE(v[0]->start, l.start.front());
            QCOMPARE(v[0]->end, l.start.back() + l.duration.back());
        }
        // CTA 0 warp 0 as in nestedScopes(): load_and_add starts at 102 ns
        const auto first = std::find_if(t.lanes.begin(), t.lanes.end(), [&](const Lane& l) {
            return t.ctas[std::size_t(l.ctaIndex)].blockLinear == 0 && l.warpIndex == 0;
        });
        QVERIFY(first != t.lanes.end());
        QCOMPARE(perWarp[first->warpId][1]->start, TimeNs(102));
        QCOMPARE(perWarp[first->warpId][0]->start, TimeNs(70));
        QCOMPARE(perWarp[first->warpId][0]->end, TimeNs(70 + 609));
    }

    void pipelinedPrologueOutsideScopes()
    {
        // One warpgroup issues and computes; the k-step-0 load is issued before the loop, outside any scope:
        // 15 issue scopes, 16 waits per warp -> issue j loads k-step j + 1.
        const auto imp = importProtonEvents(fixtureEvents("gluon_pipelined.chrome_trace"), {});
        const KernelRecord& k = imp.run.kernels.at(0);
        QCOMPARE(k.ctas.size(), std::size_t(4));
        QCOMPARE(k.warps.size(), std::size_t(16));
        for (const auto& w : k.warps)
            QCOMPARE(w.role, WarpRole::Worker);
        QCOMPARE(k.loads.size(), std::size_t(4 * 15));
        std::set<int> ks;
        for (const auto& l : k.loads)
            ks.insert(l.kstep);
        QCOMPARE(*ks.begin(), 1);
        QCOMPARE(*ks.rbegin(), 15);
        for (const auto& iv : k.intervals)
            if (iv.kind == IntervalKind::IssueLoad)
                QVERIFY(iv.kstep >= 1 && iv.kstep <= 15);
        const auto kinds = kindCounts(k);
        QCOMPARE(kinds.at(IntervalKind::MmaWait), 256 + 16);   // wgmma_wait + wgmma_last_wait
        QCOMPARE(kinds.at(IntervalKind::WaitData), 256);
        QCOMPARE(imp.run.kernels[0].scopes.size(), std::size_t(16));        // 'kernel' around everything, per warp
    }


    void severalLaunchesOneKernelEach_data()
    {
        QTest::addColumn<bool>("moveSm");
        QTest::newRow("each launch on other SMs") << true;
        QTest::newRow("same SMs, told apart by the order") << false;
    }
    void severalLaunchesOneKernelEach()
    {
        QFETCH(bool, moveSm);
        QTemporaryDir dir;
        const QString in = dir.filePath("add3.chrome_trace");
        writeFile(in, multiLaunch("triton_add.chrome_trace", 3, 50.0, moveSm));
        const auto one = importProtonEvents(fixtureEvents("triton_add.chrome_trace"), {});
        const KernelRecord& ref = one.run.kernels.at(0);

        const auto imp = importProtonFile(in.toStdString(), {});
        QCOMPARE(imp.run.kernels.size(), std::size_t(3));
        QCOMPARE(imp.report.launches, 3);
        for (int i = 0; i < 3; ++i) {
            const KernelRecord& k = imp.run.kernels[std::size_t(i)];
            QCOMPARE(k.launch.name, ref.launch.name);
            QCOMPARE(k.launch.launchIndex, i);
            QCOMPARE(k.ctas.size(), ref.ctas.size());
            QCOMPARE(k.warps.size(), ref.warps.size());
            QCOMPARE(k.intervals.size(), ref.intervals.size());
            QCOMPARE(k.scopes.size(), ref.scopes.size());
            // the same scopes, 50 "µs" (50 000 ns at Proton's 1000 MHz frequency) later per launch
            QCOMPARE(k.launch.start, ref.launch.start + TimeNs(i) * 50000);
            QCOMPARE(k.launch.end, ref.launch.end + TimeNs(i) * 50000);
            for (std::size_t j = 0; j < k.intervals.size(); ++j) {
                QCOMPARE(k.intervals[j].start, ref.intervals[j].start + TimeNs(i) * 50000);
                QCOMPARE(k.intervals[j].duration, ref.intervals[j].duration);
                QCOMPARE(k.intervals[j].kind, ref.intervals[j].kind);
            }
            for (std::size_t c = 0; c < k.ctas.size(); ++c)
                QCOMPARE(k.ctas[c].smId, moveSm ? (ref.ctas[c].smId + 7 * i) % 132 : ref.ctas[c].smId);
        }
        QVERIFY(imp.run.info.notes.find("Launches: 3") != std::string::npos);

        // --launch N: only that one
        ProtonImportOptions o;
        o.launch = 2;
        const auto only = importProtonFile(in.toStdString(), o);
        QCOMPARE(only.run.kernels.size(), std::size_t(1));
        QCOMPARE(only.run.kernels[0].launch.launchIndex, 2);
        QCOMPARE(only.run.kernels[0].launch.start, ref.launch.start + 100000);
        o.launch = 3;
        const auto what = errorOf([&] { importProtonFile(in.toStdString(), o); });
        QVERIFY2(what.find("--launch 3: the file holds 3 launches per kernel (0 to 2)") != std::string::npos, what.c_str());

        // through `warpstage import`'s path, into the store: three kernels of one run
        ImportOptions io;
        const std::string out = dir.filePath("add3.wstrace").toStdString();
        importTraces({in.toStdString()}, out, io);
        const auto store = TraceStore::openReadOnly(out);
        const auto runs = store.runs();
        QCOMPARE(runs.size(), std::size_t(1));
        QCOMPARE(store.kernels(runs[0].id).size(), std::size_t(3));
    }

    // The real multi-launch file Proton wrote on the H200 (scripts/proton/make_fixtures.py triton_add_multi): three
    // launches of one kernel, 4 CTAs x 4 warps each, one after the other on one time base.
    void realMultiLaunchFixture()
    {
        const auto imp = importProtonFile(fixturePath("triton_add_multi.chrome_trace"), {});
        QCOMPARE(imp.run.kernels.size(), std::size_t(3));
        QCOMPARE(imp.report.launches, 3);
        for (int i = 0; i < 3; ++i) {
            const KernelRecord& k = imp.run.kernels[std::size_t(i)];
            QCOMPARE(k.launch.name, imp.run.kernels[0].launch.name);
            QCOMPARE(k.launch.launchIndex, i);
            QCOMPARE(k.ctas.size(), std::size_t(4));
            QCOMPARE(k.warps.size(), std::size_t(16));
            QCOMPARE(k.intervals.size(), imp.run.kernels[0].intervals.size());
            QVERIFY(!k.intervals.empty());
            if (i > 0)   // launches do not overlap: each starts after the previous one ended
                QVERIFY(k.launch.start >= imp.run.kernels[std::size_t(i - 1)].launch.end);
        }
        QVERIFY(imp.run.info.notes.find("Launches: 3") != std::string::npos);
    }

    void scopesSurviveExportAndImport()
    {
        // Proton fixture -> Warpstage file -> Chrome JSON -> imported back: the same brackets per warp.
        QTemporaryDir dir;
        const std::string first = dir.filePath("add.wstrace").toStdString();
        importTraces({fixturePath("triton_add.chrome_trace")}, first, {});
        const auto a = TraceStore::openReadOnly(first);
        const RowId ka = a.kernels(a.runs().at(0).id).at(0).id;
        for (int launch = 0; launch < 2; ++launch) {
        // launch 1: the second launch of a two-launch file, 50 µs later (the export's origin is not 0 there)
        const std::string src = launch == 0 ? first : dir.filePath("add2.wstrace").toStdString();
        if (launch == 1) {
            const QString in = dir.filePath("add2.chrome_trace");
            writeFile(in, multiLaunch("triton_add.chrome_trace", 2, 50.0, false));
            importTraces({in.toStdString()}, src, {});
        }
        const auto sa = TraceStore::openReadOnly(src);
        const KernelTrace ta = sa.loadKernel(sa.kernels(sa.runs().at(0).id).at(std::size_t(launch)).id);
        QCOMPARE(ta.scopes.size(), std::size_t(128));
        const std::string json = dir.filePath("add" + QString::number(launch) + ".json").toStdString();
        const ExportStats st = exportKernelTrace(ta, {}, json);
        QCOMPARE(st.scopes, std::int64_t(128));
        const std::string second = dir.filePath("back" + QString::number(launch) + ".wstrace").toStdString();
        importTraces({json}, second, {});
        const auto b = TraceStore::openReadOnly(second);
        const KernelTrace tb = b.loadKernel(b.kernels(b.runs().at(0).id).at(0).id);
        QVERIFY(launch == 0 || ta.scopes.front().start > 50000);
        using Key = std::tuple<int, int, int, std::string, TimeNs, TimeNs>;   // CTA, warp, depth, name, span
        auto keys = [](const KernelTrace& t) {
            std::map<RowId, const Lane*> lane;
            for (const Lane& l : t.lanes)
                lane[l.warpId] = &l;
            std::multiset<Key> out;
            for (const ScopeSpan& s : t.scopes) {
                const Lane* l = lane.at(s.warpId);
                out.insert({t.ctas[std::size_t(l->ctaIndex)].blockLinear, l->warpIndex, s.depth, s.name, s.start, s.end});
            }
            return out;
        };
        QCOMPARE(tb.scopes.size(), ta.scopes.size());
        QVERIFY(keys(ta) == keys(tb));
        QCOMPARE(tb.intervalCount(), ta.intervalCount());   // and the phases are not mistaken for scopes
        }

        // SQL: the `scopes` view of `warpstage query` (and of the loadable extension).
        std::ostringstream out;
        const auto rows = runQuery(first,
                                   "SELECT count(*), min(depth), max(depth), sum(name = 'load_and_add'), min(dur_ns) > 0 "
                                   "FROM scopes WHERE kernel_id = " + std::to_string(ka),
                                   QueryFormat::Csv, out);
        QCOMPARE(rows, std::int64_t(1));
        QVERIFY2(out.str().find("\n128,0,1,64,1\n") != std::string::npos, out.str().c_str());
        std::ostringstream one;
        runQuery(first, "SELECT cta, warp, depth, name, start_ns, end_ns FROM scopes WHERE cta = 0 AND warp = 0 ORDER BY depth",
                 QueryFormat::Csv, one);
        QVERIFY2(one.str().find("0,0,0,kernel,") != std::string::npos, one.str().c_str());
        QVERIFY2(one.str().find("0,0,1,load_and_add,") != std::string::npos, one.str().c_str());
    }

    void notAProtonTrace()
    {
        std::vector<ProtonEvent> ev(3);
        ev[0].pid = "1234";
        ev[0].tid = "5";
        ev[1].pid = "Kernel Call Path";
        ev[1].tid = "path 0";
        const auto what = errorOf([&] { importProtonEvents(ev, {}); });
        QVERIFY2(what.find("not a Proton intra-kernel trace") != std::string::npos, what.c_str());
        QVERIFY(errorOf([&] { importProtonEvents({}, {}); }).find("0 events read") != std::string::npos);
    }

    void unknownScopesAreKept()
    {
        std::vector<ProtonEvent> ev;
        const auto add = [&](const char* name, double ts, double dur) {
            ProtonEvent e;
            e.name = name;
            e.pid = "k Core3 CTA0";
            e.tid = "warp 0 (line 0)";
            e.ts = ts;
            e.dur = dur;
            ev.push_back(e);
        };
        add("softmax", 0, 1);
        add("rescale", 1, 1);
        add("softmax", 2, 1);
        add("tick", 3, 0);   // zero length: kept as a zero-length interval
        const auto imp = importProtonEvents(ev, {});
        const auto& k = imp.run.kernels[0];
        QCOMPARE(k.phaseNames, (std::vector<std::string>{"softmax", "rescale", "tick"}));
        QCOMPARE(k.intervals.size(), std::size_t(4));
        QCOMPARE(int(static_cast<std::uint8_t>(k.intervals[2].kind)), int(kUserPhaseBase));
        QCOMPARE(k.intervals[3].duration, TimeNs(0));
        QCOMPARE(k.warps[0].role, WarpRole::Unknown);
        QVERIFY(imp.run.info.notes.find("rescale softmax tick") != std::string::npos);
    }
    // --- files, through the shared streaming reader and `warpstage import`'s importTraces ---------------
    void detectedFromContent()
    {
        for (const char* f : {"triton_add.chrome_trace", "gluon_pipelined.chrome_trace", "gluon_ws.chrome_trace"}) {
            QVERIFY2(looksLikeProtonTrace(fixturePath(f)), f);
            QVERIFY2(detectImportFormat(fixturePath(f)) == ImportFormat::ProtonJson, f);
        }
    }

    // Detection reads only the first events, not the whole document: a Proton file cut in the middle of its event
    // array is still detected as Proton (the import, which reads it once, then says it is truncated).
    void detectedFromTheFirstEvents()
    {
        QFile in(QString::fromStdString(fixturePath("triton_add.chrome_trace")));
        QVERIFY(in.open(QIODevice::ReadOnly));
        const QByteArray all = in.readAll();
        QTemporaryDir dir;
        const QString cut = dir.filePath(QStringLiteral("cut.chrome_trace"));
        writeFile(cut, all.left(all.size() / 2));
        QVERIFY(detectImportFormat(cut.toStdString()) == ImportFormat::ProtonJson);
        try {
            importProtonFile(cut.toStdString(), {});
            QFAIL("a truncated file was imported");
        } catch (const ProtonError& e) {
            QVERIFY2(std::string(e.what()).find("cut.chrome_trace") != std::string::npos, e.what());
        }
    }

    void fileImportEqualsEventImport()
    {
        // The streaming reader gives the same run as the events Qt's JSON reads.
        for (const char* f : {"triton_add.chrome_trace", "gluon_pipelined.chrome_trace", "gluon_ws.chrome_trace"}) {
            const auto a = importProtonFile(fixturePath(f), {});
            const auto b = importProtonEvents(fixtureEvents(f), {});
            const auto& ka = a.run.kernels.at(0);
            const auto& kb = b.run.kernels.at(0);
            QCOMPARE(ka.intervals.size(), kb.intervals.size());
            for (std::size_t i = 0; i < ka.intervals.size(); ++i) {
                QCOMPARE(ka.intervals[i].start, kb.intervals[i].start);
                QCOMPARE(ka.intervals[i].duration, kb.intervals[i].duration);
                QCOMPARE(ka.intervals[i].kind, kb.intervals[i].kind);
            }
            QCOMPARE(ka.loads.size(), kb.loads.size());
            QCOMPARE(a.run.info.commandLine, "warpstage import " + fixturePath(f));
        }
    }

    void importCommandWritesRuns()
    {
        QTemporaryDir dir;
        const std::string out = dir.filePath("p.wstrace").toStdString();
        const auto runs = importTraces({fixturePath("gluon_ws.chrome_trace"), fixturePath("triton_add.chrome_trace")}, out);
        QCOMPARE(runs.size(), std::size_t(2));
        QCOMPARE(runs[0].format, ImportFormat::ProtonJson);
        QCOMPARE(runs[0].intervals, std::int64_t(656));
        auto store = TraceStore::openReadOnly(out);
        const auto infos = store.runs();
        QCOMPARE(infos.size(), std::size_t(2));
        QVERIFY(infos[0].notes.find("1980 MHz, assumed") != std::string::npos);
        QVERIFY(infos[0].notes.find("first ts 0.032") != std::string::npos);   // the original numbers
        const auto kernel = store.kernels(infos[1].id).at(0);
        const auto trace = store.loadKernel(kernel.id);
        QCOMPARE(trace.phaseNames, std::vector<std::string>{"kernel"});      // unmapped: a user phase, stored
        QCOMPARE(trace.lanes.size(), std::size_t(64));
        // --sm-clock-mhz and --mapping reach the importer.
        const QString map = dir.filePath("m.map");
        writeFile(map, "kernel = setup\n");
        const std::string out2 = dir.filePath("q.wstrace").toStdString();
        ImportOptions o;
        o.smClockMhz = 1000.0;
        o.mappingFile = map.toStdString();
        importTraces({fixturePath("triton_add.chrome_trace")}, out2, o);
        auto s2 = TraceStore::openReadOnly(out2);
        const auto t2 = s2.loadKernel(s2.kernels(s2.runs().at(0).id).at(0).id);
        QVERIFY(t2.phaseNames.empty());
        QCOMPARE(t2.run.device.smClockKHz, 1000000);
        QVERIFY(t2.run.notes.find("--sm-clock-mhz") != std::string::npos);
    }

    void badInput_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("mapping");
        QTest::addColumn<QString>("message");
        QFile f(QString::fromStdString(fixturePath("gluon_ws.chrome_trace")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray ws = f.readAll();
        QTest::newRow("truncated") << ws.left(ws.size() / 2) << QString() << "truncated JSON";
        QTest::newRow("not JSON") << QByteArray("Core1 CTA1 warp 0") << QString() << "not JSON";
        QTest::newRow("other Chrome trace")
            << QByteArray(R"({"traceEvents":[{"ph":"X","name":"a","pid":12,"tid":3,"ts":0,"dur":1}]})") << QString()
            << "nor by Triton's Proton";
        QTest::newRow("mapping error") << ws << QStringLiteral("tma_issue = issue_load\nwgmma = mma\n")
                                       << ":2: unknown phase kind 'mma'";
        QTest::newRow("bad ts")
            << QByteArray(R"j({"traceEvents":[{"ph":"X","name":"a","pid":"k Core1 CTA0","tid":"warp 0 (line 0)","ts":"x","dur":1}]})j")
            << QString() << "an event of k Core1 CTA0: \"ts\" is not a number";
    }
    void badInput()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, mapping);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString in = dir.filePath("in.chrome_trace");
        writeFile(in, content);
        ImportOptions o;
        if (!mapping.isEmpty()) {
            o.mappingFile = dir.filePath("bad.map").toStdString();
            writeFile(QString::fromStdString(o.mappingFile), mapping.toUtf8());
        }
        const std::string out = dir.filePath("out.wstrace").toStdString();
        const auto what = errorOf([&] { importTraces({in.toStdString()}, out, o); });
        QVERIFY2(QString::fromStdString(what).contains(message), what.c_str());
        // Nothing written on failure: no output, no temporary file left next to it.
        QVERIFY(!QFile::exists(QString::fromStdString(out)));
        QStringList left = QDir(dir.path()).entryList(QDir::Files);
        left.removeAll("in.chrome_trace");
        left.removeAll("bad.map");
        QVERIFY2(left.isEmpty(), qPrintable(left.join(", ")));
    }
};

QTEST_GUILESS_MAIN(TestProtonImport)
#include "tst_proton_import.moc"
