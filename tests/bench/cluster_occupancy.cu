// cluster_occupancy: how many thread-block clusters of s CTAs (s = 1..8) are co-resident on this GPU for a kernel of
// rung 7's shape -- 384 threads, one CTA per SM -- with the given dynamic shared memory per CTA
// (cudaOccupancyMaxActiveClusters). A cluster plan with more clusters than that runs some of them as a second wave.
// Session 14 (s14-gemmsmall): on the H200 at 214,144 B (every streamk configuration but kTiles[6]) 66 clusters of two,
// 39 of three, 30 of four, 17 of six, 15 of eight -- why session 11's plans of 32 clusters of four lost.
// Usage: cluster_occupancy BYTES [BYTES...]   (e.g. 214144 226432: rung 7 untraced and traced)
// Prints one line per BYTES: "CLUSTEROCC smem=B sms=N: s=1:n(c CTAs) ..."; exit 0, 1 on a CUDA error, 2 on bad arguments.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace {
__global__ void __launch_bounds__(384, 1) probe(int* p)
{
    extern __shared__ int s[];
    if (p) p[threadIdx.x] = s[threadIdx.x];
}
}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: cluster_occupancy BYTES [BYTES...] (dynamic shared memory per CTA)\n");
        return 2;
    }
    for (int a = 1; a < argc; ++a) {  // every argument checked before the device is asked
        char* end = nullptr;
        const long smem = std::strtol(argv[a], &end, 10);
        if (end == argv[a] || *end || smem < 0 || smem > 1 << 20) {
            std::fprintf(stderr, "cluster_occupancy: '%s' is not a byte count (0..1048576)\n", argv[a]);
            return 2;
        }
    }
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)
                                                  != cudaSuccess) {
        std::fprintf(stderr, "cluster_occupancy: no CUDA device\n");
        return 1;
    }
    for (int a = 1; a < argc; ++a) {
        const long smem = std::strtol(argv[a], nullptr, 10);
        cudaError_t e = cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
        if (e == cudaSuccess) e = cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
        if (e != cudaSuccess) {
            std::fprintf(stderr, "cluster_occupancy: %ld B of shared memory per CTA: %s\n", smem, cudaGetErrorString(e));
            return 1;
        }
        std::printf("CLUSTEROCC smem=%ld sms=%d:", smem, sms);
        for (int s = 1; s <= 8; ++s) {
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(unsigned((sms / s) * s));
            cfg.blockDim = dim3(384);
            cfg.dynamicSmemBytes = size_t(smem);
            cudaLaunchAttribute attr[1];
            attr[0].id = cudaLaunchAttributeClusterDimension;
            attr[0].val.clusterDim.x = unsigned(s);
            attr[0].val.clusterDim.y = 1;
            attr[0].val.clusterDim.z = 1;
            cfg.attrs = attr;
            cfg.numAttrs = 1;
            int n = -1;
            e = cudaOccupancyMaxActiveClusters(&n, probe, &cfg);
            if (e != cudaSuccess) std::printf(" s=%d:%s", s, cudaGetErrorName(e));
            else std::printf(" s=%d:%d(%d CTAs)", s, n, n * s);
        }
        std::printf("\n");
    }
    return 0;
}
