// Host side of common/tma.cuh.
#include "tma.cuh"

#include <cstdio>
#include <mutex>

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

namespace ws::kern {

namespace {
PFN_cuTensorMapEncodeTiled_v12000 tiledEncoder()
{
    static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
    static std::once_flag once;
    std::call_once(once, [] {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) == cudaSuccess
            && q == cudaDriverEntryPointSuccess)
            fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
    });
    return fn;
}
}  // namespace

std::string encodeTmaF16(CUtensorMap* map, const void* base, int rank, const uint64_t* dims,
                         const uint64_t* strideBytes, const uint32_t* box, CUtensorMapSwizzle swizzle)
{
    char buf[200];
    if (reinterpret_cast<uintptr_t>(base) % 16 != 0) return "TMA needs a 16-byte aligned base address";
    for (int i = 0; i + 1 < rank; ++i)
        if (strideBytes[i] % 16 != 0) {
            std::snprintf(buf, sizeof buf,
                          "TMA needs row strides that are multiples of 16 bytes; dimension %d has %llu bytes", i + 1,
                          static_cast<unsigned long long>(strideBytes[i]));
            return buf;
        }
    auto fn = tiledEncoder();
    if (!fn) return "cuTensorMapEncodeTiled is not available from the CUDA driver";
    cuuint64_t d[5];
    cuuint64_t s[4];
    cuuint32_t b[5], e[5];
    for (int i = 0; i < rank; ++i) {
        d[i] = dims[i];
        b[i] = box[i];
        e[i] = 1;
        if (i + 1 < rank) s[i] = strideBytes[i];
    }
    const CUresult r = fn(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, cuuint32_t(rank), const_cast<void*>(base), d, s, b, e,
                          CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        std::snprintf(buf, sizeof buf, "cuTensorMapEncodeTiled failed (CUresult %d) for a rank-%d fp16 tensor",
                      int(r), rank);
        return buf;
    }
    return {};
}

}  // namespace ws::kern
