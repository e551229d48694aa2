// Rung 4 -- rung 3 + the user stage (since session 5's third pass): rung 3's epilogue-warp kernel (epiwarp_kernel.cuh,
// the same body) with the user GEMM U = W_user . E_user folded in -- ONE persistent launch, no cuBLAS user GEMM.
// The user tiles are the first units of the walk and go through the staging like the candidate tiles: the epilogue
// warp TMA-stores a user tile's half into U, waits until the stores are complete and releases the half's ready flag
// (storeHalfPublish); the epilogue warp of a candidate tile acquires the flag (waitOrderFlag) before it TMA-loads U's
// tile into the staging half -- one tile ahead of its consumers, so the wait hides under their mainloop. Flags hold
// the launch's epoch (nextFlagEpoch: never reset).
// Diagnostics (output wrong, timing only): LCE_RUNG4_EPILOGUE=none (no candidate epilogue, same ring), none4
// (4 ring stages in the staging's room): what the epilogue and the ring depth cost; noload (s8-lcespeed: none without
// any TMA load): what the MMAs and the ring's barriers take alone; tnone / tnone4 (s8-lcespeed: the transposed
// formulation's main loop, transposed_probe.cu, 3 / 4 stages).
// History: session 5's ping-pong rung 4 (persistent.cu: two consumer warpgroups on different 128 x 128 tiles) was
// removed in session 6 (0.559 ms, slower than this kernel; docs/kernel-notes.md).
// Instrumented: warpstage-record --kernels lceUserFirst -- lce --rung 4 --time
#include <warpstage/trace.cuh>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "epiwarp_kernel.cuh"

namespace ws::lce {
namespace epiwarp {

template <int S, bool Epi>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(kThreads, 1)
    lceUserFirst(const __grid_constant__ CUtensorMap tmWu, const __grid_constant__ CUtensorMap tmEu,
                 const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                 const __grid_constant__ CUtensorMap tmU, const __grid_constant__ CUtensorMap tmOut,
                 __half* __restrict__ U, const int32_t* __restrict__ userOf, int* __restrict__ flags, const Params p)
{
    body<S, true, Epi>(tmWu, tmEu, tmWc, tmEc, tmU, tmOut, U, userOf, flags, p);
}
// The noload diagnostic (a kernel of its own, so that the rung's kernel keeps its name lceUserFirst<S, Epi>).
template <int S>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(kThreads, 1)
    lceUserFirstNoLoad(const __grid_constant__ CUtensorMap tmWu, const __grid_constant__ CUtensorMap tmEu,
                       const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                       const __grid_constant__ CUtensorMap tmU, const __grid_constant__ CUtensorMap tmOut,
                       __half* __restrict__ U, const int32_t* __restrict__ userOf, int* __restrict__ flags,
                       const Params p)
{
    body<S, true, false, true>(tmWu, tmEu, tmWc, tmEc, tmU, tmOut, U, userOf, flags, p);
}
template <int S, bool Epi, bool NoLoad>
constexpr auto kernelOf()
{
    if constexpr (NoLoad) return lceUserFirstNoLoad<S>;
    else return lceUserFirst<S, Epi>;
}

namespace {
template <int S, bool Epi, bool NoLoad = false>
std::string launch4(Problem& p)
{
    const Shape& s = p.s;
    const auto kern = kernelOf<S, Epi, NoLoad>();
    const int smem = int(PlanOf<S, Epi>::bytes(true, kWarps));
    static_assert(PlanOf<S, Epi>::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");
    Maps m;
    std::string err = encodeMaps(p, true, m);
    if (!err.empty()) return "rung 4 (user first): " + err;
    const UserFirstWalk walk = userFirstWalk(s, 1);  // lce_shape.cpp: tiles, units, flags (clusters below)
    if (walk.flags > lceFlagCount(s))
        return "rung 4 (user first): the driver allocated too few ready flags for this shape";
    if (walk.units > 2147483647LL) return "rung 4 (user first): too many tiles for 32-bit unit numbers";
    static int maxClusters = 0;
    if (maxClusters == 0) {
        if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
            return "rung 4 (user first): cannot get " + std::to_string(smem) + " bytes of shared memory";
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(CL * 256, 1, 1);
        cfg.blockDim = dim3(kThreads, 1, 1);
        cfg.dynamicSmemBytes = size_t(smem);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess || n <= 0) {
            cudaGetLastError();
            return "rung 4 (user first): cannot tell how many CTA pairs are resident (it needs all of them resident)";
        }
        maxClusters = n;
    }
    const UserFirstWalk w = userFirstWalk(s, maxClusters);
    Params q{};
    q.M = s.m;
    q.N = s.n;
    q.kUser = s.kUser;
    q.kCand = s.kCand;
    q.mTiles = w.mTiles;
    q.mUnits = w.mUnits;
    q.nTiles = w.nTiles;
    q.userUnits = int(w.userUnits);
    q.units = int(w.units);
    q.epoch = nextFlagEpoch();
    const long long clusters = w.clusters;
    kern<<<unsigned(clusters * CL), kThreads, smem, p.stream>>>(m.wUser, m.eUser, m.wCand, m.eCand, m.u, m.out, p.u,
                                                                p.userOf, p.flags, q);
    p.lastKernel = reinterpret_cast<const void*>(kern);
    p.lastGrid = unsigned(clusters * CL);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string("rung 4 (user first) launch: ") + cudaGetErrorString(e);
    return {};
}
}  // namespace
}  // namespace epiwarp

std::string runUserFirst(Problem& p)
{
    static const int diag = [] {  // 0: the rung; 1, 2: the diagnostics without the candidate epilogue
        const char* e = std::getenv("LCE_RUNG4_EPILOGUE");
        const int v = !e                         ? 0
                      : std::strcmp(e, "none") == 0   ? 1
                      : std::strcmp(e, "none4") == 0  ? 2
                      : std::strcmp(e, "noload") == 0 ? 3
                      : std::strcmp(e, "tnone") == 0  ? 4
                      : std::strcmp(e, "tnone4") == 0 ? 5
                                                      : 0;
        if (v) std::fprintf(stderr, "lce: rung 4 variant %s: no candidate epilogue (output wrong, timing only)\n", e);
        return v;
    }();
    static const bool transposed = [] {  // LCE_KERNEL=t: the transposed candidate (transposed_rung3.cu)
        const char* e = std::getenv("LCE_KERNEL");
        return e && std::strcmp(e, "t") == 0;
    }();
    if (transposed && diag == 0) return runTransposedRung4(p);
    if (diag == 1) return epiwarp::launch4<3, false>(p);
    if (diag == 2) return epiwarp::launch4<4, false>(p);
    if (diag == 3) return epiwarp::launch4<3, false, true>(p);
    if (diag == 4 || diag == 5) return runTransposedProbe(p, diag == 5 ? 4 : 3);  // transposed_probe.cu
    return epiwarp::launch4<3, true>(p);
}

}  // namespace ws::lce
