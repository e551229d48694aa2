// Deterministic synthetic traces for tests, benchmarks and the viewer before
// real recordings exist. The result says so: RunInfo::synthetic = true and
// RunInfo::notes starts with "SYNTHETIC".
//
// Same parameters (seed included) -> byte-identical RunRecord.
#pragma once

#include "warpstage/model.h"

#include <cstdint>
#include <string>
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

namespace ws {

// A synthetic program run at program level (no per-warp data), shaped like a PyTorch training loop:
// `steps` steps, each an NVTX range "step N" (domain "" on the main thread) holding nested
// "forward" / "backward" / "optimizer" ranges, with about launchesPerStep launches of ~20 kernel names
// (cuBLAS GEMMs, elementwise, reductions, softmax, NCCL-free) spread over `streams` streams, a host-to-
// device copy at the start of each step, a device-to-host copy and a memset at its end, and one CUDA API
// span per launch on the launching thread. RunInfo: kind Program, synthetic, notes "SYNTHETIC ...".
// Every launch whose name matches `tracedName` (substring, "" none) is marked traced. Deterministic.
struct SyntheticProgramParams {
    int steps = 10;
    int launchesPerStep = 1000;
    int streams = 2;
    std::uint64_t seed = 1;
    TimeNs start = 1'000'000'000;
    std::string tracedName;
};
ProgramTrace generateSyntheticProgram(const SyntheticProgramParams& params);

class TraceStore;
// Writes generateSyntheticProgram(params) as one program run (kind Program, synthetic, complete, exit 0) into
// a store opened for writing: launches through the fast path (no per-warp data: set no tracedName), copies,
// streams, NVTX ranges and API spans. Returns the run id. Throws StoreError.
RowId writeSyntheticProgram(TraceStore& store, const SyntheticProgramParams& params);

}  // namespace ws
