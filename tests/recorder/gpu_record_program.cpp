// GPU test: warpstage-record -- PROGRAM on the tests' own CUDA program (programs/ws_testapp.cu): two streams,
// memcpys, a memset, NVTX push/pop, start/end, a mark, a domain range, two threads, a CUDA graph launched twice;
// its crash (SIGSEGV), exit(3), hang (--timeout) and children variants. Checks the exit codes, the file
// (one run per process), and what the runs hold (through the kept sinks and the CUDA-free reader, so NVTX and
// API spans are checked whatever the store's state); and the stall pass (--kernels, --launch-range) on it.
// Plain executable; exits 77 with "SKIP: ..." without a GPU.
#include "common/gpu_skip.h"
#include "common/gpu_check.h"
#include "warpstage/sink_reader.h"
#include "warpstage/store.h"

#include <dirent.h>
#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

extern char** environ;

namespace {

int record(const std::vector<std::string>& args)
{
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(WARPSTAGE_RECORD_EXE));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, WARPSTAGE_RECORD_EXE, nullptr, nullptr, argv.data(), environ) != 0) return -1;
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

std::string sinkDirOf(const std::string& dir, const std::string& base)
{
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            const std::string n = e->d_name;
            if (n.rfind("." + base + ".sinks-", 0) == 0) {
                closedir(d);
                return dir + "/" + n;
            }
        }
        closedir(d);
    }
    return "";
}

// Runs one variant; returns the converted runs of its kept sinks (root outcome as the recorder saw it).
std::vector<ws::RunRecord> variant(const std::string& dir, const std::string& name, std::vector<std::string> extra, int wantCode,
                                   std::size_t wantRuns)
{
    const std::string out = dir + "/" + name + ".wstrace";
    std::vector<std::string> args = {"--keep-sinks", "-o", out};
    args.insert(args.end(), extra.begin(), extra.end());
    const int rc = record(args);
    CHECK(rc == wantCode, "%s: exit %d, expected %d", name.c_str(), rc, wantCode);
    try {
        auto store = ws::TraceStore::openReadOnly(out);
        CHECK(store.runs().size() == wantRuns, "%s: %zu runs in the file", name.c_str(), store.runs().size());
    } catch (const std::exception& e) {
        CHECK(false, "%s: %s", name.c_str(), e.what());
    }
    const std::string sd = sinkDirOf(dir, name + ".wstrace");
    CHECK(!sd.empty(), "%s: no kept sink folder", name.c_str());
    ws::sink::ConvertOptions co;
    auto res = ws::sink::toRuns(ws::sink::readSinkDir(sd), co);
    CHECK(res.runs.size() == wantRuns, "%s: %zu runs from the sinks", name.c_str(), res.runs.size());
    return res.runs;
}

void checkBasic(const ws::RunRecord& r, const char* what, bool crashed)
{
    std::map<std::string, int> names;
    int graph = 0;
    std::set<std::uint32_t> apiCorr;
    int graphLaunch = 0;
    for (const auto& a : r.apiSpans) {
        apiCorr.insert(a.correlationId);
        graphLaunch += a.name.find("GraphLaunch") != std::string::npos;
    }
    int noApi = 0;
    for (const auto& k : r.kernels) {
        ++names[k.launch.name.substr(0, k.launch.name.find('('))];
        graph += k.launch.graphId != 0;
        noApi += apiCorr.count(k.launch.correlationId) == 0;
        CHECK(k.launch.end >= k.launch.start && k.launch.start > 0, "%s: kernel times", what);
        CHECK(k.launch.block[0] == 256, "%s: block %d", what, k.launch.block[0]);
    }
    CHECK(r.kernels.size() == 15, "%s: %zu kernels", what, r.kernels.size());
    CHECK(names["wsScale"] == 3 && names["wsAddOne"] == 6 && names["wsGraphNode"] == 6, "%s: kernel names/counts", what);
    CHECK(graph == 6, "%s: %d graph kernels", what, graph);
    CHECK(graphLaunch == 2, "%s: %d cudaGraphLaunch spans", what, graphLaunch);
    CHECK(noApi == 0, "%s: %d kernels without their API call", what, noApi);
    int htod = 0, dtoh = 0, memset = 0;
    for (const auto& m : r.memOps) {
        htod += m.kind == ws::MemOpKind::HtoD;
        dtoh += m.kind == ws::MemOpKind::DtoH;
        memset += m.kind == ws::MemOpKind::Memset;
    }
    CHECK(htod == 1 && dtoh == 1 && memset == 1, "%s: memops %d %d %d", what, htod, dtoh, memset);
    CHECK(r.streams.size() >= 3, "%s: %zu streams", what, r.streams.size());
    std::map<std::string, const ws::NvtxRange*> nv;
    for (const auto& n : r.nvtx) nv[n.name] = &n;
    for (const char* n : {"ws-outer", "ws-inner", "ws-mark", "ws-startend", "ws-domain-range", "ws-thread-a", "ws-thread-b"})
        CHECK(nv.count(n), "%s: NVTX '%s' missing", what, n);
    if (nv.count("ws-domain-range")) CHECK(nv["ws-domain-range"]->domain == "ws-domain", "%s: domain", what);
    if (nv.count("ws-inner")) CHECK(nv["ws-inner"]->depth == 1, "%s: depth", what);
    if (nv.count("ws-startend")) CHECK(nv["ws-startend"]->kind == ws::NvtxKind::StartEnd, "%s: start/end", what);
    // every wsScale kernel was launched inside ws-inner: its API call lies in the range
    if (nv.count("ws-inner"))
        for (const auto& k : r.kernels)
            if (k.launch.name.rfind("wsScale", 0) == 0)
                for (const auto& a : r.apiSpans)
                    if (a.correlationId == k.launch.correlationId)
                        CHECK(a.start >= nv["ws-inner"]->start && a.end <= nv["ws-inner"]->end, "%s: launch outside its range", what);
    if (crashed) CHECK(nv.count("ws-open-at-crash") && !nv["ws-open-at-crash"]->closed, "%s: open range at the crash", what);
}

// Line of the first line holding `text` in ws_testapp.cu (0 if not found).
int sourceLine(const std::string& text)
{
    const char* root = std::getenv("WARPSTAGE_SOURCE_DIR");
    std::ifstream f(std::string(root && *root ? root : WARPSTAGE_SOURCE_ROOT) + "/tests/recorder/programs/ws_testapp.cu");
    std::string l;
    for (int n = 1; std::getline(f, l); ++n)
        if (l.find(text) != std::string::npos) return n;
    return 0;
}

// The stall pass: --kernels '^wsScale' --launch-range 1:2 on "basic" (wsScale 3 times on one stream, among
// wsAddOne on another stream and graph kernels). Samples on wsScale's 2nd and 3rd launch (call order), with
// stall reasons and lines of wsScale's body in ws_testapp.cu (built with -lineinfo); none anywhere else.
void stallPass(const std::string& dir, const std::string& app)
{
    const std::string out = dir + "/stalls.wstrace";
    const int rc = record({"-o", out, "--kernels", "^wsScale", "--launch-range", "1:2", "--", app, "basic"});
    CHECK(rc == 0, "stalls: exit %d", rc);
    const int first = sourceLine("__global__ void wsScale"), next = sourceLine("__global__ void wsAddOne");
    CHECK(first > 0 && next > first, "stalls: ws_testapp.cu not found (lines %d %d)", first, next);
    try {
        auto store = ws::TraceStore::openReadOnly(out);
        const auto runs = store.runs();
        CHECK(runs.size() == 1, "stalls: %zu runs", runs.size());
        if (runs.size() != 1) return;
        CHECK(runs[0].hasStalls, "stalls: run without stalls: %s", runs[0].notes.c_str());
        CHECK(runs[0].notes.find("stall pass (--kernels '^wsScale' --launch-range 1:2)") != std::string::npos, "stalls: notes %s",
              runs[0].notes.c_str());
        CHECK(runs[0].notes.find("not deterministic") == std::string::npos, "stalls: runs did not match: %s", runs[0].notes.c_str());
        // wsScale launches in call order (correlation ids): the 2nd and 3rd have samples
        std::vector<ws::KernelLaunch> scale;
        for (const auto& k : store.kernels(runs[0].id)) {
            const auto samples = store.stallSamples(k.id);
            const bool isScale = k.name.rfind("wsScale", 0) == 0;
            if (isScale) scale.push_back(k);
            if (!isScale) CHECK(samples.empty(), "stalls: %zu samples on %s", samples.size(), k.name.c_str());
        }
        std::sort(scale.begin(), scale.end(), [](const auto& a, const auto& b) { return a.correlationId < b.correlationId; });
        CHECK(scale.size() == 3, "stalls: %zu wsScale launches", scale.size());
        for (std::size_t i = 0; i < scale.size(); ++i) {
            const auto samples = store.stallSamples(scale[i].id);
            std::int64_t n = 0, withLine = 0;
            std::set<std::string> reasons;
            for (const auto& smp : samples) {
                n += smp.count;
                reasons.insert(smp.reason);
                if (smp.line > 0) {
                    withLine += smp.count;
                    CHECK(smp.sourceFile.find("ws_testapp.cu") != std::string::npos, "stalls: source file %s", smp.sourceFile.c_str());
                    CHECK(smp.line >= first && smp.line < next, "stalls: line %d outside wsScale (%d..%d)", smp.line, first, next - 1);
                }
                CHECK(smp.reason.rfind("smsp__pcsamp_", 0) == 0 && !smp.reasonLabel.empty(), "stalls: reason '%s'", smp.reason.c_str());
            }
            std::printf("stalls: wsScale call %zu: %lld samples (%lld with a line), %zu reasons\n", i, (long long)n, (long long)withLine,
                        reasons.size());
            if (i == 0) CHECK(n == 0, "stalls: %lld samples on wsScale's first launch (not in --launch-range 1:2)", (long long)n);
            if (i > 0) {
                CHECK(n > 0, "stalls: no samples on wsScale call %zu", i);
                CHECK(withLine * 10 >= n * 9, "stalls: only %lld of %lld samples with a source line", (long long)withLine, (long long)n);
            }
        }
    } catch (const std::exception& e) {
        CHECK(false, "stalls: %s", e.what());
    }
}
}  // namespace

int main()
{
    if (const std::string p = ws::testing::gpuProblem(); !p.empty()) return ws::testing::gpuUnavailableExit("gpu_record_program", p);
    char tmpl[] = "/tmp/gpu_record_program-XXXXXX";
    const std::string dir = mkdtemp(tmpl);
    const std::string app = WARPSTAGE_TESTAPP;

    stallPass(dir, app);
    auto basic = variant(dir, "basic", {"--", app, "basic"}, 0, 1);
    if (!basic.empty()) checkBasic(basic[0], "basic", false);
    auto crash = variant(dir, "crash", {"--", app, "crash"}, 7, 1);
    if (!crash.empty()) checkBasic(crash[0], "crash", true);
    auto ex = variant(dir, "exit3", {"--", app, "exit3"}, 7, 1);
    if (!ex.empty()) checkBasic(ex[0], "exit3", false);
    variant(dir, "hang", {"--timeout", "2", "--", app, "hang"}, 7, 1);
    auto ch = variant(dir, "children", {"--", app, "children"}, 0, 3);
    if (ch.size() == 3) {
        int children = 0;
        for (const auto& r : ch) children += r.info.parentPid == ch[0].info.pid || r.info.parentPid == ch[1].info.pid;
        CHECK(children >= 2, "children: parent pids");
    }
    if (g_failures == 0) {
        std::string cmd = "rm -rf '" + dir + "'";
        if (std::system(cmd.c_str()) != 0) std::printf("(could not remove %s)\n", dir.c_str());
        std::printf("gpu_record_program: all checks passed\n");
        return 0;
    }
    std::printf("gpu_record_program: %d check(s) failed; files kept in %s\n", g_failures, dir.c_str());
    return 1;
}
