// PC-sampling results -> pipeline role/stage, and stall-reason names/labels (no GPU).
#include "warpstage/decode.h"
#include "warpstage/stage_map.h"

#include <QtTest>

using namespace ws;

namespace {

// A miniature rung in the style of kernels/src/*.cu (line numbers matter: 1-based).
const char* kSource =
    "// header comment: wt.event(tk::Store) in a comment is not a stage\n"  // 1
    "__global__ void k() {\n"                                              // 2
    "    wt.begin(trace, warp, role, wg, 0);\n"                            // 3
    "    if (producer) {\n"                                                // 4
    "        for (;;) {\n"                                                 // 5
    "            if constexpr (Traced) wt.event(tk::WaitSlot, fill, slot);\n"  // 6
    "            mbarrierWait(empty[slot], phase);\n"                      // 7
    "            if constexpr (Traced) wt.event(tk::IssueLoad, fill, slot);\n" // 8
    "            tmaLoad(a, full[slot]);\n"                                // 9
    "        }\n"                                                          // 10
    "    } else {\n"                                                       // 11
    "        if constexpr (Traced) wt.event(ws::trace::kEventTileBegin, tm, ws::trace::kNoSlot, tn);\n"  // 12
    "        if constexpr (Traced) wt.event(tk::WaitData, fill, slot);\n"  // 13
    "        mbarrierWait(full[slot], phase);\n"                           // 14
    "        if constexpr (Traced) wt.event(tk::MmaIssue, fill, slot);\n"  // 15
    "        wgmma(acc, sa, sb);\n"                                        // 16
    "        if constexpr (Traced) { wt.event(tk::MmaWait, fill, slot); }\n" // 17
    "        wgmmaWait();\n"                                               // 18
    "    }\n"                                                              // 19
    "}\n";                                                                 // 20

StallSample sample(std::uint64_t pc, const std::string& file, int line, std::int64_t count = 10)
{
    StallSample s;
    s.pcOffset = pc;
    s.functionName = "_Z4kernelv";
    s.sourceFile = file;
    s.line = line;
    s.reason = "smsp__pcsamp_warps_issue_stalled_long_scoreboard";
    s.count = count;
    return s;
}

}  // namespace

class TestStageMap : public QObject {
    Q_OBJECT

private slots:
    void scansEventCalls()
    {
        const auto m = decode::StageMap::fromSource("kernels/src/mini.cu", kSource);
        QCOMPARE(m.file(), std::string("kernels/src/mini.cu"));
        // WaitSlot (from the loop header at line 5), IssueLoad, WaitSlot again where the loop body closes
        // (line 10), Setup again where the producer branch closes (line 11), WaitData, MmaIssue, MmaWait,
        // Setup where the consumer branch closes (line 19); the marker and the comment are ignored.
        QCOMPARE(int(m.stageCount()), 8);
        QCOMPARE(*m.stageAt(1), IntervalKind::Setup);
        QCOMPARE(*m.stageAt(4), IntervalKind::Setup);
        QCOMPARE(*m.stageAt(5), IntervalKind::WaitSlot);  // the loop header takes its body's first stage
        QCOMPARE(*m.stageAt(6), IntervalKind::WaitSlot);
        QCOMPARE(*m.stageAt(7), IntervalKind::WaitSlot);
        QCOMPARE(*m.stageAt(9), IntervalKind::IssueLoad);
        QCOMPARE(*m.stageAt(10), IntervalKind::WaitSlot);  // the loop body's stages end with it
        QCOMPARE(*m.stageAt(11), IntervalKind::Setup);     // so do the producer branch's
        QCOMPARE(*m.stageAt(12), IntervalKind::Setup);     // markers do not change the stage
        QCOMPARE(*m.stageAt(14), IntervalKind::WaitData);
        QCOMPARE(*m.stageAt(16), IntervalKind::MmaIssue);
        QCOMPARE(*m.stageAt(17), IntervalKind::MmaWait);  // a block on one line does not end a stage
        QCOMPARE(*m.stageAt(18), IntervalKind::MmaWait);
        QCOMPARE(*m.stageAt(19), IntervalKind::Setup);
        QVERIFY(!m.stageAt(0).has_value());
    }

    void splitFormStartsAtNow()
    {
        // The ladder's split form (kernels/src/warp_specialized.cu): the time is taken with now() where the
        // phase begins and recorded later with eventAt(t, kind).
        const char* src =
            "for (int kt = 0; kt < KT; ++kt) {\n"                                     // 1
            "    uint64_t tWait = 0, tIssue = 0;\n"                                    // 2
            "    if (kt >= S) {\n"                                                     // 3
            "        if constexpr (Traced) tWait = wt.now();\n"                        // 4
            "        mbarWait(&empty[slot], phase);\n"                                 // 5
            "    }\n"                                                                  // 6
            "    if constexpr (Traced) tIssue = wt.now();\n"                           // 7
            "    tmaLoad2d(st, &tmA, &full[slot], kt * kBK, m0);\n"                    // 8
            "    if constexpr (Traced) {\n"                                            // 9
            "        if (kt >= S) wt.eventAt(tWait, tk::WaitSlot, kt, slot);\n"        // 10
            "        wt.eventAt(tIssue, tk::IssueLoad, kt, slot);\n"                   // 11
            "    }\n"                                                                  // 12
            "}\n"                                                                      // 13
            "if constexpr (Traced) wt.event(tk::WaitData, kt, slot);\n"              // 14
            "uint64_t t = 0;\n"                                                        // 15
            "if constexpr (Traced) t = wt.now();\n"                                    // 16
            "__syncthreads();\n"                                                       // 17
            "if constexpr (Traced) wt.eventAt(t, tk::Sync, kt, 0);\n";                // 18
        const auto m = decode::StageMap::fromSource("kernels/src/ws.cu", src);
        QCOMPARE(int(m.stageCount()), 5);  // WaitSlot, IssueLoad, WaitSlot (loop end), WaitData, Sync
        QCOMPARE(*m.stageAt(1), IntervalKind::WaitSlot);  // loop header: the first stage of its body
        QCOMPARE(*m.stageAt(3), IntervalKind::WaitSlot);
        QCOMPARE(*m.stageAt(5), IntervalKind::WaitSlot);
        QCOMPARE(*m.stageAt(8), IntervalKind::IssueLoad);
        QCOMPARE(*m.stageAt(11), IntervalKind::IssueLoad);  // an `if constexpr (Traced)` block is transparent
        QCOMPARE(*m.stageAt(12), IntervalKind::IssueLoad);
        QCOMPARE(*m.stageAt(13), IntervalKind::WaitSlot);
        QCOMPARE(*m.stageAt(15), IntervalKind::WaitData);
        QCOMPARE(*m.stageAt(17), IntervalKind::Sync);
    }

    void splitFormTakesTheNowAboveIt()
    {
        // A variable reused for the next phase: eventAt(t, ...) belongs to the latest now() of `t` at or
        // above it, never to a later one.
        const char* src =
            "if constexpr (Traced) wt.event(tk::WaitData, kt, slot);\n"  // 1
            "if constexpr (Traced) t = wt.now();\n"                      // 2
            "wgmma(acc, sa, sb);\n"                                      // 3
            "if constexpr (Traced) wt.eventAt(t, tk::MmaIssue, kt);\n"   // 4
            "mbarWait(&full[slot], phase);\n"                            // 5
            "if constexpr (Traced) t = wt.now();\n"                      // 6
            "wgmmaWait();\n"                                             // 7
            "if constexpr (Traced) wt.eventAt(t, tk::MmaWait, kt);\n";   // 8
        const auto m = decode::StageMap::fromSource("kernels/src/reuse.cu", src);
        QCOMPARE(*m.stageAt(1), IntervalKind::WaitData);
        QCOMPARE(*m.stageAt(3), IntervalKind::MmaIssue);  // from the now() at line 2, not the one at 6
        QCOMPARE(*m.stageAt(5), IntervalKind::MmaIssue);
        QCOMPARE(*m.stageAt(7), IntervalKind::MmaWait);
    }

    void tracedBlockWithAnEventIsTransparent()
    {
        // A stage that starts inside an `if constexpr (Traced) { ... }` block goes on after its brace: the
        // block only guards the trace call. A plain block's stage ends at its brace.
        const char* src =
            "if constexpr (Traced) wt.event(tk::WaitData, kt, slot);\n"  // 1
            "mbarWait(&full[slot], phase);\n"                            // 2
            "if constexpr (Traced) {\n"                                  // 3
            "    wt.event(tk::MmaIssue, kt, slot);\n"                    // 4
            "}\n"                                                        // 5
            "wgmma(acc, sa, sb);\n"                                      // 6
            "if (last) {\n"                                              // 7
            "    if constexpr (Traced) wt.event(tk::Store);\n"           // 8
            "    storeC();\n"                                            // 9
            "}\n"                                                        // 10
            "wgmma(acc, sa, sb);\n";                                     // 11
        const auto m = decode::StageMap::fromSource("kernels/src/block.cu", src);
        QCOMPARE(*m.stageAt(2), IntervalKind::WaitData);
        QCOMPARE(*m.stageAt(5), IntervalKind::MmaIssue);
        QCOMPARE(*m.stageAt(6), IntervalKind::MmaIssue);
        QCOMPARE(*m.stageAt(9), IntervalKind::Store);
        QCOMPARE(*m.stageAt(11), IntervalKind::MmaIssue);
    }

    void loopHeadersTakeTheirBodysFirstStage()
    {
        // The ladder's pingpong consumer: the main loop follows the ordering wait. By text order its
        // header and first lines would be "WaitOrder"; they run at every k-step boundary.
        const char* src =
            "if (tid == 0) {\n"                                                       // 1
            "    for (int s = 0; s < S; ++s) {  // no event in this body\n"          // 2
            "        mbarInit(&full[s], 1);\n"                                      // 3
            "    }\n"                                                               // 4
            "}\n"                                                                   // 5
            "for (int i = 0; i < n; ++i) {\n"                                       // 6
            "    coords(i, tm, tn);\n"                                              // 7
            "    if (cw == 1) {\n"                                                  // 8
            "        if constexpr (Traced) wt.event(tk::WaitOrder, fill);\n"        // 9
            "        namedBarSync(1, 256);\n"                                       // 10
            "    }\n"                                                               // 11
            "    float acc[64];\n"                                                  // 12
            "    for (int kt = 0; kt < KT; ++kt, ++fill)\n"                         // 13
            "    {\n"                                                               // 14
            "        const int slot = fill % S;\n"                                  // 15
            "        if constexpr (Traced) wt.event(tk::WaitData, fill, slot);\n"   // 16
            "        mbarWait(&full[slot], phase);\n"                               // 17
            "    }\n"                                                               // 18
            "    while (spin) poll();\n"                                             // 19
            "    if constexpr (Traced) wt.event(tk::Store);\n"                      // 20
            "}\n";                                                                  // 21
        const auto m = decode::StageMap::fromSource("kernels/src/pp.cu", src);
        QCOMPARE(*m.stageAt(2), IntervalKind::Setup);      // its body has no event: unchanged
        QCOMPARE(*m.stageAt(6), IntervalKind::WaitOrder);  // outer loop: first event of its body
        QCOMPARE(*m.stageAt(7), IntervalKind::WaitOrder);
        QCOMPARE(*m.stageAt(10), IntervalKind::WaitOrder);
        QCOMPARE(*m.stageAt(11), IntervalKind::WaitOrder);  // the block opened under the outer loop's stage,
        QCOMPARE(*m.stageAt(12), IntervalKind::WaitOrder);  // which is WaitOrder too: nothing changes at its end
        QCOMPARE(*m.stageAt(13), IntervalKind::WaitData);   // inner loop header (brace on the next line)
        QCOMPARE(*m.stageAt(15), IntervalKind::WaitData);
        QCOMPARE(*m.stageAt(17), IntervalKind::WaitData);
        QCOMPARE(*m.stageAt(19), IntervalKind::WaitData);   // braceless loop without an event: unchanged
        QCOMPARE(*m.stageAt(20), IntervalKind::Store);
    }

    void matchesCuptiFileNames()
    {
        const auto m = decode::StageMap::fromSource("kernels/src/mini.cu", kSource);
        QVERIFY(m.matchesFile("/work/main/kernels/src/mini.cu"));
        QVERIFY(m.matchesFile("kernels/src/mini.cu"));
        QVERIFY(m.matchesFile("mini.cu"));
        QVERIFY(!m.matchesFile("/work/main/kernels/src/hopper.cuh"));
        QVERIFY(!m.matchesFile("/x/notmini.cu"));
        QVERIFY(!m.matchesFile("/other/mini.cu"));  // a different file with the same name
        QVERIFY(!m.matchesFile("/work/mykernels/src/mini.cu"));  // a suffix, but not at a folder boundary
        QVERIFY(!m.matchesFile(""));
    }

    void kindIdentifiers()
    {
        QCOMPARE(*decode::intervalKindFromIdentifier("WaitOrder"), IntervalKind::WaitOrder);
        QCOMPARE(*decode::intervalKindFromIdentifier("Load"), IntervalKind::Load);
        QVERIFY(!decode::intervalKindFromIdentifier("kEventEnd").has_value());
    }

    void rolesFromTracedRecord()
    {
        KernelRecord r;
        r.warps.resize(3);
        r.warps[0].role = WarpRole::Producer;
        r.warps[1].role = WarpRole::Consumer;
        r.warps[2].role = WarpRole::Consumer;
        for (int w = 0; w < 3; ++w) r.warps[std::size_t(w)].id = w;
        auto add = [&](RowId w, IntervalKind k) {
            Interval iv;
            iv.warpId = w;
            iv.kind = k;
            r.intervals.push_back(iv);
        };
        add(0, IntervalKind::IssueLoad);
        add(0, IntervalKind::WaitSlot);
        add(0, IntervalKind::Setup);
        add(1, IntervalKind::Setup);
        add(2, IntervalKind::Setup);
        add(1, IntervalKind::WaitData);
        add(2, IntervalKind::MmaIssue);
        const auto roles = decode::rolesByKind(r);
        QCOMPARE(int(roles.size()), kIntervalKindCount);
        QCOMPARE(roles[std::size_t(IntervalKind::IssueLoad)], WarpRole::Producer);
        QCOMPARE(roles[std::size_t(IntervalKind::WaitSlot)], WarpRole::Producer);
        QCOMPARE(roles[std::size_t(IntervalKind::Setup)], WarpRole::Consumer);  // majority
        QCOMPARE(roles[std::size_t(IntervalKind::WaitData)], WarpRole::Consumer);
        QCOMPARE(roles[std::size_t(IntervalKind::Store)], WarpRole::Unknown);
    }

    void assignsStagesAndInheritsForInlinedCode()
    {
        const auto m = decode::StageMap::fromSource("kernels/src/mini.cu", kSource);
        std::vector<WarpRole> roles(kIntervalKindCount, WarpRole::Unknown);
        roles[std::size_t(IntervalKind::WaitSlot)] = WarpRole::Producer;
        roles[std::size_t(IntervalKind::IssueLoad)] = WarpRole::Producer;
        roles[std::size_t(IntervalKind::WaitData)] = WarpRole::Consumer;
        roles[std::size_t(IntervalKind::MmaIssue)] = WarpRole::Consumer;
        std::vector<StallSample> s = {
            sample(0x300, "/build/tree/kernels/src/hopper.cuh", 80),  // inlined mbarrier wait after line 14
            sample(0x100, "/build/tree/kernels/src/mini.cu", 7),
            sample(0x2f0, "/build/tree/kernels/src/mini.cu", 14),
            sample(0x400, "/build/tree/kernels/src/mini.cu", 16),
            sample(0x050, "/build/tree/kernels/src/hopper.cuh", 12),  // before any rung line: unknown
            sample(0x120, "", 0),                                       // no source: inherits line 7
        };
        decode::assignStages(s, m, roles);
        QCOMPARE(s[0].stage, std::string("wait_data"));
        QCOMPARE(s[0].role, WarpRole::Consumer);
        QCOMPARE(s[1].stage, std::string("wait_slot"));
        QCOMPARE(s[1].role, WarpRole::Producer);
        QCOMPARE(s[2].stage, std::string("wait_data"));
        QCOMPARE(s[3].stage, std::string("mma_issue"));
        QCOMPARE(s[4].stage, std::string(""));
        QCOMPARE(s[4].role, WarpRole::Unknown);
        QCOMPARE(s[5].stage, std::string("wait_slot"));

        // Another function does not inherit across the boundary.
        std::vector<StallSample> t = {sample(0x100, "/x/kernels/src/mini.cu", 9), sample(0x200, "/x/hopper.cuh", 3)};
        t[1].functionName = "_Z5otherv";
        decode::assignStages(t, m, roles);
        QCOMPARE(t[0].stage, std::string("issue_load"));
        QCOMPARE(t[1].stage, std::string(""));
    }

    void helperFunctionsClassifiedByName()
    {
        // A helper header in the style of kernels/src/hopper.cuh.
        const char* helper =
            "#pragma once\n"                                                                          // 1
            "__device__ __forceinline__ bool mbarTryWait(uint64_t* bar, uint32_t parity)\n"          // 2
            "{\n"                                                                                     // 3
            "    asm volatile(\"mbarrier.try_wait...\");\n"                                         // 4
            "}\n"                                                                                     // 5
            "__device__ __forceinline__ void mbarWait(uint64_t* bar, uint32_t parity)\n"             // 6
            "{\n"                                                                                     // 7
            "    while (!mbarTryWait(bar, parity)) {}\n"                                              // 8
            "}\n"                                                                                     // 9
            "// __device__ commented(): not a function\n"                                             // 10
            "__device__ __forceinline__ uint32_t smemAddr(const void* p) { return 0; }\n"            // 11
            "template <int N>\n"                                                                      // 12
            "__device__ __forceinline__ void wgmmaWait()\n"                                          // 13
            "{\n"                                                                                     // 14
            "    asm volatile(\"wgmma.wait_group.sync.aligned %0;\" ::\"n\"(N));\n"               // 15
            "}\n"                                                                                     // 16
            "__device__ __forceinline__ void tmaLoad2d(void* dst, const CUtensorMap* map)\n"         // 17
            "{ }\n"                                                                                   // 18
            "__device__ __forceinline__ void namedBarSync(uint32_t id, uint32_t threads) { }\n"      // 19
            "template <int N>\n"                                                                      // 20
            "__device__ __forceinline__ void storeAccBf16(const float (&d)[N / 2]) { }\n";           // 21
        auto m = decode::StageMap::fromSource("kernels/src/mini.cu", kSource);
        m.addHelperSource("kernels/src/helper.cuh", helper);
        QCOMPARE(int(m.helperFunctionCount()), 7);
        QCOMPARE(m.helperFunctionAt("/abs/kernels/src/helper.cuh", 4), std::string("mbarTryWait"));
        QCOMPARE(m.helperFunctionAt("/abs/kernels/src/helper.cuh", 8), std::string("mbarWait"));
        QCOMPARE(m.helperFunctionAt("/abs/kernels/src/helper.cuh", 10), std::string("mbarWait"));  // comment: still inside
        QCOMPARE(m.helperFunctionAt("/abs/kernels/src/helper.cuh", 15), std::string("wgmmaWait"));
        QCOMPARE(m.helperFunctionAt("/abs/kernels/src/other.cuh", 15), std::string(""));
        using K = IntervalKind;
        QCOMPARE(*m.helperStageAt("helper.cuh", 15, K::Setup, false), K::MmaWait);
        QCOMPARE(*m.helperStageAt("helper.cuh", 4, K::WaitData, false), K::WaitData);
        QCOMPARE(*m.helperStageAt("helper.cuh", 4, K::WaitSlot, false), K::WaitSlot);   // producer's slot wait
        QCOMPARE(*m.helperStageAt("helper.cuh", 8, K::IssueLoad, false), K::WaitSlot);
        QCOMPARE(*m.helperStageAt("helper.cuh", 8, std::nullopt, false), K::WaitData);
        QCOMPARE(*m.helperStageAt("helper.cuh", 17, K::Setup, false), K::IssueLoad);
        QCOMPARE(*m.helperStageAt("helper.cuh", 19, K::Setup, true), K::WaitOrder);
        QCOMPARE(*m.helperStageAt("helper.cuh", 19, K::Setup, false), K::Sync);
        QCOMPARE(*m.helperStageAt("helper.cuh", 21, K::MmaWait, false), K::Store);
        QVERIFY(!m.helperStageAt("helper.cuh", 11, K::MmaIssue, false).has_value());  // address maths: no opinion
        QCOMPARE(*decode::helperStageFromName("wgmma_m64n256k16", std::nullopt, false), K::MmaIssue);
        QCOMPARE(*decode::helperStageFromName("mbarArriveCluster", std::nullopt, false), K::Release);
        QCOMPARE(*decode::helperStageFromName("clusterSync", std::nullopt, false), K::Sync);
        // the shared pieces (kernels/src/common/ring.cuh, mma.cuh): named after the stage they open
        QCOMPARE(*decode::helperStageFromName("waitSlot", K::MmaIssue, false), K::WaitSlot);
        QCOMPARE(*decode::helperStageFromName("issueLoad", K::WaitSlot, false), K::IssueLoad);
        QCOMPARE(*decode::helperStageFromName("waitData", K::IssueLoad, false), K::WaitData);
        QCOMPARE(*decode::helperStageFromName("mmaIssue", K::WaitData, false), K::MmaIssue);
        QCOMPARE(*decode::helperStageFromName("mmaWait", K::MmaIssue, false), K::MmaWait);
        QCOMPARE(*decode::helperStageFromName("release", K::MmaWait, false), K::Release);
        QCOMPARE(*decode::helperStageFromName("storeAccTmaF16", K::MmaWait, false), K::Store);
        // kernels/src/common/epilogue_warp.cuh
        QCOMPARE(*decode::helperStageFromName("waitDataHalf", K::Load, false), K::WaitData);
        QCOMPARE(*decode::helperStageFromName("storeHalf", K::WaitData, false), K::Store);
        QCOMPARE(*decode::helperStageFromName("waitOrderFlag", K::Store, false), K::WaitOrder);
        QCOMPARE(*decode::helperStageFromName("waitOrderStaged", K::MmaWait, false), K::WaitOrder);
        QCOMPARE(*decode::helperStageFromName("loadStaging", K::WaitOrder, false), K::Load);
        QCOMPARE(*decode::helperStageFromName("epilogueAdd", K::WaitOrder, false), K::Epilogue);
        QCOMPARE(*decode::helperStageFromName("epilogueHandOff", K::WaitOrder, false), K::Epilogue);
        QCOMPARE(*decode::helperStageFromName("epilogueAddU", K::WaitData, false), K::Epilogue);
        QVERIFY(!decode::helperStageFromName("half", K::Epilogue, false).has_value());  // address maths: no opinion
        QVERIFY(!decode::helperStageFromName("flagRelease", std::nullopt, false).has_value() ||
                *decode::helperStageFromName("flagRelease", std::nullopt, false) != K::Release);  // not the ring's
        QVERIFY(!decode::helperStageFromName("slot", K::WaitData, false).has_value());  // slot maths: no opinion

        // In assignStages: a helper's own stage wins over the context; no-opinion helpers inherit it.
        std::vector<WarpRole> roles(kIntervalKindCount, WarpRole::Consumer);
        roles[std::size_t(K::WaitSlot)] = WarpRole::Producer;
        roles[std::size_t(K::IssueLoad)] = WarpRole::Producer;
        std::vector<StallSample> s = {
            sample(0x100, "/b/kernels/src/mini.cu", 7),          // wait_slot (rung line)
            sample(0x110, "/b/kernels/src/helper.cuh", 4),       // mbarTryWait after a slot wait -> wait_slot
            sample(0x200, "/b/kernels/src/mini.cu", 16),         // mma_issue
            sample(0x210, "/b/kernels/src/helper.cuh", 15),      // wgmmaWait -> mma_wait
            sample(0x220, "/b/kernels/src/helper.cuh", 11),      // smemAddr -> inherits mma_issue
            sample(0x230, "/b/kernels/src/helper.cuh", 4),       // mbarTryWait after consumer code -> wait_data
        };
        decode::assignStages(s, m, roles, false);
        QCOMPARE(s[1].stage, std::string("wait_slot"));
        QCOMPARE(s[1].role, WarpRole::Producer);
        QCOMPARE(s[3].stage, std::string("mma_wait"));
        QCOMPARE(s[4].stage, std::string("mma_issue"));
        QCOMPARE(s[5].stage, std::string("wait_data"));
        QCOMPARE(s[5].role, WarpRole::Consumer);
    }

    // A kernel body shared by rungs (kernels/src/pingpong_body.cuh) records stages itself: it is mapped line by
    // line like the rung's file, and the shared Ring's methods (ring.waitSlot( ...) open their stage.
    void bodyHelperMappedLineByLine()
    {
        using K = IntervalKind;
        const char* rung =
            "struct Fixup {\n"                                            // 1
            "    bool operator()() {\n"                                   // 2
            "        wt.event(tk::WaitPartial, fill);\n"                  // 3
            "        while (flagAcquire(f) != epoch) {}\n"                // 4
            "        wt.event(tk::Fixup, fill);\n"                        // 5
            "        acc += partial;\n"                                   // 6
            "    }\n"                                                     // 7
            "};\n"                                                        // 8
            "__global__ void k() { body<Traced>(walk, fixup); }\n";       // 9
        const char* body =
            "template <bool Traced, class Walk, class Epi>\n"                       // 1
            "__device__ __forceinline__ void body(Walk walk, Epi& epi)\n"           // 2
            "{\n"                                                                   // 3
            "    if (producer) {\n"                                                 // 4
            "        for (int kt = u.kb; kt < u.ke; ++kt, ++fill) {\n"              // 5
            "            const uint64_t tWait = ring.waitSlot(fill, wt);\n"         // 6
            "            ring.issueLoad(fill, tWait, kStage, tid == 0, wt, loads);\n"  // 7
            "        }\n"                                                           // 8
            "    } else {\n"                                                        // 9
            "        for (int kt = 0; kt < KU; ++kt, ++fill) {\n"                   // 10
            "            ring.waitData(fill, wt);\n"                                // 11
            "            if constexpr (Traced) wt.event(tk::MmaIssue, fill, s);\n"  // 12
            "            mmaKStep(acc, a, b);\n"                                    // 13
            "            ring.release(fill - 1, lane0, wt);\n"                      // 14
            "        }\n"                                                           // 15
            "        if (epi(acc, u, cw, t, fill, wt)) {\n"                         // 16
            "            if constexpr (Traced) wt.event(tk::Store);\n"              // 17
            "            storeAccTmaBf16(acc);\n"                                   // 18
            "        }\n"                                                           // 19
            "    }\n"                                                               // 20
            "}\n";                                                                  // 21
        auto m = decode::StageMap::fromSource("kernels/src/rung7.cu", rung);
        QCOMPARE(m.stageAt(4), std::optional<K>(K::WaitPartial));
        QCOMPARE(m.stageAt(6), std::optional<K>(K::Fixup));
        QCOMPARE(m.bodyCount(), std::size_t(0));
        m.addHelperSource("kernels/src/hopper.cuh", "__device__ __forceinline__ void mbarWait(uint64_t* b, int p)\n{\n}\n");
        QCOMPARE(m.bodyCount(), std::size_t(0));  // no stage of its own: a helper by name only
        m.addHelperSource("kernels/src/body.cuh", body);
        QCOMPARE(m.bodyCount(), std::size_t(1));
        std::optional<K> st;
        QVERIFY(!m.lineStage("/b/kernels/src/other.cuh", 6, st));
        QVERIFY(m.lineStage("/b/kernels/src/body.cuh", 6, st));
        QCOMPARE(st, std::optional<K>(K::WaitSlot));
        QVERIFY(m.lineStage("/b/kernels/src/body.cuh", 7, st));
        QCOMPARE(st, std::optional<K>(K::IssueLoad));
        QVERIFY(m.lineStage("/b/kernels/src/body.cuh", 11, st));
        QCOMPARE(st, std::optional<K>(K::WaitData));
        QVERIFY(m.lineStage("/b/kernels/src/body.cuh", 13, st));
        QCOMPARE(st, std::optional<K>(K::MmaIssue));
        QVERIFY(m.lineStage("/b/kernels/src/body.cuh", 14, st));
        QCOMPARE(st, std::optional<K>(K::Release));
        QVERIFY(m.lineStage("/b/kernels/src/body.cuh", 18, st));
        QCOMPARE(st, std::optional<K>(K::Store));
        QVERIFY(m.lineStage("/b/kernels/src/rung7.cu", 4, st));
        QCOMPARE(st, std::optional<K>(K::WaitPartial));

        // In assignStages: body lines are context, so the producer's inlined mbarrier wait is a slot wait.
        std::vector<WarpRole> roles(kIntervalKindCount, WarpRole::Consumer);
        roles[std::size_t(K::WaitSlot)] = WarpRole::Producer;
        roles[std::size_t(K::IssueLoad)] = WarpRole::Producer;
        std::vector<StallSample> s = {
            sample(0x100, "/b/kernels/src/body.cuh", 6),     // wait_slot (body line)
            sample(0x110, "/b/kernels/src/hopper.cuh", 2),   // mbarWait after producer code -> wait_slot
            sample(0x200, "/b/kernels/src/body.cuh", 11),    // wait_data
            sample(0x210, "/b/kernels/src/hopper.cuh", 2),   // mbarWait after consumer code -> wait_data
            sample(0x300, "/b/kernels/src/rung7.cu", 4),     // the hook's flag spin -> wait_partial
            sample(0x310, "/b/kernels/src/rung7.cu", 6),     // the add -> fixup
        };
        decode::assignStages(s, m, roles, true);
        QCOMPARE(s[0].stage, std::string("wait_slot"));
        QCOMPARE(s[1].stage, std::string("wait_slot"));
        QCOMPARE(s[1].role, WarpRole::Producer);
        QCOMPARE(s[2].stage, std::string("wait_data"));
        QCOMPARE(s[3].stage, std::string("wait_data"));
        QCOMPARE(s[4].stage, std::string("wait_partial"));
        QCOMPARE(s[5].stage, std::string("fixup"));
        QCOMPARE(*decode::helperStageFromName("waitPartialFlag", std::nullopt, false), K::WaitPartial);  // streamk_flags.cuh
        QCOMPARE(*decode::helperStageFromName("fixupPublishFlag", std::nullopt, false), K::Fixup);
    }

    // Rungs 2-5 call the shared MMA step (kernels/src/common/mma.cuh) as free functions: a call to mmaIssue...
    // or mmaWait opens that phase on its line (the k-step loop of rung 4 as it reads now); a definition does not.
    void pieceFunctionCallsOpenTheirStage()
    {
        using K = IntervalKind;
        const char* rung =
            "        for (int kt = 0; kt < KT; ++kt) {\n"                                                 // 1
            "            const int slot = WsRing::slot(kt);\n"                                            // 2
            "            ring.waitData(kt, wt);\n"                                                        // 3
            "            const uint32_t st = smemAddr(smem.stage(slot));\n"                               // 4
            "            mmaIssueBf16<1, BN>(acc, st + cw * 64 * 128, st + kBytesA, kt == 0, kt, slot, wt);\n"  // 5
            "            if (kt > 0) {\n"                                                                 // 6
            "                mmaWait<1>(kt - 1, WsRing::slot(kt - 1), wt);  // kt stays in flight\n"      // 7
            "                ring.release(kt - 1, laneId() == 0, wt);\n"                                  // 8
            "            }\n"                                                                             // 9
            "        }\n"                                                                                 // 10
            "        mmaWait<0>(KT - 1, WsRing::slot(KT - 1), wt);\n"                                     // 11
            "        fenceAcc(acc[0]);\n"                                                                 // 12
            "        x.mmaIssueLater(1);\n"                                                               // 13: a member
            "__device__ __forceinline__ void mmaWait(int fill, int slot, Tr& tr)\n"                       // 14: a definition
            "        storeAcc(acc);\n";                                                                   // 15
        const auto m = decode::StageMap::fromSource("kernels/src/warp_specialized.cu", rung);
        QCOMPARE(m.stageAt(1), std::optional<K>(K::WaitData));  // the loop header takes its body's first stage
        QCOMPARE(m.stageAt(3), std::optional<K>(K::WaitData));
        QCOMPARE(m.stageAt(4), std::optional<K>(K::WaitData));
        QCOMPARE(m.stageAt(5), std::optional<K>(K::MmaIssue));
        QCOMPARE(m.stageAt(6), std::optional<K>(K::MmaIssue));
        QCOMPARE(m.stageAt(7), std::optional<K>(K::MmaWait));
        QCOMPARE(m.stageAt(8), std::optional<K>(K::Release));
        QCOMPARE(m.stageAt(11), std::optional<K>(K::MmaWait));
        QCOMPARE(m.stageAt(12), std::optional<K>(K::MmaWait));
        QCOMPARE(m.stageAt(13), std::optional<K>(K::MmaWait));  // neither a member call ...
        QCOMPARE(m.stageAt(15), std::optional<K>(K::MmaWait));  // ... nor a definition opens a stage
    }

    void singleRoleRungFillsUnknownKinds()
    {
        KernelRecord r;
        r.warps.resize(2);
        r.warps[0].role = WarpRole::Worker;
        r.warps[1].role = WarpRole::Idle;
        for (int w = 0; w < 2; ++w) r.warps[std::size_t(w)].id = w;
        Interval iv;
        iv.warpId = 0;
        iv.kind = IntervalKind::Load;
        r.intervals.push_back(iv);
        iv.warpId = 1;
        iv.kind = IntervalKind::Setup;
        r.intervals.push_back(iv);
        const auto roles = decode::rolesByKind(r);
        QCOMPARE(roles[std::size_t(IntervalKind::Load)], WarpRole::Worker);
        QCOMPARE(roles[std::size_t(IntervalKind::Setup)], WarpRole::Idle);      // measured stays measured
        QCOMPARE(roles[std::size_t(IntervalKind::Store)], WarpRole::Worker);    // never seen: the only working role
    }

    void stallReasonNames()
    {
        QVERIFY(decode::keepStallReason("smsp__pcsamp_warps_issue_stalled_long_scoreboard"));
        QVERIFY(!decode::keepStallReason("smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued"));
        QVERIFY(!decode::keepStallReason("smsp__pcsamp_sample_count"));
        QVERIFY(!decode::keepStallReason("smsp__pcsamp_samples_data_dropped"));
        QCOMPARE(decode::stallReasonLabel("smsp__pcsamp_warps_issue_stalled_long_scoreboard"),
                 std::string("long scoreboard: waiting on global/local memory data"));
        QCOMPARE(decode::stallReasonLabel("smsp__pcsamp_warps_issue_stalled_barrier_not_issued"),
                 std::string("barrier: waiting at a CTA barrier (__syncthreads / bar.sync) (not issued)"));
        QCOMPARE(decode::stallReasonLabel("smsp__pcsamp_warps_issue_stalled_some_new_reason"), std::string("some new reason"));
        // Every reason the H200 reported (docs/device-log.md) gets a non-empty label.
        for (const char* r : {"warpgroup_arrive", "wait", "tex_throttle", "sleeping", "short_scoreboard", "imc_miss",
                              "lg_throttle", "drain", "dispatch_stall", "membar", "branch_resolving", "barrier", "misc",
                              "no_instructions", "math_pipe_throttle", "mio_throttle", "not_selected", "selected"}) {
            const std::string n = std::string("smsp__pcsamp_warps_issue_stalled_") + r;
            QVERIFY(!decode::stallReasonLabel(n).empty());
            QVERIFY2(decode::stallReasonLabel(n) != std::string(r), n.c_str());
        }
    }

    void roleDisplayNames()
    {
        QCOMPARE(decode::roleDisplayName(WarpRole::Consumer, 2, 1), std::string("consumer WG1"));
        QCOMPARE(decode::roleDisplayName(WarpRole::Worker, 1, 0), std::string("worker WG1"));
        QCOMPARE(decode::roleDisplayName(WarpRole::Producer, 0, 0), std::string("producer"));
        QCOMPARE(decode::roleDisplayName(WarpRole::Idle, 0, 0), std::string("idle"));
        QCOMPARE(decode::roleDisplayName(WarpRole::Epilogue, 0, 0), std::string("epilogue"));
        QCOMPARE(decode::roleDisplayName(WarpRole::Unknown, 0, 0), std::string("unknown"));
    }
};

QTEST_GUILESS_MAIN(TestStageMap)
#include "tst_stagemap.moc"
