// Kernel families of a trace file: which family a run belongs to (the GEMM ladder, the linear-compression
// family `lce` of issue 11, users' programs), the rung tag that `warpstage-record --rungs lce:...` writes into
// a family rung's notes (useful FLOPs and the bytes model of kernels/lce/lce_shape.cpp, so that nothing is
// re-derived in the viewer), and the roofline of one rung iteration against the H200's limits.
// Qt-free, CUDA-free (docs/recording.md, "The linear-compression family").
#pragma once

#include "warpstage/model.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ws {

// What the recorder knows about a family rung, stored in RunInfo::notes as one bracketed token list:
//   [ws-rung family=lce rung=3 name=fused-epilogue flops=2.005e+11 bytes=9.22e+08 compulsory=6.919e+08
//    warmup=2 iters=5 shape=433x256x1178x866x1024x70 setup=fillUniform,concatRows,padCopy]
struct RungTag {
    std::string family;                    // "lce"
    int rung = -1;                         // 0..4
    std::string rungName;                  // "fused-epilogue"
    double usefulFlops = 0;                // FLOPs of one iteration of the rung (the useful ones)
    double bytesMoved = 0;                 // bytes model of one iteration (lce_shape.cpp: bytesMoved())
    double compulsoryBytes = 0;            // inputs read once, out written once
    int warmup = 0, iterations = 0;        // the driver ran the rung warmup + iterations times
    std::string shape;                     // "MxNxKuxKcxBxPER" (+ "s" when the mapping was shuffled)
    std::vector<std::string> setupKernels; // kernel families of the driver's set-up (not part of the rung)
};
std::string formatRungTag(const RungTag& tag);
// The first "[ws-rung ...]" in `notes`; nullopt if none or malformed.
std::optional<RungTag> parseRungTag(std::string_view notes);

enum class RunFamily { GemmLadder, Lce, Program };
struct RunFamilyInfo {
    RunFamily family = RunFamily::Program;
    int rung = -1;            // the rung within the family (GEMM ladder: -1, its variant names it)
    std::string rungName;
};
// The tag where there is one; else derived from what every file holds: ladder runs are the GEMM ladder; a
// program run of a program named `lce` whose command line has "--rung N" is lce rung N; the rest are programs.
RunFamilyInfo familyOf(const RunInfo& info);
std::string_view familyTitle(RunFamily family);  // "GEMM ladder", "Linear compression (lce)", "Programs"
std::string_view familyKey(RunFamily family);    // "gemm", "lce", "program"

// The times of the rung's iterations in a recorded program run: the launches that are not set-up kernels,
// in start order, split into warmup + iterations equal groups; each group's span (first start to last end).
// Returns the timed ones (warmup dropped); empty if the launches do not split evenly.
std::vector<double> rungIterationNs(const std::vector<KernelLaunch>& launches, const RungTag& tag);
// The same groups as (first start, last end), warmup included; empty if they do not split evenly.
std::vector<std::pair<TimeNs, TimeNs>> rungIterations(const std::vector<KernelLaunch>& launches, const RungTag& tag);
double medianOf(std::vector<double> v);  // NaN if empty

// The H200's limits (dense fp16 tensor cores, HBM3e) and where a rung iteration stands against them.
struct RooflineLimits {
    double flopsPerSecond = 989e12;  // H200 SXM: 989 TFLOP/s dense fp16/bf16 with fp32 accumulation
    double bytesPerSecond = 4.8e12;  // 4.8 TB/s HBM3e
    std::string name = "H200 (989 TFLOP/s dense fp16, 4.8 TB/s HBM3e)";
};
struct RooflinePoint {
    double seconds = 0;
    double tflops = 0;          // achieved: usefulFlops / seconds
    double tbps = 0;            // achieved: bytesMoved / seconds
    double intensity = 0;       // usefulFlops / bytesMoved (FLOP per byte)
    double ridge = 0;           // flopsPerSecond / bytesPerSecond: above it the compute roof is the limit
    bool computeBound = true;   // intensity >= ridge
    double roofTflops = 0;      // attainable at this intensity: min(peak, intensity * bandwidth)
    double fractionOfRoof = 0;  // tflops / roofTflops
    double boundSeconds = 0;    // the time the limit allows: max(flops / peak, bytes / bandwidth)
};
RooflinePoint roofline(double usefulFlops, double bytesMoved, double seconds, const RooflineLimits& limits = {});
// One line: "0.452 ms per iteration (median of 5): 443.6 TFLOP/s, 922 MB moved (2.04 TB/s); intensity 217 FLOP/B,
// ridge 206: compute-bound, 44.9 % of the 989 TFLOP/s roof (limit 0.203 ms)".
std::string rooflineText(const RooflinePoint& p, const RooflineLimits& limits = {}, int iterations = 0);

// Everything the viewer and `warpstage info` say about a tagged family rung: its iterations found in the
// launches, their median, the roofline point, and one line of text. ok = false (and text saying why) when the
// run has no tag or its launches do not split into the tag's iterations.
struct RungReport {
    bool tagged = false, ok = false;
    RungTag tag;
    int launchesPerIteration = 0;
    std::vector<double> iterationNs;
    RooflinePoint point;
    std::string text;  // "lce rung 3 (fused-epilogue), 2 launches per iteration: 0.4520 ms per iteration ..."
};
RungReport rungReport(const RunInfo& run, const std::vector<KernelLaunch>& launches, const RooflineLimits& limits = {});

}  // namespace ws
