// GPU test of the linear-compression family (issue 11): runs the driver's --check (every rung against the
// fp32 reference, the output poisoned with NaN before each run) at the benchmark point and at odd sizes,
// and checks the refusals: rungs 3-4 refuse N = 100 (not a multiple of 8) with a sentence and exit 3
// when asked alone, while rungs 0-2 still pass; and --trace-cost records events on rungs 3-4. Usage: gpu_lce PATH_TO_LCE [--quick]
// (The environment reaches the driver: LCE_TVAR=10 checks every unshuffled case with rung 4's broadcast walk,
// LCE_TVAR=15 every case with its user-first walk: lce_shape.h's kernel configurations.)
// Exit: 0 passed, 1 failed, 77 no sm_90 GPU (SKIP).
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <vector>

#include "common/gpu_skip.h"

namespace {

int g_fail = 0;

struct Result {
    int rc = -1;
    std::string out;
};

Result runLce(const std::string& lce, const std::string& args)
{
    Result r;
    const std::string cmd = "'" + lce + "' " + args + " 2>&1";
    FILE* f = popen(cmd.c_str(), "r");
    if (!f) return r;
    char buf[512];
    while (std::fgets(buf, sizeof buf, f)) r.out += buf;
    const int st = pclose(f);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    std::fputs(r.out.c_str(), stdout);
    return r;
}

int count(const std::string& s, const std::string& what)
{
    int n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

void expect(bool ok, const std::string& what)
{
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    std::fflush(stdout);
    if (!ok) ++g_fail;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: gpu_lce PATH_TO_LCE [--quick]\n");
        return 2;
    }
    const std::string why = ws::testing::gpuProblem(9);
    if (!why.empty()) return ws::testing::gpuUnavailableExit("gpu_lce", why);
    const std::string lce = argv[1];
    const bool quick = argc > 2 && std::string(argv[2]) == "--quick";

    struct Case {
        const char* what;
        const char* args;
    };
    std::vector<Case> cases = {
        {"the benchmark point", ""},
        {"M = 1, N = 200 (not a multiple of 64), small odd K", "--m 1 --n 200 --k-user 37 --k-cand 29 --b 9 --per-user 4"},
        {"one user for every candidate, N = 264 (two N tiles)", "--m 257 --n 264 --k-user 100 --k-cand 131 --b 33 --per-user 1000"},
        {"every candidate its own user", "--b 200 --per-user 1"},
        {"a shuffled mapping", "--b 300 --per-user 7 --shuffled"},
        // few candidates per user (s11-lceuser: rung 4's broadcast walk where its units balance, the B = 512 case on 66
        // CTA pairs; every unshuffled case takes it with LCE_TVAR=10): B odd, so the last user has one candidate; two N tiles
        {"2 per user, B odd, N = 264 (two N tiles)", "--m 257 --n 264 --k-user 100 --k-cand 131 --b 51 --per-user 2"},
        {"2 per user, shuffled (rung 4 keeps the user-first walk)", "--b 64 --per-user 2 --shuffled"},
        {"2 per user, B = 512 (rung 4's broadcast walk as chosen per shape on 66 CTA pairs)", "--b 512 --per-user 2"},
    };
    if (quick) cases.resize(2);
    for (const Case& c : cases) {
        const Result r = runLce(lce, std::string("--check --rung all ") + c.args);
        expect(r.rc == 0 && count(r.out, "PASS rung") == 5 && count(r.out, "FAIL") == 0,
               std::string("every rung matches the fp32 reference: ") + c.what);
    }
    // N = 100: rungs 0-2 pass, rungs 3-4 refuse (and the run as a whole succeeds)
    const Result all = runLce(lce, "--check --rung all --m 130 --n 100 --k-user 13 --k-cand 70 --b 5 --per-user 2");
    expect(all.rc == 0 && count(all.out, "PASS rung") == 3 && count(all.out, "refuses") == 2
               && count(all.out, "must be a multiple of 8") == 2,
           "N = 100: rungs 0-2 pass, rungs 3-4 refuse with a sentence");
    // asked alone, a refusing rung exits 3 and writes nothing
    const Result one = runLce(lce, "--check --rung 3 --n 100");
    expect(one.rc == 3 && count(one.out, "refuses") == 1 && count(one.out, "PASS") == 0,
           "rung 3 asked alone at N = 100: exit 3");
    // --trace-cost: rungs 3-4 launched with a trace buffer attached to their module (the recorder's way) record events
    const Result tc = runLce(lce, "--trace-cost --rung all --warmup 0 --iters 2 --b 64 --per-user 5");
    expect(tc.rc == 0 && count(tc.out, "TRACECOST rung") == 2 && count(tc.out, "(0 events") == 0
               && count(tc.out, "FAIL") == 0,
           "--trace-cost: rungs 3 and 4 record per-warp events through their control symbol");
    const Result bad = runLce(lce, "--rung 9");
    expect(bad.rc == 2, "a bad option: exit 2");
    std::printf("%s: %d failure(s)\n", g_fail ? "FAILED" : "PASSED", g_fail);
    return g_fail ? 1 : 0;
}
