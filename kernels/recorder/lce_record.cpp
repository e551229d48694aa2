// warpstage-record --rungs lce:...: the linear-compression family through the program recorder.
// See warpstage/lce_record.h.
#include "warpstage/lce_record.h"

#include "warpstage/rung_plan.h"
#include "warpstage/runfamily.h"
#include "warpstage/store.h"

#include "path_util.h"

#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace ws::rec {

namespace {

bool parsePositive(const std::string& s, int* out)
{
    if (s.empty() || s.size() > 7 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    const int v = std::atoi(s.c_str());
    if (v < 1) return false;
    *out = v;
    return true;
}

int lceRungByName(const std::string& s)
{
    if (s.size() == 1 && s[0] >= '0' && s[0] < '0' + lce::kRungs) return s[0] - '0';
    for (int r = 0; r < lce::kRungs; ++r) {
        std::string n = lce::rungName(r), u = n;
        std::replace(u.begin(), u.end(), '-', '_');
        if (s == n || s == u || s == "lce_" + u) return r;
    }
    return -1;
}

}  // namespace

std::string parseRungList(const std::string& list, RungSelection* sel, bool (*isGemmRung)(const std::string&))
{
    *sel = RungSelection{};
    if (list == "all") {
        sel->gemmAll = true;
        return {};
    }
    std::stringstream ss(list);
    std::string r;
    bool any = false;
    while (std::getline(ss, r, ',')) {
        if (r.empty()) continue;
        any = true;
        if (r == "all") {  // every GEMM rung, in a list with lce rungs ("all,lce:all": both families)
            sel->gemmAll = true;
        } else if (r.rfind("lce:", 0) == 0) {
            const std::string v = r.substr(4);
            if (v == "all") {
                for (int i = 0; i < lce::kRungs; ++i) sel->lce.push_back(i);
                continue;
            }
            const int idx = lceRungByName(v);
            if (idx < 0)
                return "unknown lce rung '" + v + "' (lce:0 .. lce:4, lce:all, or a name: original, decomposed, padded, "
                       "fused-epilogue, persistent)";
            sel->lce.push_back(idx);
        } else if (isGemmRung && isGemmRung(r)) {
            sel->gemm.push_back(r);
        } else {
            return "unknown rung '" + r + "'";
        }
    }
    if (!any) return "empty rung list";
    std::sort(sel->lce.begin(), sel->lce.end());
    sel->lce.erase(std::unique(sel->lce.begin(), sel->lce.end()), sel->lce.end());
    return {};
}

std::vector<std::string> lceRungLines()
{
    std::vector<std::string> out;
    for (int r = 0; r < lce::kRungs; ++r) {
        std::string key = "lce:" + std::to_string(r);
        key.resize(17, ' ');  // the column of --list-rungs' GEMM names
        const std::string kernels = lceKernelsRegex(r);
        out.push_back(key + " " + lce::rungName(r) + ": " + lce::rungIdea(r)
                      + (kernels.empty() ? std::string(" [program view only]") : " [program view + per-warp timeline of " + kernels + "]"));
    }
    return out;
}

std::string parseLceShape(const std::string& text, lce::Shape* shape)
{
    std::vector<int> d;
    std::stringstream ss(text);
    std::string part;
    while (std::getline(ss, part, 'x')) {
        int v = 0;
        if (!parsePositive(part, &v)) return "bad lce shape '" + text + "' (expected MxNxKUxKCxBxPER, each 1..9999999, e.g. 433x256x1178x866x1024x70)";
        d.push_back(v);
    }
    if (d.size() != 6 || text.back() == 'x')
        return "bad lce shape '" + text + "' (expected six numbers MxNxKUxKCxBxPER, e.g. 433x256x1178x866x1024x70)";
    shape->m = d[0];
    shape->n = d[1];
    shape->kUser = d[2];
    shape->kCand = d[3];
    shape->b = d[4];
    shape->perUser = d[5];
    return {};
}

std::string findLceProgramFrom(const std::string& exeDir)
{
    for (const std::string& c : {exeDir + "/lce",                          // next to warpstage-record
                                 exeDir + "/../../kernels/lce/lce",        // build tree: app/record -> kernels/lce
                                 exeDir + "/../lib/warpstage/lce"})        // an install
        if (isExecutable(c)) return c;
    return "";
}

std::string findLceProgram()
{
    if (const char* e = std::getenv("WARPSTAGE_LCE"); e && *e) return isExecutable(e) ? std::string(e) : std::string();
    const std::string dir = selfExeDir();
    return dir.empty() ? std::string() : findLceProgramFrom(dir);
}

std::vector<std::string> lceKernelNames(int rung)
{
    // The __global__ functions of kernels/lce: rung 3 is epilogue_warp.cu's lceEpilogueWarp, rung 4 user_first.cu's
    // lceUserFirst (session 5's lceFusedEpilogue and lcePersistent were removed in session 6). tst_lce_record reads
    // the kernel names from those sources, so a rename there goes red until this list follows.
    if (rung == 3) return {"lceEpilogueWarp"};
    if (rung == 4) return {"lceUserFirst"};
    return {};
}

std::string lceKernelsRegex(int rung)
{
    std::string re;
    for (const auto& n : lceKernelNames(rung)) re += (re.empty() ? "" : "|") + n;
    return re;
}

std::string lceVariant(int rung)
{
    std::string n = lce::rungName(rung);
    std::replace(n.begin(), n.end(), '-', '_');
    return "lce_" + n;
}

ProgramOptions lceProgramOptions(int rung, const LceOptions& o, const std::string& program)
{
    const lce::Shape& s = o.shape;
    ProgramOptions po;
    po.output = o.output;
    po.program = {program, "--rung", std::to_string(rung), "--m", std::to_string(s.m), "--n", std::to_string(s.n),
                  "--k-user", std::to_string(s.kUser), "--k-cand", std::to_string(s.kCand), "--b", std::to_string(s.b),
                  "--per-user", std::to_string(s.perUser)};
    if (s.shuffled) po.program.push_back("--shuffled");
    po.program.insert(po.program.end(), {"--time", "--warmup", std::to_string(o.warmup), "--iters", std::to_string(o.iterations)});
    po.kernelsRegex = lceKernelsRegex(rung);
    if (!po.kernelsRegex.empty()) {
        po.launchFirst = 0;  // one traced launch (the first warmup iteration): a whole rung-3 launch needs ~4,400
        po.launchLast = 0;   // events per warp and 6-7 MB (docs/kernel-notes.md)
        po.traceEvents = o.traceEvents;
    }
    po.stalls = o.stalls;
    po.injectLibrary = o.injectLibrary;
    po.commandLine = o.commandLine;
    po.runVariant = lceVariant(rung);
    RungTag tag;
    tag.family = "lce";
    tag.rung = rung;
    tag.rungName = lce::rungName(rung);
    tag.usefulFlops = s.flops();
    tag.bytesMoved = lce::bytesMoved(rung, s);
    tag.compulsoryBytes = lce::compulsoryBytes(s);
    tag.warmup = o.warmup;
    tag.iterations = o.iterations;
    tag.shape = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.kUser) + "x" + std::to_string(s.kCand) + "x"
                + std::to_string(s.b) + "x" + std::to_string(s.perUser) + (s.shuffled ? "s" : "");
    tag.setupKernels = {"fillUniform", "concatRows", "padCopy"};  // problem.cu: allocate()
    po.runNotes = formatRungTag(tag);
    return po;
}

Result recordLce(const LceOptions& o, const Callbacks& cb, const std::atomic<bool>& stop, const std::atomic<int>& stopSignal)
{
    Result res;
    auto fail = [&](int code, const std::string& text) {
        res.exitCode = code;
        res.error = text;
        if (cb.message) cb.message("error", text);
        return res;
    };
    if (o.rungs.empty()) return fail(kExitUsage, "no lce rung selected");
    // A rung that cannot take the shape (rungs 3-4: N not a multiple of 8) is skipped with its sentence, the
    // others are recorded (exit 10 at the end); none that can: exit 2, nothing run.
    const LceRungPlan plan = planLceRungs(o.rungs, o.shape);
    res.rungsSkipped = int(plan.skipped.size());
    if (plan.record.empty()) return fail(kExitUsage, noRungTakesText(plan.skipped, o.shape.text()));
    for (const auto& s : plan.skipped)
        if (cb.message) cb.message("warning", skippedText(s));
    const std::string program = o.program.empty() ? findLceProgram() : (isExecutable(o.program) ? o.program : std::string());
    if (program.empty())
        return fail(kExitProgramNotRunnable,
                    o.program.empty() ? std::string("the lce driver was not found (not next to warpstage-record, not in the build tree's "
                                                    "kernels/lce/, not in ../lib/warpstage/; build the target 'lce' or give --lce-program "
                                                    "PATH or WARPSTAGE_LCE): nothing run, nothing written")
                                      : "--lce-program '" + o.program + "' is not an executable file: nothing run, nothing written");
    // The output before anything runs (program mode checks it again per rung).
    if (const std::string why = outputProblem(o.output); !why.empty()) return fail(kExitOutput, why);
    std::string envMsg;
    if (const int rc = checkEnvironment(0, envMsg); rc != kExitOk)
        return fail(rc, envMsg + " (lce needs an sm_90 GPU): nothing run, " + o.output + " untouched");

    int worst = kExitOk;
    const int count = int(plan.record.size());
    for (int i = 0; i < count; ++i) {
        if (stop.load()) {
            res.exitCode = stopSignal.load() == SIGTERM ? 128 + SIGTERM : kExitInterrupted;
            res.error = "interrupted before lce:" + std::to_string(plan.record[std::size_t(i)]) + "; the runs written before are intact";
            return res;
        }
        const int rung = plan.record[std::size_t(i)];
        const std::string label = "lce:" + std::to_string(rung);
        Callbacks rcb = cb;
        rcb.progress = [&](const ProgressEvent& e) {
            if (!cb.progress) return;
            ProgressEvent x = e;
            x.rung = label + " " + lce::rungName(rung);
            x.rungIndex = i + 1;
            x.rungCount = count;
            x.percent = (100.0 * i + e.percent) / count;
            cb.progress(x);
        };
        if (cb.message) cb.message("info", label + " (" + lce::rungName(rung) + "): " + lce::rungIdea(rung));
        const Result r = recordProgram(lceProgramOptions(rung, o, program), rcb, stop, stopSignal);
        res.runsWritten += r.runsWritten;
        res.runsFailed += r.runsFailed;
        if (r.exitCode == kExitOk) continue;
        if (r.exitCode == kExitInterrupted || r.exitCode == 128 + SIGTERM || r.exitCode == kExitNoGpu || r.exitCode == kExitNoCupti
            || r.exitCode == kExitOutput || r.exitCode == kExitInternal) {
            res.exitCode = r.exitCode;
            res.error = label + ": " + r.error + (res.runsWritten ? " (" + std::to_string(res.runsWritten) + " run(s) written before are intact)" : "");
            return res;
        }
        // 6 (a run FAILED: overflow, ...), 7 (the driver failed), 8 (no CUDA call): record and go on.
        if (worst == kExitOk) {
            worst = r.exitCode;
            res.error = label + ": " + r.error;
        }
    }
    if (worst == kExitOk && !plan.skipped.empty()) {
        worst = kExitRungsSkipped;
        res.error = std::to_string(plan.skipped.size()) + " lce rung(s) skipped: ";
        for (std::size_t i = 0; i < plan.skipped.size(); ++i) res.error += (i ? ", " : "") + plan.skipped[i].rung;
        res.error += " (they cannot take the shape; every other rung is recorded)";
    }
    res.exitCode = worst;
    return res;
}

}  // namespace ws::rec
