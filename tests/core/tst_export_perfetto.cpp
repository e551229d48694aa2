// tst_export_perfetto: the Perfetto TrackEvent export (core/src/export_perfetto.cpp), parsed back field
// by field with the small protobuf reader below (independent of the encoder). This checks the wire
// format and the field numbers we chose from Perfetto's protos; whether trace_processor and the Perfetto
// UI read it as intended cannot be checked here (no trace_processor on this machine; docs/interop.md).
#include "exporttestutil.h"

#include "warpstage/traceexport.h"

#include <map>
#include <set>

using namespace ws;

namespace {

// One protobuf message: field number -> its values (varint/fixed as integers, length-delimited as bytes).
struct Msg {
    std::multimap<int, std::uint64_t> ints;
    std::multimap<int, std::string> bytes;
    bool ok = true;
    std::uint64_t u(int f, std::uint64_t def = ~0ull) const
    {
        const auto it = ints.find(f);
        return it == ints.end() ? def : it->second;
    }
    bool has(int f) const { return ints.count(f) || bytes.count(f); }
    std::string b(int f) const
    {
        const auto it = bytes.find(f);
        return it == bytes.end() ? std::string() : it->second;
    }
};

Msg decode(std::string_view s)
{
    Msg m;
    std::size_t i = 0;
    auto varint = [&](std::uint64_t* v) {
        *v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (i >= s.size())
                return false;
            const auto c = static_cast<unsigned char>(s[i++]);
            *v |= std::uint64_t(c & 0x7f) << shift;
            if (!(c & 0x80))
                return true;
        }
        return false;
    };
    while (i < s.size()) {
        std::uint64_t key = 0, v = 0;
        if (!varint(&key)) {
            m.ok = false;
            return m;
        }
        const int field = int(key >> 3), wt = int(key & 7);
        if (wt == 0) {
            if (!varint(&v)) {
                m.ok = false;
                return m;
            }
            m.ints.emplace(field, v);
        } else if (wt == 1) {
            if (i + 8 > s.size()) {
                m.ok = false;
                return m;
            }
            v = 0;
            for (int k = 0; k < 8; ++k)
                v |= std::uint64_t(static_cast<unsigned char>(s[i + std::size_t(k)])) << (8 * k);
            i += 8;
            m.ints.emplace(field, v);
        } else if (wt == 2) {
            if (!varint(&v) || i + v > s.size()) {
                m.ok = false;
                return m;
            }
            m.bytes.emplace(field, std::string(s.substr(i, v)));
            i += v;
        } else {
            m.ok = false;
            return m;
        }
    }
    return m;
}

std::vector<Msg> packets(const std::string& trace)
{
    const Msg t = decode(trace);
    std::vector<Msg> out;
    if (!t.ok || !t.ints.empty())
        return out;   // a Trace holds nothing but field 1 (packets)
    for (auto [it, end] = t.bytes.equal_range(1); it != end; ++it)
        out.push_back(decode(it->second));
    return out;
}

std::string perfetto(const KernelTrace& t, const TraceExportOptions& o = {})
{
    std::string s;
    StringSink sink(&s);
    writePerfettoTrace(t, o, sink);
    return s;
}

}  // namespace

class TstExportPerfetto : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    KernelTrace m_trace;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_trace = wstest::exportTrace(m_dir);
        QVERIFY(m_trace.intervalCount() > 50);
    }

    void parsesBackToTheTrace()
    {
        const std::vector<Msg> ps = packets(perfetto(m_trace));
        QVERIFY(ps.size() > m_trace.intervalCount());
        for (const Msg& p : ps) {
            QVERIFY(p.ok);
            QCOMPARE(p.u(10), std::uint64_t(1));   // trusted_packet_sequence_id
        }
        // First packet: clears the incremental state and interns the names.
        QCOMPARE(ps[0].u(13), std::uint64_t(1));   // SEQ_INCREMENTAL_STATE_CLEARED
        const Msg interned = decode(ps[0].b(12));
        std::map<std::uint64_t, std::string> names, annNames;
        for (auto [it, end] = interned.bytes.equal_range(2); it != end; ++it) {
            const Msg n = decode(it->second);
            names[n.u(1)] = n.b(2);
        }
        for (auto [it, end] = interned.bytes.equal_range(3); it != end; ++it) {
            const Msg n = decode(it->second);
            annNames[n.u(1)] = n.b(2);
        }
        QCOMPARE(names[std::uint64_t(IntervalKind::WaitData) + 1], std::string(intervalKindLabel(IntervalKind::WaitData)));

        // Tracks: SM > CTA > warp, parents declared before children.
        std::map<std::uint64_t, Msg> tracks;
        std::vector<std::uint64_t> order;
        for (const Msg& p : ps)
            if (p.has(60)) {
                const Msg d = decode(p.b(60));
                if (d.has(5))
                    QVERIFY2(tracks.count(d.u(5)), "a track's parent comes first");
                tracks[d.u(1)] = d;
                order.push_back(d.u(1));
            }
        std::set<std::string> sms, ctas, warps;
        std::size_t counters = 0;
        for (const auto& [uuid, d] : tracks) {
            if (d.has(8)) {
                ++counters;
                QCOMPARE(d.b(2), std::string("loads in flight"));
                continue;
            }
            if (!d.has(5))
                sms.insert(d.b(2));
            else if (!tracks[d.u(5)].has(5))
                ctas.insert(d.b(2));
            else
                warps.insert(tracks[d.u(5)].b(2) + "|" + d.b(2));
        }
        QCOMPARE(ctas.size(), m_trace.ctas.size());
        QCOMPARE(counters, m_trace.ctas.size());
        QCOMPARE(warps.size(), m_trace.lanes.size());
        for (const Lane& l : m_trace.lanes)
            QVERIFY(warps.count("CTA " + std::to_string(m_trace.ctas[std::size_t(l.ctaIndex)].blockLinear) + "|" + warpTrackName(l)));
        std::set<int> smIds;
        for (const Cta& c : m_trace.ctas)
            smIds.insert(c.smId);
        QCOMPARE(sms.size(), smIds.size());

        // Slices: begin/end pairs per warp track match the lane's intervals exactly.
        const TimeNs origin = exportOrigin(m_trace);
        std::map<std::uint64_t, std::vector<std::pair<std::uint64_t, Msg>>> byTrack;
        std::size_t counterEvents = 0;
        for (const Msg& p : ps)
            if (p.has(11)) {
                const Msg e = decode(p.b(11));
                if (e.u(9) == 4) {
                    ++counterEvents;
                    QVERIFY(tracks[e.u(11)].has(8));
                    continue;
                }
                byTrack[e.u(11)].emplace_back(p.u(8), e);
            }
        QVERIFY(counterEvents > 0);
        std::size_t matched = 0;
        for (const auto& [uuid, evs] : byTrack) {
            const Msg& d = tracks[uuid];
            const Lane* lane = nullptr;
            for (const Lane& l : m_trace.lanes)
                if (warpTrackName(l) == d.b(2) &&
                    "CTA " + std::to_string(m_trace.ctas[std::size_t(l.ctaIndex)].blockLinear) == tracks[d.u(5)].b(2))
                    lane = &l;
            QVERIFY(lane);
            QCOMPARE(evs.size(), 2 * lane->size());
            for (std::size_t i = 0; i < lane->size(); ++i) {
                const auto& [t0, b] = evs[2 * i];
                const auto& [t1, e] = evs[2 * i + 1];
                QCOMPARE(b.u(9), std::uint64_t(1));
                QCOMPARE(e.u(9), std::uint64_t(2));
                QCOMPARE(TimeNs(t0), lane->start[i] - origin);
                QCOMPARE(TimeNs(t1), lane->end(i) - origin);
                QCOMPARE(names[b.u(10)], std::string(intervalKindLabel(lane->kind[i])));
                std::map<std::string, std::int64_t> ann{{"kstep", -1}, {"slot", -1}};   // absent: none
                for (auto [it, end] = b.bytes.equal_range(4); it != end; ++it) {
                    const Msg a = decode(it->second);
                    ann[annNames[a.u(1)]] = std::int64_t(a.u(4));
                }
                QCOMPARE(ann["kstep"], std::int64_t(lane->kstep[i]));
                QCOMPARE(ann["slot"], std::int64_t(lane->slot[i]));
                ++matched;
            }
        }
        QCOMPARE(matched, m_trace.intervalCount());
    }

    void flowsAndUserNames()
    {
        QTemporaryDir dir;
        const KernelTrace t = wstest::exportTrace(dir, true);
        TraceExportOptions o;
        o.flows = true;
        const std::vector<Msg> ps = packets(perfetto(t, o));
        std::set<std::string> names;
        const Msg interned = decode(ps[0].b(12));
        for (auto [it, end] = interned.bytes.equal_range(2); it != end; ++it)
            names.insert(decode(it->second).b(2));
        QVERIFY(names.count("softmax (user)"));
        QVERIFY(names.count("rescale"));
        std::multiset<std::uint64_t> from, to;
        for (const Msg& p : ps)
            if (p.has(11)) {
                const Msg e = decode(p.b(11));
                for (auto [it, end] = e.ints.equal_range(47); it != end; ++it)
                    from.insert(it->second);
                for (auto [it, end] = e.ints.equal_range(48); it != end; ++it)
                    to.insert(it->second);
            }
        QVERIFY(!from.empty());
        QCOMPARE(from, to);
    }

    void smallerThanJson()
    {
        const std::string pb = perfetto(m_trace);
        std::string js;
        StringSink sink(&js);
        writeChromeTrace(m_trace, {}, sink);
        QVERIFY2(pb.size() * 2 < js.size(), qPrintable(QStringLiteral("%1 vs %2").arg(pb.size()).arg(js.size())));
        const QString f = m_dir.filePath("k.perfetto-trace");
        const ExportStats st = exportKernelTrace(m_trace, {}, f.toStdString());
        QCOMPARE(QFileInfo(f).size(), qint64(pb.size()));
        QCOMPARE(st.bytes, std::int64_t(pb.size()));
    }
};

QTEST_GUILESS_MAIN(TstExportPerfetto)
#include "tst_export_perfetto.moc"
