// A small synthetic file with runs of every family, for the viewer's lce tests and screenshots (no GPU needed):
// one GEMM ladder run (synthetic), lce rungs 0, 3 and 4 shaped like warpstage-record --rungs lce:... writes them
// (program runs labelled lce_<rung> with a [ws-rung] tag; setup kernels, then warmup + timed iterations; rung 0:
// gatherConcat + a cuBLAS GEMM with a gap per iteration; rung 3: a cuBLAS user GEMM + lceEpilogueWarp; rung 4:
// lceUserFirst alone; rungs 3-4 with the first launch traced per warp), and one user program run.
// Every run is marked synthetic. Throws ws::StoreError.
#pragma once

#include "warpstage/runfamily.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ws::testing {

struct LceFixtureStep {
    std::string name;
    TimeNs ns;
};

inline RunRecord lceFixtureRun(int rung, const char* rungName, const std::vector<LceFixtureStep>& perIteration, TimeNs gapNs,
                               SyntheticPattern tracedPattern, bool traced)
{
    const int warmup = 1, iters = 12;
    RunRecord rr;
    RunInfo& info = rr.info;
    info.kind = RunKind::Program;
    info.synthetic = true;
    info.program = "/opt/warpstage/bin/lce";
    std::string v = rungName;
    for (char& c : v)
        if (c == '-')
            c = '_';
    info.variant = "lce_" + v;
    info.pid = 4100 + rung;
    info.exitCode = 0;
    info.device.name = "NVIDIA H200";
    info.device.computeMajor = 9;
    info.device.smCount = 132;
    info.commandLine = "warpstage-record --rungs lce:all -o lce.wstrace (SYNTHETIC fixture)";
    RungTag tag;
    tag.family = "lce";
    tag.rung = rung;
    tag.rungName = rungName;
    tag.usefulFlops = 200.51e9;
    const double bytes[] = {2999e6, 1376e6, 1376e6, 922e6, 695e6};
    tag.bytesMoved = bytes[rung];
    tag.compulsoryBytes = 691.9e6;
    tag.warmup = warmup;
    tag.iterations = iters;
    tag.shape = "433x256x1178x866x1024x70";
    tag.setupKernels = {"fillUniform", "padCopy"};
    info.notes = formatRungTag(tag) + "; SYNTHETIC: generated for tests, not recorded on a GPU";
    StreamInfo st;
    st.contextId = 1;
    st.streamId = 13;
    rr.streams.push_back(st);

    std::map<std::string, int> launchIndex;
    std::uint32_t corr = 1;
    auto add = [&](const std::string& name, TimeNs start, TimeNs dur) {
        KernelRecord k;
        k.launch.name = name;
        k.launch.start = start;
        k.launch.end = start + dur;
        k.launch.grid[0] = 132;
        k.launch.block[0] = 384;
        k.launch.streamId = 13;
        k.launch.contextId = 1;
        k.launch.correlationId = corr++;
        k.launch.launchIndex = launchIndex[name]++;
        rr.kernels.push_back(std::move(k));
    };
    TimeNs t = 1'000'000;
    MemOp copy;
    copy.kind = MemOpKind::HtoD;
    copy.bytes = 4096;
    copy.start = t;
    copy.end = t + 3'000;
    copy.streamId = 13;
    copy.contextId = 1;
    copy.correlationId = corr++;
    rr.memOps.push_back(copy);
    t += 10'000;
    for (const char* setup : {"void ws::lce::(anonymous namespace)::fillUniform(__half*, unsigned long, unsigned long, unsigned long)",
                              "void ws::lce::(anonymous namespace)::padCopy(__half*, const __half*, unsigned long, unsigned long, unsigned long)"}) {
        add(setup, t, 40'000);
        t += 45'000;
    }
    t += 200'000;
    for (int it = 0; it < warmup + iters; ++it) {
        for (std::size_t s = 0; s < perIteration.size(); ++s) {
            const LceFixtureStep& step = perIteration[s];
            const bool isTraced = traced && it == 0 && s + 1 == perIteration.size();
            if (isTraced) {  // the per-warp timeline of a synthetic kernel, as the first launch of the rung's own kernel
                SyntheticParams p;
                p.pattern = tracedPattern;
                p.ctas = 16;
                p.smCount = 16;
                p.kstepsPerTile = 16;
                p.tilesPerCta = 2;
                p.stallSamples = false;
                p.kernelStart = t;
                RunRecord syn = generateSynthetic(p);
                KernelRecord k = std::move(syn.kernels.front());
                k.launch.name = step.name;
                k.launch.variant.clear();
                k.launch.streamId = 13;
                k.launch.contextId = 1;
                k.launch.correlationId = corr++;
                k.launch.launchIndex = launchIndex[step.name]++;
                k.launch.traced = true;
                t = k.launch.end + 4'000;
                rr.kernels.push_back(std::move(k));
                continue;
            }
            add(step.name, t, step.ns);
            t += step.ns + (s + 1 < perIteration.size() ? gapNs : 0);
        }
        t += 30'000;  // the driver's event record and synchronise between iterations
    }
    info.processStart = 1'000'000;
    info.processEnd = t;
    return rr;
}

inline void writeLceFixture(const std::string& path)
{
    TraceStore store = TraceStore::openForWriting(path);
    {
        SyntheticParams p;  // a GEMM ladder run
        p.pattern = SyntheticPattern::Pingpong;
        p.ctas = 8;
        p.smCount = 8;
        p.kstepsPerTile = 8;
        store.writeRun(generateSynthetic(p));
    }
    const std::string gemm = "sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas";
    store.writeRun(lceFixtureRun(0, "original", {{"void ws::lce::gatherConcat<1>(const __half*, const __half*, const int*, __half*, int, int, int, int)", 700'000},
                                                 {gemm, 1'700'000}},
                                 60'000, SyntheticPattern::Sync, false));
    store.writeRun(lceFixtureRun(3, "fused-epilogue", {{gemm, 30'000}, {"lceEpilogueWarp", 420'000}}, 8'000,
                                 SyntheticPattern::WarpSpecialized, true));
    store.writeRun(lceFixtureRun(4, "persistent", {{"lceUserFirst", 452'000}}, 0, SyntheticPattern::Pingpong, true));
    SyntheticProgramParams pp;  // a user's program
    pp.steps = 2;
    pp.launchesPerStep = 30;
    writeSyntheticProgram(store, pp);
}

}  // namespace ws::testing
