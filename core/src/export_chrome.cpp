// Chrome Trace Event JSON (docs/interop.md): a kernel's per-warp timeline or a run's program view,
// written event by event (no document in memory), and the file-level export entry points.
#include "export_impl.h"
#include "warpstage/tilegeom.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <limits>

namespace ws {

using namespace exportimpl;

namespace {

void appendInt(std::string& s, std::int64_t v)
{
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    s.append(buf, std::size_t(r.ptr - buf));
}

void appendDouble(std::string& s, double v)
{
    char buf[40];
    const int n = std::snprintf(buf, sizeof buf, "%.17g", v);
    s.append(buf, std::size_t(n));
}

// Events are separated by ",\n"; the first one is not.
class EventList {
public:
    explicit EventList(Out& out) : m_out(out) {}
    std::string& begin()
    {
        m_line.clear();
        if (m_count++)
            m_line += ",\n";
        return m_line;
    }
    void end() { m_out.put(m_line); }
    std::int64_t count() const { return m_count; }

private:
    Out& m_out;
    std::string m_line;
    std::int64_t m_count = 0;
};

void metadata(EventList& ev, int pid, int tid, std::string_view what, const std::string& argsBody)
{
    std::string& s = ev.begin();
    s += "{\"ph\":\"M\",\"pid\":";
    appendInt(s, pid);
    s += ",\"tid\":";
    appendInt(s, tid);
    s += ",\"name\":\"";
    s += what;
    s += "\",\"args\":{";
    s += argsBody;
    s += "}}";
    ev.end();
}

std::string nameArg(std::string_view name)
{
    std::string a = "\"name\":";
    appendJsonString(a, name);
    return a;
}

std::string sortArg(std::int64_t i)
{
    std::string a = "\"sort_index\":";
    appendInt(a, i);
    return a;
}

std::string_view category(IntervalKind k)
{
    if (isUserPhase(k))
        return "user";
    if (isComputeKind(k))
        return "compute";
    if (isWaitKind(k))
        return "wait";
    return "other";
}

std::string kindArg(IntervalKind k)
{
    if (isUserPhase(k))
        return "user:" + std::to_string(static_cast<int>(k) - kUserPhaseBase);
    return std::string(intervalKindName(k));
}

void header(Out& out, std::string_view view, TimeNs origin, const RunInfo& run)
{
    std::string s = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"warpstage\":{\"format\":1,\"view\":\"";
    s += view;
    s += "\",\"origin_ns\":";
    appendInt(s, origin);
    s += ",\"run\":{\"id\":";
    appendInt(s, run.id);
    s += ",\"variant\":";
    appendJsonString(s, run.variant);
    s += ",\"kind\":";
    appendJsonString(s, runKindName(run.kind));
    s += ",\"m\":";
    appendInt(s, run.m);
    s += ",\"n\":";
    appendInt(s, run.n);
    s += ",\"k\":";
    appendInt(s, run.k);
    s += ",\"synthetic\":";
    s += run.synthetic ? "true" : "false";
    s += ",\"device\":";
    appendJsonString(s, run.device.name);
    s += ",\"sm_count\":";
    appendInt(s, run.device.smCount);
    s += ",\"host\":";
    appendJsonString(s, run.host);
    s += ",\"started_at\":";
    appendJsonString(s, run.startedAt);
    if (const auto g = tileGeometryOf(run)) {  // the tile configuration (tilegeom.h), read back by the import
        s += ",\"tiles\":";
        appendJsonString(s, formatTileTag(*g));
    }
    s += "}";
    out.put(s);
}

}  // namespace

ExportStats writeChromeTrace(const KernelTrace& trace, const TraceExportOptions& options, ByteSink& sink)
{
    const Selection sel = select(trace, options);
    Out out(sink);
    ExportStats st;
    header(out, "warp", sel.origin, trace.run);
    {
        const KernelLaunch& k = trace.launch;
        std::string s = ",\"kernel\":{\"id\":";
        appendInt(s, k.id);
        s += ",\"name\":";
        appendJsonString(s, k.name);
        s += ",\"variant\":";
        appendJsonString(s, k.variant);
        s += ",\"start_ns\":";
        appendInt(s, k.start);
        s += ",\"end_ns\":";
        appendInt(s, k.end);
        s += ",\"grid\":[";
        for (int i = 0; i < 3; ++i) {
            if (i)
                s += ",";
            appendInt(s, k.grid[i]);
        }
        s += "],\"block\":[";
        for (int i = 0; i < 3; ++i) {
            if (i)
                s += ",";
            appendInt(s, k.block[i]);
        }
        s += "]},\"phase_names\":[";
        for (std::size_t i = 0; i < trace.phaseNames.size(); ++i) {
            if (i)
                s += ",";
            appendJsonString(s, trace.phaseNames[i]);
        }
        s += "]}},\n\"traceEvents\":[\n";
        out.put(s);
    }
    EventList ev(out);

    // Processes: one per CTA with a selected warp, ordered as the trace orders CTAs (SM, then start).
    const std::optional<TileGeometry> tiles = tileGeometryOf(trace.run);
    for (std::size_t c = 0; c < trace.ctas.size(); ++c) {
        if (!sel.ctaSelected[c])
            continue;
        const Cta& cta = trace.ctas[c];
        const int pid = int(c) + 1;
        std::string a = nameArg(ctaTrackName(cta));
        a += ",\"sm\":";
        appendInt(a, cta.smId);
        a += ",\"cta\":";
        appendInt(a, cta.blockLinear);
        a += ",\"start_ns\":";
        appendInt(a, cta.start);
        a += ",\"end_ns\":";
        appendInt(a, cta.end);
        a += ",\"tile_m\":";
        appendInt(a, cta.tileM);
        a += ",\"tile_n\":";
        appendInt(a, cta.tileN);
        if (cta.tileM >= 0 && tiles) {  // "tile (3, 5) = rows 384-511, cols 640-767 of C, ..." (tilegeom.h)
            a += ",\"tile\":";
            appendJsonString(a, tileText(tiles, cta.tileM, cta.tileN, trace.run.m, trace.run.n));
        }
        a += ",\"ns_per_cycle\":";
        appendDouble(a, cta.nsPerCycle);
        metadata(ev, pid, 0, "process_name", a);
        metadata(ev, pid, 0, "process_sort_index", sortArg(std::int64_t(c)));
    }
    for (const int li : sel.lanes) {
        const Lane& l = trace.lanes[std::size_t(li)];
        const int pid = l.ctaIndex + 1;
        std::string a = nameArg(warpTrackName(l));
        a += ",\"warp\":";
        appendInt(a, l.warpIndex);
        a += ",\"warpgroup\":";
        appendInt(a, l.warpgroup);
        a += ",\"role\":";
        appendJsonString(a, warpRoleName(l.role));
        a += ",\"role_name\":";
        appendJsonString(a, l.roleName);
        metadata(ev, pid, l.warpIndex, "thread_name", a);
        metadata(ev, pid, l.warpIndex, "thread_sort_index", sortArg(l.warpIndex));
        ++st.lanes;
    }

    // Scope brackets (Proton's outer scopes): complete events of category "scope" on the warp's thread, written
    // before its phases; viewers nest them by time (the phases inside a scope lie within it).
    const auto scopesOf = scopesByLane(trace);
    // Slices: names are the kinds' labels; a short per-kind prefix string is built once.
    std::vector<std::string> namePart(256);
    for (const int li : sel.lanes) {
        const Lane& l = trace.lanes[std::size_t(li)];
        std::string where = ",\"pid\":";
        appendInt(where, l.ctaIndex + 1);
        where += ",\"tid\":";
        appendInt(where, l.warpIndex);
        for (const ScopeSpan* sc : scopesOf[std::size_t(li)]) {
            if (!sel.inRange(sc->start, sc->end))
                continue;
            std::string& s = ev.begin();
            s += "{\"ph\":\"X\"";
            s += where;
            s += ",\"ts\":";
            appendMicros(s, sc->start - sel.origin);
            s += ",\"dur\":";
            appendMicros(s, sc->end - sc->start);
            s += ",\"name\":";
            appendJsonString(s, sc->name);
            s += ",\"cat\":\"scope\",\"args\":{\"depth\":";
            appendInt(s, sc->depth);
            s += "}}";
            ev.end();
            ++st.scopes;
        }
        for (std::size_t i = sel.first[std::size_t(li)]; i < sel.last[std::size_t(li)]; ++i) {
            if (!sel.inRange(l.start[i], l.end(i)))
                continue;
            const IntervalKind k = l.kind[i];
            std::string& np = namePart[static_cast<std::uint8_t>(k)];
            if (np.empty()) {
                np = ",\"name\":";
                appendJsonString(np, intervalName(trace, k));
                np += ",\"cat\":\"";
                np += category(k);
                np += "\",\"args\":{\"kind\":";
                appendJsonString(np, kindArg(k));
            }
            std::string& s = ev.begin();
            s += "{\"ph\":\"X\"";
            s += where;
            s += ",\"ts\":";
            appendMicros(s, l.start[i] - sel.origin);
            s += ",\"dur\":";
            appendMicros(s, l.duration[i]);
            s += np;
            s += ",\"kstep\":";
            appendInt(s, l.kstep[i]);
            s += ",\"slot\":";
            appendInt(s, l.slot[i]);
            s += "}}";
            ev.end();
            ++st.intervals;
        }
    }

    if (options.counters) {
        const auto inFlight = loadsInFlight(trace, sel);
        for (std::size_t c = 0; c < trace.ctas.size(); ++c) {
            for (const auto& [t, n] : inFlight[c]) {
                std::string& s = ev.begin();
                s += "{\"ph\":\"C\",\"pid\":";
                appendInt(s, int(c) + 1);
                s += ",\"name\":\"loads in flight\",\"ts\":";
                appendMicros(s, t - sel.origin);
                s += ",\"args\":{\"loads\":";
                appendInt(s, n);
                s += "}}";
                ev.end();
                ++st.counterSamples;
            }
        }
    }

    if (options.flows) {
        std::int64_t id = 0;
        for (const Flow& f : loadFlows(trace, sel)) {
            ++id;
            for (int end = 0; end < 2; ++end) {
                const Lane& l = trace.lanes[std::size_t(end ? f.toLane : f.fromLane)];
                std::string& s = ev.begin();
                s += end ? "{\"ph\":\"f\",\"bp\":\"e\"" : "{\"ph\":\"s\"";
                s += ",\"id\":";
                appendInt(s, id);
                s += ",\"pid\":";
                appendInt(s, l.ctaIndex + 1);
                s += ",\"tid\":";
                appendInt(s, l.warpIndex);
                s += ",\"ts\":";
                appendMicros(s, (end ? f.toTs : f.fromTs) - sel.origin);
                s += ",\"name\":\"load\",\"cat\":\"load\"}";
                ev.end();
            }
            ++st.flows;
        }
    }
    out.put("\n]}\n");
    out.flush();
    st.bytes = out.bytes();
    return st;
}

ExportStats writeChromeProgram(const ProgramTrace& p, const TraceExportOptions& options, ByteSink& sink)
{
    const TimeNs origin = p.firstStart();
    TimeNs lo = std::numeric_limits<TimeNs>::min(), hi = std::numeric_limits<TimeNs>::max();
    if (options.range) {
        if (!(options.range->second > options.range->first))
            throw ExportError("the range's end must be after its start");
        lo = origin + options.range->first;
        hi = origin + options.range->second;
    }
    auto inRange = [&](TimeNs a, TimeNs b) { return a < hi && (b > lo || (a == b && a >= lo)); };
    Out out(sink);
    ExportStats st;
    header(out, "program", origin, p.run);
    out.put("}},\n\"traceEvents\":[\n");
    EventList ev(out);
    constexpr int kGpu = 1, kNvtx = 2, kApi = 3;
    metadata(ev, kGpu, 0, "process_name",
             nameArg("GPU " + std::to_string(p.run.deviceOrdinal) + (p.run.device.name.empty() ? "" : ": " + p.run.device.name)));
    metadata(ev, kGpu, 0, "process_sort_index", sortArg(0));
    for (const StreamInfo& s : p.streams) {
        std::string n = "stream " + std::to_string(s.streamId);
        if (!s.name.empty())
            n += " (" + s.name + ")";
        else if (s.isDefault)
            n += " (default)";
        metadata(ev, kGpu, int(s.streamId), "thread_name", nameArg(n));
        metadata(ev, kGpu, int(s.streamId), "thread_sort_index", sortArg(s.streamId));
    }
    if (!p.nvtx.empty()) {
        metadata(ev, kNvtx, 0, "process_name", nameArg("NVTX"));
        metadata(ev, kNvtx, 0, "process_sort_index", sortArg(1));
    }
    if (!p.apiSpans.empty()) {
        metadata(ev, kApi, 0, "process_name", nameArg("CUDA API"));
        metadata(ev, kApi, 0, "process_sort_index", sortArg(2));
    }
    auto complete = [&](int pid, std::int64_t tid, TimeNs a, TimeNs b, std::string_view name, std::string_view cat,
                        const std::string& args) {
        std::string& s = ev.begin();
        s += "{\"ph\":\"X\",\"pid\":";
        appendInt(s, pid);
        s += ",\"tid\":";
        appendInt(s, tid);
        s += ",\"ts\":";
        appendMicros(s, a - origin);
        s += ",\"dur\":";
        appendMicros(s, std::max<TimeNs>(0, b - a));
        s += ",\"name\":";
        appendJsonString(s, name);
        s += ",\"cat\":\"";
        s += cat;
        s += "\",\"args\":{";
        s += args;
        s += "}}";
        ev.end();
        ++st.intervals;
    };
    for (const KernelLaunch& k : p.kernels) {
        if (!inRange(k.start, k.end))
            continue;
        std::string a = "\"correlation\":";
        appendInt(a, k.correlationId);
        a += ",\"grid\":\"" + std::to_string(k.grid[0]) + "," + std::to_string(k.grid[1]) + "," + std::to_string(k.grid[2]) +
             "\",\"block\":\"" + std::to_string(k.block[0]) + "," + std::to_string(k.block[1]) + "," +
             std::to_string(k.block[2]) + "\",\"launch_index\":";
        appendInt(a, k.launchIndex);
        a += k.traced ? ",\"traced\":true" : ",\"traced\":false";
        complete(kGpu, k.streamId, k.start, k.end, k.name, "kernel", a);
    }
    static constexpr std::string_view kMem[] = {"memory op", "HtoD", "DtoH", "DtoD", "memset", "memory op"};
    for (const MemOp& m : p.memOps) {
        if (!inRange(m.start, m.end))
            continue;
        std::string a = "\"bytes\":";
        appendInt(a, m.bytes);
        a += ",\"correlation\":";
        appendInt(a, m.correlationId);
        const auto i = std::size_t(m.kind) < std::size(kMem) ? std::size_t(m.kind) : 0;
        complete(kGpu, m.streamId, m.start, m.end, kMem[i], "memory", a);
    }
    for (const NvtxRange& r : p.nvtx) {
        if (!inRange(r.start, r.end))
            continue;
        std::string a = "\"domain\":";
        appendJsonString(a, r.domain);
        a += ",\"kind\":";
        appendJsonString(a, nvtxKindName(r.kind));
        complete(kNvtx, r.threadId, r.start, r.end, r.name, "nvtx", a);
    }
    for (const ApiSpan& c : p.apiSpans) {
        if (!inRange(c.start, c.end))
            continue;
        std::string a = "\"correlation\":";
        appendInt(a, c.correlationId);
        a += ",\"result\":";
        appendInt(a, c.result);
        complete(kApi, c.threadId, c.start, c.end, c.name, "api", a);
    }
    if (st.intervals == 0 && options.range)
        throw ExportError("the range selects no record of the run");
    out.put("\n]}\n");
    out.flush();
    st.bytes = out.bytes();
    return st;
}

ExportStats exportKernelTrace(const KernelTrace& trace, const TraceExportOptions& options, const std::string& path)
{
    const auto fmt = traceFormatForPath(path);
    if (!fmt)
        throw ExportError(path + ": unknown trace format (use .json, .json.gz or .perfetto-trace)");
    FileSink sink(path, *fmt == TraceFormat::ChromeJsonGz);
    ExportStats st;
    try {
        st = *fmt == TraceFormat::Perfetto ? writePerfettoTrace(trace, options, sink) : writeChromeTrace(trace, options, sink);
    } catch (const ExportError& e) {
        throw ExportError(path + ": " + e.what());
    }
    sink.finish();
    return st;
}

ExportStats exportProgramTrace(const ProgramTrace& program, const TraceExportOptions& options, const std::string& path)
{
    const auto fmt = traceFormatForPath(path);
    if (!fmt)
        throw ExportError(path + ": unknown trace format (use .json or .json.gz)");
    if (*fmt == TraceFormat::Perfetto)
        throw ExportError(path + ": the program view is exported as Chrome JSON only (use .json or .json.gz)");
    FileSink sink(path, *fmt == TraceFormat::ChromeJsonGz);
    ExportStats st;
    try {
        st = writeChromeProgram(program, options, sink);
    } catch (const ExportError& e) {
        throw ExportError(path + ": " + e.what());
    }
    sink.finish();
    return st;
}

}  // namespace ws
