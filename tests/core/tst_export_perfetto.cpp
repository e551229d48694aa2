// tst_export_perfetto: the Perfetto TrackEvent export (core/src/export_perfetto.cpp), parsed back field
// by field with the small protobuf reader below (independent of the encoder). This checks the wire
// format and the field numbers we chose from Perfetto's protos; whether trace_processor and the Perfetto
// UI read it as intended cannot be checked here (no trace_processor on this machine; docs/interop.md).
// The reader resolves what Perfetto's reader must: compressed_packets batches (zlib), per-sequence
// incremental state (interned names, TracePacketDefaults, the incremental clock of a ClockSnapshot).
#include "exporttestutil.h"

#include "warpstage/traceexport.h"

#include <zlib.h>

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

std::string inflateZlib(const std::string& z)
{
    std::string out(z.size() * 8 + 1024, '\0');
    for (;;) {
        uLongf n = out.size();
        const int rc = uncompress(reinterpret_cast<Bytef*>(out.data()), &n, reinterpret_cast<const Bytef*>(z.data()), uLong(z.size()));
        if (rc == Z_OK) {
            out.resize(n);
            return out;
        }
        if (rc != Z_BUF_ERROR)
            return "\xff";   // not a zlib stream: decodes as a bad message
        out.resize(out.size() * 2);
    }
}

// The packets of a Trace in order, each compressed_packets batch (field 50) replaced by the packets it holds.
std::vector<Msg> packets(const std::string& trace, int* batches = nullptr)
{
    const Msg t = decode(trace);
    std::vector<Msg> out;
    if (!t.ok || !t.ints.empty())
        return out;   // a Trace holds nothing but field 1 (packets)
    for (auto [it, end] = t.bytes.equal_range(1); it != end; ++it) {
        Msg p = decode(it->second);
        if (p.has(50)) {
            if (batches)
                ++*batches;
            const auto inner = packets(inflateZlib(p.b(50)));
            if (inner.empty())
                out.push_back(Msg{{}, {}, false});
            out.insert(out.end(), inner.begin(), inner.end());
        } else {
            out.push_back(std::move(p));
        }
    }
    return out;
}

// A TrackEvent with what its sequence's state makes of it.
struct Event {
    std::uint32_t seq = 0;
    std::uint64_t ts = 0;          // ns on the trace's default clock
    std::uint64_t track = 0;       // its own track_uuid, or the sequence's default
    Msg e;
    const std::map<std::uint64_t, std::string>* names = nullptr;      // the sequence's interned event names
    const std::map<std::uint64_t, std::string>* annNames = nullptr;   // ... and annotation names
};
struct SeqState {
    bool valid = false;
    std::map<std::uint64_t, std::string> names, annNames;
    std::uint64_t track = 0;
    std::uint64_t clock = 6;                  // default: BOOTTIME
    std::map<std::uint64_t, std::pair<std::uint64_t, bool>> clocks;   // clock id -> (value, incremental)
    int packets = 0;
};
struct Resolved {
    std::vector<Msg> descriptors;   // TrackDescriptors
    std::vector<Event> events;
    std::map<std::uint32_t, SeqState> seqs;
    int batches = 0;
    std::vector<std::string> errors;
};

Resolved resolve(const std::string& trace)
{
    Resolved r;
    for (const Msg& p : packets(trace, &r.batches)) {
        if (!p.ok) {
            r.errors.push_back("a packet does not decode");
            continue;
        }
        const auto seq = std::uint32_t(p.u(10, 0));
        if (seq == 0)
            r.errors.push_back("a packet without trusted_packet_sequence_id");
        SeqState& st = r.seqs[seq];
        ++st.packets;
        const std::uint64_t flags = p.u(13, 0);
        if (flags & 1) {   // SEQ_INCREMENTAL_STATE_CLEARED
            st = SeqState{};
            st.packets = 1;
            st.valid = true;
        }
        if (p.has(12)) {
            const Msg interned = decode(p.b(12));
            for (auto [it, end] = interned.bytes.equal_range(2); it != end; ++it) {
                const Msg n = decode(it->second);
                st.names[n.u(1)] = n.b(2);
            }
            for (auto [it, end] = interned.bytes.equal_range(3); it != end; ++it) {
                const Msg n = decode(it->second);
                st.annNames[n.u(1)] = n.b(2);
            }
        }
        if (p.has(59)) {
            const Msg d = decode(p.b(59));
            st.clock = d.u(58, 6);
            st.track = decode(d.b(11)).u(11, 0);
        }
        const Msg snapshot = decode(p.b(6));
        if (p.has(6))
            for (auto [it, end] = snapshot.bytes.equal_range(1); it != end; ++it) {
                const Msg c = decode(it->second);
                st.clocks[c.u(1)] = {c.u(2, 0), c.u(3, 0) != 0};
            }
        if (p.has(60))
            r.descriptors.push_back(decode(p.b(60)));
        if (p.has(11)) {
            if ((flags & 2) && !st.valid)
                r.errors.push_back("a packet needs incremental state that was never set");
            if (st.clock != 6 && !(flags & 2))
                r.errors.push_back("a packet relies on the sequence's defaults without SEQ_NEEDS_INCREMENTAL_STATE");
            Event ev;
            ev.seq = seq;
            ev.e = decode(p.b(11));
            const std::uint64_t clock = p.u(58, st.clock);
            if (clock == 6) {
                ev.ts = p.u(8);
            } else {
                auto c = st.clocks.find(clock);
                if (c == st.clocks.end()) {
                    r.errors.push_back("a timestamp on a clock without a snapshot");
                } else if (c->second.second) {   // incremental: a delta from the clock's previous value
                    c->second.first += p.u(8);
                    ev.ts = c->second.first - st.clocks[6].first;   // the snapshot maps it onto BOOTTIME
                } else {
                    ev.ts = p.u(8);
                }
            }
            ev.track = ev.e.u(11, st.track);
            ev.names = &st.names;
            ev.annNames = &st.annNames;
            r.events.push_back(ev);
        }
    }
    return r;
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
        const Resolved r = resolve(perfetto(m_trace));
        QVERIFY2(r.errors.empty(), r.errors.empty() ? "" : r.errors.front().c_str());
        QVERIFY(r.batches >= 1);   // compressed_packets
        QVERIFY(r.events.size() > m_trace.intervalCount());

        // Tracks: SM > CTA > warp, parents declared before children, all on sequence 1.
        std::map<std::uint64_t, Msg> tracks;
        for (const Msg& d : r.descriptors) {
            if (d.has(5))
                QVERIFY2(tracks.count(d.u(5)), "a track's parent comes first");
            tracks[d.u(1)] = d;
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

        // One sequence per warp: its first packet clears the state; its track and an incremental clock are
        // the sequence's defaults (no slice event names its track or carries an absolute time).
        QCOMPARE(r.seqs.size(), m_trace.lanes.size() + 1);
        std::map<std::uint64_t, std::uint32_t> seqOfTrack;
        std::size_t counterEvents = 0;
        for (const Event& ev : r.events) {
            if (ev.e.u(9) == 4) {
                ++counterEvents;
                QCOMPARE(ev.seq, std::uint32_t(1));
                QVERIFY(tracks[ev.track].has(8));
                continue;
            }
            QVERIFY(ev.seq > 1);
            QVERIFY2(!ev.e.has(11), "slice events take the track from the sequence's defaults");
            const auto [it, fresh] = seqOfTrack.emplace(ev.track, ev.seq);
            QCOMPARE(it->second, ev.seq);   // one track per sequence
        }
        QVERIFY(counterEvents > 0);
        for (const auto& [seq, st] : r.seqs)
            if (seq > 1) {
                QCOMPARE(st.clock, std::uint64_t(64));
                QVERIFY(st.clocks.at(64).second);   // is_incremental
                QVERIFY(st.track != 0);
            }

        // Slices: begin/end pairs per warp track match the lane's intervals exactly (timestamps summed from
        // the deltas), with the names the warp's sequence interned.
        const TimeNs origin = exportOrigin(m_trace);
        std::map<std::uint64_t, std::vector<const Event*>> byTrack;
        for (const Event& ev : r.events)
            if (ev.e.u(9) != 4)
                byTrack[ev.track].push_back(&ev);
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
                const Event& b = *evs[2 * i];
                const Event& e = *evs[2 * i + 1];
                QCOMPARE(b.e.u(9), std::uint64_t(1));
                QCOMPARE(e.e.u(9), std::uint64_t(2));
                QCOMPARE(TimeNs(b.ts), lane->start[i] - origin);
                QCOMPARE(TimeNs(e.ts), lane->end(i) - origin);
                QCOMPARE(b.names->at(b.e.u(10)), intervalName(m_trace, lane->kind[i]));
                QVERIFY(!e.e.has(10));   // the end says nothing the begin said
                std::map<std::string, std::int64_t> ann{{"kstep", -1}, {"slot", -1}};   // absent: none
                for (auto [it, end] = b.e.bytes.equal_range(4); it != end; ++it) {
                    const Msg a = decode(it->second);
                    ann[b.annNames->at(a.u(1))] = std::int64_t(a.u(4));
                }
                QCOMPARE(ann["kstep"], std::int64_t(lane->kstep[i]));
                QCOMPARE(ann["slot"], std::int64_t(lane->slot[i]));
                ++matched;
            }
        }
        QCOMPARE(matched, m_trace.intervalCount());

        // Uncompressed: the same packets, plain.
        TraceExportOptions plain;
        plain.perfettoCompressed = false;
        const std::string raw = perfetto(m_trace, plain);
        int batches = 0;
        QCOMPARE(packets(raw, &batches).size(), packets(perfetto(m_trace)).size());
        QCOMPARE(batches, 0);
        const Resolved r2 = resolve(raw);
        QCOMPARE(r2.events.size(), r.events.size());
        for (std::size_t i = 0; i < r.events.size(); ++i)
            QCOMPARE(r2.events[i].ts, r.events[i].ts);
    }

    void timestampsAreDeltas()
    {
        // A slice packet's timestamp is the ns since the previous packet of its warp, not since the origin.
        TraceExportOptions plain;
        plain.perfettoCompressed = false;
        const std::string raw = perfetto(m_trace, plain);
        const Resolved r = resolve(raw);
        std::vector<std::uint64_t> written, absolute;
        for (const Msg& p : packets(raw))
            if (p.has(11) && p.u(10) > 1) {
                QVERIFY(!p.has(58));   // no clock of its own: the sequence's incremental one
                written.push_back(p.u(8));
            }
        for (const Event& ev : r.events)
            if (ev.seq > 1)
                absolute.push_back(ev.ts);
        QCOMPARE(written.size(), 2 * m_trace.intervalCount());
        QCOMPARE(absolute.size(), written.size());
        std::size_t smaller = 0;
        std::map<std::uint32_t, std::uint64_t> sum;
        for (std::size_t i = 0; i < written.size(); ++i) {
            QVERIFY(written[i] <= absolute[i]);
            smaller += written[i] < absolute[i];
        }
        QVERIFY2(smaller + m_trace.lanes.size() >= written.size(), "every packet but a warp's first is a delta");
    }

    void flowsAndUserNames()
    {
        QTemporaryDir dir;
        const KernelTrace t = wstest::exportTrace(dir, true);
        TraceExportOptions o;
        o.flows = true;
        const Resolved r = resolve(perfetto(t, o));
        QVERIFY(r.errors.empty());
        std::set<std::string> names;
        for (const auto& [seq, st] : r.seqs)
            for (const auto& [iid, n] : st.names)
                names.insert(n);
        QVERIFY(names.count("softmax (user)"));
        QVERIFY(names.count("rescale"));
        // the `kind` annotation of a user phase names it as the JSON does ("user:<i>")
        std::set<std::string> kinds;
        for (const Event& ev : r.events)
            for (auto [it, end] = ev.e.bytes.equal_range(4); it != end; ++it) {
                const Msg a = decode(it->second);
                if (ev.annNames->at(a.u(1)) == "kind")
                    kinds.insert(a.b(6));
            }
        QVERIFY(kinds.count("user:0"));
        QVERIFY(kinds.count("user:1"));
        std::multiset<std::uint64_t> from, to;
        for (const Event& ev : r.events)
            if (true) {
                const Msg& e = ev.e;
                for (auto [it, end] = e.ints.equal_range(47); it != end; ++it)
                    from.insert(it->second);
                for (auto [it, end] = e.ints.equal_range(48); it != end; ++it)
                    to.insert(it->second);
            }
        QVERIFY(!from.empty());
        QCOMPARE(from, to);
    }

    void scopesNestAroundThePhases()
    {
        // Two brackets on the first warp: "kernel" (depth 0) over the whole lane, "loop" (depth 1) over its
        // intervals 1-2. On the warp's track they are slices around the phases: a stack of begins and ends
        // (what trace_processor does) gives kernel > loop > phases.
        KernelTrace t = m_trace;
        const Lane& l = t.lanes.front();
        QVERIFY(l.size() >= 4);
        t.scopes.push_back(ScopeSpan{l.warpId, 0, "kernel", l.start.front(), l.end(l.size() - 1)});
        t.scopes.push_back(ScopeSpan{l.warpId, 1, "loop", l.start[1], l.end(2)});
        const Resolved r = resolve(perfetto(t));
        QVERIFY(r.errors.empty());
        std::map<std::uint64_t, std::string> trackName;
        for (const Msg& d : r.descriptors)
            trackName[d.u(1)] = d.b(2);
        std::uint64_t track = 0;
        const std::string ctaName = "CTA " + std::to_string(t.ctas[std::size_t(l.ctaIndex)].blockLinear);
        for (const Msg& d : r.descriptors)
            if (d.b(2) == warpTrackName(l) && !d.has(8) && trackName[d.u(5)] == ctaName)
                track = d.u(1);
        QVERIFY(track != 0);
        struct Slice {
            std::string name;
            std::uint64_t start, end;
            std::size_t depth;
        };
        std::vector<Slice> done, open;
        for (const Event& ev : r.events) {
            if (ev.track != track || ev.e.u(9) == 4)
                continue;
            if (ev.e.u(9) == 1) {
                open.push_back({ev.names->at(ev.e.u(10)), ev.ts, 0, open.size()});
            } else {
                QVERIFY(!open.empty());
                Slice s = open.back();
                open.pop_back();
                s.end = ev.ts;
                done.push_back(s);
            }
        }
        QVERIFY(open.empty());
        QCOMPARE(done.size(), l.size() + 2);
        const TimeNs origin = exportOrigin(t);
        std::map<std::string, Slice> byName;
        for (const Slice& s : done)
            byName.emplace(s.name, s);
        QCOMPARE(byName.at("kernel").depth, std::size_t(0));
        QCOMPARE(TimeNs(byName.at("kernel").start), l.start.front() - origin);
        QCOMPARE(TimeNs(byName.at("kernel").end), l.end(l.size() - 1) - origin);
        QCOMPARE(byName.at("loop").depth, std::size_t(1));
        QCOMPARE(TimeNs(byName.at("loop").start), l.start[1] - origin);
        QCOMPARE(TimeNs(byName.at("loop").end), l.end(2) - origin);
        std::size_t inLoop = 0, phases = 0;
        for (const Slice& s : done) {
            if (s.name == "kernel" || s.name == "loop")
                continue;
            ++phases;
            // intervals 1 and 2 (a zero-length phase right at the loop's end is after it: ends come first)
            const auto is = [&](std::size_t i) { return TimeNs(s.start) == l.start[i] - origin && TimeNs(s.end) == l.end(i) - origin; };
            const bool inside = is(1) || is(2);
            QVERIFY2(s.depth == (inside ? 2u : 1u), qPrintable(QStringLiteral("%1 [%2,%3] depth %4; loop [%5,%6]").arg(QString::fromStdString(s.name)).arg(s.start).arg(s.end).arg(s.depth).arg(l.start[1] - origin).arg(l.end(2) - origin)));
            inLoop += inside;
        }
        QCOMPARE(phases, l.size());
        QVERIFY(inLoop >= 2);
        // and in the Chrome JSON: complete events of category "scope" with their depth
        std::string js;
        StringSink sink(&js);
        const ExportStats st = writeChromeTrace(t, {}, sink);
        QCOMPARE(st.scopes, std::int64_t(2));
        QVERIFY(js.find("\"name\":\"loop\",\"cat\":\"scope\",\"args\":{\"depth\":1}") != std::string::npos);
    }

    void smallerThanJson()
    {
        const std::string pb = perfetto(m_trace);
        std::string js;
        StringSink sink(&js);
        writeChromeTrace(m_trace, {}, sink);
        TraceExportOptions plain;
        plain.perfettoCompressed = false;
        const std::string raw = perfetto(m_trace, plain);
        qInfo("JSON %zu B, Perfetto plain %zu B, compressed %zu B (%zu intervals)", js.size(), raw.size(), pb.size(),
              std::size_t(m_trace.intervalCount()));
        QVERIFY2(raw.size() * 3 < js.size(), qPrintable(QStringLiteral("%1 vs %2").arg(raw.size()).arg(js.size())));
        QVERIFY2(pb.size() * 10 < js.size(), qPrintable(QStringLiteral("%1 vs %2").arg(pb.size()).arg(js.size())));
        const QString f = m_dir.filePath("k.perfetto-trace");
        const ExportStats st = exportKernelTrace(m_trace, {}, f.toStdString());
        QCOMPARE(QFileInfo(f).size(), qint64(pb.size()));
        QCOMPARE(st.bytes, std::int64_t(pb.size()));
    }
};

QTEST_GUILESS_MAIN(TstExportPerfetto)
#include "tst_export_perfetto.moc"
