// Rung 3 -- the epilogue warp (since session 5): our TMA + wgmma kernel for the candidate GEMM with the broadcast
// add of the user side U[u(b)] (U = W_user . E_user: one cuBLAS launch before it, K padded) fused into its
// epilogue, and that epilogue handed to a warp of its own (kernels/src/common/epilogue_warp.cuh) so that the
// consumer warpgroups go straight on to the next tile. The kernel body is epiwarp_kernel.cuh's, shared with rung 4
// (user_first.cu = this + the user stage).
// History (docs/kernel-notes.md): the register epilogue of session 5's first kernel (fused_epilogue.cu, removed in
// session 6) measured 0.52-0.54 ms against 0.45 for this one; its mainloop alone 0.31 ms.
// Instrumented with the public <warpstage/trace.cuh> as a user's kernel would be:
//   warpstage-record --kernels lceEpilogueWarp -- lce --rung 3 --time
#include <warpstage/trace.cuh>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "epiwarp_kernel.cuh"

namespace ws::lce {
namespace epiwarp {

template <int S>
__global__ void __cluster_dims__(CL, 1, 1) __launch_bounds__(kThreads, 1)
    lceEpilogueWarp(const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                    const __grid_constant__ CUtensorMap tmU, const __grid_constant__ CUtensorMap tmOut,
                    __half* __restrict__ U, const int32_t* __restrict__ userOf, const Params p)
{
    body<S, false, true>(tmWc, tmEc, tmWc, tmEc, tmU, tmOut, U, userOf, nullptr, p);
}

namespace {
template <int S>
std::string launch3(Problem& p)
{
    const Shape& s = p.s;
    const auto kern = lceEpilogueWarp<S>;
    const int smem = int(PlanOf<S, true>::bytes(true, kWarps));
    static_assert(PlanOf<S, true>::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");
    static int maxClusters = 0;
    if (maxClusters == 0) {
        if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess)
            return "rung 3 (epilogue warp): cannot get " + std::to_string(smem) + " bytes of shared memory";
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(CL * 256, 1, 1);
        cfg.blockDim = dim3(kThreads, 1, 1);
        cfg.dynamicSmemBytes = size_t(smem);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, kern, &cfg) != cudaSuccess || n <= 0) {
            cudaGetLastError();
            int sms = 0;
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
            n = sms / CL;
        }
        maxClusters = n;
    }
    Maps m;
    const std::string err = encodeMaps(p, false, m);
    if (!err.empty()) return "rung 3 (epilogue warp): " + err;
    Params q{};
    q.M = s.m;
    q.N = s.n;
    q.kCand = s.kCand;
    q.mTiles = (s.m + BM - 1) / BM;
    q.mUnits = (q.mTiles + CL - 1) / CL;
    q.nTiles = (s.n + BN - 1) / BN;
    const long long units = (long long)q.mUnits * q.nTiles * s.b;
    if (units > 2147483647LL) return "rung 3 (epilogue warp): too many tiles for 32-bit unit numbers";
    q.units = int(units);
    long long clusters = units < maxClusters ? units : maxClusters;
    if (clusters > 1 && clusters % q.mUnits == 0) --clusters;  // consecutive clusters take different M units
    kern<<<unsigned(clusters * CL), kThreads, smem, p.stream>>>(m.wCand, m.eCand, m.u, m.out, p.u, p.userOf, q);
    p.lastKernel = reinterpret_cast<const void*>(kern);
    p.lastGrid = unsigned(clusters * CL);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string("rung 3 (epilogue warp) launch: ") + cudaGetErrorString(e);
    return {};
}
}  // namespace
}  // namespace epiwarp

std::string runFusedEpilogueWarp(Problem& p)
{
    static const bool transposed = [] {  // LCE_KERNEL=t: the transposed candidate (transposed_rung3.cu)
        const char* e = std::getenv("LCE_KERNEL");
        return e && std::strcmp(e, "t") == 0;
    }();
    if (transposed) return runTransposedRung3(p);
    std::string err = userGemm(p, true);
    if (!err.empty()) return err;
    return epiwarp::launch3<3>(p);
}

}  // namespace ws::lce
