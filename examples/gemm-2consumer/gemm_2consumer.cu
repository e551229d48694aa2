// gemm_2consumer: a small CUTLASS-style warp-specialized bf16 GEMM for sm_90a, instrumented with
// <warpstage/trace.cuh>.
//
// D = A * B^T: A is M x K, B is N x K (both K-contiguous, bf16), D is M x N (fp32). Each CTA computes 128 x 128
// output tiles (persistent: CTA b takes tiles b, b + grid, ...) with three warpgroups:
//   * warpgroup 0, the producer ("tma"): setmaxnreg down to 40 registers; its first warp streams 128 x 64 blocks of
//     A and B with 2-D TMA loads into a 4-stage shared-memory ring (128-byte swizzle);
//   * warpgroups 1 and 2, the consumers ("mma" 0 and 1): setmaxnreg up to 232; consumer c owns rows 64c..64c+63 of
//     every tile and runs wgmma m64n128k16 on them (both read the stage's whole B block).
// The pipeline is spelled as in CUTLASS: a PipeState (slot index and phase parity) that each role advances, and
// producerAcquire / producerCommit / consumerWait / consumerRelease over two mbarriers per slot ("full": the
// slot's bytes arrived; "empty": all eight consumer warps are done reading it). A consumer keeps one k-step of
// wgmma in flight: it releases the slot of k-step k-1 once wgmma.wait_group 1 says k-step k-1's MMAs are done.
// The epilogue (phase::Epilogue, then our phase "store C") writes the accumulators straight from registers while
// the producer already loads the CTA's next tile.
//
//   gemm_2consumer [--m M] [--n N] [--k K] [--iters I] [--seed S]
//     M, N multiples of 128, K a multiple of 64 (default 2048 each); I timed launches (default 5). The inputs are
//     small multiples of 1/8, so every product and sum is exact in fp32: the result is compared exactly with a
//     simple GPU reference kernel over the whole matrix, and with a CPU reference at 4096 sampled elements.
//     Prints "PASS ..." (exit 0) or "FAIL ..." (exit 1). Exit 2: bad arguments; 3: no usable GPU or a CUDA error.
#include <warpstage/trace.cuh>

#include <cuda.h>          // CUtensorMap (types only: the encoder is fetched from the driver at run time)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

WARPSTAGE_PHASE_NAMES("store C");    // ws::trace::userPhase(0): the epilogue's global stores
WARPSTAGE_ROLE_NAMES("tma", "mma");  // display names: the producer warp, the consumer warps ("mma 0".."mma 7")

namespace {

constexpr int BM = 128, BN = 128, BK = 64;  // CTA tile; BK bf16 = 128 bytes = one 128-byte swizzle row
constexpr int kStages = 4;
constexpr int kThreads = 384;               // 3 warpgroups
constexpr int kConsumerWarps = 8;
constexpr std::uint32_t kBytesA = BM * BK * 2, kBytesB = BN * BK * 2, kStageBytes = kBytesA + kBytesB;
constexpr int kSmemBytes = kStages * kStageBytes + 2 * kStages * 8 + 1024;  // ring + barriers + alignment slack
constexpr int kPhaseStoreC = 0;
constexpr int kRoleTma = 0, kRoleMma = 1;

// ---------------------------------------------------------------- minimal PTX wrappers (sm_90a)
__device__ __forceinline__ std::uint32_t smemAddr(const void* p) { return std::uint32_t(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void mbarInit(std::uint64_t* bar, std::uint32_t arrivals)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smemAddr(bar)), "r"(arrivals) : "memory");
}
__device__ __forceinline__ void mbarWait(std::uint64_t* bar, std::uint32_t parity)
{
    asm volatile(
        "{\n.reg .pred done;\nSPIN_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra SPIN_%=;\n}" ::"r"(smemAddr(bar)), "r"(parity)
        : "memory");
}
__device__ __forceinline__ void mbarArrive(std::uint64_t* bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smemAddr(bar)) : "memory");
}
__device__ __forceinline__ void mbarArriveExpectTx(std::uint64_t* bar, std::uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smemAddr(bar)), "r"(bytes) : "memory");
}
// 2-D TMA load of the box at (x = column, y = row) of `map` into shared `dst`, completing on `bar`.
__device__ __forceinline__ void tmaLoad2d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int x, int y)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::
            "r"(smemAddr(dst)),
        "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smemAddr(bar)), "r"(x), "r"(y)
        : "memory");
}
// wgmma shared-memory descriptor of a K-major tile written by TMA with the 128-byte swizzle: 128-byte rows,
// 8-row groups 1024 bytes apart; the tile starts 1024-byte aligned, and +32 bytes is the next 16 elements of K.
__device__ __forceinline__ std::uint64_t descSw128(std::uint32_t addr)
{
    return std::uint64_t((addr & 0x3FFFF) >> 4) | (std::uint64_t(1) << 16) | (std::uint64_t(1024 >> 4) << 32)
        | (std::uint64_t(1) << 62);
}
__device__ __forceinline__ void wgmmaFence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmmaCommit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmmaWait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
template <int R>
__device__ __forceinline__ void setMaxNRegDec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void setMaxNRegInc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R));
}
// The accumulator is used after the wait: keep the compiler from moving its reads above it.
__device__ __forceinline__ void touch(float (&d)[64])
{
#pragma unroll
    for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// D[64x128] (+)= A[64x16] * B[128x16]^T, bf16 in, f32 accumulate; A and B from shared memory (descriptors).
__device__ __forceinline__ void wgmmaM64N128K16(float (&d)[64], std::uint64_t descA, std::uint64_t descB, int accumulate)
{
    asm volatile(
        "{\n.reg .pred acc;\n"
        "setp.ne.b32 acc, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "
        "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, acc, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
          "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
          "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
          "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(descA), "l"(descB), "r"(accumulate));
}

// ---------------------------------------------------------------- the pipeline, CUTLASS-style
// Where a role is in the ring: slot `index`, and the parity of the barrier phase it waits for next.
struct PipeState {
    int index = 0;
    std::uint32_t phase = 0;
    int count = 0;  // k-steps so far (the trace's k-step numbering)
    __device__ __forceinline__ void advance()
    {
        ++count;
        if (++index == kStages) {
            index = 0;
            phase ^= 1u;
        }
    }
};
struct Pipeline {
    std::uint64_t* full;   // full[s]: 1 arrive (the producer's commit) + the slot's TMA bytes
    std::uint64_t* empty;  // empty[s]: one arrive per consumer warp

    // The producer's state starts at phase 1: on fresh barriers its first round of acquires passes at once.
    static __device__ __forceinline__ PipeState producerStart()
    {
        PipeState s;
        s.phase = 1u;
        return s;
    }
    // Producer: wait until every consumer warp released the slot.
    __device__ __forceinline__ void producerAcquire(const PipeState& s) { mbarWait(&empty[s.index], s.phase); }
    // Producer, one thread: commit the slot (one arrive announcing `bytes`); the TMA loads deliver the bytes.
    __device__ __forceinline__ void producerCommit(const PipeState& s, std::uint32_t bytes)
    {
        mbarArriveExpectTx(&full[s.index], bytes);
    }
    // Consumer: wait until the slot's data has landed.
    __device__ __forceinline__ void consumerWait(const PipeState& s) { mbarWait(&full[s.index], s.phase); }
    // Consumer warp: done reading the slot (lane 0 arrives for the warp).
    __device__ __forceinline__ void consumerRelease(const PipeState& s)
    {
        if ((threadIdx.x & 31u) == 0) mbarArrive(&empty[s.index]);
    }
};

__global__ void __launch_bounds__(kThreads, 1)
    gemm2Consumer(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                  float* __restrict__ D, int M, int N, int K)
{
    extern __shared__ std::uint8_t smemRaw[];
    // 1024-byte alignment for the 128-byte swizzle
    std::uint8_t* smem = smemRaw + ((1024u - (smemAddr(smemRaw) & 1023u)) & 1023u);
    Pipeline pipe{reinterpret_cast<std::uint64_t*>(smem + kStages * kStageBytes),
                  reinterpret_cast<std::uint64_t*>(smem + kStages * kStageBytes) + kStages};
    namespace wt = ws::trace;
    wt::Cta cta;
    cta.pipeline(kStages, kStageBytes);
    const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32, lane = tid & 31;
    const int tilesN = N / BN, tiles = (M / BM) * tilesN, kSteps = K / BK;
    if (tid == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbarInit(&pipe.full[s], 1);
            mbarInit(&pipe.empty[s], kConsumerWarps);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(&tmA)) : "memory");
        asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(&tmB)) : "memory");
    }
    __syncthreads();

    if (wg == 0) {
        // ------------------------------------------------------------ producer warpgroup
        setMaxNRegDec<40>();
        if (warp == 0) {  // warps 1-3 have nothing to do (and declare no role: not drawn)
            wt::Warp<> w(cta, wt::role::Producer, 0, 0, kRoleTma);
            PipeState st = Pipeline::producerStart();
            for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
                const int tm = tile / tilesN, tn = tile % tilesN;
                w.tileBegin(tm, std::int16_t(tn));
                for (int kt = 0; kt < kSteps; ++kt, st.advance()) {
                    if (st.count >= kStages) w.phase(wt::phase::WaitSlot, st.count, std::uint8_t(st.index));
                    pipe.producerAcquire(st);
                    w.loadIssue(st.count, std::uint8_t(st.index));
                    if (lane == 0) {
                        std::uint8_t* a = smem + st.index * kStageBytes;
                        pipe.producerCommit(st, kStageBytes);
                        tmaLoad2d(a, &tmA, &pipe.full[st.index], kt * BK, tm * BM);
                        tmaLoad2d(a + kBytesA, &tmB, &pipe.full[st.index], kt * BK, tn * BN);
                    }
                    __syncwarp();
                }
                w.tileEnd();
            }
            w.phase(wt::phase::Other);  // all loads issued
            w.end();
        }
    } else {
        // ------------------------------------------------------------ consumer warpgroups
        setMaxNRegInc<232>();
        const int c = wg - 1;  // rows 64c.. of each tile
        wt::Warp<> w(cta, wt::role::Consumer, std::uint8_t(wg), std::uint8_t(warp - 4), kRoleMma);
        PipeState st;
        for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            const int tm = tile / tilesN, tn = tile % tilesN;
            w.tileBegin(tm, std::int16_t(tn));
            float acc[64];
            PipeState prev = st;
            for (int kt = 0; kt < kSteps; ++kt) {
                w.phase(wt::phase::WaitData, st.count, std::uint8_t(st.index));
                pipe.consumerWait(st);
                w.loadReady(st.count, std::uint8_t(st.index));
                w.phase(wt::phase::MmaIssue, st.count, std::uint8_t(st.index));
                const std::uint32_t a = smemAddr(smem + st.index * kStageBytes) + c * 64 * 128;
                const std::uint32_t b = smemAddr(smem + st.index * kStageBytes + kBytesA);
                wgmmaFence();
#pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk)  // the tile's first MMA overwrites the accumulator
                    wgmmaM64N128K16(acc, descSw128(a + kk * 32), descSw128(b + kk * 32), (kt > 0 || kk > 0) ? 1 : 0);
                wgmmaCommit();
                if (kt > 0) {  // k-step kt-1's MMAs are done: its slot goes back to the producer
                    w.phase(wt::phase::MmaWait, prev.count, std::uint8_t(prev.index));
                    wgmmaWait<1>();
                    w.phase(wt::phase::Release, prev.count, std::uint8_t(prev.index));
                    pipe.consumerRelease(prev);
                }
                prev = st;
                st.advance();
            }
            w.phase(wt::phase::MmaWait, prev.count, std::uint8_t(prev.index));
            wgmmaWait<0>();
            touch(acc);
            w.phase(wt::phase::Release, prev.count, std::uint8_t(prev.index));
            pipe.consumerRelease(prev);

            // Epilogue: thread t of the warpgroup holds rows 16*(t/32) + (t%32)/4 and +8, columns 8j + 2*(t%4) + {0,1}.
            w.phase(wt::phase::Epilogue);
            const int r = tm * BM + c * 64 + (warp - 4 * wg) * 16 + lane / 4;
            float* d0 = D + std::size_t(r) * N + tn * BN + 2 * (lane & 3);
            float* d1 = d0 + std::size_t(8) * N;
            w.phase(wt::userPhase(kPhaseStoreC));
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                *reinterpret_cast<float2*>(d0 + 8 * j) = make_float2(acc[4 * j + 0], acc[4 * j + 1]);
                *reinterpret_cast<float2*>(d1 + 8 * j) = make_float2(acc[4 * j + 2], acc[4 * j + 3]);
            }
            w.tileEnd();
        }
        w.end();
    }
    cta.end();  // every thread (a barrier while recording)
}

// The simple reference: one thread per element of D, fp32 FMAs in K order.
__global__ void referenceGemm(const __nv_bfloat16* A, const __nv_bfloat16* B, float* D, int M, int N, int K)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y;
    if (col >= N) return;
    float s = 0.f;
    for (int k = 0; k < K; ++k) s = fmaf(__bfloat162float(A[std::size_t(row) * K + k]), __bfloat162float(B[std::size_t(col) * K + k]), s);
    D[std::size_t(row) * N + col] = s;
}

#define CK(call)                                                                                                 \
    do {                                                                                                         \
        const cudaError_t e_ = (call);                                                                           \
        if (e_ != cudaSuccess) {                                                                                 \
            std::fprintf(stderr, "gemm_2consumer: CUDA error '%s' in %s (line %d)\n", cudaGetErrorString(e_), #call, \
                         __LINE__);                                                                              \
            std::exit(3);                                                                                        \
        }                                                                                                        \
    } while (0)

// 2-D tensor map of a rows x cols bf16 matrix (cols contiguous), loaded in boxes of boxRows x 64 with the
// 128-byte swizzle. cuTensorMapEncodeTiled comes from the driver through the runtime: nothing links libcuda.
bool encodeK64(CUtensorMap* map, const void* base, int rows, int cols, int boxRows)
{
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess
        || q != cudaDriverEntryPointSuccess || fn == nullptr) {
        std::fprintf(stderr, "gemm_2consumer: the CUDA driver offers no cuTensorMapEncodeTiled\n");
        return false;
    }
    const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
    const cuuint64_t strides[1] = {cuuint64_t(cols) * 2};
    const cuuint32_t box[2] = {cuuint32_t(BK), cuuint32_t(boxRows)};
    const cuuint32_t elemStrides[2] = {1, 1};
    const CUresult r = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn)(
        map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box, elemStrides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        std::fprintf(stderr, "gemm_2consumer: cuTensorMapEncodeTiled failed (CUresult %d) for a %d x %d matrix\n", int(r),
                     rows, cols);
        return false;
    }
    return true;
}

int usage(const std::string& why)
{
    std::fprintf(stderr,
                 "gemm_2consumer: %s\nusage: gemm_2consumer [--m M] [--n N] [--k K] [--iters I (>= 1)] [--seed S]\n"
                 "  M and N multiples of %d, K a multiple of %d (this example computes whole tiles only)\n",
                 why.c_str(), BM, BK);
    return 2;
}

bool intArg(const char* s, long lo, long hi, int& out)
{
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) return false;
    out = int(v);
    return true;
}

}  // namespace

int main(int argc, char** argv)
{
    int M = 2048, N = 2048, K = 2048, iters = 5, seed = 1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        int* target = a == "--m" ? &M : a == "--n" ? &N : a == "--k" ? &K : a == "--iters" ? &iters : a == "--seed" ? &seed : nullptr;
        if (!target || i + 1 >= argc) return usage("unknown or incomplete argument '" + a + "'");
        if (!intArg(argv[++i], target == &seed ? 0 : 1, target == &iters ? 100000 : (target == &seed ? 1L << 30 : 32768), *target))
            return usage("bad value '" + std::string(argv[i]) + "' for " + a);
    }
    if (M % BM != 0 || N % BN != 0 || K % BK != 0)
        return usage("the sizes " + std::to_string(M) + " x " + std::to_string(N) + " x " + std::to_string(K)
                     + " are not whole tiles: M and N must be multiples of 128 and K of 64");
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        std::fprintf(stderr, "gemm_2consumer: no CUDA device\n");
        return 3;
    }
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9) {
        std::fprintf(stderr, "gemm_2consumer: needs an sm_90 GPU (wgmma, built for sm_90a); %s is sm_%d%d\n", prop.name,
                     prop.major, prop.minor);
        return 3;
    }

    // Inputs: multiples of 1/8 in [-1/2, 1/2]: products are multiples of 1/64, sums stay far below 2^24 / 64,
    // so fp32 holds every partial sum exactly, in any order.
    std::mt19937 rng{std::uint32_t(seed)};
    std::uniform_int_distribution<int> dist(-4, 4);
    std::vector<__nv_bfloat16> hA(std::size_t(M) * K), hB(std::size_t(N) * K);
    std::vector<float> fA(hA.size()), fB(hB.size());
    for (std::size_t i = 0; i < hA.size(); ++i) hA[i] = __float2bfloat16(fA[i] = float(dist(rng)) / 8.f);
    for (std::size_t i = 0; i < hB.size(); ++i) hB[i] = __float2bfloat16(fB[i] = float(dist(rng)) / 8.f);

    __nv_bfloat16 *dA = nullptr, *dB = nullptr;
    float *dD = nullptr, *dRef = nullptr;
    CK(cudaMalloc(&dA, hA.size() * sizeof(__nv_bfloat16)));
    CK(cudaMalloc(&dB, hB.size() * sizeof(__nv_bfloat16)));
    CK(cudaMalloc(&dD, std::size_t(M) * N * sizeof(float)));
    CK(cudaMalloc(&dRef, std::size_t(M) * N * sizeof(float)));
    CK(cudaMemcpy(dA, hA.data(), hA.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, hB.data(), hB.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
    CUtensorMap tmA, tmB;
    if (!encodeK64(&tmA, dA, M, K, BM) || !encodeK64(&tmB, dB, N, K, BN)) return 3;
    CK(cudaFuncSetAttribute(gemm2Consumer, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    const int tiles = (M / BM) * (N / BN);
    const int grid = std::min(tiles, prop.multiProcessorCount);

    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> us;
    for (int it = 0; it < iters; ++it) {
        CK(cudaMemset(dD, 0, std::size_t(M) * N * sizeof(float)));
        CK(cudaEventRecord(e0));
        gemm2Consumer<<<grid, kThreads, kSmemBytes>>>(tmA, tmB, dD, M, N, K);
        CK(cudaGetLastError());
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0.f;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        us.push_back(ms * 1000.f);
    }
    referenceGemm<<<dim3((N + 127) / 128, M), 128>>>(dA, dB, dRef, M, N, K);
    CK(cudaGetLastError());
    std::vector<float> hD(std::size_t(M) * N), hRef(hD.size());
    CK(cudaMemcpy(hD.data(), dD, hD.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hRef.data(), dRef, hRef.size() * sizeof(float), cudaMemcpyDeviceToHost));

    std::size_t wrong = 0, firstWrong = 0;
    double maxErr = 0.0;
    for (std::size_t i = 0; i < hD.size(); ++i) {
        const double e = std::fabs(double(hD[i]) - double(hRef[i]));
        if (!(e == 0.0)) {
            if (wrong++ == 0) firstWrong = i;
            if (!(e <= maxErr)) maxErr = e;  // NaN sticks
        }
    }
    // The reference itself, checked on the CPU at sampled elements (exact sums in double).
    std::size_t refWrong = 0;
    std::mt19937 pick{std::uint32_t(seed) + 1u};
    for (int s = 0; s < 4096; ++s) {
        const int r = int(pick() % std::uint32_t(M)), c = int(pick() % std::uint32_t(N));
        double want = 0.0;
        for (int k = 0; k < K; ++k) want += double(fA[std::size_t(r) * K + k]) * double(fB[std::size_t(c) * K + k]);
        refWrong += double(hRef[std::size_t(r) * N + c]) != want;
    }
    std::sort(us.begin(), us.end());
    const double med = us[us.size() / 2];
    std::printf("gemm_2consumer: %d x %d x %d bf16 on %s, %d CTAs x %d threads, %d launches: median %.1f us (min %.1f), "
                "%.1f TFLOP/s\n",
                M, N, K, prop.name, grid, kThreads, iters, med, double(us.front()), 2.0 * M * N * K / (med * 1e-6) / 1e12);
    const bool ok = wrong == 0 && refWrong == 0;
    if (ok)
        std::printf("PASS all %zu elements equal the reference (max_abs_err=0); reference checked at 4096 CPU samples\n",
                    hD.size());
    else
        std::printf("FAIL %zu of %zu elements differ (max_abs_err=%.6g, first at row %zu col %zu: %g, want %g); "
                    "%zu of 4096 reference samples wrong\n",
                    wrong, hD.size(), maxErr, firstWrong / N, firstWrong % N, wrong ? double(hD[firstWrong]) : 0.0,
                    wrong ? double(hRef[firstWrong]) : 0.0, refWrong);
    CK(cudaFree(dA));
    CK(cudaFree(dB));
    CK(cudaFree(dD));
    CK(cudaFree(dRef));
    return ok ? 0 : 1;
}
