// cublas_probe: what cuBLAS runs for a GEMM shape, as ladder_bench calls it (tests/kernels/ladder_testutil.cu:
// CublasRef::gemm, cublasGemmEx bf16 -> bf16, fp32 compute, 64 MB workspace), session 13 (s13-smallk).
// For each --shape MxNxK: cublasLt's first heuristic for the same problem (algo id, tile, split-K, reduction scheme,
// swizzle, stages, cluster shape: cublasLt.h's enum values, printed as numbers), then ONE cublasGemmEx on random
// inputs (so `ncu --section LaunchStats cublas_probe ...` shows the kernel name, grid, block, cluster, registers and
// shared memory of exactly the launch ladder_bench times; run it under ncu for that).
// Usage: cublas_probe --shape MxNxK [--shape ...]
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                    \
    do {                                                                                         \
        auto e_ = (x);                                                                           \
        if (int(e_) != 0) {                                                                      \
            std::fprintf(stderr, "FAIL %s:%d: %s -> %d\n", __FILE__, __LINE__, #x, int(e_));     \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

__global__ void fillRandom(__nv_bfloat16* p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        unsigned h = unsigned(i) * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        p[i] = __float2bfloat16((float(h & 0xffff) / 65536.f - 0.5f));
    }
}

int main(int argc, char** argv)
{
    std::vector<int> shapes;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], "--shape") == 0) {
            int m, n, k;
            if (std::sscanf(argv[++i], "%dx%dx%d", &m, &n, &k) != 3) return 2;
            shapes.insert(shapes.end(), {m, n, k});
        }
    cublasHandle_t h;
    CK(cublasCreate(&h));
    cublasLtHandle_t lt;
    CK(cublasLtCreate(&lt));
    const size_t wsBytes = size_t(64) << 20;
    void* ws;
    CK(cudaMalloc(&ws, wsBytes));
    CK(cublasSetWorkspace(h, ws, wsBytes));
    for (size_t s = 0; s < shapes.size(); s += 3) {
        const int m = shapes[s], n = shapes[s + 1], k = shapes[s + 2];
        // cublasLt's heuristic for C^T (n x m, col-major) = B^T (n x k) * A^T (k x m): ladder_testutil's call
        cublasLtMatmulDesc_t op;
        CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
        CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
        cublasLtMatrixLayout_t la, lb, lc;
        CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, k, n, k));
        CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, m, k));
        CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, m, n));
        cublasLtMatmulPreference_t pref;
        CK(cublasLtMatmulPreferenceCreate(&pref));
        CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof wsBytes));
        cublasLtMatmulHeuristicResult_t res[3];
        int got = 0;
        CK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 3, res, &got));
        for (int r = 0; r < got; ++r) {
            int v[9] = {};
            const cublasLtMatmulAlgoConfigAttributes_t at[9] = {
                CUBLASLT_ALGO_CONFIG_ID, CUBLASLT_ALGO_CONFIG_TILE_ID, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
                CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID,
                CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION};
            for (int a = 0; a < 9; ++a) {
                size_t w = 0;
                uint32_t x = 0;
                if (cublasLtMatmulAlgoConfigGetAttribute(&res[r].algo, at[a], &x, sizeof x, &w) == CUBLAS_STATUS_SUCCESS)
                    v[a] = int(x);
                else v[a] = -1;
            }
            std::printf("PROBE %dx%dx%d lt#%d algo=%d tile=%d splitk=%d red=%d swz=%d stages=%d cluster=%d inner=%d "
                        "custom=%d waves=%.3f ws=%zu\n",
                        m, n, k, r, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], res[r].wavesCount,
                        res[r].workspaceSize);
        }
        cublasLtMatmulPreferenceDestroy(pref);
        cublasLtMatrixLayoutDestroy(la);
        cublasLtMatrixLayoutDestroy(lb);
        cublasLtMatrixLayoutDestroy(lc);
        cublasLtMatmulDescDestroy(op);
        // one cublasGemmEx, as ladder_bench's (ncu shows its kernel)
        __nv_bfloat16 *A, *B, *C;
        CK(cudaMalloc(&A, size_t(m) * k * 2));
        CK(cudaMalloc(&B, size_t(n) * k * 2));
        CK(cudaMalloc(&C, size_t(m) * n * 2));
        fillRandom<<<1024, 256>>>(A, size_t(m) * k, 1u);
        fillRandom<<<1024, 256>>>(B, size_t(n) * k, 2u);
        CK(cudaGetLastError());
        const float alpha = 1.f, beta = 0.f;
        CK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, B, CUDA_R_16BF, k, A, CUDA_R_16BF, k, &beta, C,
                        CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        CK(cudaDeviceSynchronize());
        std::printf("GEMMEX %dx%dx%d done\n", m, n, k);
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
    }
    std::printf("PROBE end\n");
    return 0;
}
