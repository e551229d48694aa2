// Stall samples of a recorded program's kernels get role and stage (warpstage/program_stages.h, issue 11): hand-made
// samples on the REAL sources of the lce rungs 3-4 (kernels/lce/lce_body.cuh and the shared pieces of
// kernels/src/common it calls), roles from a hand-made traced launch, and a user's kernel written with the public
// <warpstage/trace.cuh> API (`w.phase(...)`). No GPU.
#include "warpstage/program_stages.h"
#include "warpstage/stage_map.h"

#include <QtTest>

#include <fstream>
#include <sstream>

using namespace ws;

namespace {

std::string readTree(const std::string& rel)
{
    std::ifstream f(std::string(WARPSTAGE_TEST_SOURCE_ROOT) + "/" + rel);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

SourceFile source(const std::string& storedAs, const std::string& rel)
{
    return {storedAs, "x", readTree(rel)};
}

// The 1-based line of the first occurrence of `what` at or after the line holding `after` (a landmark), 0 if none.
int lineOf(const std::string& text, const std::string& what, const std::string& after = {})
{
    std::size_t from = after.empty() ? 0 : text.find(after);
    if (from == std::string::npos) return 0;
    const std::size_t at = text.find(what, from);
    if (at == std::string::npos) return 0;
    return int(std::count(text.begin(), text.begin() + std::ptrdiff_t(at), '\n')) + 1;
}

// A traced launch of kernel `name` in the style of lce rungs 3-4: a producer warp (WaitSlot, IssueLoad), an epilogue
// warp (WaitData, Store, Load, WaitOrder once), two consumer warps (WaitData, MmaIssue, MmaWait, Release, WaitOrder,
// Epilogue, many of each).
KernelRecord traced(const std::string& name)
{
    KernelRecord k;
    k.launch.name = name;
    k.launch.traced = true;
    const WarpRole roles[] = {WarpRole::Producer, WarpRole::Epilogue, WarpRole::Consumer, WarpRole::Consumer};
    for (int w = 0; w < 4; ++w) {
        Warp wp;
        wp.warpIndex = w;
        wp.role = roles[w];
        k.warps.push_back(wp);
    }
    auto add = [&](int warp, IntervalKind kind, int n) {
        for (int i = 0; i < n; ++i) k.intervals.push_back({RowId(warp), kind, -1, i, TimeNs(i) * 10, 5});
    };
    add(0, IntervalKind::WaitSlot, 10);
    add(0, IntervalKind::IssueLoad, 10);
    add(1, IntervalKind::WaitData, 4);
    add(1, IntervalKind::Store, 4);
    add(1, IntervalKind::Load, 4);
    add(1, IntervalKind::WaitOrder, 1);
    for (int w = 2; w < 4; ++w)
        for (IntervalKind kind : {IntervalKind::WaitData, IntervalKind::MmaIssue, IntervalKind::MmaWait, IntervalKind::Release,
                                  IntervalKind::WaitOrder, IntervalKind::Epilogue})
            add(w, kind, 10);
    return k;
}

StallSample sample(const std::string& fn, std::uint64_t pc, const std::string& file, int line, std::int64_t count = 1)
{
    StallSample s;
    s.functionName = fn;
    s.pcOffset = pc;
    s.sourceFile = file;
    s.line = line;
    s.reason = "smsp__pcsamp_warps_issue_stalled_long_scoreboard";
    s.count = count;
    return s;
}

const std::string kRoot = "/build/src/";  // where the line info says the files were compiled from

}  // namespace

class TestProgramStages : public QObject {
    Q_OBJECT
private slots:
    // The lce body's waits land on the role and stage the trace gives them: the producer's slot wait inside
    // ring.cuh's waitSlot (whose event the later issueLoad records), the consumers' data wait, the consumers' wait for
    // U's tile (waitOrderStaged) and the epilogue warp's spin on another CTA's ready flag (acquireFlag) as WaitOrder,
    // the consumers' ldmatrix / stmatrix add as Epilogue, ws::trace's own code as the stage around it.
    void lceBodyOnItsRealSources()
    {
        const std::string body = readTree("kernels/lce/lce_body.cuh"), ring = readTree("kernels/src/common/ring.cuh"),
                          epi = readTree("kernels/src/common/epilogue_warp.cuh"), hopper = readTree("kernels/src/hopper.cuh"),
                          trace = readTree("kernels/include/warpstage/trace.cuh");
        QVERIFY(!body.empty() && !ring.empty() && !epi.empty() && !hopper.empty() && !trace.empty());
        RunRecord run;
        run.info.kind = RunKind::Program;
        run.sources = {source(kRoot + "kernels/lce/lce_body.cuh", "kernels/lce/lce_body.cuh"),
                       source(kRoot + "kernels/src/common/ring.cuh", "kernels/src/common/ring.cuh"),
                       source(kRoot + "kernels/src/common/epilogue_warp.cuh", "kernels/src/common/epilogue_warp.cuh"),
                       source(kRoot + "kernels/src/hopper.cuh", "kernels/src/hopper.cuh"),
                       source(kRoot + "kernels/include/warpstage/trace.cuh", "kernels/include/warpstage/trace.cuh")};
        const std::string fn = "_ZN2ws3lce4body12lceUserFirstILi3ELi0EEEv";
        KernelRecord k = traced("lceUserFirst");
        const int slotWait = lineOf(ring, "mbarWait(", "waitSlot(int fill");
        const int dataWait = lineOf(ring, "mbarWait(", "waitData(int fill");
        const int tryWait = lineOf(hopper, "while (!mbarTryWait(");
        const int staged = lineOf(body, "staging.waitOrderStaged(");
        const int stagedWait = lineOf(epi, "mbarWait(", "waitOrderStaged(int cw");
        const int acquire = lineOf(epi, "asm volatile(\"ld.acquire");
        const int flagLoop = lineOf(epi, "while (acquireFlag(");
        const int ldm = lineOf(epi, "asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans");
        // the staging in pieces (s11-lcering's variants): a call with template arguments opens its stage too (a user
        // tile's second piece, staged right after its WaitOrder line)
        const int addAt = lineOf(body, "epilogueStageAt<kPieceM / 8>(");
        const int clock = lineOf(trace, "asm volatile(\"mov.u64 %0, %%clock64;\"");
        const int mma = lineOf(body, "wgmmaFence();");
        // ws::trace's Warp::event, below trace.cuh's one stage-opening line (loadIssue's IssueLoad): by line it
        // would be issue_load; a function that opens no stage takes the stage of the code around it
        const int warpEvent = lineOf(trace, "m_e.event(k, kstep, slot, aux);");
        QVERIFY(warpEvent > lineOf(trace, "m_e.event(kind::IssueLoad"));
        QVERIFY(slotWait > 0 && dataWait > 0 && tryWait > 0 && staged > 0 && stagedWait > 0 && acquire > 0 && flagLoop > 0
                && ldm > 0 && clock > 0 && mma > 0 && warpEvent > 0 && addAt > staged);
        const std::string f = kRoot + "kernels/";
        k.stalls = {
            sample(fn, 100, f + "src/common/ring.cuh", slotWait),        // producer: waitSlot's wait (no event above it)
            sample(fn, 112, f + "src/hopper.cuh", tryWait),              // ... inlined mbarWait: the context's slot wait
            sample(fn, 120, f + "include/warpstage/trace.cuh", clock),   // ws::trace's clock read: the stage around it
            sample(fn, 400, f + "src/common/ring.cuh", dataWait),        // consumer: waitData's wait
            sample(fn, 416, f + "src/hopper.cuh", tryWait),
            sample(fn, 432, f + "lce/lce_body.cuh", mma),                // MmaIssue
            sample(fn, 600, f + "lce/lce_body.cuh", staged),             // the call of waitOrderStaged opens WaitOrder
            sample(fn, 608, f + "src/common/epilogue_warp.cuh", stagedWait),
            sample(fn, 616, f + "src/hopper.cuh", tryWait),              // ... its barrier wait is WaitOrder, not WaitData
            sample(fn, 624, f + "src/common/epilogue_warp.cuh", ldm),    // the add: ldmatrix .trans
            sample(fn, 632, f + "include/warpstage/trace.cuh", clock),   // trace code inside the add
            sample(fn, 800, f + "src/common/epilogue_warp.cuh", acquire),   // epilogue warp: the flag's ld.acquire
            sample(fn, 808, f + "src/common/epilogue_warp.cuh", flagLoop),  // ... and its spin loop
            sample(fn, 900, f + "lce/missing_helper.cuh", 12),           // a file without stored text
            sample(fn, 440, f + "include/warpstage/trace.cuh", warpEvent),  // trace code in the MMA step
            sample(fn, 620, f + "lce/lce_body.cuh", addAt),              // the line after a WaitOrder line: its own stage
        };
        run.kernels.push_back(k);
        const auto out = decode::assignProgramStages(run);
        const auto& s = run.kernels.front().stalls;
        auto is = [&](int i, const char* role, const char* stage) {
            const bool ok = std::string(warpRoleName(s[std::size_t(i)].role)) == role && s[std::size_t(i)].stage == stage;
            if (!ok)
                qWarning("sample %d (%s:%d): %s/%s, want %s/%s", i, s[std::size_t(i)].sourceFile.c_str(), s[std::size_t(i)].line,
                         std::string(warpRoleName(s[std::size_t(i)].role)).c_str(), s[std::size_t(i)].stage.c_str(), role, stage);
            return ok;
        };
        QVERIFY(is(0, "producer", "wait_slot"));
        QVERIFY(is(1, "producer", "wait_slot"));
        QVERIFY(is(2, "producer", "wait_slot"));
        QVERIFY(is(3, "consumer", "wait_data"));
        QVERIFY(is(4, "consumer", "wait_data"));
        QVERIFY(is(5, "consumer", "mma_issue"));
        QVERIFY(is(6, "consumer", "wait_order"));
        QVERIFY(is(7, "consumer", "wait_order"));
        QVERIFY(is(8, "consumer", "wait_order"));
        QVERIFY(is(9, "consumer", "epilogue"));
        QVERIFY(is(10, "consumer", "epilogue"));
        QVERIFY(is(11, "consumer", "wait_order"));  // WaitOrder's role is the consumers' (they record most of it)
        QVERIFY(is(12, "consumer", "wait_order"));
        QVERIFY(is(13, "consumer", "wait_order"));  // no text: the stage of the code around it (the context)
        QVERIFY(is(14, "consumer", "mma_issue"));
        QVERIFY(is(15, "consumer", "epilogue"));
        QCOMPARE(out.samples, std::int64_t(16));
        QCOMPARE(out.mapped, std::int64_t(16));
        QCOMPARE(out.missing, std::vector<std::string>{f + "lce/missing_helper.cuh"});
        QVERIFY2(out.note.find("100.0% of 16 stall samples mapped") != std::string::npos, out.note.c_str());
        QVERIFY2(out.note.find("no source for " + f + "lce/missing_helper.cuh") != std::string::npos, out.note.c_str());
        QVERIFY(out.untraced.empty());
    }

    // No source text at all: nothing is assigned (never a guess), and the note says why.
    void noSourceNoStage()
    {
        RunRecord run;
        KernelRecord k = traced("k");
        k.stalls = {sample("f", 0, "/src/a.cu", 10), sample("f", 16, "/src/a.cu", 11, 5)};
        run.kernels.push_back(k);
        const auto out = decode::assignProgramStages(run);
        for (const auto& s : run.kernels.front().stalls) {
            QCOMPARE(s.stage, std::string());
            QCOMPARE(s.role, WarpRole::Unknown);
        }
        QCOMPARE(out.samples, std::int64_t(6));
        QCOMPARE(out.mapped, std::int64_t(0));
        QVERIFY2(out.note.find("no source text") != std::string::npos, out.note.c_str());
    }

    // A user's kernel with the public API: `w.phase(phase::X)` opens stage X, `w.phase(userPhase(i))` a phase of
    // the user's own ("other"); the roles come from the traced launch of the same kernel in the run, also when the
    // sampled launch is another one; a kernel without a traced launch keeps role unknown and the note names it.
    void userKernelPhases()
    {
        const std::string text = "#include <warpstage/trace.cuh>\n"                               // 1
                                 "__global__ void rowsum(const float* x, float* out) {\n"          // 2
                                 "    wt::Cta cta;\n"                                              // 3
                                 "    wt::Warp<> w(cta, wt::role::Consumer);\n"                    // 4
                                 "    for (int k = 0; k < K; ++k) {\n"                             // 5
                                 "        w.phase(wt::phase::WaitData, k, s);\n"                   // 6
                                 "        mbarWait(&full[s], ph);\n"                               // 7
                                 "        w.phase(wt::userPhase(kPhaseReduce), k, s);\n"           // 8
                                 "        acc += x[k];\n"                                          // 9
                                 "        w.phase(ws::trace::phase::Release, k, s);\n"             // 10
                                 "    }\n"                                                         // 11
                                 "}\n";                                                            // 12
        RunRecord run;
        run.sources = {{"/home/u/rowsum.cu", "x", text}};
        KernelRecord tracedLaunch = traced("rowsum(float const*, float*)");
        KernelRecord sampled;
        sampled.launch.name = tracedLaunch.launch.name;
        sampled.stalls = {sample("rowsum", 0, "/home/u/rowsum.cu", 7), sample("rowsum", 16, "/home/u/rowsum.cu", 9),
                          sample("rowsum", 32, "/home/u/rowsum.cu", 10)};
        KernelRecord other;
        other.launch.name = "other()";
        other.stalls = {sample("other", 0, "/home/u/rowsum.cu", 7)};
        run.kernels = {tracedLaunch, sampled, other};
        const auto out = decode::assignProgramStages(run);
        const auto& s = run.kernels[1].stalls;
        QCOMPARE(s[0].stage, std::string("wait_data"));
        QCOMPARE(s[0].role, WarpRole::Consumer);
        QCOMPARE(s[1].stage, std::string("other"));
        QCOMPARE(s[2].stage, std::string("release"));
        QCOMPARE(s[2].role, WarpRole::Consumer);
        QCOMPARE(run.kernels[2].stalls[0].stage, std::string("wait_data"));
        QCOMPARE(run.kernels[2].stalls[0].role, WarpRole::Unknown);
        QCOMPARE(out.kernels, 2);
        QCOMPARE(out.untraced, std::vector<std::string>{"other()"});
        QVERIFY2(out.note.find("roles unknown (no traced launch) for other()") != std::string::npos, out.note.c_str());
    }

    // The ladder's maps keep their rules: a Setup line after another stage ends it there (program maps keep the
    // context), and a lambda's lines are mapped line by line.
    void programRulesOnlyInProgramMaps()
    {
        const std::string text = "__device__ void body() {\n"            // 1
                                 "    int i = threadIdx.x;\n"             // 2
                                 "    auto f = [&](int u) {\n"            // 3
                                 "        idx = u * 7;\n"                 // 4
                                 "    };\n"                               // 5
                                 "    w.event(tk::WaitData, 0, 0);\n"     // 6
                                 "    f(i);\n"                            // 7
                                 "}\n";                                   // 8
        const std::vector<SourceFile> src = {{"/s/b.cuh", "x", text}};
        std::vector<WarpRole> roles(kIntervalKindCount, WarpRole::Worker);
        auto run = [&](decode::StageMap map) {
            std::vector<StallSample> v = {sample("f", 0, "/s/b.cuh", 6), sample("f", 16, "/s/b.cuh", 2),
                                          sample("f", 32, "/s/b.cuh", 4)};
            decode::assignStages(v, map, roles);
            return v[1].stage + "," + v[2].stage;
        };
        QCOMPARE(run(decode::programStageMap(src)), std::string("wait_data,wait_data"));
        decode::StageMap ladder = decode::StageMap::fromSource({}, {});
        ladder.addHelperSource("/s/b.cuh", text);
        QCOMPARE(run(ladder), std::string("setup,setup"));
    }
};

QTEST_APPLESS_MAIN(TestProgramStages)
#include "tst_program_stages.moc"
