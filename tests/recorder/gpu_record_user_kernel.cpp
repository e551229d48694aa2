// GPU test (issue 10): a user's instrumented kernel recorded without host-code changes.
// programs/ws_rowsum.cu (a warp-specialized row sum: a TMA loader warp, two reducer warps, a 2-slot
// mbarrier ring, user phases "reduce"/"combine", user roles "loader"/"reducer") is
//   1. run alone: correct, and its control word stays null (nothing traced);
//   2. recorded with `warpstage-record --kernels wsRowSum -- ws_rowsum`: the program's result is still
//      correct; every launch is traced and decodes with no overflow; roles and user phase names appear;
//      every CTA span lies inside CUPTI's kernel time; loads pair up; the kernel's source is in the run;
//      the same with the Staged engine (ws_rowsum --staged);
//   3. recorded with --launch-range 1:1: only launch #1 is traced;
//   4. recorded with --trace-events 16: the overflow is reported per warp, the run is Failed, exit 6;
//   5. recorded with --kernels that matches nothing: nothing traced, the program still correct;
//   6. programs/ws_format_version.cu built as format version 1 (traced, decoded) and as the version after this
//      recorder's (untraced, the run Failed naming both).
// Plain executable; exits 77 with "SKIP: ..." without a GPU (FAIL with WARPSTAGE_REQUIRE_GPU=1).
#include "common/gpu_skip.h"
#include "common/gpu_check.h"
#include "warpstage/sink_reader.h"
#include "warpstage/store.h"
#include "warpstage/trace_format.h"

#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// Runs a shell command; returns its exit code and stdout+stderr.
int run(const std::string& cmd, std::string& out)
{
    out.clear();
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    if (!p) return -1;
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    const int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string sinkDirOf(const std::string& dir, const std::string& base)
{
    std::string found;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            const std::string n = e->d_name;
            if (n.rfind("." + base + ".sinks-", 0) == 0) found = dir + "/" + n;
        }
        closedir(d);
    }
    return found;
}

// Records `program` (ws_rowsum by default; its arguments `programArgs`) with `opts`; returns the runs converted from
// the kept sinks. The program must still print `okText`.
std::vector<ws::RunRecord> record(const std::string& dir, const std::string& name, const std::string& opts, int wantRc,
                                  std::string& output, const std::string& programArgs = "--iters 3",
                                  const std::string& program = WARPSTAGE_ROWSUM, const std::string& okText = "OK rows=")
{
    const std::string file = dir + "/" + name + ".wstrace";
    // --no-stalls: one (traced) run of the program; the stall pass has its own tests.
    const int rc = run(std::string(WARPSTAGE_RECORD_EXE) + " --keep-sinks --no-stalls " + opts + " -o " + file + " -- " + program
                           + " " + programArgs,
                       output);
    CHECK(rc == wantRc, "%s: warpstage-record exited %d (want %d):\n%s", name.c_str(), rc, wantRc, output.c_str());
    CHECK(output.find(okText) != std::string::npos, "%s: the program's result is wrong under the recorder:\n%s", name.c_str(),
          output.c_str());
    try {
        auto store = ws::TraceStore::openReadOnly(file);
        CHECK(store.runs().size() == 1, "%s: %zu runs in the file", name.c_str(), store.runs().size());
    } catch (const std::exception& e) {
        CHECK(false, "%s: %s", name.c_str(), e.what());
    }
    const std::string sd = sinkDirOf(dir, name + ".wstrace");
    CHECK(!sd.empty(), "%s: no kept sink folder", name.c_str());
    ws::sink::ConvertOptions co;
    auto res = ws::sink::toRuns(ws::sink::readSinkDir(sd), co);
    CHECK(res.runs.size() == 1, "%s: %zu runs from the sinks", name.c_str(), res.runs.size());
    return res.runs;
}

bool isRowSum(const ws::KernelRecord& k) { return k.launch.name.find("wsRowSum") != std::string::npos; }

void checkTraced(const ws::KernelRecord& k, const std::string& what)
{
    CHECK(k.launch.traced, "%s: not traced", what.c_str());
    if (!k.launch.traced) return;
    CHECK(k.launch.droppedEvents == 0, "%s: %lld events dropped", what.c_str(), (long long)k.launch.droppedEvents);
    CHECK(k.ctas.size() == 264, "%s: %zu CTAs decoded (264 launched)", what.c_str(), k.ctas.size());
    CHECK(k.warps.size() == 3 * k.ctas.size(), "%s: %zu warps for %zu CTAs", what.c_str(), k.warps.size(), k.ctas.size());
    int loader = 0, reducer0 = 0, reducer1 = 0;
    for (const auto& w : k.warps) {
        loader += w.roleName == "loader" && w.role == ws::WarpRole::Producer;
        reducer0 += w.roleName == "reducer 0" && w.role == ws::WarpRole::Consumer;
        reducer1 += w.roleName == "reducer 1";
    }
    CHECK(loader == int(k.ctas.size()) && reducer0 == loader && reducer1 == loader, "%s: roles loader %d, reducer 0 %d, reducer 1 %d",
          what.c_str(), loader, reducer0, reducer1);
    CHECK(k.phaseNames == (std::vector<std::string>{"reduce", "combine"}), "%s: phase names (%zu)", what.c_str(), k.phaseNames.size());
    std::size_t reduce = 0, combine = 0, waitData = 0;
    for (const auto& iv : k.intervals) {
        reduce += iv.kind == ws::IntervalKind(ws::kUserPhaseBase);
        combine += iv.kind == ws::IntervalKind(ws::kUserPhaseBase + 1);
        waitData += iv.kind == ws::IntervalKind::WaitData;
    }
    const std::size_t steps = (1u << 16) / 2048;
    CHECK(reduce == 2 * steps * k.ctas.size(), "%s: %zu reduce intervals (want %zu)", what.c_str(), reduce, 2 * steps * k.ctas.size());
    CHECK(combine == 2 * k.ctas.size(), "%s: %zu combine intervals", what.c_str(), combine);
    CHECK(waitData == reduce, "%s: %zu wait_data intervals", what.c_str(), waitData);
    CHECK(k.loads.size() == steps * k.ctas.size(), "%s: %zu loads (want %zu)", what.c_str(), k.loads.size(), steps * k.ctas.size());
    CHECK(k.loads.empty() || k.loads[0].bytes == 8192, "%s: a load brings %lld bytes (cta.pipeline said 8192)", what.c_str(),
          k.loads.empty() ? 0LL : (long long)k.loads[0].bytes);
    int outside = 0;
    for (const auto& c : k.ctas) outside += c.start < k.launch.start || c.end > k.launch.end || c.end < c.start;
    CHECK(outside == 0, "%s: %d CTA spans outside CUPTI's [%lld, %lld]", what.c_str(), outside, (long long)k.launch.start,
          (long long)k.launch.end);
}

}  // namespace

int main()
{
    if (const std::string why = ws::testing::gpuProblem(9); !why.empty()) return ws::testing::gpuUnavailableExit("gpu_record_user_kernel", why);
    char tmpl[] = "/tmp/ws-userkernel-XXXXXX";
    const std::string dir = mkdtemp(tmpl);
    std::string out;

    // 1. Alone: correct, control word null (nothing traced).
    int rc = run(WARPSTAGE_ROWSUM, out);
    CHECK(rc == 0 && out.find("OK rows=") != std::string::npos, "alone: exit %d:\n%s", rc, out.c_str());
    CHECK(out.find("control: null") != std::string::npos, "alone: the control word was set:\n%s", out.c_str());

    // 2. Recorded, every launch traced.
    auto runs = record(dir, "all", "--kernels wsRowSum --trace-events 4096", 0, out);
    if (!runs.empty()) {
        const ws::RunRecord& r = runs[0];
        CHECK(r.info.status == ws::RunStatus::Complete, "all: run status %d: %s", int(r.info.status), r.info.failureReason.c_str());
        CHECK(r.info.hasTimeline, "all: run has no timeline");
        int traced = 0;
        for (const auto& k : r.kernels)
            if (isRowSum(k)) {
                checkTraced(k, "all #" + std::to_string(k.launch.launchIndex));
                traced += k.launch.traced;
            }
        CHECK(traced == 3, "all: %d of 3 launches traced; notes: %s", traced, r.info.notes.c_str());
        bool source = false;
        for (const auto& s : r.sources) source = source || (s.path.find("ws_rowsum.cu") != std::string::npos && s.sha256.size() == 64);
        CHECK(source, "all: the kernel's source is not in the run; notes: %s", r.info.notes.c_str());
        // Our own copies stay out of the program's timeline: the program made 1 H2D, 3 memsets, 3 D2H (+ symbol read).
        CHECK(r.memOps.size() <= 8, "all: %zu memory ops (the recorder's own copies leaked into the timeline?)", r.memOps.size());
    }

    // 2b. The Staged engine (shared-memory staging + TMA bulk copies), found through the control word too.
    runs = record(dir, "staged", "--kernels wsRowSum --trace-events 4096", 0, out, "--iters 3 --staged");
    if (!runs.empty()) {
        int traced = 0;
        for (const auto& k : runs[0].kernels)
            if (isRowSum(k)) {
                CHECK(k.launch.name.find("Staged") != std::string::npos, "staged: launched %s", k.launch.name.c_str());
                checkTraced(k, "staged #" + std::to_string(k.launch.launchIndex));
                traced += k.launch.traced;
            }
        CHECK(traced == 3, "staged: %d of 3 launches traced; notes: %s", traced, runs[0].info.notes.c_str());
    }

    // 3. Only launch #1.
    runs = record(dir, "one", "--kernels wsRow --launch-range 1:1", 0, out);
    if (!runs.empty())
        for (const auto& k : runs[0].kernels)
            if (isRowSum(k)) CHECK(k.launch.traced == (k.launch.launchIndex == 1), "one: launch #%d traced=%d", k.launch.launchIndex, int(k.launch.traced));

    // 4. Too small a buffer: reported per warp, run Failed, warpstage-record exits 6 (the program itself is fine).
    runs = record(dir, "overflow", "--kernels wsRowSum --trace-events 16", 6 /*kExitRunFailed*/, out);
    if (!runs.empty()) {
        const ws::RunRecord& r = runs[0];
        CHECK(r.info.status == ws::RunStatus::Failed, "overflow: run status %d", int(r.info.status));
        CHECK(r.info.failureReason.find("overflow") != std::string::npos && r.info.failureReason.find("CTA ") != std::string::npos,
              "overflow: reason '%s'", r.info.failureReason.c_str());
    }

    // 5. --kernels matching nothing: the instrumented kernel runs untraced.
    runs = record(dir, "none", "--kernels NoSuchKernel", 0, out);
    if (!runs.empty())
        for (const auto& k : runs[0].kernels) CHECK(!k.launch.traced, "none: %s traced", k.launch.name.c_str());

    // 6. Format versions (trace_format.h's rule): a kernel that speaks version 1 by hand (ws_format_v1: no trace.cuh) is
    //    traced and decoded by version 1's rules; one that speaks a version newer than this recorder's runs untraced,
    //    the run is Failed with the versions named, exit 6.
    runs = record(dir, "v1", "--kernels wsFormatProbe", 0, out, "--iters 2", WARPSTAGE_FORMAT_V1, "OK ctas=4");
    if (!runs.empty()) {
        const ws::RunRecord& r = runs[0];
        CHECK(r.info.status == ws::RunStatus::Complete, "v1: run status %d: %s", int(r.info.status), r.info.failureReason.c_str());
        int traced = 0;
        for (const auto& k : r.kernels) {
            if (k.launch.name.find("wsFormatProbe") == std::string::npos) continue;
            traced += k.launch.traced;
            CHECK(k.ctas.size() == 4 && k.warps.size() == 8, "v1: %zu CTAs, %zu warps (4, 8 launched)", k.ctas.size(), k.warps.size());
            std::size_t compute = 0, store = 0;
            for (const auto& iv : k.intervals) {
                compute += iv.kind == ws::IntervalKind::Compute && iv.duration > 10'000;  // the ~20 us spin
                store += iv.kind == ws::IntervalKind::Store;
            }
            CHECK(compute == 4 && store == 4, "v1: %zu compute (> 10 us), %zu store intervals (want 4, 4)", compute, store);
        }
        CHECK(traced == 2, "v1: %d of 2 launches traced; notes: %s", traced, r.info.notes.c_str());
    }
    runs = record(dir, "vnext", "--kernels wsFormatProbe", 6 /*kExitRunFailed*/, out, "--iters 2", WARPSTAGE_FORMAT_NEXT, "OK ctas=4");
    if (!runs.empty()) {
        const ws::RunRecord& r = runs[0];
        const std::string want = "format version " + std::to_string(ws::trace::kFormatVersion + 1) + "; this recorder reads versions 1 to "
            + std::to_string(ws::trace::kFormatVersion);
        CHECK(r.info.status == ws::RunStatus::Failed && r.info.failureReason.find(want) != std::string::npos,
              "vnext: status %d, reason '%s' (want '%s')", int(r.info.status), r.info.failureReason.c_str(), want.c_str());
        for (const auto& k : r.kernels) CHECK(!k.launch.traced, "vnext: %s traced", k.launch.name.c_str());
    }

    std::printf("%s: %d failure(s)\n", g_failures ? "FAIL" : "PASS", g_failures);
    return g_failures ? 1 : 0;
}
