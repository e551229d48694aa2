// GPU test of the ladder's per-warp trace buffers, for every rung:
//  1. a traced launch sized by traceGeometry decodes sanely: header unchanged,
//     every CTA record has both flags and ordered (globaltimer, clock64)
//     pairs, every warp region declared its role, counts <= capacity, clocks
//     non-decreasing per warp, valid event kinds, each warp ends with
//     kEventEnd; warp-specialized rungs show producer and consumer warps.
//  2. a traced launch with a deliberately too-small eventsPerWarp reports the
//     overflow (count > capacity) and writes nothing outside the buffer (guard
//     regions before and after it stay intact) -- and still computes C right.
// Usage: gpu_ladder_trace [--rung NAME]... [--shape MxNxK] [--dump PREFIX]  (--dump: the full-capacity buffer, raw,
// to PREFIX<rung>.bin, for offline analysis such as scripts/streamk_trace_phases.py)
//        gpu_ladder_trace --read FILE...  (no GPU: each dumped buffer's histograms, signature and consumer phase times,
//        as a launch's are printed: two builds' dumps compared by one reader, session 15)
//        gpu_ladder_trace --fidelity FILE...  (no GPU: a dump of the stream-K test build WS_SK_OBSERVE_KSTEPS=2, whose
//        consumers record their k-steps AND the observers stamp them: the consumer events rebuilt from the stamps
//        (trace_observed.h) against the consumers' own, event by event; exit 1 when their kinds or k-steps differ)
// Exit: 0 passed, 1 failed, 77 no sm_90 device (SKIP).
#include "ladder_testutil.h"
#include "warpstage/trace_observed.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace ws;
using namespace ws::ktest;

namespace {

int g_failures = 0, g_passes = 0;
std::string g_dump;  // --dump PREFIX: the full-capacity buffer of each rung, raw, to PREFIX<rung>.bin (offline analysis)
std::vector<std::string> g_failLines;
void pass(const std::string& l)
{
    ++g_passes;
    std::printf("PASS %s\n", l.c_str());
    std::fflush(stdout);
}
void fail(const std::string& l)
{
    ++g_failures;
    g_failLines.push_back(l);
    std::printf("FAIL %s\n", l.c_str());
    std::fflush(stdout);
}

const char* roleName(int r)
{
    static const char* n[] = {"unknown", "producer", "consumer", "epilogue", "worker", "idle"};
    return r >= 0 && r <= 5 ? n[r] : "?";
}
const char* kindName(int k)
{
    static const char* n[] = {"Other", "Setup", "WaitSlot", "IssueLoad", "WaitData", "MmaIssue", "MmaWait",
                              "Release", "Epilogue", "Store", "Load", "Sync", "Compute", "WaitOrder",
                              "WaitPartial", "Fixup"};
    if (k < 16) return n[k];
    switch (k) {
    case trace::kEventEnd: return "End";
    case trace::kEventTileBegin: return "TileBegin";
    case trace::kEventTileEnd: return "TileEnd";
    case trace::kEventLoadReady: return "LoadReady";
    default: return "?";
    }
}

// Role and event-kind histograms of CTA 0 and of the whole buffer (for the device log), and the trace's signature: a
// hash of every region's count, role word and events without their clocks (kind, kstep, slot, aux), in order -- two
// builds of a rung whose traces carry the same information print the same signature (session 10: the tracing-cost
// variants against main's engine, scripts/device/s10-tracecost.sh).
void describe(const std::string& base, const std::vector<std::uint8_t>& buf, const trace::TraceBufferHeader& h,
              std::map<int, int>& rolesCta0)
{
    std::map<int, std::uint64_t> kinds;
    std::uint64_t packed = 0;  // packed records (kEventKStep4, kEventLoad2)
    std::uint64_t sig = 1469598103934665603ull;  // FNV-1a
    auto mix = [&sig](std::uint64_t v) {
        for (int i = 0; i < 8; ++i, v >>= 8) sig = (sig ^ (v & 0xFF)) * 1099511628211ull;
    };
    std::uint64_t stamps = 0, observed = 0;  // k-step observers' stamps and the consumer k-steps rebuilt (session 15)
    std::map<int, double> phaseCycles;       // consumer warps' time per phase kind, cycles (summed)
    std::uint64_t consumerWarps = 0;
    for (std::uint32_t c = 0; c < h.numCtas; ++c) {
        // the events the records stand for (session 14: a packed k-step record is four; session 15: the observers'
        // stamps are the consumer warps' k-step events), so that builds that record the same events differently give
        // the same signature
        std::vector<std::vector<trace::TraceEvent>> ctaEvents(h.warpsPerCta);
        std::vector<std::uint8_t> roles(h.warpsPerCta), roleIndex(h.warpsPerCta);
        for (std::uint32_t w = 0; w < h.warpsPerCta; ++w) {
            std::uint64_t off = trace::warpRegionOffset(h.numCtas, h.warpsPerCta, h.eventsPerWarp, c, w);
            trace::WarpRegionHeader wr;
            std::memcpy(&wr, buf.data() + off, sizeof wr);
            roles[w] = wr.role;
            roleIndex[w] = wr.roleIndex;
            std::uint32_t n = std::min(wr.count, h.eventsPerWarp);
            std::vector<trace::TraceEvent> recs(n);
            if (n) std::memcpy(recs.data(), buf.data() + off + sizeof wr, std::size_t(n) * sizeof(trace::TraceEvent));
            trace::forEachEvent(recs.data(), n, [&](const trace::TraceEvent& e) { ctaEvents[w].push_back(e); });
            for (const auto& x : recs) packed += trace::isPackedRecord(x.kind);
        }
        const auto om = trace::mergeObserved(ctaEvents, roles, roleIndex);
        stamps += om.stamps;
        observed += om.rebuiltKSteps;
        for (std::uint32_t w = 0; w < h.warpsPerCta; ++w) {
            std::uint64_t off = trace::warpRegionOffset(h.numCtas, h.warpsPerCta, h.eventsPerWarp, c, w);
            trace::WarpRegionHeader wr;
            std::memcpy(&wr, buf.data() + off, sizeof wr);
            if (c == 0)
                rolesCta0[wr.role]++;
            const std::vector<trace::TraceEvent>& evs = ctaEvents[w];
            mix(wr.count <= h.eventsPerWarp ? std::uint32_t(evs.size()) : wr.count);
            mix(std::uint64_t(wr.role) | std::uint64_t(wr.warpgroup) << 8 | std::uint64_t(wr.roleIndex) << 16
                | std::uint64_t(wr.flags) << 24);
            if (wr.role == 2) {  // consumer phase time (cycles): an event's phase lasts until the next non-marker event
                ++consumerWarps;
                for (std::size_t i = 0; i < evs.size(); ++i) {
                    if (evs[i].kind >= 16) continue;
                    std::size_t j = i + 1;
                    while (j < evs.size() && evs[j].kind >= trace::kMarkerBase && evs[j].kind != trace::kEventEnd) ++j;
                    if (j < evs.size()) phaseCycles[evs[i].kind] += double(evs[j].clock - evs[i].clock);
                }
            }
            for (const auto& ev : evs) {
                kinds[ev.kind]++;
                mix(std::uint64_t(std::uint32_t(ev.kstep)) | std::uint64_t(ev.kind) << 32 | std::uint64_t(ev.slot) << 40
                    | std::uint64_t(std::uint16_t(ev.aux)) << 48);
            }
        }
    }
    std::printf("INFO %s CTA0 roles:", base.c_str());
    for (auto& [r, n] : rolesCta0) std::printf(" %s=%d", roleName(r), n);
    std::printf("; events by kind:");
    for (auto& [k, n] : kinds) std::printf(" %s=%llu", kindName(k), (unsigned long long)n);
    std::printf("\n");
    std::printf("INFO %s packed k-step records: %llu\n", base.c_str(), (unsigned long long)packed);
    std::printf("INFO %s observer stamps: %llu, consumer k-steps rebuilt from them: %llu\n", base.c_str(),
                (unsigned long long)stamps, (unsigned long long)observed);
    double all = 0;
    for (auto& [k, v] : phaseCycles) all += v;
    std::printf("INFO %s consumer phase time (mean cycles per consumer warp, share):", base.c_str());
    for (auto& [k, v] : phaseCycles)
        std::printf(" %s=%.0f (%.1f %%)", kindName(k), consumerWarps ? v / double(consumerWarps) : 0.0,
                    all > 0 ? 100.0 * v / all : 0.0);
    std::printf("\n");
    std::printf("INFO %s signature (counts, roles, events without clocks): %016llx\n", base.c_str(),
                (unsigned long long)sig);
}

// --fidelity: one buffer of a WS_SK_OBSERVE_KSTEPS=2 build. Per CTA, each consumer warp's own k-step events are the
// truth; its per-unit events (those a WS_SK_OBSERVE_KSTEPS=1 warp records: all but the k-loop's WaitData / MmaIssue /
// MmaWait / Release, keeping each unit's first WaitData and the drain's MmaWait and Release) are merged with the
// observers' stamps, and the rebuilt events are compared with the truth. Prints |rebuilt - own| per kind (cycles) and
// both phase totals; false when the two differ in kind, k-step or count.
bool fidelity(const std::string& name, const std::vector<std::uint8_t>& buf, const trace::TraceBufferHeader& h)
{
    constexpr std::uint8_t WD = 4, MI = 5, MW = 6, RL = 7;
    std::map<int, std::vector<double>> diff;  // kind -> |rebuilt - own| cycles
    std::map<int, double> totOwn, totRebuilt;
    std::uint64_t mismatches = 0, compared = 0, rebuilt = 0, missing = 0;
    auto phases = [](const std::vector<trace::TraceEvent>& evs, std::map<int, double>& tot) {
        for (std::size_t i = 0; i < evs.size(); ++i) {
            if (evs[i].kind >= 16) continue;
            std::size_t j = i + 1;
            while (j < evs.size() && evs[j].kind >= trace::kMarkerBase && evs[j].kind != trace::kEventEnd) ++j;
            if (j < evs.size()) tot[evs[i].kind] += double(evs[j].clock - evs[i].clock);
        }
    };
    for (std::uint32_t c = 0; c < h.numCtas; ++c) {
        std::vector<std::vector<trace::TraceEvent>> truth(h.warpsPerCta), own(h.warpsPerCta);
        std::vector<std::uint8_t> roles(h.warpsPerCta), roleIndex(h.warpsPerCta);
        for (std::uint32_t w = 0; w < h.warpsPerCta; ++w) {
            const std::uint64_t off = trace::warpRegionOffset(h.numCtas, h.warpsPerCta, h.eventsPerWarp, c, w);
            trace::WarpRegionHeader wr;
            std::memcpy(&wr, buf.data() + off, sizeof wr);
            roles[w] = wr.role;
            roleIndex[w] = wr.roleIndex;
            const std::uint32_t n = std::min(wr.count, h.eventsPerWarp);
            std::vector<trace::TraceEvent> recs(n);
            if (n) std::memcpy(recs.data(), buf.data() + off + sizeof wr, std::size_t(n) * sizeof(trace::TraceEvent));
            trace::forEachEvent(recs.data(), n, [&](const trace::TraceEvent& e) { truth[w].push_back(e); });
            if (wr.role != 2) {
                own[w] = truth[w];
                continue;
            }
            // the per-unit events; a unit runs from a TileBegin to its TileEnd, its last fill fe = its last MmaIssue's
            for (std::size_t i = 0; i < truth[w].size();) {
                std::size_t j = i + 1;
                while (j < truth[w].size() && truth[w][j].kind != trace::kEventTileBegin) ++j;
                std::int32_t fe = -1;
                for (std::size_t q = i; q < j; ++q)
                    if (truth[w][q].kind == MI) fe = std::max(fe, truth[w][q].kstep);
                bool firstWd = true;
                for (std::size_t q = i; q < j; ++q) {
                    const auto& e = truth[w][q];
                    const bool kloop = e.kind == WD || e.kind == MI || e.kind == MW || e.kind == RL;
                    const bool keep = !kloop || (e.kind == WD && firstWd) || ((e.kind == MW || e.kind == RL) && e.kstep == fe);
                    if (e.kind == WD) firstWd = false;
                    if (keep) own[w].push_back(e);
                }
                i = j;
            }
        }
        const auto om = trace::mergeObserved(own, roles, roleIndex);
        rebuilt += om.rebuiltKSteps;
        missing += om.missingKSteps;
        for (std::uint32_t w = 0; w < h.warpsPerCta; ++w) {
            if (roles[w] != 2) continue;
            phases(truth[w], totOwn);
            phases(own[w], totRebuilt);
            if (own[w].size() != truth[w].size()) {
                ++mismatches;
                continue;
            }
            for (std::size_t i = 0; i < own[w].size(); ++i) {
                const auto &a = truth[w][i], &b = own[w][i];
                if (a.kind != b.kind || a.kstep != b.kstep || a.slot != b.slot) {
                    ++mismatches;
                    break;
                }
                if (a.kind < 16) {
                    ++compared;
                    diff[a.kind].push_back(std::fabs(double(b.clock) - double(a.clock)));
                }
            }
        }
    }
    std::printf("FIDELITY %s: consumer k-steps rebuilt %llu, left %llu; events compared %llu; warps whose events differ "
                "in kind, k-step, slot or count: %llu\n",
                name.c_str(), (unsigned long long)rebuilt, (unsigned long long)missing, (unsigned long long)compared,
                (unsigned long long)mismatches);
    for (auto& [k, v] : diff) {
        std::sort(v.begin(), v.end());
        double sum = 0;
        for (double x : v) sum += x;
        std::printf("FIDELITY %s: %-9s |rebuilt - own| cycles: mean %.1f, median %.0f, p95 %.0f, max %.0f (n %zu)\n",
                    name.c_str(), kindName(k), sum / double(v.size()), v[v.size() / 2], v[v.size() * 95 / 100], v.back(),
                    v.size());
    }
    double ao = 0, ar = 0;
    for (auto& [k, v] : totOwn) ao += v;
    for (auto& [k, v] : totRebuilt) ar += v;
    std::printf("FIDELITY %s: consumer phase share own -> rebuilt:", name.c_str());
    for (auto& [k, v] : totOwn)
        std::printf(" %s %.1f -> %.1f %%", kindName(k), 100.0 * v / ao, 100.0 * totRebuilt[k] / ar);
    std::printf("\n");
    return mismatches == 0 && missing == 0 && rebuilt > 0;
}

void runRung(const std::string& rung, const ladder::Shape& s, int sms, CublasRef& cublas)
{
    const std::string base = "rung=" + rung + " shape=" + shapeStr(s);
    std::string why = ladder::checkShape(rung, s);
    if (!why.empty()) {
        fail(base + ": refused: " + why);
        return;
    }
    const std::size_t na = std::size_t(s.m) * s.k, nb = std::size_t(s.n) * s.k, nc = std::size_t(s.m) * s.n;
    DeviceBuffer a(na * 2), b(nb * 2), c(nc * 2), ref(nc * 4);
    std::uint64_t seed = freshSeed();
    fillRandomNormalBf16(a.get(), na, seed);
    fillRandomNormalBf16(b.get(), nb, seed + 1);
    cublas.gemm(s, a.get(), b.get(), ref.get(), true);
    WS_CK(cudaDeviceSynchronize());

    ladder::TraceGeometry geo = ladder::traceGeometry(rung, s, sms);
    std::printf("INFO %s geometry: numCtas=%u warpsPerCta=%u eventsPerWarp=%u stages=%u bytesPerKStep=%u bufferBytes=%llu\n",
                base.c_str(), geo.numCtas, geo.warpsPerCta, geo.eventsPerWarp, geo.stages, geo.bytesPerKStep,
                (unsigned long long)geo.bufferBytes);
    if (geo.numCtas == 0 || geo.warpsPerCta == 0 || geo.eventsPerWarp == 0) {
        fail(base + ": empty traceGeometry");
        return;
    }

    auto tracedLaunch = [&](TraceBuffer& tb) -> std::string {
        poisonBf16(c.get(), nc);
        tb.reset();
        WS_CK(cudaDeviceSynchronize());
        std::string err = ladder::launch(rung, s, a.get(), b.get(), c.get(), nullptr, tb.get(), sms);
        if (!err.empty())
            return "launch() returned: " + err;
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
        if (e != cudaSuccess)
            throw CudaError(base + ": traced kernel failed: " + cudaGetErrorString(e));
        return {};
    };

    // 1. Full capacity: sane decode.
    {
        TraceBuffer tb(geo);
        std::string err = tracedLaunch(tb);
        if (!err.empty()) {
            fail(base + " full: " + err);
            return;
        }
        ErrStats e = compareBf16ToF32(c.get(), ref.as<float>(), nc);
        (e.ok() ? pass : fail)(base + " full-capacity traced result " + e.str());
        std::uint64_t dmg = tb.guardDamage();
        (dmg == 0 ? pass : fail)(base + " full-capacity: guard bytes changed: " + std::to_string(dmg));
        auto buf = tb.download();
        if (!g_dump.empty()) {
            const std::string path = g_dump + rung + ".bin";
            FILE* f = std::fopen(path.c_str(), "wb");
            const bool ok = f && std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
            if (f) std::fclose(f);
            std::printf("INFO %s trace buffer %s %s (%zu bytes)\n", base.c_str(), ok ? "written to" : "NOT written to",
                        path.c_str(), buf.size());
        }
        TraceCheck tc = checkTrace(buf, tb.header(), sms, false);
        std::string info = " ctas=" + std::to_string(tc.ctas) + " warps=" + std::to_string(tc.warps) + " events="
            + std::to_string(tc.events) + " max_count=" + std::to_string(tc.maxCount) + "/"
            + std::to_string(tb.header().eventsPerWarp);
        if (tc.errors.empty())
            pass(base + " full-capacity trace sane" + info);
        else {
            std::string m;
            for (auto& x : tc.errors) m += "\n    " + x;
            fail(base + " full-capacity trace not sane" + info + m);
        }
        if (tc.eventsOutsideCta)
            std::printf("WARN %s: %llu events > 1e6 cycles outside their CTA's start/end\n", base.c_str(),
                        (unsigned long long)tc.eventsOutsideCta);
        std::map<int, int> roles;
        describe(base, buf, tb.header(), roles);
        const bool specialized = rung == "warp_specialized" || rung == "cooperative" || rung == "pingpong"
                                 || rung == "streamk";
        if (specialized)
            (roles[1] >= 1 && roles[2] >= 1 ? pass : fail)(base + " CTA0 declares producer (" + std::to_string(roles[1])
                                                           + ") and consumer (" + std::to_string(roles[2]) + ") warps");
    }
    // 2. Overflow: capacity 2 events per warp.
    {
        const std::uint32_t cap = 2;
        TraceBuffer tb(geo, cap, 1 << 20);
        std::string err = tracedLaunch(tb);
        if (!err.empty()) {
            fail(base + " overflow: " + err);
            return;
        }
        ErrStats e = compareBf16ToF32(c.get(), ref.as<float>(), nc);
        (e.ok() ? pass : fail)(base + " overflowing traced launch still computes C: " + e.str());
        std::uint64_t dmg = tb.guardDamage();
        (dmg == 0 ? pass : fail)(base + " overflow (capacity " + std::to_string(cap)
                                 + "): bytes changed in the 1 MiB guards before/after the buffer: " + std::to_string(dmg));
        TraceCheck tc = checkTrace(tb.download(), tb.header(), sms, true);
        (tc.overflowedWarps > 0 ? pass : fail)(base + " overflow reported: " + std::to_string(tc.overflowedWarps) + " of "
                                               + std::to_string(tc.warps) + " warps have count > capacity "
                                               + std::to_string(cap) + " (max count " + std::to_string(tc.maxCount) + ")");
        if (tc.errors.empty())
            pass(base + " overflowed buffer still well-formed (regions, roles, kinds, clocks)");
        else {
            std::string m;
            for (auto& x : tc.errors) m += "\n    " + x;
            fail(base + " overflowed buffer malformed:" + m);
        }
    }
}

}  // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> only;
    ladder::Shape shape{2048, 2048, 2048};
    try {
        for (int i = 1; i < argc; ++i) {
            std::string a = argv[i];
            if (a == "--rung" && i + 1 < argc)
                only.push_back(argv[++i]);
            else if (a == "--shape" && i + 1 < argc)
                shape = parseShape(argv[++i]);
            else if (a == "--dump" && i + 1 < argc)
                g_dump = argv[++i];
            else if (a == "--read" || a == "--fidelity") {  // offline: the dumps' descriptions, no GPU
                int bad = 0;
                for (++i; i < argc; ++i) {
                    std::FILE* f = std::fopen(argv[i], "rb");
                    std::vector<std::uint8_t> buf;
                    if (f) {
                        std::uint8_t chunk[65536];
                        for (std::size_t got; (got = std::fread(chunk, 1, sizeof chunk, f)) > 0;)
                            buf.insert(buf.end(), chunk, chunk + got);
                        std::fclose(f);
                    }
                    trace::TraceBufferHeader h{};
                    if (buf.size() >= sizeof h) std::memcpy(&h, buf.data(), sizeof h);
                    if (!f || buf.size() < sizeof h || h.magic != trace::kMagic
                        || buf.size() < trace::bufferBytes(h.numCtas, h.warpsPerCta, h.eventsPerWarp)) {
                        std::fprintf(stderr, "gpu_ladder_trace: %s is not a complete trace buffer\n", argv[i]);
                        ++bad;
                        continue;
                    }
                    std::map<int, int> roles;
                    if (a == "--fidelity") bad += !fidelity(argv[i], buf, h);
                    else describe(argv[i], buf, h, roles);
                }
                return bad ? 1 : 0;
            }
            else {
                std::fprintf(stderr, "gpu_ladder_trace: unknown argument '%s'\nusage: gpu_ladder_trace [--rung NAME]... [--shape MxNxK] [--dump PREFIX]\n",
                             a.c_str());
                return 2;
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "gpu_ladder_trace: %s\n", e.what());
        return 2;
    }
    if (const int rc = gpuUnavailableExit("gpu_ladder_trace"))
        return rc;
    try {
        const int sms = smCount();
        std::printf("device: %s, %d SMs\n", deviceName().c_str(), sms);
        CublasRef cublas;
        for (const auto& r : ladder::rungs())
            if (only.empty() || std::find(only.begin(), only.end(), r.name) != only.end())
                runRung(r.name, shape, sms, cublas);
    } catch (const std::exception& e) {
        std::printf("FAIL aborted: %s\n", e.what());
        ++g_failures;
    }
    std::printf("\n%d passed, %d failed\n", g_passes, g_failures);
    for (auto& l : g_failLines) std::printf("  FAILED: %s\n", l.c_str());
    return g_failures ? 1 : 0;
}
