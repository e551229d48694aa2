// Kernels for the SASS check's self-test (ctest kernels_sass_selftest): proves that
// check_sass.py can fail. Not part of the ladder; never launched.
//   r_good: tensor cores + TMA; the traced build reads clock64/globaltimer/smid, the untraced one nothing.
//   r_bad:  claims tensor cores + TMA (see sass_selftest_manifest.txt) but has neither; its
//           untraced build reads clock64 and its traced build has no %globaltimer read.
#include <cuda.h>

#include <cstdint>

namespace ws::selftest {

namespace r_good {
template <bool Traced>
__global__ void gemmGood(const __grid_constant__ CUtensorMap tm, unsigned long long* out, float* f)
{
    __shared__ alignas(128) unsigned short smem[64 * 64];
    __shared__ alignas(8) unsigned long long bar;
    const unsigned sb = unsigned(__cvta_generic_to_shared(&bar));
    const unsigned ss = unsigned(__cvta_generic_to_shared(smem));
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(sb));
        asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(sb), "r"(8192));
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(ss),
            "l"(&tm), "r"(0), "r"(0), "r"(sb)
            : "memory");
    }
    unsigned long long stamp = 0;
    if constexpr (Traced) {
        unsigned long long g, c;
        unsigned s;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
        asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
        stamp = g ^ c ^ s;
    }
    float d[4] = {0, 0, 0, 0};
    const unsigned long long desc = ss >> 4;
    asm volatile("wgmma.fence.sync.aligned;");
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0,%1,%2,%3}, %4, %5, p, 1, 1, 0, 0;\n}"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "l"(desc), "l"(desc), "r"(1));
    asm volatile("wgmma.commit_group.sync.aligned;");
    asm volatile("wgmma.wait_group.sync.aligned 0;");
    out[threadIdx.x] = stamp;
    f[threadIdx.x] = d[0] + d[1] + d[2] + d[3];
}
template __global__ void gemmGood<false>(const __grid_constant__ CUtensorMap, unsigned long long*, float*);
template __global__ void gemmGood<true>(const __grid_constant__ CUtensorMap, unsigned long long*, float*);
}  // namespace r_good

namespace r_bad {
template <bool Traced>
__global__ void gemmBad(const float* a, float* c)
{
    float x = a[threadIdx.x] * a[threadIdx.x + 1] + a[threadIdx.x + 2];
    unsigned long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));  // in BOTH builds: trace code leaking into the untraced one
    c[threadIdx.x] = x + float(t & 1);
}
template __global__ void gemmBad<false>(const float*, float*);
template __global__ void gemmBad<true>(const float*, float*);
}  // namespace r_bad

}  // namespace ws::selftest
