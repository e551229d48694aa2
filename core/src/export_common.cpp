// Shared parts of the trace exporters: format by file name, track names, the selection of lanes and
// intervals, loads in flight, load -> wait flows, and the temporary-file (optionally gzip) sink.
#include "export_impl.h"

#ifdef WARPSTAGE_HAVE_ZLIB
#include <zlib.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unistd.h>
#include <unordered_map>

namespace ws {

namespace {
bool endsWithNoCase(std::string_view s, std::string_view suffix)
{
    if (s.size() < suffix.size())
        return false;
    for (std::size_t i = 0; i < suffix.size(); ++i) {
        char a = s[s.size() - suffix.size() + i];
        if (a >= 'A' && a <= 'Z')
            a = char(a - 'A' + 'a');
        if (a != suffix[i])
            return false;
    }
    return true;
}
}  // namespace

std::optional<TraceFormat> traceFormatForPath(std::string_view path)
{
    if (endsWithNoCase(path, ".json.gz"))
        return TraceFormat::ChromeJsonGz;
    if (endsWithNoCase(path, ".json"))
        return TraceFormat::ChromeJson;
    if (endsWithNoCase(path, ".perfetto-trace") || endsWithNoCase(path, ".pftrace"))
        return TraceFormat::Perfetto;
    return std::nullopt;
}

std::string_view traceFormatName(TraceFormat f)
{
    switch (f) {
    case TraceFormat::ChromeJson: return "chrome-json";
    case TraceFormat::ChromeJsonGz: return "chrome-json-gz";
    case TraceFormat::Perfetto: return "perfetto";
    }
    return "?";
}

TimeNs exportOrigin(const KernelTrace& trace)
{
    TimeNs o = trace.launch.start;
    for (const Lane& l : trace.lanes)
        if (l.size())
            o = std::min(o, l.start.front());
    for (const LoadTransfer& ld : trace.loads)
        o = std::min(o, ld.issue);
    return o;
}

std::string ctaTrackName(const Cta& cta)
{
    return "SM " + std::to_string(cta.smId) + " / CTA " + std::to_string(cta.blockLinear);
}

std::string warpTrackName(const Lane& lane)
{
    std::string role = lane.roleName.empty() ? std::string(warpRoleName(lane.role)) : lane.roleName;
    return "w" + std::to_string(lane.warpIndex) + " " + role + " (wg" + std::to_string(lane.warpgroup) + ")";
}

std::string intervalName(const KernelTrace& trace, IntervalKind kind)
{
    if (isUserPhase(kind)) {
        const std::size_t i = std::size_t(static_cast<std::uint8_t>(kind) - kUserPhaseBase);
        if (i < trace.phaseNames.size() && !trace.phaseNames[i].empty())
            return trace.phaseNames[i];
        return "user phase " + std::to_string(i);
    }
    return std::string(intervalKindLabel(kind));
}

}  // namespace ws

namespace ws::exportimpl {

Selection select(const KernelTrace& trace, const TraceExportOptions& options)
{
    Selection sel;
    sel.origin = exportOrigin(trace);
    if (!options.laneMask.empty() && options.laneMask.size() != trace.lanes.size())
        throw ExportError("lane mask has " + std::to_string(options.laneMask.size()) + " entries for " +
                          std::to_string(trace.lanes.size()) + " lanes");
    sel.lo = std::numeric_limits<TimeNs>::min();
    sel.hi = std::numeric_limits<TimeNs>::max();
    if (options.range) {
        if (!(options.range->second > options.range->first))
            throw ExportError("the range's end must be after its start");
        sel.lo = trace.launch.start + options.range->first;
        sel.hi = trace.launch.start + options.range->second;
    }
    sel.first.assign(trace.lanes.size(), 0);
    sel.last.assign(trace.lanes.size(), 0);
    sel.ctaSelected.assign(trace.ctas.size(), false);
    std::int64_t intervals = 0;
    for (std::size_t li = 0; li < trace.lanes.size(); ++li) {
        if (!options.laneMask.empty() && !options.laneMask[li])
            continue;
        const Lane& l = trace.lanes[li];
        sel.lanes.push_back(int(li));
        if (l.ctaIndex >= 0 && std::size_t(l.ctaIndex) < trace.ctas.size())
            sel.ctaSelected[std::size_t(l.ctaIndex)] = true;
        // Lanes are sorted by start: [first, last) spans every interval in range. Intervals inside that span
        // that miss the range (possible only where a lane's intervals nest) are skipped by the writers.
        std::size_t a = 0;
        while (a < l.size() && l.start[a] < sel.hi && !sel.inRange(l.start[a], l.end(a)))
            ++a;
        std::size_t b = a;
        for (std::size_t i = a; i < l.size() && l.start[i] < sel.hi; ++i)
            if (sel.inRange(l.start[i], l.end(i))) {
                b = i + 1;
                ++intervals;
            }
        sel.first[li] = a;
        sel.last[li] = std::max(a, b);
    }
    if (sel.lanes.empty())
        throw ExportError("the lane filter selects no warp");
    if (intervals == 0 && options.range)
        throw ExportError("the range selects no interval of the selected warps");
    return sel;
}

std::vector<std::vector<std::pair<TimeNs, int>>> loadsInFlight(const KernelTrace& trace, const Selection& sel)
{
    std::vector<std::vector<std::pair<TimeNs, int>>> changes(trace.ctas.size());
    for (const LoadTransfer& ld : trace.loads)
        if (ld.ctaId >= 0 && std::size_t(ld.ctaId) < trace.ctas.size() && sel.ctaSelected[std::size_t(ld.ctaId)] &&
            sel.inRange(ld.issue, ld.ready)) {
            changes[std::size_t(ld.ctaId)].emplace_back(ld.issue, +1);
            changes[std::size_t(ld.ctaId)].emplace_back(ld.ready, -1);
        }
    for (auto& c : changes) {
        std::sort(c.begin(), c.end());
        // Fold the changes at one time into one sample holding the count after them.
        std::size_t o = 0;
        int n = 0;
        for (std::size_t i = 0; i < c.size();) {
            const TimeNs t = c[i].first;
            for (; i < c.size() && c[i].first == t; ++i)
                n += c[i].second;
            c[o++] = {t, n};
        }
        c.resize(o);
    }
    return changes;
}

std::vector<Flow> loadFlows(const KernelTrace& trace, const Selection& sel)
{
    struct Where {
        int lane;
        std::size_t i;
    };
    auto key = [](int cta, std::int32_t kstep) { return (std::uint64_t(std::uint32_t(cta)) << 32) | std::uint32_t(kstep); };
    std::unordered_map<std::uint64_t, Where> issuer;
    std::unordered_map<std::uint64_t, std::vector<Where>> waits;
    for (int li : sel.lanes) {
        const Lane& l = trace.lanes[std::size_t(li)];
        for (std::size_t i = sel.first[std::size_t(li)]; i < sel.last[std::size_t(li)]; ++i) {
            if (l.kstep[i] < 0 || !sel.inRange(l.start[i], l.end(i)))
                continue;
            const IntervalKind k = l.kind[i];
            if (k == IntervalKind::IssueLoad || k == IntervalKind::Load)
                issuer.try_emplace(key(l.ctaIndex, l.kstep[i]), Where{li, i});
            else if (k == IntervalKind::WaitData)
                waits[key(l.ctaIndex, l.kstep[i])].push_back(Where{li, i});
        }
    }
    auto inside = [&](const Where& w, TimeNs t) {
        const Lane& l = trace.lanes[std::size_t(w.lane)];
        const TimeNs a = l.start[w.i];
        const TimeNs b = std::max(a, l.end(w.i) - 1);
        return std::clamp(t, a, b);
    };
    std::vector<Flow> flows;
    for (const LoadTransfer& ld : trace.loads) {
        if (ld.ctaId < 0 || std::size_t(ld.ctaId) >= trace.ctas.size() || ld.kstep < 0)
            continue;
        const auto from = issuer.find(key(ld.ctaId, ld.kstep));
        const auto to = waits.find(key(ld.ctaId, ld.kstep));
        if (from == issuer.end() || to == waits.end())
            continue;
        for (const Where& w : to->second)
            flows.push_back(Flow{from->second.lane, from->second.i, inside(from->second, ld.issue), w.lane, w.i, inside(w, ld.ready)});
    }
    return flows;
}

void appendMicros(std::string& s, TimeNs ns)
{
    if (ns < 0) {
        s.push_back('-');
        ns = -ns;
    }
    char buf[32];
    const int n = std::snprintf(buf, sizeof buf, "%lld.%03d", static_cast<long long>(ns / 1000), int(ns % 1000));
    s.append(buf, std::size_t(n));
}

void appendJsonString(std::string& s, std::string_view v)
{
    s.push_back('"');
    for (const char c : v) {
        switch (c) {
        case '"': s += "\\\""; break;
        case '\\': s += "\\\\"; break;
        case '\n': s += "\\n"; break;
        case '\r': s += "\\r"; break;
        case '\t': s += "\\t"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
                s += buf;
            } else {
                s.push_back(c);
            }
        }
    }
    s.push_back('"');
}

std::vector<std::vector<const ScopeSpan*>> scopesByLane(const KernelTrace& trace)
{
    std::vector<std::vector<const ScopeSpan*>> out(trace.lanes.size());
    if (trace.scopes.empty())
        return out;
    std::unordered_map<RowId, std::size_t> laneOf;
    for (std::size_t i = 0; i < trace.lanes.size(); ++i)
        laneOf.emplace(trace.lanes[i].warpId, i);
    for (const ScopeSpan& s : trace.scopes)
        if (const auto it = laneOf.find(s.warpId); it != laneOf.end())
            out[it->second].push_back(&s);
    for (auto& v : out)
        std::stable_sort(v.begin(), v.end(), [](const ScopeSpan* a, const ScopeSpan* b) {
            return a->start != b->start ? a->start < b->start : a->depth < b->depth;
        });
    return out;
}

struct FileSink::Impl {
    std::FILE* f = nullptr;
    bool gzip = false;
    bool zInit = false;
#ifdef WARPSTAGE_HAVE_ZLIB
    z_stream z{};
    std::vector<unsigned char> zbuf = std::vector<unsigned char>(1 << 18);
#endif
};

FileSink::FileSink(std::string path, bool gzip) : m_impl(std::make_unique<Impl>()), m_path(std::move(path))
{
#ifndef WARPSTAGE_HAVE_ZLIB
    if (gzip)
        throw ExportError(m_path + ": this build has no zlib, so no .json.gz (write .json and gzip it)");
#endif
    m_tmp = m_path + ".tmp-" + std::to_string(::getpid());
    m_impl->f = std::fopen(m_tmp.c_str(), "wb");
    if (!m_impl->f)
        throw ExportError(m_path + ": cannot create (" + std::strerror(errno) + ")");
    m_impl->gzip = gzip;
#ifdef WARPSTAGE_HAVE_ZLIB
    if (gzip) {
        // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
        if (deflateInit2(&m_impl->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            std::fclose(m_impl->f);
            std::remove(m_tmp.c_str());
            throw ExportError(m_path + ": cannot start gzip compression");
        }
        m_impl->zInit = true;
    }
#endif
}

FileSink::~FileSink()
{
#ifdef WARPSTAGE_HAVE_ZLIB
    if (m_impl->zInit)
        deflateEnd(&m_impl->z);
#endif
    if (m_impl->f) {
        std::fclose(m_impl->f);
        std::remove(m_tmp.c_str());
    }
}

void FileSink::write(const char* data, std::size_t size)
{
    if (!m_impl->f)
        throw ExportError(m_path + ": write after the file was closed");
    auto raw = [&](const void* p, std::size_t n) {
        if (n && std::fwrite(p, 1, n, m_impl->f) != n)
            throw ExportError(m_path + ": cannot write (" + std::strerror(errno) + ")");
        m_fileBytes += std::int64_t(n);
    };
    if (!m_impl->gzip) {
        raw(data, size);
        return;
    }
#ifdef WARPSTAGE_HAVE_ZLIB
    z_stream& z = m_impl->z;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z.avail_in = uInt(size);
    do {
        z.next_out = m_impl->zbuf.data();
        z.avail_out = uInt(m_impl->zbuf.size());
        if (deflate(&z, Z_NO_FLUSH) == Z_STREAM_ERROR)
            throw ExportError(m_path + ": gzip compression failed");
        raw(m_impl->zbuf.data(), m_impl->zbuf.size() - z.avail_out);
    } while (z.avail_out == 0);
#endif
}

void FileSink::finish()
{
#ifdef WARPSTAGE_HAVE_ZLIB
    if (m_impl->gzip) {
        z_stream& z = m_impl->z;
        z.next_in = nullptr;
        z.avail_in = 0;
        int rc = Z_OK;
        do {
            z.next_out = m_impl->zbuf.data();
            z.avail_out = uInt(m_impl->zbuf.size());
            rc = deflate(&z, Z_FINISH);
            if (rc == Z_STREAM_ERROR)
                throw ExportError(m_path + ": gzip compression failed");
            const std::size_t n = m_impl->zbuf.size() - z.avail_out;
            if (n && std::fwrite(m_impl->zbuf.data(), 1, n, m_impl->f) != n)
                throw ExportError(m_path + ": cannot write (" + std::strerror(errno) + ")");
            m_fileBytes += std::int64_t(n);
        } while (rc != Z_STREAM_END);
        deflateEnd(&z);
        m_impl->zInit = false;
    }
#endif
    std::FILE* f = m_impl->f;
    m_impl->f = nullptr;
    if (std::fflush(f) != 0 || std::fclose(f) != 0) {
        std::remove(m_tmp.c_str());
        throw ExportError(m_path + ": cannot write (" + std::strerror(errno) + ")");
    }
    if (std::rename(m_tmp.c_str(), m_path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(m_tmp.c_str());
        throw ExportError(m_path + ": cannot rename the finished export into place (" + why + ")");
    }
}

}  // namespace ws::exportimpl
