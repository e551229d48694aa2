// Event-buffer decoding: see warpstage/decode.h and docs/recording.md.
#include "warpstage/decode.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>

namespace ws::decode {

namespace {

using trace::CtaRecord;
using trace::TraceBufferHeader;
using trace::TraceEvent;
using trace::WarpRegionHeader;

constexpr std::uint8_t kNoSlot = 0xFF;            // TraceEvent::slot when the event has none
constexpr double kMinPlausibleNsPerCycle = 0.1;   // 10 GHz
constexpr double kMaxPlausibleNsPerCycle = 10.0;  // 100 MHz

template <class T>
T readAt(const unsigned char* base, std::uint64_t offset)
{
    T v;
    std::memcpy(&v, base + offset, sizeof(T));
    return v;
}


struct OpenPhase {
    bool open = false;
    IntervalKind kind = IntervalKind::Other;
    std::int32_t kstep = -1;
    std::int16_t slot = -1;
    double start = 0;
};

struct OpenTile {
    bool open = false;
    int tileM = 0, tileN = 0;
    double start = 0;
};

std::string joinReasons(const std::vector<std::string>& parts)
{
    std::string s;
    for (const auto& p : parts) {
        if (!s.empty()) s += "; ";
        s += p;
    }
    return s;
}

}  // namespace

CtaClock calibrateCta(const CtaRecord& r, double fallbackNsPerCycle, std::int64_t minSpanNs)
{
    CtaClock c;
    c.gtStart = static_cast<std::int64_t>(r.globaltimerStart);
    c.clkStart = r.clockStart;
    c.nsPerCycle = fallbackNsPerCycle;
    const bool haveBoth = (r.flags & 3u) == 3u;
    if (!haveBoth || r.globaltimerEnd <= r.globaltimerStart || r.clockEnd <= r.clockStart) return c;
    const double spanNs = double(r.globaltimerEnd - r.globaltimerStart);
    if (spanNs < double(minSpanNs)) return c;
    const double slope = spanNs / double(r.clockEnd - r.clockStart);
    if (!(slope >= kMinPlausibleNsPerCycle && slope <= kMaxPlausibleNsPerCycle)) return c;
    c.nsPerCycle = slope;
    c.ownSlope = true;
    c.slopeRelError = kGlobalTimerTickNs / spanNs;
    return c;
}

Alignment alignToCupti(TimeNs cuptiStart, TimeNs cuptiEnd, std::int64_t minCtaStartGt, std::int64_t maxCtaEndGt)
{
    Alignment a;
    const std::int64_t span = maxCtaEndGt - minCtaStartGt;
    const std::int64_t duration = cuptiEnd - cuptiStart;
    a.slackNs = duration - span;
    // Centre the CTA span in CUPTI's window. Floor division keeps the result symmetric
    // for negative slack too.
    const std::int64_t half = a.slackNs >= 0 ? a.slackNs / 2 : -((-a.slackNs + 1) / 2);
    a.offsetNs = cuptiStart - minCtaStartGt + half;
    a.residualNs = std::abs(double(a.slackNs)) / 2.0;
    a.fits = a.slackNs >= 0;
    return a;
}

std::string roleDisplayName(WarpRole role, int warpgroup, int roleIndex)
{
    switch (role) {
    case WarpRole::Producer: return "producer";
    case WarpRole::Consumer: return "consumer WG" + std::to_string(roleIndex);
    case WarpRole::Epilogue: return "epilogue";
    case WarpRole::Worker: return "worker WG" + std::to_string(warpgroup);
    case WarpRole::Idle: return "idle";
    case WarpRole::Unknown: break;
    }
    return "unknown";
}

std::vector<int> parseIndexList(const std::string& text)
{
    std::vector<int> out;
    std::stringstream ss(text);
    std::string item;
    auto toInt = [&](const std::string& s) {
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
            throw std::invalid_argument("'" + text + "' is not a list of indices like 0-15,100 (bad item '" + s + "')");
        // (std::stol would throw std::out_of_range past LONG_MAX, which callers do not expect)
        if (s.size() > 10 || std::stoll(s) > std::numeric_limits<int>::max())
            throw std::invalid_argument("index " + s + " too large");
        const long v = std::stol(s);
        return int(v);
    };
    while (std::getline(ss, item, ',')) {
        const auto dash = item.find('-');
        if (dash == std::string::npos) {
            out.push_back(toInt(item));
        } else {
            const int a = toInt(item.substr(0, dash));
            const int b = toInt(item.substr(dash + 1));
            if (b < a) throw std::invalid_argument("range '" + item + "' in '" + text + "' runs backwards");
            if (b - a > 10'000'000) throw std::invalid_argument("range '" + item + "' is too large");
            for (int i = a; i <= b; ++i) out.push_back(i);
        }
    }
    if (out.empty()) throw std::invalid_argument("empty index list");
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

KernelRecord decodeTrace(const void* data, std::size_t size, const ladder::TraceGeometry& geom,
                         const KernelLaunch& launch, const DecodeOptions& options, DecodeReport& report)
{
    report = DecodeReport{};
    if (data == nullptr || size < sizeof(TraceBufferHeader))
        throw DecodeError("trace buffer too small (" + std::to_string(size) + " bytes, header needs "
                          + std::to_string(sizeof(TraceBufferHeader)) + ")");
    const auto* base = static_cast<const unsigned char*>(data);
    const auto hdr = readAt<TraceBufferHeader>(base, 0);
    if (hdr.magic != trace::kMagic) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "trace buffer has wrong magic 0x%08x (expected 0x%08x)", hdr.magic, trace::kMagic);
        throw DecodeError(buf);
    }
    if (!trace::isReadableVersion(hdr.version))
        throw DecodeError("trace buffer format version " + std::to_string(hdr.version) + " is not supported (this decoder reads versions "
                          + std::to_string(trace::kOldestFormatVersion) + " to " + std::to_string(trace::kFormatVersion)
                          + (hdr.version > trace::kFormatVersion ? "; the kernel was built against a newer <warpstage/trace.cuh>)" : ")"));
    if (geom.numCtas != 0 && (hdr.numCtas != geom.numCtas || hdr.warpsPerCta != geom.warpsPerCta
                              || hdr.eventsPerWarp != geom.eventsPerWarp))
        throw DecodeError("trace buffer header (" + std::to_string(hdr.numCtas) + " CTAs x " + std::to_string(hdr.warpsPerCta)
                          + " warps x " + std::to_string(hdr.eventsPerWarp) + " events) does not match the launch geometry ("
                          + std::to_string(geom.numCtas) + " x " + std::to_string(geom.warpsPerCta) + " x "
                          + std::to_string(geom.eventsPerWarp) + ")");
    if (hdr.numCtas == 0 || hdr.warpsPerCta == 0 || hdr.warpsPerCta > 64)
        throw DecodeError("trace buffer header is implausible: " + std::to_string(hdr.numCtas) + " CTAs x "
                          + std::to_string(hdr.warpsPerCta) + " warps");
    const std::uint64_t need = trace::bufferBytes(hdr.numCtas, hdr.warpsPerCta, hdr.eventsPerWarp);
    if (need > size)
        throw DecodeError("trace buffer is " + std::to_string(size) + " bytes but its header describes "
                          + std::to_string(need));

    const std::uint32_t nCta = hdr.numCtas;
    const std::uint32_t nWarp = hdr.warpsPerCta;
    const std::uint32_t cap = hdr.eventsPerWarp;
    report.ctasTotal = int(nCta);

    // --- CTA records and calibration
    std::vector<CtaRecord> ctaRecs(nCta);
    for (std::uint32_t c = 0; c < nCta; ++c)
        ctaRecs[c] = readAt<CtaRecord>(base, sizeof(TraceBufferHeader) + std::uint64_t(c) * sizeof(CtaRecord));

    std::vector<double> ownSlopes;
    for (const auto& r : ctaRecs) {
        const CtaClock cc = calibrateCta(r, 0.0, options.minCalibrationSpanNs);
        if (cc.ownSlope) ownSlopes.push_back(cc.nsPerCycle);
    }
    double fallback = options.deviceNsPerCycle;
    if (!ownSlopes.empty()) {
        std::vector<double> s = ownSlopes;
        std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
        fallback = s[s.size() / 2];
        report.medianNsPerCycle = fallback;
    }

    std::vector<std::string> failures;
    std::vector<CtaClock> clocks(nCta);
    std::int64_t minStart = std::numeric_limits<std::int64_t>::max();
    std::int64_t maxEnd = std::numeric_limits<std::int64_t>::min();
    for (std::uint32_t c = 0; c < nCta; ++c) {
        const auto& r = ctaRecs[c];
        if ((r.flags & 3u) != 3u) {
            ++report.missingCtas;
            if (r.flags & 1u) minStart = std::min<std::int64_t>(minStart, std::int64_t(r.globaltimerStart));
            continue;
        }
        clocks[c] = calibrateCta(r, fallback, options.minCalibrationSpanNs);
        if (!clocks[c].ownSlope) ++report.fallbackCalibrations;
        report.maxSlopeRelError = std::max(report.maxSlopeRelError, clocks[c].slopeRelError);
        minStart = std::min<std::int64_t>(minStart, std::int64_t(r.globaltimerStart));
        maxEnd = std::max<std::int64_t>(maxEnd, std::int64_t(r.globaltimerEnd));
    }
    if (report.missingCtas > 0)
        failures.push_back(std::to_string(report.missingCtas) + " of " + std::to_string(nCta)
                           + " CTAs did not write their start/end record (kernel fault, early exit, or tracing switched off)");
    if (report.missingCtas == int(nCta)) {
        report.ok = false;
        report.failureReason = joinReasons(failures);
        KernelRecord empty;
        empty.launch = launch;
        empty.launch.traced = true;
        return empty;
    }
    if (fallback <= 0 && report.fallbackCalibrations > 0)
        failures.push_back("no clock calibration: no CTA ran long enough and the device clock is unknown");

    // --- alignment
    if (launch.start != 0 || launch.end != 0) {
        report.alignment = alignToCupti(launch.start, launch.end, minStart, maxEnd);
        if (!report.alignment.fits)
            report.warnings.push_back("CTA span (" + std::to_string(maxEnd - minStart) + " ns) is longer than CUPTI's kernel ("
                                      + std::to_string(launch.end - launch.start) + " ns) by "
                                      + std::to_string(-report.alignment.slackNs) + " ns; centred");
    } else {
        report.alignment = Alignment{};
        report.alignment.offsetNs = 0;
        report.warnings.push_back("no CUPTI kernel record: times left on the %globaltimer base");
    }
    // Times are computed as doubles RELATIVE to the earliest CTA start and turned into integer ns only
    // at the end: absolute %globaltimer / CUPTI values are ~1.8e18 ns, where a double holds only
    // multiples of 256 ns (recordings before this fix were quantised to 256 ns).
    const std::int64_t relBase = minStart;
    const std::int64_t absBase = minStart + report.alignment.offsetNs;
    auto toNs = [absBase](double rel) -> TimeNs { return absBase + static_cast<TimeNs>(std::llround(rel)); };

    // --- which CTAs to keep
    // keep lists must be sorted for binary_search
    DecodeOptions opt = options;
    std::sort(opt.keepCtas.begin(), opt.keepCtas.end());
    std::sort(opt.keepSms.begin(), opt.keepSms.end());
    auto keepSorted = [&](std::uint32_t c) {
        if (!opt.keepCtas.empty() && !std::binary_search(opt.keepCtas.begin(), opt.keepCtas.end(), int(c))) return false;
        if (!opt.keepSms.empty() && !std::binary_search(opt.keepSms.begin(), opt.keepSms.end(), int(ctaRecs[c].smId)))
            return false;
        return true;
    };

    KernelRecord rec;
    rec.launch = launch;
    rec.launch.traced = true;

    const std::uint64_t regionBytes = sizeof(WarpRegionHeader) + std::uint64_t(cap) * sizeof(TraceEvent);
    std::int64_t overflowEvents = 0;
    std::int64_t unknownRecords = 0;  // marker kinds the buffer's format version does not define
    std::string firstUnknown;
    std::vector<TraceEvent> events;
    int maxUserPhase = -1;                                    // highest user phase index seen
    std::vector<std::pair<std::size_t, int>> userRoleWarps;   // (index into rec.warps, roleIndex)
    int declaredWarps = 0, tracedCtas = 0;

    for (std::uint32_t c = 0; c < nCta; ++c) {
        const auto& r = ctaRecs[c];
        // Overflow and unfinished warps count for every CTA, kept or not: the run is failed either way.
        const bool complete = (r.flags & 3u) == 3u;
        const bool kept = complete && keepSorted(c);
        if (complete) ++tracedCtas;

        const RowId ctaLocal = RowId(rec.ctas.size());
        const CtaClock& clk = clocks[c];
        std::map<std::int32_t, std::pair<double, std::int16_t>> issues;   // kstep -> (earliest issue, slot)
        std::map<std::int32_t, double> ready;                             // kstep -> earliest ready
        std::map<std::int32_t, std::pair<double, double>> syncLoads;      // kstep -> (min start, max end)
        bool haveTile = false;
        double firstTileT = std::numeric_limits<double>::infinity();
        int firstTileM = -1, firstTileN = -1;
        double lastEventT = std::numeric_limits<double>::lowest();

        if (kept) {
            Cta cta;
            cta.id = ctaLocal;
            cta.blockLinear = int(c);
            cta.smId = int(r.smId);
            cta.start = absBase + (std::int64_t(r.globaltimerStart) - relBase);
            cta.end = absBase + (std::int64_t(r.globaltimerEnd) - relBase);
            cta.nsPerCycle = clk.nsPerCycle;
            rec.ctas.push_back(cta);
        }

        for (std::uint32_t w = 0; w < nWarp; ++w) {
            const std::uint64_t roff = trace::warpRegionOffset(nCta, nWarp, cap, c, w);
            const auto wh = readAt<WarpRegionHeader>(base, roff);
            if (!(wh.flags & 1u)) {
                ++report.undeclaredWarps;
                if (complete) ++report.undeclaredByWarp[int(w)];
                if (kept && options.keepUndeclaredWarps) {
                    Warp warp;
                    warp.id = RowId(rec.warps.size());
                    warp.ctaId = ctaLocal;
                    warp.warpIndex = int(w);
                    warp.warpgroup = int(w / 4);
                    warp.role = WarpRole::Unknown;
                    warp.roleName = kNoRoleName;
                    rec.warps.push_back(warp);
                }
                continue;
            }
            ++declaredWarps;
            std::uint32_t n = std::min(wh.count, cap);
            bool unfinished = false;
            if (wh.count > cap) {
                ++report.overflowWarps;
                overflowEvents += std::int64_t(wh.count) - std::int64_t(cap);
                report.overflows.push_back(WarpOverflow{int(c), int(w), wh.count, cap});
            }
            if (wh.count == 0) {
                // The warp never wrote its final count: find what it did write (the host zeroed the buffer).
                unfinished = true;
                n = trace::unendedEvents(base + roff + sizeof(WarpRegionHeader), cap);
            }
            events.resize(n);
            if (n) std::memcpy(events.data(), base + roff + sizeof(WarpRegionHeader), std::size_t(n) * sizeof(TraceEvent));
            if (!unfinished && wh.count <= cap && (n == 0 || events[n - 1].kind != trace::kEventEnd)) unfinished = true;
            // A marker kind this buffer's version does not define fails the launch (named below) and is taken out before
            // anything reads the events: it is never expanded, nor skipped in silence.
            auto unknown = [v = hdr.version](const TraceEvent& e) { return e.kind >= trace::kMarkerBase && !trace::knownMarker(e.kind, v); };
            if (auto it = std::find_if(events.begin(), events.end(), unknown); it != events.end()) {
                if (unknownRecords == 0) {
                    char buf[64];
                    std::snprintf(buf, sizeof buf, "0x%02X (CTA %u, warp %u)", unsigned(it->kind), unsigned(c), unsigned(w));
                    firstUnknown = buf;
                }
                const auto keep = std::remove_if(events.begin(), events.end(), unknown);
                unknownRecords += events.end() - keep;
                events.erase(keep, events.end());
                n = std::uint32_t(events.size());
            }
            if (std::any_of(events.begin(), events.end(), [](const TraceEvent& e) { return trace::isPackedRecord(e.kind); })) {
                // packed k-step records (trace_format.h): the events each stands for
                std::vector<TraceEvent> expanded;
                expanded.reserve(std::size_t(n) * 2);
                trace::forEachEvent(events.data(), n, [&](const TraceEvent& e) { expanded.push_back(e); });
                events.swap(expanded);
                n = std::uint32_t(events.size());
            }
            if (unfinished) ++report.unfinishedWarps;
            if (!kept) continue;

            Warp warp;
            warp.id = RowId(rec.warps.size());
            warp.ctaId = ctaLocal;
            warp.warpIndex = int(w);
            warp.warpgroup = int(wh.warpgroup);
            warp.role = wh.role <= std::uint8_t(WarpRole::Idle) ? WarpRole(wh.role) : WarpRole::Unknown;
            warp.roleName = roleDisplayName(warp.role, warp.warpgroup, int(wh.roleIndex));
            if (wh.flags & 2u) {
                if (wh.userRole < options.roleNames.size()) {
                    warp.roleName = options.roleNames[wh.userRole];
                } else {
                    warp.roleName = "role " + std::to_string(wh.userRole);
                    ++report.unnamedUserRoles;
                }
                userRoleWarps.push_back({rec.warps.size(), int(wh.roleIndex)});
            }
            rec.warps.push_back(warp);

            OpenPhase ph;
            OpenTile tile;
            auto closePhase = [&](double t) {
                if (!ph.open) return;
                Interval iv;
                iv.warpId = warp.id;
                iv.kind = ph.kind;
                iv.kstep = ph.kstep;
                iv.slot = ph.slot;
                iv.start = toNs(ph.start);
                const TimeNs e = toNs(t);
                iv.duration = e - iv.start;
                if (iv.duration < 0) {
                    iv.duration = 0;
                    ++report.clampedIntervals;
                }
                rec.intervals.push_back(iv);
                if (ph.kind == IntervalKind::IssueLoad && ph.kstep >= 0) {
                    auto it = issues.find(ph.kstep);
                    if (it == issues.end() || ph.start < it->second.first) issues[ph.kstep] = {ph.start, ph.slot};
                } else if (ph.kind == IntervalKind::WaitData && ph.kstep >= 0) {
                    auto it = ready.find(ph.kstep);
                    if (it == ready.end() || t < it->second) ready[ph.kstep] = t;
                } else if (ph.kind == IntervalKind::Load && ph.kstep >= 0) {
                    auto it = syncLoads.find(ph.kstep);
                    if (it == syncLoads.end()) syncLoads[ph.kstep] = {ph.start, t};
                    else {
                        it->second.first = std::min(it->second.first, ph.start);
                        it->second.second = std::max(it->second.second, t);
                    }
                }
                ph.open = false;
            };
            auto closeTile = [&](double t) {
                if (!tile.open) return;
                TileSpan ts;
                ts.ctaId = ctaLocal;
                ts.warpId = warp.id;
                ts.tileM = tile.tileM;
                ts.tileN = tile.tileN;
                ts.start = toNs(tile.start);
                ts.end = std::max(ts.start, toNs(t));
                rec.tiles.push_back(ts);
                tile.open = false;
            };

            bool ended = false;
            for (std::uint32_t i = 0; i < n && !ended; ++i) {
                const TraceEvent& e = events[i];
                const double t = double(clk.gtStart - relBase)
                    + double(std::int64_t(e.clock - clk.clkStart)) * clk.nsPerCycle;
                lastEventT = std::max(lastEventT, t);
                if (e.kind >= trace::kMarkerBase) {
                    switch (e.kind) {
                    case trace::kEventEnd:
                        closePhase(t);
                        closeTile(t);
                        ended = true;
                        break;
                    case trace::kEventTileBegin:
                        closeTile(t);
                        tile.open = true;
                        tile.tileM = e.kstep;
                        tile.tileN = e.aux;
                        tile.start = t;
                        if (t < firstTileT) {
                            firstTileT = t;
                            firstTileM = e.kstep;
                            firstTileN = e.aux;
                            haveTile = true;
                        }
                        break;
                    case trace::kEventTileEnd:
                        closeTile(t);
                        break;
                    case trace::kEventLoadReady:
                        if (e.kstep >= 0) {
                            auto it = ready.find(e.kstep);
                            if (it == ready.end() || t < it->second) ready[e.kstep] = t;
                        }
                        break;
                    default:
                        break;  // unknown marker: ignored
                    }
                    continue;
                }
                closePhase(t);
                ph.open = true;
                if (e.kind < kIntervalKindCount) {
                    ph.kind = IntervalKind(e.kind);
                } else if (isUserPhase(IntervalKind(e.kind))) {
                    ph.kind = IntervalKind(e.kind);
                    maxUserPhase = std::max(maxUserPhase, int(e.kind) - int(kUserPhaseBase));
                } else {
                    ph.kind = IntervalKind::Other;  // reserved for future standard kinds
                }
                ph.kstep = e.kstep;
                ph.slot = e.slot == kNoSlot ? std::int16_t(-1) : std::int16_t(e.slot);
                ph.start = t;
            }
            // A warp without its end (overflow or fault): the last open phase has no end; drop it.
            if (tile.open && lastEventT > tile.start) closeTile(lastEventT);
        }

        if (!kept) continue;
        Cta& cta = rec.ctas.back();
        if (haveTile) {
            cta.tileM = firstTileM;
            cta.tileN = firstTileN;
        }
        for (const auto& [k, is] : issues) {
            auto it = ready.find(k);
            if (it == ready.end()) {
                ++report.unmatchedLoads;
                continue;
            }
            LoadTransfer lt;
            lt.ctaId = ctaLocal;
            lt.slot = is.second;
            lt.kstep = k;
            lt.issue = toNs(is.first);
            lt.ready = std::max(lt.issue, toNs(it->second));
            lt.bytes = hdr.bytesPerKStep;
            rec.loads.push_back(lt);
        }
        for (const auto& [k, span] : syncLoads) {
            if (issues.count(k)) continue;
            LoadTransfer lt;
            lt.ctaId = ctaLocal;
            lt.kstep = k;
            lt.issue = toNs(span.first);
            lt.ready = std::max(lt.issue, toNs(span.second));
            lt.bytes = hdr.bytesPerKStep;
            rec.loads.push_back(lt);
        }
    }
    report.ctasKept = int(rec.ctas.size());
    std::stable_sort(rec.loads.begin(), rec.loads.end(),
                     [](const LoadTransfer& a, const LoadTransfer& b) { return a.issue < b.issue; });

    // User phase names: the kernel's, extended for kinds it used without naming them.
    rec.phaseNames = options.phaseNames;
    if (rec.phaseNames.size() > std::size_t(kMaxUserPhases)) rec.phaseNames.resize(kMaxUserPhases);
    for (int i = int(rec.phaseNames.size()); i <= maxUserPhase; ++i) {
        rec.phaseNames.push_back("phase " + std::to_string(i));
        ++report.unnamedUserPhases;
    }
    if (report.unnamedUserPhases > 0)
        report.warnings.push_back(std::to_string(report.unnamedUserPhases)
                                  + " user phase kinds have no name (WARPSTAGE_PHASE_NAMES lists fewer): shown as 'phase <i>'");
    if (report.unnamedUserRoles > 0)
        report.warnings.push_back(std::to_string(report.unnamedUserRoles)
                                  + " warps declared a user role with no name (WARPSTAGE_ROLE_NAMES lists fewer): shown as 'role <i>'");
    // User role names: numbered by roleIndex where warps of one name differ in it.
    std::map<std::string, std::pair<int, int>> roleIdxRange;  // name -> (min, max roleIndex)
    for (const auto& [wi, ri] : userRoleWarps) {
        auto [it, fresh] = roleIdxRange.emplace(rec.warps[wi].roleName, std::make_pair(ri, ri));
        if (!fresh) it->second = {std::min(it->second.first, ri), std::max(it->second.second, ri)};
    }
    for (const auto& [wi, ri] : userRoleWarps) {
        const auto& range = roleIdxRange[rec.warps[wi].roleName];
        if (range.first != range.second) rec.warps[wi].roleName += " " + std::to_string(ri);
    }

    report.droppedEvents = overflowEvents;
    if (report.overflowWarps > 0) {
        std::string which;
        for (std::size_t i = 0; i < report.overflows.size() && i < 4; ++i) {
            const auto& o = report.overflows[i];
            which += (i ? ", " : "") + std::string("CTA ") + std::to_string(o.cta) + " warp " + std::to_string(o.warp) + " ("
                + std::to_string(o.attempted) + " events)";
        }
        if (report.overflows.size() > 4) which += ", and " + std::to_string(report.overflows.size() - 4) + " more";
        failures.insert(failures.begin(), "trace buffer overflow: " + std::to_string(overflowEvents) + " events lost in "
                                              + std::to_string(report.overflowWarps) + " warps (capacity "
                                              + std::to_string(cap) + " events per warp): " + which);
    }
    if (unknownRecords > 0)
        failures.push_back(std::to_string(unknownRecords) + " records of kinds that trace format version " + std::to_string(hdr.version)
                           + " does not define, first " + firstUnknown
                           + ": the buffer is damaged, or its kernel wrote a newer format than its header says; those records were dropped");
    if (tracedCtas > 0 && declaredWarps == 0) {
        report.noRoleDeclared = true;
        failures.push_back("the kernel declares no role: its CTAs ran traced but no warp declared one (construct a "
                           "ws::trace::Warp, or call begin(), in every warp that should appear)");
    }
    if (report.unfinishedWarps > 0)
        failures.push_back(std::to_string(report.unfinishedWarps)
                           + " warps declared a role but never wrote their end event (kernel fault or early exit)");
    if (report.clampedIntervals > 0)
        report.warnings.push_back(std::to_string(report.clampedIntervals) + " intervals had a negative duration (clamped to 0)");
    if (report.unmatchedLoads > 0)
        report.warnings.push_back(std::to_string(report.unmatchedLoads) + " issued loads had no matching ready event");
    if (report.fallbackCalibrations > 0)
        report.warnings.push_back(std::to_string(report.fallbackCalibrations)
                                  + " CTAs were too short for their own clock calibration and used the kernel's median slope");
    report.ok = failures.empty();
    report.failureReason = joinReasons(failures);
    rec.launch.alignResidualNs = report.alignment.residualNs;
    rec.launch.droppedEvents = overflowEvents;
    return rec;
}

}  // namespace ws::decode
