// GPU test of the recorder (plain executable; exits 77 with "SKIP: ..." without a GPU).
// Records every rung at a small shape with both passes into a temporary file and checks
// what must hold for a real recording; then appends, keeps an SM subset, forces an
// overflow (run stored FAILED), and interrupts (nothing new written).
#include "common/gpu_skip.h"
#include "warpstage/analysis.h"
#include "warpstage/ladder.h"
#include "warpstage/recorder.h"
#include "warpstage/store.h"
#include "warpstage/tilegeom.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

using namespace ws;

namespace {
int g_failures = 0;
#define CHECK(cond, ...)                                          \
    do {                                                          \
        if (!(cond)) {                                            \
            ++g_failures;                                         \
            std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            std::printf(__VA_ARGS__);                             \
            std::printf("\n");                                    \
        }                                                         \
    } while (0)

rec::Callbacks quietCallbacks()
{
    rec::Callbacks cb;
    cb.message = [](const std::string& level, const std::string& text) {
        if (level != "info") std::printf("  [%s] %s\n", level.c_str(), text.c_str());
    };
    return cb;
}

double metricOf(const std::vector<Metric>& ms, const std::string& name)
{
    for (const auto& m : ms)
        if (m.scope == "kernel" && m.name == name) return m.value;
    return NAN;
}
}  // namespace

int main(int argc, char** argv)
{
    if (const int rc = rec::maybeRunStallPass(argc, argv); rc >= 0) return rc;
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    std::string envMsg;
    const int env = rec::checkEnvironment(0, envMsg);
    if (env != rec::kExitOk) return ws::testing::gpuUnavailableExit("gpu_recorder", envMsg);
    std::printf("device: %s\n", envMsg.c_str());

    char dirTmpl[] = "/tmp/ws-gpu-recorder-XXXXXX";
    const std::string dir = mkdtemp(dirTmpl);
    const std::string path = dir + "/rec.wstrace";
    const ladder::Shape shape{1024, 1024, 1024};

    rec::Options o;
    o.shape = shape;
    o.output = path;
    o.commandLine = "gpu_recorder (test)";
    o.stallTargetSamples = 100000;
    std::atomic<bool> stop{false};
    rec::Result r = rec::record(o, quietCallbacks(), stop);
    CHECK(r.exitCode == rec::kExitOk, "exit %d: %s", r.exitCode, r.error.c_str());
    const int nRungs = int(ladder::rungs().size());
    CHECK(r.runsWritten == nRungs, "%d runs written", r.runsWritten);

    {
        const auto store = TraceStore::openReadOnly(path);
        const auto runs = store.runs();
        CHECK(int(runs.size()) == nRungs, "%zu runs in the file", runs.size());
        std::set<std::string> variants;
        std::printf("%-17s %8s %9s %10s %8s %8s %9s %8s  %s\n", "rung", "untr.us", "intervals", "stalls", "overlap", "TFLOP/s",
                    "resid.ns", "mapped%", "status");
        for (const auto& run : runs) {
            variants.insert(run.variant);
            CHECK(run.status == RunStatus::Complete, "%s: %s", run.variant.c_str(), run.failureReason.c_str());
            CHECK(!run.device.name.empty(), "%s: no device name", run.variant.c_str());
            CHECK(run.device.smCount > 0 && run.device.smClockKHz > 0, "%s: device info", run.variant.c_str());
            CHECK(!run.driverVersion.empty() && !run.cudaVersion.empty() && !run.cuptiVersion.empty(), "%s: versions",
                  run.variant.c_str());
            CHECK(run.commandLine == "gpu_recorder (test)", "%s: command line '%s'", run.variant.c_str(), run.commandLine.c_str());
            CHECK(run.m == shape.m && run.n == shape.n && run.k == shape.k, "%s: shape", run.variant.c_str());
            CHECK(run.hasStalls, "%s: no stalls (%s)", run.variant.c_str(), run.notes.c_str());
            const auto kernels = store.kernels(run.id);
            const KernelLaunch* traced = nullptr;
            const KernelLaunch* untraced = nullptr;
            for (const auto& k : kernels) {
                if (k.traced && !traced) traced = &k;
                if (!k.traced && !untraced) untraced = &k;
            }
            CHECK(traced && untraced, "%s: traced and untraced launches", run.variant.c_str());
            if (!traced || !untraced) continue;
            const auto geom = ladder::traceGeometry(run.variant, shape, run.device.smCount);
            const KernelTrace t = store.loadKernel(traced->id);
            {  // the tile configuration (s9-tilegeom): tagged as launchTiles says, every TileBegin inside its grid
                const auto tg = tileGeometryOf(run);
                const auto lt = ladder::launchTiles(run.variant, shape, run.device.smCount);
                CHECK(tg && tg->blockM == lt.blockM && tg->blockN == lt.blockN && tg->clusterM == lt.clusterM
                          && tg->stages == lt.stages && tg->config == lt.config && tg->tilesM == lt.tilesM,
                      "%s: [ws-tiles] tag as launchTiles says (notes: %s)", run.variant.c_str(), run.notes.c_str());
                if (tg)
                    for (const auto& w : checkTileCoordinates(*tg, t.tiles, t.ctas))
                        CHECK(false, "%s: %s", run.variant.c_str(), w.c_str());
            }
            CHECK(t.ctas.size() == geom.numCtas, "%s: %zu CTAs, grid %u", run.variant.c_str(), t.ctas.size(), geom.numCtas);
            bool inside = true;
            for (const auto& c : t.ctas) inside &= c.start >= traced->start && c.end <= traced->end;
            CHECK(inside, "%s: CTA spans inside CUPTI [%lld, %lld]", run.variant.c_str(), (long long)traced->start,
                  (long long)traced->end);
            CHECK(t.firstStart() >= traced->start && t.lastEnd() <= traced->end, "%s: intervals inside CUPTI's kernel",
                  run.variant.c_str());
            CHECK(traced->alignResidualNs >= 0 && traced->alignResidualNs < 20000, "%s: residual %.1f", run.variant.c_str(),
                  traced->alignResidualNs);
            std::map<WarpRole, std::size_t> perRole;
            for (const auto& lane : t.lanes) perRole[lane.role] += lane.size();
            for (const auto& [role, n] : perRole)
                CHECK(role == WarpRole::Idle || n > 0, "%s: role %s has no intervals", run.variant.c_str(),
                      std::string(warpRoleName(role)).c_str());
            CHECK(t.intervalCount() > 0, "%s: no intervals", run.variant.c_str());
            CHECK(!t.loads.empty(), "%s: no load transfers", run.variant.c_str());
            const auto stalls = store.stallSamplesForRung(traced->id);
            std::int64_t total = 0, mapped = 0;
            for (const auto& s : stalls) {
                total += s.count;
                if (!s.stage.empty()) mapped += s.count;
                CHECK(!s.reasonLabel.empty(), "%s: reason without label", run.variant.c_str());
            }
            CHECK(total > 1000, "%s: %lld stall samples", run.variant.c_str(), (long long)total);
            CHECK(mapped * 2 > total, "%s: only %lld of %lld samples mapped to a stage", run.variant.c_str(), (long long)mapped,
                  (long long)total);
            const auto ms = store.metrics(run.id);
            std::printf("%-17s %8.1f %9zu %10lld %8.3f %8.1f %9.1f %8.1f  %s\n", run.variant.c_str(),
                        (untraced->end - untraced->start) / 1000.0, t.intervalCount(), (long long)total,
                        metricOf(ms, "compute_overlap_share"), metricOf(ms, "achieved_tflops"), traced->alignResidualNs,
                        total ? 100.0 * mapped / total : 0.0, run.status == RunStatus::Complete ? "complete" : "FAILED");
        }
        CHECK(int(variants.size()) == nRungs, "%zu distinct rungs", variants.size());
    }

    // Append one more run, keeping only SMs 0-3.
    rec::Options o2 = o;
    o2.rungs = {"pingpong"};
    o2.keepSms = {0, 1, 2, 3};
    o2.stalls = false;
    r = rec::record(o2, quietCallbacks(), stop);
    CHECK(r.exitCode == rec::kExitOk, "append: exit %d %s", r.exitCode, r.error.c_str());
    {
        const auto store = TraceStore::openReadOnly(path);
        const auto runs = store.runs();
        CHECK(int(runs.size()) == nRungs + 1, "after append: %zu runs", runs.size());
        const auto& last = runs.back();
        CHECK(!last.hasStalls, "--no-stalls run has stalls");
        CHECK(last.notes.find("stalls skipped") != std::string::npos, "notes: %s", last.notes.c_str());
        for (const auto& k : store.kernels(last.id))
            if (k.traced) {
                const auto t = store.loadKernel(k.id);
                bool onlyKept = !t.ctas.empty();
                for (const auto& c : t.ctas) onlyKept &= c.smId >= 0 && c.smId <= 3;
                CHECK(onlyKept, "SM subset: %zu CTAs", t.ctas.size());
            }
    }

    // Overflow: a tiny event capacity must give a FAILED run with the reason, never a complete one.
    rec::Options o3 = o;
    o3.rungs = {"warp_specialized"};
    o3.stalls = false;
    o3.testEventsPerWarp = 8;
    r = rec::record(o3, quietCallbacks(), stop);
    CHECK(r.exitCode == rec::kExitRunFailed, "overflow: exit %d", r.exitCode);
    {
        const auto store = TraceStore::openReadOnly(path);
        const auto runs = store.runs();
        CHECK(int(runs.size()) == nRungs + 2, "after overflow: %zu runs", runs.size());
        CHECK(runs.back().status == RunStatus::Failed, "overflow run not failed");
        CHECK(runs.back().failureReason.find("overflow") != std::string::npos, "reason: %s", runs.back().failureReason.c_str());
        std::printf("overflow run: %s\n", runs.back().failureReason.c_str());
    }

    // Interrupted before the first run: nothing new, file intact.
    stop = true;
    r = rec::record(o, quietCallbacks(), stop);
    CHECK(r.exitCode == rec::kExitInterrupted, "interrupt: exit %d", r.exitCode);
    {
        const auto store = TraceStore::openReadOnly(path);
        CHECK(int(store.runs().size()) == nRungs + 2, "after interrupt: %zu runs", store.runs().size());
    }

    if (!std::getenv("WS_KEEP_TMP")) {
        unlink(path.c_str());
        unlink((path + "-wal").c_str());
        unlink((path + "-shm").c_str());
        rmdir(dir.c_str());
    } else {
        std::printf("kept %s\n", path.c_str());
    }
    std::printf("%s: %d failure(s)\n", g_failures ? "FAILED" : "PASSED", g_failures);
    return g_failures ? 1 : 0;
}
