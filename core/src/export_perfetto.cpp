// Perfetto TrackEvent protobuf (docs/interop.md), with a minimal hand-written encoder: varints and
// length-delimited fields, no libprotobuf. Field numbers are those of Perfetto's public protos
// (protos/perfetto/trace/trace_packet.proto, track_event/track_event.proto, track_descriptor.proto,
// debug_annotation.proto, counter_descriptor.proto, interned_data/interned_data.proto); proto field
// numbers never change for existing fields.
//
// Size (docs/interop.md, "What the Perfetto file holds"): each warp is a packet sequence of its own whose
// first packet interns the names, sets the track and an incremental clock as the sequence's defaults
// (TracePacketDefaults, ClockSnapshot clock 64 with is_incremental), so a slice event carries only a
// timestamp delta, its type, its name id and its annotations; and the packets are deflated in batches
// (TracePacket.compressed_packets, as Perfetto's own service writes them with compression on).
#include "export_impl.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#ifdef WARPSTAGE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace ws {

using namespace exportimpl;

namespace {

namespace pf {
// Trace
constexpr int kTracePacket = 1;
// TracePacket
constexpr int kClockSnapshot = 6;
constexpr int kTimestamp = 8;
constexpr int kTrustedPacketSequenceId = 10;
constexpr int kTrackEvent = 11;
constexpr int kInternedData = 12;
constexpr int kSequenceFlags = 13;
constexpr int kCompressedPackets = 50;
constexpr int kTimestampClockId = 58;
constexpr int kTracePacketDefaults = 59;
constexpr int kTrackDescriptor = 60;
// TracePacketDefaults (timestamp_clock_id 58 as above), TrackEventDefaults
constexpr int kTrackEventDefaults = 11;
constexpr int kDefaultTrackUuid = 11;
// ClockSnapshot, ClockSnapshot.Clock
constexpr int kClocks = 1;
constexpr int kClockId = 1;
constexpr int kClockTimestamp = 2;
constexpr int kClockIsIncremental = 3;
constexpr std::uint64_t kBuiltinBoottime = 6;   // the trace's default clock
constexpr std::uint64_t kSeqIncrementalStateCleared = 1;
constexpr std::uint64_t kSeqNeedsIncrementalState = 2;
// TrackDescriptor
constexpr int kUuid = 1;
constexpr int kName = 2;
constexpr int kParentUuid = 5;
constexpr int kCounter = 8;
constexpr int kChildOrdering = 11;
constexpr int kSiblingOrderRank = 12;
constexpr std::uint64_t kChildOrderingExplicit = 3;
// TrackEvent
constexpr int kDebugAnnotations = 4;
constexpr int kType = 9;
constexpr int kNameIid = 10;
constexpr int kTrackUuid = 11;
constexpr int kCounterValue = 30;
constexpr int kFlowIds = 47;
constexpr int kTerminatingFlowIds = 48;
constexpr std::uint64_t kSliceBegin = 1, kSliceEnd = 2, kCounterEvent = 4;
// DebugAnnotation
constexpr int kAnnNameIid = 1;
constexpr int kAnnIntValue = 4;
constexpr int kAnnStringValue = 6;
// InternedData / EventName / DebugAnnotationName
constexpr int kEventNames = 2;
constexpr int kDebugAnnotationNames = 3;
constexpr int kIid = 1;
constexpr int kInternedName = 2;
}  // namespace pf

// Sequence 1: the track descriptors and the counters (absolute ns on the default clock); 1 + n: the n-th
// written warp's slices (timestamps on that sequence's incremental clock).
constexpr std::uint32_t kDescriptorSequence = 1;
constexpr std::uint32_t kLaneClock = 64;   // first sequence-scoped clock id
constexpr std::uint64_t kAnnKstep = 1, kAnnSlot = 2, kAnnKind = 3;
constexpr std::uint64_t kScopeIidBase = 257;   // event names: kinds 1..256, scope names from here
// Raw packets per compressed_packets batch: its deflated size stays well under the 512 KB Perfetto allows.
constexpr std::size_t kBatchBytes = 256 * 1024;

// One protobuf message being built.
struct Pb {
    std::string b;
    void varint(std::uint64_t v)
    {
        while (v >= 0x80) {
            b.push_back(char(v | 0x80));
            v >>= 7;
        }
        b.push_back(char(v));
    }
    void tag(int field, int wireType) { varint((std::uint64_t(field) << 3) | std::uint64_t(wireType)); }
    void u(int field, std::uint64_t v)
    {
        tag(field, 0);
        varint(v);
    }
    void i(int field, std::int64_t v) { u(field, static_cast<std::uint64_t>(v)); }   // int32/int64: two's complement
    void str(int field, std::string_view s)
    {
        tag(field, 2);
        varint(s.size());
        b.append(s.data(), s.size());
    }
    void msg(int field, const Pb& m) { str(field, m.b); }
    void fixed64(int field, std::uint64_t v)
    {
        tag(field, 1);
        for (int k = 0; k < 8; ++k)
            b.push_back(char((v >> (8 * k)) & 0xff));
    }
    void clear() { b.clear(); }
};

// Track uuids: small numbers (short varints in every event), the warps' first as they are used most:
// warps 1..L, CTAs L+1..L+C, their counters L+C+1..L+2C, SMs after that.
struct Uuids {
    std::uint64_t lanes = 0, ctas = 0;
    std::uint64_t lane(std::size_t l) const { return 1 + l; }
    std::uint64_t cta(std::size_t c) const { return 1 + lanes + c; }
    std::uint64_t counter(std::size_t c) const { return 1 + lanes + ctas + c; }
    std::uint64_t sm(int s) const { return 1 + lanes + 2 * ctas + std::uint64_t(std::max(0, s)); }
};

class PacketWriter {
public:
    PacketWriter(Out& out, bool compress) : m_out(out)
    {
#ifdef WARPSTAGE_HAVE_ZLIB
        m_compress = compress;
#else
        (void)compress;   // without zlib the packets are written as they are (still a valid trace)
#endif
    }
    void emit(const Pb& packet)
    {
        m_frame.clear();
        m_frame.str(pf::kTracePacket, packet.b);
        if (!m_compress) {
            m_out.put(m_frame.b);
            return;
        }
        m_batch.append(m_frame.b);
        if (m_batch.size() >= kBatchBytes)
            flush();
    }
    // Deflates the batch (zlib format, as Perfetto's service does) into one compressed_packets packet.
    void flush()
    {
#ifdef WARPSTAGE_HAVE_ZLIB
        if (m_batch.empty())
            return;
        uLongf n = compressBound(uLong(m_batch.size()));
        m_z.resize(n);
        if (compress2(reinterpret_cast<Bytef*>(m_z.data()), &n, reinterpret_cast<const Bytef*>(m_batch.data()),
                      uLong(m_batch.size()), 6) != Z_OK)
            throw ExportError("Perfetto export: deflate failed");
        m_packet.clear();
        m_packet.str(pf::kCompressedPackets, std::string_view(m_z.data(), n));
        m_frame.clear();
        m_frame.str(pf::kTracePacket, m_packet.b);
        m_out.put(m_frame.b);
        m_batch.clear();
#endif
    }

private:
    Out& m_out;
    bool m_compress = false;
    Pb m_frame, m_packet;
    std::string m_batch, m_z;
};

}  // namespace

ExportStats writePerfettoTrace(const KernelTrace& trace, const TraceExportOptions& options, ByteSink& sink)
{
    const Selection sel = select(trace, options);
    const Uuids id{trace.lanes.size(), trace.ctas.size()};
    Out out(sink);
    PacketWriter pw(out, options.perfettoCompressed);
    ExportStats st;
    Pb packet, inner, sub, sub2;

    auto descriptor = [&](std::uint64_t uuid, std::uint64_t parent, const std::string& name, std::int64_t rank,
                          bool explicitChildren, bool counter) {
        inner.clear();
        inner.u(pf::kUuid, uuid);
        if (parent)
            inner.u(pf::kParentUuid, parent);
        inner.str(pf::kName, name);
        if (counter)
            inner.str(pf::kCounter, {});
        if (explicitChildren)
            inner.u(pf::kChildOrdering, pf::kChildOrderingExplicit);
        inner.i(pf::kSiblingOrderRank, rank);
        packet.clear();
        packet.u(pf::kTrustedPacketSequenceId, kDescriptorSequence);
        packet.msg(pf::kTrackDescriptor, inner);
        pw.emit(packet);
    };
    // Tracks: SM > CTA > (loads in flight, warps).
    std::vector<bool> smDone;
    for (std::size_t c = 0; c < trace.ctas.size(); ++c) {
        if (!sel.ctaSelected[c])
            continue;
        const Cta& cta = trace.ctas[c];
        const int sm = std::max(0, cta.smId);
        if (std::size_t(sm) >= smDone.size())
            smDone.resize(std::size_t(sm) + 1, false);
        if (!smDone[std::size_t(sm)]) {
            smDone[std::size_t(sm)] = true;
            descriptor(id.sm(sm), 0, "SM " + std::to_string(cta.smId), sm, true, false);
        }
        descriptor(id.cta(c), id.sm(sm), "CTA " + std::to_string(cta.blockLinear), std::int64_t(c), true, false);
        if (options.counters)
            descriptor(id.counter(c), id.cta(c), "loads in flight", 0, false, true);
    }
    for (const int li : sel.lanes) {
        const Lane& l = trace.lanes[std::size_t(li)];
        descriptor(id.lane(std::size_t(li)), id.cta(std::size_t(l.ctaIndex)), warpTrackName(l), l.warpIndex + 1, false, false);
        ++st.lanes;
    }

    // Flows attach to the slices they start from / end in.
    std::unordered_map<std::uint64_t, std::vector<std::pair<std::uint64_t, bool>>> flowsAt;   // (lane, index) -> (id, terminating)
    if (options.flows) {
        std::uint64_t flowId = 0;
        for (const Flow& f : loadFlows(trace, sel)) {
            ++flowId;
            flowsAt[(std::uint64_t(f.fromLane) << 40) | f.fromIndex].emplace_back(flowId, false);
            flowsAt[(std::uint64_t(f.toLane) << 40) | f.toIndex].emplace_back(flowId, true);
            ++st.flows;
        }
    }

    // Slices, warp by warp, each warp a sequence of its own. Its first packet clears the sequence's state and
    // sets it up: the names the warp uses (interned), the warp's track and the incremental clock as defaults,
    // and the clock itself (starting at the origin, 0 on the default clock). Each later packet's timestamp is
    // the ns since the previous packet of the warp.
    const std::pair<std::uint64_t, std::string_view> annNames[] = {{kAnnKstep, "kstep"}, {kAnnSlot, "slot"}, {kAnnKind, "kind"}};
    std::uint32_t sequence = kDescriptorSequence;
    std::vector<bool> used(256);
    const auto scopesOf = scopesByLane(trace);
    // A scope bracket's begin or end: time, then ends before begins, inner ends first, outer begins first.
    struct ScopeEdge {
        TimeNs t;
        bool begin;
        int depth;
        std::uint64_t nameIid;
    };
    std::vector<ScopeEdge> edges;
    std::vector<std::string_view> scopeNames;   // iid kScopeIidBase + i
    for (const int li : sel.lanes) {
        const Lane& l = trace.lanes[std::size_t(li)];
        const std::size_t lo = sel.first[std::size_t(li)], hi = sel.last[std::size_t(li)];
        bool any = false;
        std::fill(used.begin(), used.end(), false);
        for (std::size_t i = lo; i < hi; ++i)
            if (sel.inRange(l.start[i], l.end(i))) {
                used[static_cast<std::uint8_t>(l.kind[i])] = true;
                any = true;
            }
        edges.clear();
        scopeNames.clear();
        for (const ScopeSpan* sc : scopesOf[std::size_t(li)]) {
            if (!sel.inRange(sc->start, sc->end))
                continue;
            auto n = std::find(scopeNames.begin(), scopeNames.end(), std::string_view(sc->name));
            if (n == scopeNames.end())
                n = scopeNames.insert(scopeNames.end(), sc->name);
            const std::uint64_t iid = kScopeIidBase + std::uint64_t(n - scopeNames.begin());
            edges.push_back({sc->start - sel.origin, true, sc->depth, iid});
            edges.push_back({sc->end - sel.origin, false, sc->depth, iid});
            ++st.scopes;
        }
        std::sort(edges.begin(), edges.end(), [](const ScopeEdge& a, const ScopeEdge& b) {
            if (a.t != b.t)
                return a.t < b.t;
            if (a.begin != b.begin)
                return !a.begin;
            return a.begin ? a.depth < b.depth : a.depth > b.depth;
        });
        if (!any && edges.empty())
            continue;
        ++sequence;
        {
            Pb interned;
            for (int k = 0; k < 256; ++k)
                if (used[std::size_t(k)]) {
                    sub.clear();
                    sub.u(pf::kIid, std::uint64_t(k) + 1);
                    sub.str(pf::kInternedName, intervalName(trace, static_cast<IntervalKind>(k)));
                    interned.msg(pf::kEventNames, sub);
                }
            for (std::size_t n = 0; n < scopeNames.size(); ++n) {
                sub.clear();
                sub.u(pf::kIid, kScopeIidBase + n);
                sub.str(pf::kInternedName, scopeNames[n]);
                interned.msg(pf::kEventNames, sub);
            }
            for (const auto& [iid, n] : annNames) {
                sub.clear();
                sub.u(pf::kIid, iid);
                sub.str(pf::kInternedName, n);
                interned.msg(pf::kDebugAnnotationNames, sub);
            }
            sub.clear();
            sub.u(pf::kDefaultTrackUuid, id.lane(std::size_t(li)));
            inner.clear();
            inner.u(pf::kTimestampClockId, kLaneClock);
            inner.msg(pf::kTrackEventDefaults, sub);
            Pb clocks;
            sub.clear();
            sub.u(pf::kClockId, kLaneClock);
            sub.u(pf::kClockTimestamp, 0);
            sub.u(pf::kClockIsIncremental, 1);
            clocks.msg(pf::kClocks, sub);
            sub.clear();
            sub.u(pf::kClockId, pf::kBuiltinBoottime);
            sub.u(pf::kClockTimestamp, 0);
            clocks.msg(pf::kClocks, sub);
            packet.clear();
            packet.u(pf::kTrustedPacketSequenceId, sequence);
            packet.u(pf::kSequenceFlags, pf::kSeqIncrementalStateCleared);
            packet.msg(pf::kInternedData, interned);
            packet.msg(pf::kTracePacketDefaults, inner);
            packet.msg(pf::kClockSnapshot, clocks);
            pw.emit(packet);
        }
        TimeNs last = 0;   // the lane clock's value: the previous packet's time after the origin
        auto stamp = [&](TimeNs t) {
            packet.clear();
            if (t >= last) {
                packet.u(pf::kTimestamp, std::uint64_t(t - last));
                last = t;
            } else {
                // Overlapping intervals of one warp (never in a recording; possible in an import): this one
                // packet has an absolute time on the default clock; the lane clock stays where it was.
                packet.u(pf::kTimestampClockId, pf::kBuiltinBoottime);
                packet.u(pf::kTimestamp, std::uint64_t(t));
            }
            packet.u(pf::kTrustedPacketSequenceId, sequence);
            packet.u(pf::kSequenceFlags, pf::kSeqNeedsIncrementalState);
        };
        // Scope brackets are slices of the same track around the phases they contain (the track nests them).
        std::size_t nextEdge = 0;
        auto edgesUpTo = [&](TimeNs t, bool inclusive) {
            while (nextEdge < edges.size() && (edges[nextEdge].t < t || (inclusive && edges[nextEdge].t == t))) {
                const ScopeEdge& e = edges[nextEdge++];
                inner.clear();
                inner.u(pf::kType, e.begin ? pf::kSliceBegin : pf::kSliceEnd);
                if (e.begin)
                    inner.u(pf::kNameIid, e.nameIid);
                stamp(e.t);
                packet.msg(pf::kTrackEvent, inner);
                pw.emit(packet);
            }
        };
        for (std::size_t i = lo; i < hi; ++i) {
            if (!sel.inRange(l.start[i], l.end(i)))
                continue;
            edgesUpTo(l.start[i] - sel.origin, true);   // scopes that end or begin by the phase's start
            inner.clear();
            inner.u(pf::kType, pf::kSliceBegin);
            inner.u(pf::kNameIid, std::uint64_t(static_cast<std::uint8_t>(l.kind[i])) + 1);
            // -1 ("none") is left out: as a varint it would take ten bytes.
            if (l.kstep[i] >= 0) {
                sub.clear();
                sub.u(pf::kAnnNameIid, kAnnKstep);
                sub.i(pf::kAnnIntValue, l.kstep[i]);
                inner.msg(pf::kDebugAnnotations, sub);
            }
            if (l.slot[i] >= 0) {
                sub.clear();
                sub.u(pf::kAnnNameIid, kAnnSlot);
                sub.i(pf::kAnnIntValue, l.slot[i]);
                inner.msg(pf::kDebugAnnotations, sub);
            }
            if (isUserPhase(l.kind[i]) || l.kind[i] == IntervalKind::Other) {
                sub.clear();
                sub.u(pf::kAnnNameIid, kAnnKind);
                // as the JSON's args.kind: "user:<i>" for user phase i ("other" said nothing about which)
                sub.str(pf::kAnnStringValue, isUserPhase(l.kind[i])
                                                 ? "user:" + std::to_string(static_cast<int>(l.kind[i]) - kUserPhaseBase)
                                                 : std::string(intervalKindName(l.kind[i])));
                inner.msg(pf::kDebugAnnotations, sub);
            }
            if (!flowsAt.empty()) {
                const auto it = flowsAt.find((std::uint64_t(li) << 40) | i);
                if (it != flowsAt.end())
                    for (const auto& [fid, term] : it->second)
                        inner.fixed64(term ? pf::kTerminatingFlowIds : pf::kFlowIds, fid);
            }
            stamp(l.start[i] - sel.origin);
            packet.msg(pf::kTrackEvent, inner);
            pw.emit(packet);

            edgesUpTo(l.end(i) - sel.origin, false);   // scopes inside the phase (none for Proton's)
            inner.clear();
            inner.u(pf::kType, pf::kSliceEnd);
            stamp(l.end(i) - sel.origin);
            packet.msg(pf::kTrackEvent, inner);
            pw.emit(packet);
            ++st.intervals;
        }
        edgesUpTo(std::numeric_limits<TimeNs>::max(), true);
    }

    if (options.counters) {
        const auto inFlight = loadsInFlight(trace, sel);
        for (std::size_t c = 0; c < trace.ctas.size(); ++c) {
            for (const auto& [t, n] : inFlight[c]) {
                inner.clear();
                inner.u(pf::kType, pf::kCounterEvent);
                inner.u(pf::kTrackUuid, id.counter(c));
                inner.i(pf::kCounterValue, n);
                packet.clear();
                packet.u(pf::kTimestamp, std::uint64_t(t - sel.origin));
                packet.u(pf::kTrustedPacketSequenceId, kDescriptorSequence);
                packet.msg(pf::kTrackEvent, inner);
                pw.emit(packet);
                ++st.counterSamples;
            }
        }
    }
    pw.flush();
    out.flush();
    st.bytes = out.bytes();
    return st;
}

}  // namespace ws
