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
// Exit: 0 passed, 1 failed, 77 no sm_90 device (SKIP).
#include "ladder_testutil.h"

#include <cuda_runtime.h>

#include <algorithm>
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
std::uint64_t describe(const std::string& base, const std::vector<std::uint8_t>& buf, const trace::TraceBufferHeader& h,
                       std::map<int, int>& rolesCta0, bool print = true)
{
    std::map<int, std::uint64_t> kinds;
    std::uint64_t packed = 0;  // packed records (kEventKStep4, kEventLoad2)
    std::uint64_t sig = 1469598103934665603ull;  // FNV-1a
    auto mix = [&sig](std::uint64_t v) {
        for (int i = 0; i < 8; ++i, v >>= 8) sig = (sig ^ (v & 0xFF)) * 1099511628211ull;
    };
    for (std::uint32_t c = 0; c < h.numCtas; ++c)
        for (std::uint32_t w = 0; w < h.warpsPerCta; ++w) {
            std::uint64_t off = trace::warpRegionOffset(h.numCtas, h.warpsPerCta, h.eventsPerWarp, c, w);
            trace::WarpRegionHeader wr;
            std::memcpy(&wr, buf.data() + off, sizeof wr);
            if (c == 0)
                rolesCta0[wr.role]++;
            std::uint32_t n = std::min(wr.count, h.eventsPerWarp);
            std::vector<trace::TraceEvent> recs(n);
            if (n) std::memcpy(recs.data(), buf.data() + off + sizeof wr, std::size_t(n) * sizeof(trace::TraceEvent));
            // the events the records stand for (session 14: a packed k-step record is four), so that a build that
            // packs and one that does not give the same signature when they record the same events
            std::vector<trace::TraceEvent> evs;
            trace::forEachEvent(recs.data(), n, [&](const trace::TraceEvent& e) { evs.push_back(e); });
            for (const auto& x : recs) packed += trace::isPackedRecord(x.kind);
            mix(wr.count <= h.eventsPerWarp ? std::uint32_t(evs.size()) : wr.count);
            mix(std::uint64_t(wr.role) | std::uint64_t(wr.warpgroup) << 8 | std::uint64_t(wr.roleIndex) << 16
                | std::uint64_t(wr.flags) << 24);
            for (const auto& ev : evs) {
                kinds[ev.kind]++;
                mix(std::uint64_t(std::uint32_t(ev.kstep)) | std::uint64_t(ev.kind) << 32 | std::uint64_t(ev.slot) << 40
                    | std::uint64_t(std::uint16_t(ev.aux)) << 48);
            }
        }
    if (!print) return sig;
    std::printf("INFO %s CTA0 roles:", base.c_str());
    for (auto& [r, n] : rolesCta0) std::printf(" %s=%d", roleName(r), n);
    std::printf("; events by kind:");
    for (auto& [k, n] : kinds) std::printf(" %s=%llu", kindName(k), (unsigned long long)n);
    std::printf("\n");
    std::printf("INFO %s packed k-step records: %llu\n", base.c_str(), (unsigned long long)packed);
    std::printf("INFO %s signature (counts, roles, events without clocks): %016llx\n", base.c_str(),
                (unsigned long long)sig);
    return sig;
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
        const std::uint64_t sig = describe(base, buf, tb.header(), roles);
        const bool specialized = rung == "warp_specialized" || rung == "cooperative" || rung == "pingpong"
                                 || rung == "streamk";
        if (specialized)
            (roles[1] >= 1 && roles[2] >= 1 ? pass : fail)(base + " CTA0 declares producer (" + std::to_string(roles[1])
                                                           + ") and consumer (" + std::to_string(roles[2]) + ") warps");

        // 1b. The recorders' clear (session 16, trace::clearRanges): the buffer filled with stale bytes, then only the CTA
        // records and the region headers zeroed (TraceBuffer::clearAsync, as the recorders do); they must all read
        // zero, and the launch that follows must record what it recorded into the fresh buffer (the same signature):
        // nothing reads an event byte the launch did not write.
        const trace::ClearRanges cr = trace::clearRanges(geo.numCtas, geo.warpsPerCta, tb.header().eventsPerWarp);
        auto* dev = static_cast<std::uint8_t*>(tb.get());
        WS_CK(cudaMemset(dev + cr.ctaOffset, 0x5A, tb.bytes() - cr.ctaOffset));
        tb.clearAsync();
        WS_CK(cudaDeviceSynchronize());
        const auto cleared = tb.download();
        std::uint64_t stale = 0;
        for (std::uint64_t i = 0; i < cr.ctaBytes; ++i) stale += cleared[cr.ctaOffset + i] != 0;
        for (std::uint64_t row = 0; row < cr.headerRows; ++row)
            for (std::uint64_t i = 0; i < cr.headerBytes; ++i) stale += cleared[cr.headerOffset + row * cr.headerPitch + i] != 0;
        (stale == 0 ? pass : fail)(base + " clearAsync zeroes every CTA record and region header (" + std::to_string(stale)
                                   + " stale bytes left)");
        poisonBf16(c.get(), nc);
        std::string err2 = ladder::launch(rung, s, a.get(), b.get(), c.get(), nullptr, tb.get(), sms);
        WS_CK(cudaGetLastError());
        WS_CK(cudaDeviceSynchronize());
        const auto again = tb.download();
        TraceCheck tc2 = checkTrace(again, tb.header(), sms, false);
        std::map<int, int> roles2;
        const std::uint64_t sig2 = describe(base, again, tb.header(), roles2, false);
        (err2.empty() && tc2.errors.empty() && sig2 == sig ? pass : fail)(
            base + " a launch into a stale buffer cleared as the recorders clear it: sane ("
            + std::to_string(tc2.errors.size()) + " errors), the fresh buffer's signature (" + (sig2 == sig ? "same" : "DIFFERENT")
            + ")" + (err2.empty() ? "" : ": " + err2));
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
