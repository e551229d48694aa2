// Deterministic synthetic traces for tests, benchmarks and the viewer before
// real recordings exist. The result says so: RunInfo::synthetic = true and
// RunInfo::notes starts with "SYNTHETIC".
//
// Same parameters (seed included) -> byte-identical RunRecord.
#pragma once

#include "warpstage/model.h"

#include <cstdint>
#include <string_view>

namespace ws {

enum class SyntheticPattern {
    Sync,             // Worker warps: Load, Sync, Compute(MmaIssue/MmaWait), Sync per k-step; no overlap
    Multistage,       // Worker warps with a cp.async ring: loads of k+stages-1 in flight while computing k
    WarpSpecialized,  // 1 producer warp (+3 idle) and consumer warpgroups; TMA-like loads into a slot ring
    Pingpong,         // warp-specialized, 2 consumer warpgroups alternate tiles (WaitOrder), epilogue overlaps math
};
std::string_view syntheticPatternName(SyntheticPattern p);

struct SyntheticParams {
    SyntheticPattern pattern = SyntheticPattern::WarpSpecialized;
    int smCount = 132;
    int ctas = 132;                  // CTAs (persistent: spread round-robin over SMs)
    int consumerWarpgroups = 2;      // WarpSpecialized/Pingpong: consumer warpgroups; Sync/Multistage: worker warpgroups
    int stages = 4;                  // pipeline slots
    int kstepsPerTile = 64;          // K / BK
    int tilesPerCta = 1;             // output tiles each CTA walks (ignored if targetIntervals > 0)
    std::int64_t targetIntervals = 0;// > 0: choose tilesPerCta so the run holds about this many intervals
    // RunInfo m, n, k are derived from the simulated work: ctas*tilesPerCta tiles of 128x128, K = 64*kstepsPerTile.
    std::uint64_t seed = 1;
    bool stallSamples = true;        // add an untraced launch with stall samples
    TimeNs kernelStart = 1'000'000;  // ns
};

RunRecord generateSynthetic(const SyntheticParams& params);

}  // namespace ws
