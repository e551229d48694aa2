// Rung 3 -- the epilogue warp (since session 5): our TMA + wgmma kernel for the candidate GEMM with the broadcast
// add of the user side U[u(b)] (U = W_user . E_user: one cuBLAS launch before it, K padded) fused into its
// epilogue, and that epilogue handed to a warp of its own (kernels/src/common/epilogue_warp.cuh) so that the
// consumer warpgroups go straight on to the next tile. The kernel body is lce_body.cuh's, shared with rung 4
// (user_first.cu = this + the user stage): since s9-lcet the transposed formulation, out[b]^T = E[b]^T . W^T, tiles of
// 128 (N) x 224 (M).
// History (docs/kernel-notes.md): the register epilogue of session 5's first kernel (fused_epilogue.cu, removed in
// session 6) measured 0.52-0.54 ms against 0.45 for the epilogue warp; sessions 5-8's tiles of 128 (M) x 256 (N)
// (epiwarp_kernel.cuh, removed in s9-lcet) 0.43-0.44 ms against 0.39-0.40 for the transposed body.
// Instrumented with the public <warpstage/trace.cuh> as a user's kernel would be:
//   warpstage-record --kernels lceEpilogueWarp -- lce --rung 3 --time
#include <warpstage/trace.cuh>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "lce_body.cuh"

namespace ws::lce {
namespace body {

// V: the configuration (lce_shape.h: kRung3Config).
template <int S, int V>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads, 1)
    lceEpilogueWarp(const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                    const __grid_constant__ CUtensorMap tmU, const __grid_constant__ CUtensorMap tmOut,
                    const int32_t* __restrict__ userOf, const Params p)
{
    body<S, false, V>(tmWc, tmEc, tmWc, tmEc, tmU, tmOut, userOf, nullptr, p);
}
// The same kernel compiled without its trace (s15-lceuntraced): what rung 3 launches unless traceLaunches().
template <int S, int V>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads, 1)
    lceEpilogueWarpUntraced(const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                            const __grid_constant__ CUtensorMap tmU, const __grid_constant__ CUtensorMap tmOut,
                            const int32_t* __restrict__ userOf, const Params p)
{
    body<S, false, V, false>(tmWc, tmEc, tmWc, tmEc, tmU, tmOut, userOf, nullptr, p);
}

namespace {
template <int S, int V, bool Traced>
std::string launch3(Problem& p)
{
    const Shape& s = p.s;
    const auto kern = [] {
        if constexpr (Traced) return lceEpilogueWarp<S, V>;
        else return lceEpilogueWarpUntraced<S, V>;
    }();
    const int smem = int(PlanOf<S, V>::bytes(true, kWarps));
    static_assert(PlanOf<S, V>::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");
    static int maxClusters = 0;
    if (maxClusters == 0) {
        std::string err;
        maxClusters = residentPairs(reinterpret_cast<const void*>(kern), smem, err);
        if (maxClusters <= 0 && err.rfind("cannot get", 0) == 0) return "rung 3 (epilogue warp): " + err;
        if (maxClusters <= 0) {  // (rung 3 waits for no other CTA: any count works)
            int sms = 0;
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
            maxClusters = sms / 2;
        }
    }
    Maps m;
    const std::string err = encodeMaps(p, false, variantOf(V), m);
    if (!err.empty()) return "rung 3 (epilogue warp): " + err;
    const UserFirstWalk w = userFirstWalk(s, maxClusters);  // lce_shape.cpp: tiles and units (rung 3: no user units)
    if (w.units > 2147483647LL) return "rung 3 (epilogue warp): too many tiles for 32-bit unit numbers";
    const Params q = paramsOf(p, false, w);
    const long long clusters = q.units < maxClusters ? q.units : maxClusters;
    kern<<<unsigned(clusters * 2), kThreads, smem, p.stream>>>(m.wCand, m.eCand, m.u, m.out, p.userOf, q);
    p.lastKernel = reinterpret_cast<const void*>(kern);
    p.lastGrid = unsigned(clusters * 2);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string("rung 3 (epilogue warp) launch: ") + cudaGetErrorString(e);
    return {};
}
template <int S, int V>
std::string launch3(Problem& p)
{
    return traceLaunches() ? launch3<S, V, true>(p) : launch3<S, V, false>(p);
}
}  // namespace
}  // namespace body

bool& traceLaunches()
{
    static bool traced = std::getenv("WARPSTAGE_SINK") != nullptr;  // (warpstage-record sets it for the program)
    return traced;
}

bool setRungVariant(int v)
{
    if (v >= 0 && configKind(v) == ConfigKind::None) return false;
    body::variantOverride() = v < 0 ? -1 : v;
    return true;
}

std::string runFusedEpilogueWarp(Problem& p)
{
    const std::string err = userGemm(p, true);
    if (!err.empty()) return err;
    return runCandidateKernel(p);
}

std::string runCandidateKernel(Problem& p)
{
    // (rung 3 has one configuration: LCE_TVAR's others are rung 4's)
    return body::launch3<body::variantOf(kRung3Config).stages, kRung3Config>(p);
}

}  // namespace ws::lce
