// GPU test (issue 10): the two examples of examples/ built from an INSTALLED package and recorded by the installed
// recorder, as a user would:
//   1. a fresh prefix: `cmake --install` of this build (components dev + recorder) into a temporary folder, or a
//      copy of the prefix named by WARPSTAGE_EXAMPLES_PREFIX (the device script carries one: no build tree there);
//   2. each example configured and built standalone against that prefix (cmake -S examples/X -B ...);
//   3. each run alone: "PASS" (its own check against a reference), exit 0;
//   4. each recorded with `<prefix>/bin/warpstage-record --kernels REGEX -- ./example ...`: the program still
//      prints PASS; every launch is traced and decodes with no overflow; the roles ("streamer"/"softmax i",
//      "tma"/"mma i") and the user phase names ("combine", "write" / "store C") appear, with the expected
//      number of intervals; loads pair up; every CTA span lies inside CUPTI's kernel time; the example's
//      source is in the run.
// WARPSTAGE_EXAMPLES_OUT=DIR copies the two recordings there (the device script bundles them).
// Plain executable; exits 77 with "SKIP: ..." without a GPU (FAIL with WARPSTAGE_REQUIRE_GPU=1).
#include "common/gpu_skip.h"
#include "common/gpu_check.h"
#include "warpstage/sink_reader.h"
#include "warpstage/store.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::string env(const char* name, const std::string& fallback)
{
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

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

std::string tail(const std::string& s, std::size_t n = 3000) { return s.size() > n ? s.substr(s.size() - n) : s; }

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

struct Example {
    std::string dir;         // examples/<dir>
    std::string exe;         // target name
    std::string kernel;      // --kernels regex and the launch name's part
    std::string args;        // small run
    std::string sourceFile;  // the .cu file the run must hold
    int ctas;                // CTAs per launch with `args`
    int warpsPerCta;         // warps that declare a role
    std::vector<std::string> roleNames;  // per CTA, each once
    std::vector<std::string> phaseNames;
    std::vector<std::size_t> userIntervalsPerCta;  // per user phase
    std::size_t loadsPerCta;
    long long bytesPerLoad;
    std::size_t tilesPerCta;  // producer tile spans per CTA (0: none)
};

void checkTraced(const Example& ex, const ws::KernelRecord& k, const std::string& what)
{
    CHECK(k.launch.traced, "%s: not traced", what.c_str());
    if (!k.launch.traced) return;
    CHECK(k.launch.droppedEvents == 0, "%s: %lld events dropped", what.c_str(), (long long)k.launch.droppedEvents);
    const std::size_t n = k.ctas.size();
    CHECK(n == std::size_t(ex.ctas), "%s: %zu CTAs decoded (%d launched)", what.c_str(), n, ex.ctas);
    CHECK(k.warps.size() == std::size_t(ex.warpsPerCta) * n, "%s: %zu warps for %zu CTAs", what.c_str(), k.warps.size(), n);
    for (const auto& name : ex.roleNames) {
        std::size_t c = 0;
        for (const auto& w : k.warps) c += w.roleName == name;
        CHECK(c == n, "%s: %zu warps named '%s' (want one per CTA: %zu)", what.c_str(), c, name.c_str(), n);
    }
    std::size_t producers = 0, consumers = 0;
    for (const auto& w : k.warps) {
        producers += w.role == ws::WarpRole::Producer;
        consumers += w.role == ws::WarpRole::Consumer;
    }
    CHECK(producers == n && consumers == (std::size_t(ex.warpsPerCta) - 1) * n, "%s: %zu producer, %zu consumer warps",
          what.c_str(), producers, consumers);
    CHECK(k.phaseNames == ex.phaseNames, "%s: %zu phase names recorded", what.c_str(), k.phaseNames.size());
    for (std::size_t i = 0; i < ex.phaseNames.size(); ++i) {
        std::size_t c = 0;
        for (const auto& iv : k.intervals) c += iv.kind == ws::IntervalKind(ws::kUserPhaseBase + i);
        CHECK(c == ex.userIntervalsPerCta[i] * n, "%s: %zu '%s' intervals (want %zu)", what.c_str(), c,
              ex.phaseNames[i].c_str(), ex.userIntervalsPerCta[i] * n);
    }
    std::size_t waitData = 0;
    for (const auto& iv : k.intervals) waitData += iv.kind == ws::IntervalKind::WaitData;
    CHECK(waitData > 0, "%s: no wait-for-data interval", what.c_str());
    CHECK(k.loads.size() == ex.loadsPerCta * n, "%s: %zu loads (want %zu)", what.c_str(), k.loads.size(), ex.loadsPerCta * n);
    CHECK(k.loads.empty() || k.loads[0].bytes == ex.bytesPerLoad, "%s: a load brings %lld bytes (cta.pipeline said %lld)",
          what.c_str(), k.loads.empty() ? 0LL : (long long)k.loads[0].bytes, ex.bytesPerLoad);
    if (ex.tilesPerCta > 0) CHECK(!k.tiles.empty(), "%s: no tile spans", what.c_str());
    int outside = 0;
    for (const auto& c : k.ctas) outside += c.start < k.launch.start || c.end > k.launch.end || c.end < c.start;
    CHECK(outside == 0, "%s: %d CTA spans outside CUPTI's [%lld, %lld]", what.c_str(), outside, (long long)k.launch.start,
          (long long)k.launch.end);
}

void checkExample(const Example& ex, const std::string& prefix, const std::string& work, const std::string& examples,
                  const std::string& cmake, const std::string& nvcc, const std::string& keep)
{
    std::string out;
    const std::string build = work + "/" + ex.dir;
    // 2. standalone configure + build against the prefix
    int rc = run(cmake + " -S " + examples + "/" + ex.dir + " -B " + build + " -G Ninja -DCMAKE_PREFIX_PATH=" + prefix
                     + " -DCMAKE_CUDA_COMPILER=" + nvcc + " -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF && " + cmake
                     + " --build " + build,
                 out);
    CHECK(rc == 0, "%s: configure/build against %s failed (exit %d):\n%s", ex.dir.c_str(), prefix.c_str(), rc, tail(out).c_str());
    if (rc != 0) return;
    const std::string exe = build + "/" + ex.exe;
    // 3. alone
    rc = run(exe + " " + ex.args, out);
    CHECK(rc == 0 && out.find("PASS") != std::string::npos, "%s alone: exit %d:\n%s", ex.exe.c_str(), rc, out.c_str());
    std::printf("%s alone: %s", ex.exe.c_str(), out.c_str());
    // 4. recorded by the installed recorder
    const std::string file = work + "/" + ex.exe + ".wstrace";
    rc = run("cd " + work + " && " + prefix + "/bin/warpstage-record --keep-sinks --no-stalls --kernels " + ex.kernel + " -o "
                 + file + " -- " + exe + " " + ex.args,
             out);
    CHECK(rc == 0, "%s recorded: warpstage-record exited %d:\n%s", ex.exe.c_str(), rc, tail(out).c_str());
    CHECK(out.find("PASS") != std::string::npos, "%s: the program's result is wrong under the recorder:\n%s", ex.exe.c_str(),
          tail(out).c_str());
    try {
        auto store = ws::TraceStore::openReadOnly(file);
        CHECK(store.runs().size() == 1, "%s: %zu runs in the file", ex.exe.c_str(), store.runs().size());
    } catch (const std::exception& e) {
        CHECK(false, "%s: %s", ex.exe.c_str(), e.what());
        return;
    }
    if (!keep.empty()) run("cp " + file + " " + keep + "/", out);
    const std::string sd = sinkDirOf(work, ex.exe + ".wstrace");
    CHECK(!sd.empty(), "%s: no kept sink folder", ex.exe.c_str());
    if (sd.empty()) return;
    ws::sink::ConvertOptions co;
    auto res = ws::sink::toRuns(ws::sink::readSinkDir(sd), co);
    CHECK(res.runs.size() == 1, "%s: %zu runs from the sinks", ex.exe.c_str(), res.runs.size());
    if (res.runs.empty()) return;
    const ws::RunRecord& r = res.runs[0];
    CHECK(r.info.status == ws::RunStatus::Complete, "%s: run status %d: %s", ex.exe.c_str(), int(r.info.status),
          r.info.failureReason.c_str());
    int traced = 0, launches = 0;
    for (const auto& k : r.kernels)
        if (k.launch.name.find(ex.kernel) != std::string::npos) {
            ++launches;
            checkTraced(ex, k, ex.exe + " #" + std::to_string(k.launch.launchIndex));
            traced += k.launch.traced;
        }
    CHECK(launches == 2 && traced == 2, "%s: %d of %d launches traced (2 launched); notes: %s", ex.exe.c_str(), traced,
          launches, r.info.notes.c_str());
    bool source = false;
    for (const auto& s : r.sources) source = source || (s.path.find(ex.sourceFile) != std::string::npos && s.sha256.size() == 64);
    CHECK(source, "%s: %s is not in the run; notes: %s", ex.exe.c_str(), ex.sourceFile.c_str(), r.info.notes.c_str());
    std::printf("%s recorded: %d launches traced; notes: %.300s\n", ex.exe.c_str(), traced, r.info.notes.c_str());
}

}  // namespace

int main()
{
    if (const std::string why = ws::testing::gpuProblem(9); !why.empty()) return ws::testing::gpuUnavailableExit("gpu_examples", why);
    char tmpl[] = "/tmp/ws-examples-XXXXXX";
    const std::string work = mkdtemp(tmpl);
    const std::string cmake = env("WARPSTAGE_CMAKE", WARPSTAGE_CMAKE_COMMAND);
    const std::string nvcc = env("WARPSTAGE_CUDA_COMPILER", WARPSTAGE_CUDA_COMPILER);
    const std::string examples = env("WARPSTAGE_EXAMPLES_SRC", WARPSTAGE_SOURCE_ROOT "/examples");
    const std::string keep = env("WARPSTAGE_EXAMPLES_OUT", "");
    std::string out;

    // 1. A fresh prefix, moved after the install: nothing may point back into the build tree.
    const std::string prefix = work + "/prefix";
    int rc = 0;
    if (const std::string carried = env("WARPSTAGE_EXAMPLES_PREFIX", ""); !carried.empty())
        rc = run("cp -a " + carried + " " + prefix, out);
    else
        rc = run(cmake + " --install " WARPSTAGE_BUILD_ROOT " --component dev --prefix " + work + "/staged && " + cmake
                     + " --install " WARPSTAGE_BUILD_ROOT " --component recorder --prefix " + work + "/staged && mv " + work
                     + "/staged " + prefix,
                 out);
    CHECK(rc == 0, "install into %s failed (exit %d):\n%s", prefix.c_str(), rc, tail(out).c_str());
    CHECK(access((prefix + "/bin/warpstage-record").c_str(), X_OK) == 0, "no %s/bin/warpstage-record", prefix.c_str());
    CHECK(access((prefix + "/share/cmake/Warpstage/WarpstageConfig.cmake").c_str(), R_OK) == 0, "no CMake package in %s",
          prefix.c_str());
    if (g_failures == 0) {
        // softmax: 16 rows of 32768 floats = 16 chunks per pass, 2 passes; 5 warps per CTA.
        checkExample({"softmax-ws", "softmax_ws", "softmaxWs", "--rows 16 --len 32768 --iters 2", "softmax_ws.cu", 16, 5,
                      {"streamer", "softmax 0", "softmax 1", "softmax 2", "softmax 3"}, {"combine", "write"},
                      {4, 4 * 16}, 2 * 16, 8192, 0},
                     prefix, work, examples, cmake, nvcc, keep);
        // GEMM: 512 x 512 x 1024 = 16 tiles of 128 x 128 on 16 CTAs (one each), 16 k-steps; the producer warp and
        // eight consumer warps declare roles (the producer warpgroup's other three warps do not).
        checkExample({"gemm-2consumer", "gemm_2consumer", "gemm2Consumer", "--m 512 --n 512 --k 1024 --iters 2",
                      "gemm_2consumer.cu", 16, 9,
                      {"tma", "mma 0", "mma 1", "mma 2", "mma 3", "mma 4", "mma 5", "mma 6", "mma 7"}, {"store C"}, {8}, 16,
                      32768, 1},
                     prefix, work, examples, cmake, nvcc, keep);
    }
    if (g_failures == 0) run("rm -rf " + work, out);
    else std::printf("work folder kept: %s\n", work.c_str());
    std::printf("%s: %d failure(s)\n", g_failures ? "FAIL" : "PASS", g_failures);
    return g_failures ? 1 : 0;
}
