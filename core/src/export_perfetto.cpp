// Perfetto TrackEvent protobuf (docs/interop.md), with a minimal hand-written encoder: varints and
// length-delimited fields, no libprotobuf. Field numbers are those of Perfetto's public protos
// (protos/perfetto/trace/trace_packet.proto, track_event/track_event.proto, track_descriptor.proto,
// debug_annotation.proto, counter_descriptor.proto, interned_data/interned_data.proto); proto field
// numbers never change for existing fields.
#include "export_impl.h"

#include <algorithm>
#include <unordered_map>

namespace ws {

using namespace exportimpl;

namespace {

namespace pf {
// Trace
constexpr int kTracePacket = 1;
// TracePacket
constexpr int kTimestamp = 8;
constexpr int kTrustedPacketSequenceId = 10;
constexpr int kTrackEvent = 11;
constexpr int kInternedData = 12;
constexpr int kSequenceFlags = 13;
constexpr int kTrackDescriptor = 60;
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

constexpr std::uint32_t kSequence = 1;
constexpr std::uint64_t kAnnKstep = 1, kAnnSlot = 2, kAnnKind = 3;

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
    explicit PacketWriter(Out& out) : m_out(out) {}
    void emit(const Pb& packet)
    {
        m_frame.clear();
        m_frame.str(pf::kTracePacket, packet.b);
        m_out.put(m_frame.b);
    }

private:
    Out& m_out;
    Pb m_frame;
};

}  // namespace

ExportStats writePerfettoTrace(const KernelTrace& trace, const TraceExportOptions& options, ByteSink& sink)
{
    const Selection sel = select(trace, options);
    const Uuids id{trace.lanes.size(), trace.ctas.size()};
    Out out(sink);
    PacketWriter pw(out);
    ExportStats st;
    Pb packet, inner, sub;

    // Interned names (every kind present) and annotation names; clears the sequence's incremental state.
    {
        std::vector<bool> used(256, false);
        for (const int li : sel.lanes) {
            const Lane& l = trace.lanes[std::size_t(li)];
            for (std::size_t i = sel.first[std::size_t(li)]; i < sel.last[std::size_t(li)]; ++i)
                used[static_cast<std::uint8_t>(l.kind[i])] = true;
        }
        Pb interned;
        for (int k = 0; k < 256; ++k)
            if (used[std::size_t(k)]) {
                sub.clear();
                sub.u(pf::kIid, std::uint64_t(k) + 1);
                sub.str(pf::kInternedName, intervalName(trace, static_cast<IntervalKind>(k)));
                interned.msg(pf::kEventNames, sub);
            }
        const std::pair<std::uint64_t, std::string_view> names[] = {{kAnnKstep, "kstep"}, {kAnnSlot, "slot"}, {kAnnKind, "kind"}};
        for (const auto& [iid, n] : names) {
            sub.clear();
            sub.u(pf::kIid, iid);
            sub.str(pf::kInternedName, n);
            interned.msg(pf::kDebugAnnotationNames, sub);
        }
        packet.clear();
        packet.u(pf::kTrustedPacketSequenceId, kSequence);
        packet.u(pf::kSequenceFlags, pf::kSeqIncrementalStateCleared);
        packet.msg(pf::kInternedData, interned);
        pw.emit(packet);
    }

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
        packet.u(pf::kTrustedPacketSequenceId, kSequence);
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

    // Slices: begin and end per interval, lane by lane (trace_processor sorts packets by timestamp).
    for (const int li : sel.lanes) {
        const Lane& l = trace.lanes[std::size_t(li)];
        const std::uint64_t track = id.lane(std::size_t(li));
        for (std::size_t i = sel.first[std::size_t(li)]; i < sel.last[std::size_t(li)]; ++i) {
            if (!sel.inRange(l.start[i], l.end(i)))
                continue;
            inner.clear();
            inner.u(pf::kType, pf::kSliceBegin);
            inner.u(pf::kTrackUuid, track);
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
                sub.str(pf::kAnnStringValue, intervalKindName(l.kind[i]));
                inner.msg(pf::kDebugAnnotations, sub);
            }
            if (!flowsAt.empty()) {
                const auto it = flowsAt.find((std::uint64_t(li) << 40) | i);
                if (it != flowsAt.end())
                    for (const auto& [fid, term] : it->second)
                        inner.fixed64(term ? pf::kTerminatingFlowIds : pf::kFlowIds, fid);
            }
            packet.clear();
            packet.u(pf::kTimestamp, std::uint64_t(l.start[i] - sel.origin));
            packet.u(pf::kTrustedPacketSequenceId, kSequence);
            packet.u(pf::kSequenceFlags, pf::kSeqNeedsIncrementalState);
            packet.msg(pf::kTrackEvent, inner);
            pw.emit(packet);

            inner.clear();
            inner.u(pf::kType, pf::kSliceEnd);
            inner.u(pf::kTrackUuid, track);
            packet.clear();
            packet.u(pf::kTimestamp, std::uint64_t(l.end(i) - sel.origin));
            packet.u(pf::kTrustedPacketSequenceId, kSequence);
            packet.msg(pf::kTrackEvent, inner);
            pw.emit(packet);
            ++st.intervals;
        }
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
                packet.u(pf::kTrustedPacketSequenceId, kSequence);
                packet.msg(pf::kTrackEvent, inner);
                pw.emit(packet);
                ++st.counterSamples;
            }
        }
    }
    out.flush();
    st.bytes = out.bytes();
    return st;
}

}  // namespace ws
