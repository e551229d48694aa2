// Internal to kernels/src: the launchers of the rungs (six + rung 7, streamk), called by ladder.cu.
#pragma once

#include <cuda_runtime.h>

#include "streamk_schedule.h"  // sk::SplitMode

namespace ws::kern {

struct LaunchArgs {
    int m = 0, n = 0, k = 0;
    const void* a = nullptr;
    const void* b = nullptr;
    void* c = nullptr;
    cudaStream_t stream = nullptr;
    void* trace = nullptr;  // null: untraced instantiation
    bool instrumented = false;  // pingpong: the traced instantiation even with a null trace (not recording)
    int gridCtas = 0;       // persistent rungs: CTAs to launch (ladder.cu computes it)
};

// Each returns cudaSuccess or the launch error; the host-side tensor-map encoding
// failures come back as cudaErrorInvalidValue with `err` filled.
cudaError_t launchSync(const LaunchArgs& a, const char** err);
cudaError_t launchTmaSync(const LaunchArgs& a, const char** err);
cudaError_t launchMultistage(const LaunchArgs& a, const char** err);
cudaError_t launchWarpSpecialized(const LaunchArgs& a, const char** err);
cudaError_t launchCooperative(const LaunchArgs& a, const char** err);
cudaError_t launchPingpong(const LaunchArgs& a, const char** err);
cudaError_t launchStreamk(const LaunchArgs& a, const char** err);  // rung 7 (opt-in)
// Rung 7's tile configuration for a shape (an index into streamk_schedule.h's kTiles): sk::chooseTile, or the
// environment's WARPSTAGE_STREAMK_TILE (experiments, tests of every configuration). ctas: the grid.
int streamkTile(int m, int n, int k, int ctas);
// How rung 7 is asked to split a lone wave along K (streamk_schedule.h: SplitMode; WARPSTAGE_STREAMK_SPLIT=
// streamk|splitk|cluster|global|dp forces one; else Auto).
sk::SplitMode streamkSplitMode();
// The mode the launch of this shape plans with (sk::chooseLaunch / chooseMode for streamkTile's configuration): the
// plan's last argument wherever the host plans a launch.
sk::SplitMode streamkPlanMode(int m, int n, int k, int ctas);

// Kernel entry of each rung's traced / untraced instantiation (for cudaFuncGetName).
const void* kernelSync(bool traced);
const void* kernelTmaSync(bool traced);
const void* kernelMultistage(bool traced);
const void* kernelWarpSpecialized(bool traced);
const void* kernelCooperative(bool traced);
const void* kernelPingpong(bool traced);
const void* kernelStreamk(bool traced);

// Clusters of the pingpong kernel that fit on the device at once (0 if unknown).
int pingpongMaxClusters();

// Tile geometry shared with ladder.cu (shape checks, grids, trace sizing).
namespace geom {
inline constexpr int kSyncBM = 128, kSyncBN = 128, kSyncBK = 32, kSyncThreads = 256;
inline constexpr int kTmaSyncBM = 128, kTmaSyncBN = 128, kTmaSyncThreads = 128;
inline constexpr int kMsBM = 128, kMsBN = 256, kMsStages = 4, kMsThreads = 256;
inline constexpr int kWsBM = 128, kWsBN = 256, kWsStages = 4, kWsThreads = 384;
inline constexpr int kCoopBM = 128, kCoopBN = 256, kCoopStages = 4, kCoopThreads = 384;
inline constexpr int kPpBM = 128, kPpBN = 256, kPpStages = 4, kPpThreads = 384;
#ifndef WS_PP_CLUSTER
#define WS_PP_CLUSTER 2
#endif
#ifndef WS_PP_SKEW
#define WS_PP_SKEW 2
#endif
inline constexpr int kPpCluster = WS_PP_CLUSTER;  // CTAs per cluster (along M, sharing B by multicast)
inline constexpr int kPpSkew = WS_PP_SKEW;        // k-steps consumer warpgroup 1 runs behind warpgroup 0
inline constexpr int kBK = 64;          // k-step depth of the TMA rungs (64 bf16 = 128 B rows)
inline constexpr int kGroupM = 16;      // tile-rows per group in the persistent tile order
}  // namespace geom

}  // namespace ws::kern
