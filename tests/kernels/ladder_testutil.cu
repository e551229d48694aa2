// Helpers of the kernel-ladder checks: see ladder_testutil.h.
#include "ladder_testutil.h"

#include "common/gpu_skip.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>

namespace ws::ktest {

void check(int status, const char* what, const char* file, int line)
{
    if (status == cudaSuccess)
        return;
    std::ostringstream os;
    os << file << ":" << line << ": " << what << " failed: " << cudaGetErrorName(cudaError_t(status)) << " ("
       << cudaGetErrorString(cudaError_t(status)) << ")";
    throw CudaError(os.str());
}

void checkCublas(int status, const char* what, const char* file, int line)
{
    if (status == CUBLAS_STATUS_SUCCESS)
        return;
    std::ostringstream os;
    os << file << ":" << line << ": " << what << " failed: cuBLAS status " << status << " ("
       << cublasGetStatusString(cublasStatus_t(status)) << ")";
    throw CudaError(os.str());
}

std::string gpuUnavailableReason()
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
    }
    if (n == 0)
        return "no CUDA device (cudaGetDeviceCount returned 0)";
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess)
        return "no CUDA device (cudaGetDeviceProperties failed)";
    if (p.major != 9)
        return "no CUDA device of compute capability 9.x (the ladder is built for sm_90a; device 0 is " + std::string(p.name)
            + ", " + std::to_string(p.major) + "." + std::to_string(p.minor) + ")";
    return {};
}

int gpuUnavailableExit(const char* program)
{
    const std::string why = gpuUnavailableReason();
    return why.empty() ? 0 : ws::testing::gpuUnavailableExit(program, why);
}

int smCount()
{
    int dev = 0, n = 0;
    WS_CK(cudaGetDevice(&dev));
    WS_CK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    return n;
}

std::string deviceName()
{
    cudaDeviceProp p{};
    WS_CK(cudaGetDeviceProperties(&p, 0));
    return p.name;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : m_bytes(bytes)
{
    if (bytes)
        WS_CK(cudaMalloc(&m_ptr, bytes));
}
DeviceBuffer::~DeviceBuffer()
{
    if (m_ptr)
        cudaFree(m_ptr);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : m_ptr(o.m_ptr), m_bytes(o.m_bytes)
{
    o.m_ptr = nullptr;
    o.m_bytes = 0;
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept
{
    if (this != &o) {
        if (m_ptr)
            cudaFree(m_ptr);
        m_ptr = o.m_ptr;
        m_bytes = o.m_bytes;
        o.m_ptr = nullptr;
        o.m_bytes = 0;
    }
    return *this;
}

std::uint64_t freshSeed()
{
    std::random_device rd;
    std::uint64_t s = (std::uint64_t(rd()) << 32) ^ rd();
    s ^= std::uint64_t(std::chrono::high_resolution_clock::now().time_since_epoch().count());
    return s;
}

// ---------------------------------------------------------------------------
// Kernels

namespace {

__global__ void fillNormalKernel(__nv_bfloat16* p, std::size_t n, unsigned long long seed, float scale)
{
    std::size_t i0 = (std::size_t(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
    std::size_t stride = std::size_t(gridDim.x) * blockDim.x * 4;
    curandStatePhilox4_32_10_t st;
    curand_init(seed, (blockIdx.x * blockDim.x + threadIdx.x), 0, &st);
    for (std::size_t i = i0; i < n; i += stride) {
        float4 v = curand_normal4(&st);
        float w[4] = {v.x, v.y, v.z, v.w};
        for (int j = 0; j < 4 && i + j < n; ++j)
            p[i + j] = __float2bfloat16_rn(w[j] * scale);
    }
}

__device__ inline double warpSum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__device__ inline unsigned long long warpSumU(unsigned long long v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

struct CmpAcc {
    double sumSqRef;
    double sumSqErr;
    unsigned long long nonFinite;
    unsigned long long bad;
    unsigned long long firstBad;   // min index
    unsigned int maxAbsErrBits;    // float bits of a non-negative float: ordered as unsigned
};

template <class RefT>
__device__ inline float loadRef(const RefT* r, std::size_t i);
template <>
__device__ inline float loadRef<float>(const float* r, std::size_t i) { return r[i]; }
template <>
__device__ inline float loadRef<__nv_bfloat16>(const __nv_bfloat16* r, std::size_t i) { return __bfloat162float(r[i]); }

template <class RefT>
__global__ void sumSqRefKernel(const RefT* ref, std::size_t n, CmpAcc* acc)
{
    double s = 0;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        double r = loadRef(ref, i);
        s += r * r;
    }
    s = warpSum(s);
    if ((threadIdx.x & 31) == 0)
        atomicAdd(&acc->sumSqRef, s);
}

template <class RefT>
__global__ void compareKernel(const __nv_bfloat16* out, const RefT* ref, std::size_t n, double absTol, double relTol,
                              CmpAcc* acc)
{
    double se = 0;
    unsigned long long nf = 0, bad = 0, first = ~0ull;
    float maxAbs = 0.f;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
        float o = __bfloat162float(out[i]);
        float r = loadRef(ref, i);
        if (!isfinite(o) || !isfinite(r)) {
            ++nf;
            if (i < first) first = i;
            continue;
        }
        double d = double(o) - double(r);
        se += d * d;
        float ad = fabsf(float(d));
        maxAbs = fmaxf(maxAbs, ad);
        if (double(ad) > absTol + relTol * fabs(double(r))) {
            ++bad;
            if (i < first) first = i;
        }
    }
    se = warpSum(se);
    nf = warpSumU(nf);
    bad = warpSumU(bad);
    for (int o = 16; o > 0; o >>= 1) {
        maxAbs = fmaxf(maxAbs, __shfl_down_sync(0xffffffffu, maxAbs, o));
        unsigned long long f2 = __shfl_down_sync(0xffffffffu, first, o);
        first = f2 < first ? f2 : first;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&acc->sumSqErr, se);
        if (nf) atomicAdd(&acc->nonFinite, nf);
        if (bad) atomicAdd(&acc->bad, bad);
        if (first != ~0ull) atomicMin(&acc->firstBad, first);
        atomicMax(&acc->maxAbsErrBits, __float_as_uint(maxAbs));
    }
}

__global__ void countPoisonKernel(const unsigned short* p, std::size_t n, unsigned long long* cnt)
{
    unsigned long long c = 0;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
        c += (p[i] == 0xFFFFu);
    c = warpSumU(c);
    if ((threadIdx.x & 31) == 0 && c)
        atomicAdd(cnt, c);
}

__global__ void naiveGemmKernel(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, int m, int n, int k)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= m || col >= n)
        return;
    const __nv_bfloat16* ar = a + std::size_t(row) * k;
    const __nv_bfloat16* br = b + std::size_t(col) * k;
    float s = 0.f;
    for (int i = 0; i < k; ++i)
        s = fmaf(__bfloat162float(ar[i]), __bfloat162float(br[i]), s);
    c[std::size_t(row) * n + col] = s;
}

int reduceBlocks(std::size_t n)
{
    std::size_t b = (n + 255) / 256;
    return int(b < 4096 ? (b ? b : 1) : 4096);
}

template <class RefT>
ErrStats compareImpl(const void* out, const RefT* ref, std::size_t n, void* stream)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    DeviceBuffer accBuf(sizeof(CmpAcc));
    CmpAcc init{};
    init.firstBad = ~0ull;
    WS_CK(cudaMemcpyAsync(accBuf.get(), &init, sizeof init, cudaMemcpyHostToDevice, st));
    auto* acc = accBuf.as<CmpAcc>();
    sumSqRefKernel<RefT><<<reduceBlocks(n), 256, 0, st>>>(ref, n, acc);
    WS_CK(cudaGetLastError());
    CmpAcc h{};
    WS_CK(cudaMemcpyAsync(&h, acc, sizeof h, cudaMemcpyDeviceToHost, st));
    WS_CK(cudaStreamSynchronize(st));
    double rms = n ? std::sqrt(h.sumSqRef / double(n)) : 0.0;
    compareKernel<RefT><<<reduceBlocks(n), 256, 0, st>>>(static_cast<const __nv_bfloat16*>(out), ref, n,
                                                         kElemAbs * rms, kElemRel, acc);
    WS_CK(cudaGetLastError());
    WS_CK(cudaMemcpyAsync(&h, acc, sizeof h, cudaMemcpyDeviceToHost, st));
    WS_CK(cudaStreamSynchronize(st));
    ErrStats e;
    e.n = n;
    e.refRms = rms;
    e.nonFinite = h.nonFinite;
    e.badElems = h.bad;
    e.firstBad = h.firstBad == ~0ull ? -1 : std::int64_t(h.firstBad);
    float mx;
    std::memcpy(&mx, &h.maxAbsErrBits, 4);
    e.maxAbsErr = mx;
    e.relErr = h.sumSqRef > 0 ? std::sqrt(h.sumSqErr / h.sumSqRef) : std::nan("");
    if (e.nonFinite)
        e.relErr = std::numeric_limits<double>::infinity();
    return e;
}

}  // namespace

std::string ErrStats::str() const
{
    char b[320];
    std::snprintf(b, sizeof b, "rel_err=%.3e (bound %.0e) max_abs_err=%.3e ref_rms=%.3e non_finite=%llu bad_elems=%llu",
                  relErr, kRelErrBound, maxAbsErr, refRms, (unsigned long long)nonFinite, (unsigned long long)badElems);
    std::string s = b;
    if (firstBad >= 0)
        s += " first_bad_index=" + std::to_string(firstBad);
    return s;
}

void fillRandomNormalBf16(void* dst, std::size_t n, std::uint64_t seed, float scale, void* stream)
{
    std::size_t threads = (n + 3) / 4;
    int blocks = int(std::min<std::size_t>((threads + 255) / 256, 8192));
    if (blocks < 1) blocks = 1;
    fillNormalKernel<<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<__nv_bfloat16*>(dst), n, seed,
                                                                          scale);
    WS_CK(cudaGetLastError());
}

void poisonBf16(void* dst, std::size_t n, void* stream)
{
    WS_CK(cudaMemsetAsync(dst, 0xFF, n * 2, static_cast<cudaStream_t>(stream)));
}
void poisonF32(void* dst, std::size_t n, void* stream)
{
    WS_CK(cudaMemsetAsync(dst, 0xFF, n * 4, static_cast<cudaStream_t>(stream)));
}

CublasRef::CublasRef()
{
    cublasHandle_t h = nullptr;
    WS_CKB(cublasCreate(&h));
    m_handle = h;
    // A generous workspace (as frameworks give it on Hopper) so the heuristics may pick
    // any algorithm: the reference for speed should be cuBLAS at its best.
    m_workspace = DeviceBuffer(std::size_t(64) << 20);
    WS_CKB(cublasSetWorkspace(h, m_workspace.get(), m_workspace.bytes()));
}
CublasRef::~CublasRef()
{
    if (m_handle)
        cublasDestroy(static_cast<cublasHandle_t>(m_handle));
}
void CublasRef::setStream(void* stream)
{
    WS_CKB(cublasSetStream(static_cast<cublasHandle_t>(m_handle), static_cast<cudaStream_t>(stream)));
}

void CublasRef::gemm(const ladder::Shape& s, const void* a, const void* b, void* c, bool outF32, void* stream)
{
    auto h = static_cast<cublasHandle_t>(m_handle);
    WS_CKB(cublasSetStream(h, static_cast<cudaStream_t>(stream)));
    const float alpha = 1.f, beta = 0.f;
    // Row-major C (MxN) = A (MxK, row-major) * B^T (B NxK, row-major).
    // cuBLAS is column-major: C^T (NxM col-major, ldc = N) = op(B) * op(A) with
    // B seen as a KxN col-major matrix (ld K) transposed -> NxK, and A seen as a
    // KxM col-major matrix (ld K), not transposed.
    WS_CKB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.m, s.k, &alpha, b, CUDA_R_16BF, s.k, a, CUDA_R_16BF, s.k,
                        &beta, c, outF32 ? CUDA_R_32F : CUDA_R_16BF, s.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

ErrStats compareBf16ToF32(const void* out, const float* ref, std::size_t n, void* stream)
{
    return compareImpl<float>(out, ref, n, stream);
}
ErrStats compareBf16ToBf16(const void* out, const void* ref, std::size_t n, void* stream)
{
    return compareImpl<__nv_bfloat16>(out, static_cast<const __nv_bfloat16*>(ref), n, stream);
}

std::uint64_t countPoisonBf16(const void* p, std::size_t n, void* stream)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    DeviceBuffer cnt(sizeof(unsigned long long));
    WS_CK(cudaMemsetAsync(cnt.get(), 0, sizeof(unsigned long long), st));
    countPoisonKernel<<<reduceBlocks(n), 256, 0, st>>>(static_cast<const unsigned short*>(p), n,
                                                      cnt.as<unsigned long long>());
    WS_CK(cudaGetLastError());
    unsigned long long h = 0;
    WS_CK(cudaMemcpyAsync(&h, cnt.get(), sizeof h, cudaMemcpyDeviceToHost, st));
    WS_CK(cudaStreamSynchronize(st));
    return h;
}

std::vector<std::uint16_t> downloadBf16(const void* d, std::size_t n)
{
    std::vector<std::uint16_t> h(n);
    WS_CK(cudaMemcpy(h.data(), d, n * 2, cudaMemcpyDeviceToHost));
    return h;
}

float bf16ToFloat(std::uint16_t v)
{
    std::uint32_t u = std::uint32_t(v) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

std::vector<double> cpuGemmF64(const ladder::Shape& s, const std::vector<std::uint16_t>& a,
                               const std::vector<std::uint16_t>& b)
{
    std::vector<double> af(a.size()), bf(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) af[i] = bf16ToFloat(a[i]);
    for (std::size_t i = 0; i < b.size(); ++i) bf[i] = bf16ToFloat(b[i]);
    std::vector<double> c(std::size_t(s.m) * s.n);
    for (int i = 0; i < s.m; ++i)
        for (int j = 0; j < s.n; ++j) {
            const double* ar = &af[std::size_t(i) * s.k];
            const double* br = &bf[std::size_t(j) * s.k];
            double acc = 0;
            for (int kk = 0; kk < s.k; ++kk)
                acc += ar[kk] * br[kk];
            c[std::size_t(i) * s.n + j] = acc;
        }
    return c;
}

double relErrHost(const std::vector<double>& ref, const std::vector<double>& out)
{
    if (ref.size() != out.size() || ref.empty())
        return std::numeric_limits<double>::infinity();
    double se = 0, sr = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        if (!std::isfinite(out[i]))
            return std::numeric_limits<double>::infinity();
        double d = out[i] - ref[i];
        se += d * d;
        sr += ref[i] * ref[i];
    }
    return std::sqrt(se / sr);
}

void naiveGemmF32(const ladder::Shape& s, const void* a, const void* b, float* c, void* stream)
{
    dim3 blk(32, 8);
    dim3 grd((s.n + 31) / 32, (s.m + 7) / 8);
    naiveGemmKernel<<<grd, blk, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const __nv_bfloat16*>(a),
                                                                      static_cast<const __nv_bfloat16*>(b), c, s.m, s.n,
                                                                      s.k);
    WS_CK(cudaGetLastError());
}

// ---------------------------------------------------------------------------
// Trace buffers

TraceBuffer::TraceBuffer(const ladder::TraceGeometry& geo, std::uint32_t eventsPerWarpOverride, std::size_t guardBytes)
    : m_guard(guardBytes)
{
    m_header.magic = trace::kMagic;
    m_header.version = trace::kFormatVersion;
    m_header.numCtas = geo.numCtas;
    m_header.warpsPerCta = geo.warpsPerCta;
    m_header.eventsPerWarp = eventsPerWarpOverride ? eventsPerWarpOverride : geo.eventsPerWarp;
    m_header.stages = geo.stages;
    m_header.bytesPerKStep = geo.bytesPerKStep;
    m_bytes = trace::bufferBytes(m_header.numCtas, m_header.warpsPerCta, m_header.eventsPerWarp);
    m_mem = DeviceBuffer(std::size_t(m_bytes) + 2 * m_guard);
    reset();
    WS_CK(cudaDeviceSynchronize());
}

void* TraceBuffer::get() const { return static_cast<std::uint8_t*>(m_mem.get()) + m_guard; }

void TraceBuffer::reset(void* stream)
{
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    auto* base = static_cast<std::uint8_t*>(m_mem.get());
    WS_CK(cudaMemsetAsync(base, kGuardByte, m_guard, st));
    WS_CK(cudaMemsetAsync(base + m_guard, 0, m_bytes, st));
    WS_CK(cudaMemsetAsync(base + m_guard + m_bytes, kGuardByte, m_guard, st));
    WS_CK(cudaMemcpyAsync(base + m_guard, &m_header, sizeof m_header, cudaMemcpyHostToDevice, st));
}

void TraceBuffer::clearAsync(void* stream, bool all)
{
    auto* base = static_cast<std::uint8_t*>(m_mem.get()) + m_guard;
    auto st = static_cast<cudaStream_t>(stream);
    if (all) {
        WS_CK(cudaMemsetAsync(base + sizeof(trace::TraceBufferHeader), 0, m_bytes - sizeof(trace::TraceBufferHeader), st));
        return;
    }
    const trace::ClearRanges r = trace::clearRanges(m_header.numCtas, m_header.warpsPerCta, m_header.eventsPerWarp);
    WS_CK(cudaMemsetAsync(base + r.ctaOffset, 0, r.ctaBytes, st));
    WS_CK(cudaMemset2DAsync(base + r.headerOffset, r.headerPitch, 0, r.headerBytes, r.headerRows, st));
}

std::uint64_t TraceBuffer::guardDamage() const
{
    std::vector<std::uint8_t> g(m_guard);
    std::uint64_t bad = 0;
    auto* base = static_cast<std::uint8_t*>(m_mem.get());
    for (std::uint8_t* p : {base, base + m_guard + m_bytes}) {
        WS_CK(cudaMemcpy(g.data(), p, m_guard, cudaMemcpyDeviceToHost));
        for (auto v : g)
            bad += (v != kGuardByte);
    }
    return bad;
}

std::vector<std::uint8_t> TraceBuffer::download() const
{
    std::vector<std::uint8_t> h(m_bytes);
    WS_CK(cudaMemcpy(h.data(), get(), m_bytes, cudaMemcpyDeviceToHost));
    return h;
}

TraceCheck checkTrace(const std::vector<std::uint8_t>& buf, const trace::TraceBufferHeader& expected, int smCount,
                      bool allowOverflow)
{
    using namespace ws::trace;
    TraceCheck r;
    auto err = [&](std::string s) {
        if (r.errors.size() < 20)
            r.errors.push_back(std::move(s));
        else if (r.errors.size() == 20)
            r.errors.push_back("... (more errors)");
    };
    if (buf.size() < sizeof(TraceBufferHeader)) {
        err("buffer smaller than its header");
        return r;
    }
    TraceBufferHeader h;
    std::memcpy(&h, buf.data(), sizeof h);
    if (std::memcmp(&h, &expected, sizeof h) != 0)
        err("header changed by the kernel (magic " + std::to_string(h.magic) + ", numCtas " + std::to_string(h.numCtas)
            + ", warpsPerCta " + std::to_string(h.warpsPerCta) + ", eventsPerWarp " + std::to_string(h.eventsPerWarp) + ")");
    h = expected;
    const std::uint64_t need = bufferBytes(h.numCtas, h.warpsPerCta, h.eventsPerWarp);
    if (buf.size() < need) {
        err("buffer smaller than the header says");
        return r;
    }
    r.ctas = h.numCtas;
    std::vector<CtaRecord> ctas(h.numCtas);
    std::memcpy(ctas.data(), buf.data() + sizeof h, h.numCtas * sizeof(CtaRecord));
    for (std::uint32_t c = 0; c < h.numCtas; ++c) {
        const CtaRecord& cr = ctas[c];
        std::string where = "CTA " + std::to_string(c) + ": ";
        if ((cr.flags & 3u) != 3u)
            err(where + "flags " + std::to_string(cr.flags) + " (start and end must both be written)");
        else {
            if (cr.globaltimerEnd < cr.globaltimerStart)
                err(where + "globaltimer end < start");
            if (cr.clockEnd < cr.clockStart)
                err(where + "clock64 end < start");
            if (cr.globaltimerStart == 0 || cr.clockStart == 0)
                err(where + "zero timestamp");
        }
        if (smCount > 0 && cr.smId >= std::uint32_t(smCount))
            err(where + "smId " + std::to_string(cr.smId) + " >= SM count " + std::to_string(smCount));
        for (std::uint32_t w = 0; w < h.warpsPerCta; ++w) {
            std::uint64_t off = warpRegionOffset(h.numCtas, h.warpsPerCta, h.eventsPerWarp, c, w);
            WarpRegionHeader wr;
            std::memcpy(&wr, buf.data() + off, sizeof wr);
            ++r.warps;
            std::string ww = where + "warp " + std::to_string(w) + ": ";
            if (!(wr.flags & 1u))
                err(ww + "role not declared (flags bit 0 clear)");
            if (wr.role == 0 || wr.role > 5)
                err(ww + "role " + std::to_string(wr.role) + " is not a WarpRole 1..5");
            r.maxCount = std::max<std::uint64_t>(r.maxCount, wr.count);
            if (wr.count > h.eventsPerWarp) {
                ++r.overflowedWarps;
                if (!allowOverflow)
                    err(ww + "count " + std::to_string(wr.count) + " > capacity " + std::to_string(h.eventsPerWarp));
            }
            std::uint32_t n = std::min(wr.count, h.eventsPerWarp);
            std::vector<TraceEvent> recs(n);
            if (n) std::memcpy(recs.data(), buf.data() + off + sizeof wr, std::size_t(n) * sizeof(TraceEvent));
            for (const TraceEvent& x : recs) r.packedRecords += isPackedRecord(x.kind);
            std::uint64_t prev = 0;
            std::uint32_t i = 0;
            // every event, each packed k-step record (kEventKStep4) expanded into its four (trace_format.h)
            r.events += forEachEvent(recs.data(), n, [&](const TraceEvent& ev) {
                bool kindOk = ev.kind < 16 || (ev.kind >= kMarkerBase && ev.kind <= kEventLoadReady);
                if (!kindOk)
                    err(ww + "event " + std::to_string(i) + " has unknown kind " + std::to_string(ev.kind));
                else if (ev.kind < 16)
                    ++r.kindEvents[ev.kind];
                if (ev.clock == 0)
                    err(ww + "event " + std::to_string(i) + " has clock 0 (not written)");
                if (ev.clock < prev)
                    err(ww + "event " + std::to_string(i) + " clock goes backwards");
                prev = ev.clock;
                if ((cr.flags & 3u) == 3u && (ev.clock + 1000000ull < cr.clockStart || ev.clock > cr.clockEnd + 1000000ull))
                    ++r.eventsOutsideCta;
                ++i;
            });
            // A complete (non-overflowed) region ends with kEventEnd.
            if (wr.count > 0 && wr.count <= h.eventsPerWarp) {
                TraceEvent last;
                std::memcpy(&last, buf.data() + off + sizeof wr + std::uint64_t(wr.count - 1) * sizeof last, sizeof last);
                if (last.kind != kEventEnd)
                    err(ww + "last event kind " + std::to_string(last.kind) + " is not kEventEnd");
            }
            if (wr.count == 0)
                err(ww + "no events (count 0)");
        }
    }
    return r;
}

ladder::Shape parseShape(const std::string& s)
{
    ladder::Shape r;
    int v[3] = {0, 0, 0};
    int n = 0;
    std::size_t pos = 0;
    while (pos <= s.size() && n < 4) {
        std::size_t x = s.find('x', pos);
        std::string part = s.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
        if (part.empty() || part.find_first_not_of("-0123456789") != std::string::npos)
            throw std::invalid_argument("bad shape '" + s + "': expected MxNxK or N (cube), e.g. 4096x4096x4096");
        if (n == 3)
            throw std::invalid_argument("bad shape '" + s + "': more than three dimensions");
        v[n++] = std::stoi(part);
        if (x == std::string::npos)
            break;
        pos = x + 1;
    }
    if (n == 1)
        v[1] = v[2] = v[0];
    else if (n != 3)
        throw std::invalid_argument("bad shape '" + s + "': expected MxNxK or N (cube)");
    r.m = v[0];
    r.n = v[1];
    r.k = v[2];
    return r;
}

std::string shapeStr(const ladder::Shape& s)
{
    return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

}  // namespace ws::ktest
