// Shared helpers of the kernel-ladder GPU tests, ladder_check and the ladder
// benchmark: CUDA error checks, fresh random-normal bf16 inputs, NaN
// poisoning, the cuBLAS reference (C = A * B^T, A MxK and B NxK K-major, C MxN
// row-major), an on-device relative-error reduction, an fp64 CPU reference and
// trace-buffer helpers. Coded against the ladder's host API (ladder.h) only.
#pragma once

#include <warpstage/ladder.h>
#include <warpstage/trace_format.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ws::ktest {


// Relative error bound for bf16 operands and a bf16 output against an fp32
// (or better) reference: METHOD.md gives 1e-3..1e-2 for bf16 operands; the
// output's own rounding to bf16 alone costs ~1.6e-3 (half an ulp of 2^-7 at
// most, uniform), so the measured value lands near 2e-3 and 1e-2 is the bound.
inline constexpr double kRelErrBound = 1e-2;
// Per element: |out - ref| <= kElemRel * |ref| + kElemAbs * rms(ref). bf16
// rounding of one element is <= 2^-8 |ref|; the fp32 summation-order
// difference is far below 1e-2 rms. Catches a handful of wrong elements that
// the global norm would average away.
inline constexpr double kElemRel = 1e-2;
inline constexpr double kElemAbs = 1e-2;

struct CudaError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws CudaError with file:line and the CUDA error string.
void check(int cudaStatus, const char* what, const char* file, int line);
void checkCublas(int status, const char* what, const char* file, int line);
#define WS_CK(x) ::ws::ktest::check(static_cast<int>(x), #x, __FILE__, __LINE__)
#define WS_CKB(x) ::ws::ktest::checkCublas(static_cast<int>(x), #x, __FILE__, __LINE__)

// "" when a usable sm_90 device is present, else why not (for "SKIP: ...").
std::string gpuUnavailableReason();
// 0 when the tests can run here; else prints why and returns the exit code to return:
// 77 (ctest: skipped), or 1 (failure) when WARPSTAGE_REQUIRE_GPU is set (tests/common/gpu_skip.h).
int gpuUnavailableExit(const char* program);

int smCount();
std::string deviceName();

// Device memory owned by this object.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
    void* get() const { return m_ptr; }
    template <class T> T* as() const { return static_cast<T*>(m_ptr); }
    std::size_t bytes() const { return m_bytes; }

private:
    void* m_ptr = nullptr;
    std::size_t m_bytes = 0;
};

// A fresh seed (std::random_device mixed with the clock); tests print it.
std::uint64_t freshSeed();

// bf16 elements (stored as uint16) ~ N(0, scale^2), Philox (curand) per element.
void fillRandomNormalBf16(void* dst, std::size_t n, std::uint64_t seed, float scale = 1.0f,
                          void* stream = nullptr);
// 0xFFFF in every bf16 element: a NaN, so any element a kernel forgets to
// write fails the comparison.
void poisonBf16(void* dst, std::size_t n, void* stream = nullptr);
// Same for fp32 (0xFFFFFFFF, NaN).
void poisonF32(void* dst, std::size_t n, void* stream = nullptr);

// cuBLAS reference for C = A * B^T (A MxK, B NxK, both K-major; C MxN row-major).
// outF32: fp32 C (correctness reference); else bf16 C (same work as a rung).
class CublasRef {
public:
    CublasRef();
    ~CublasRef();
    CublasRef(const CublasRef&) = delete;
    CublasRef& operator=(const CublasRef&) = delete;
    void gemm(const ladder::Shape& s, const void* a, const void* b, void* c, bool outF32,
              void* stream = nullptr);
    void setStream(void* stream);

private:
    void* m_handle = nullptr;
    DeviceBuffer m_workspace;
};

struct ErrStats {
    double relErr = 0;            // ||out - ref|| / ||ref||
    double refRms = 0;            // rms(ref)
    double maxAbsErr = 0;         // max |out - ref| over finite elements
    std::uint64_t nonFinite = 0;  // out elements that are NaN/Inf (unwritten: poisoned)
    std::uint64_t badElems = 0;   // elements over the per-element bound
    std::uint64_t n = 0;
    std::int64_t firstBad = -1;   // index of the first non-finite or bad element
    bool ok(double bound = kRelErrBound) const
    {
        return n > 0 && nonFinite == 0 && badElems == 0 && relErr <= bound && relErr == relErr;
    }
    std::string str() const;
};

// Compares bf16 `out` with fp32 `ref` (both n elements, device), on the device.
ErrStats compareBf16ToF32(const void* out, const float* ref, std::size_t n, void* stream = nullptr);
// Same, with a bf16 reference.
ErrStats compareBf16ToBf16(const void* out, const void* ref, std::size_t n, void* stream = nullptr);
// Counts bf16 elements of `p` still equal to the poison pattern 0xFFFF.
std::uint64_t countPoisonBf16(const void* p, std::size_t n, void* stream = nullptr);

// Host helpers for small shapes.
std::vector<std::uint16_t> downloadBf16(const void* d, std::size_t n);
float bf16ToFloat(std::uint16_t v);
// fp64 CPU reference of C = A * B^T from bf16 host data.
std::vector<double> cpuGemmF64(const ladder::Shape& s, const std::vector<std::uint16_t>& a,
                               const std::vector<std::uint16_t>& b);
// ||out - ref|| / ||ref|| on the host (NaN counts as infinite error).
double relErrHost(const std::vector<double>& ref, const std::vector<double>& out);

// A simple fp32-accumulating GPU reference (one thread per output element);
// used under compute-sanitizer, where cuBLAS's own kernels are not the
// subject. Writes fp32 C.
void naiveGemmF32(const ladder::Shape& s, const void* a, const void* b, float* c, void* stream = nullptr);

// ---------------------------------------------------------------------------
// Trace buffers

// A trace buffer for one traced launch, placed between two guard regions of
// `guardBytes` each filled with kGuardByte, so a write outside the buffer is
// detected. The header is filled from `geo` (eventsPerWarp may be overridden
// to provoke an overflow).
inline constexpr std::uint8_t kGuardByte = 0xA5;
class TraceBuffer {
public:
    TraceBuffer(const ladder::TraceGeometry& geo, std::uint32_t eventsPerWarpOverride = 0,
                std::size_t guardBytes = 1 << 20);
    void* get() const;  // what to pass to ladder::launch
    std::uint64_t bytes() const { return m_bytes; }
    const trace::TraceBufferHeader& header() const { return m_header; }
    // Resets the header and every region (count 0, zeroed events); the guards
    // are refilled. Call before each traced launch (kernels count per launch).
    void reset(void* stream = nullptr);
    // Zeroes what a recorder zeroes before a launch (trace::clearRanges: the CTA
    // records and every warp region's header; the events stay as the last
    // launch left them) asynchronously: no host synchronisation, for timing
    // loops. all = true: everything after the header (sessions 9-15). The
    // kernels never write the header, so it stays as reset() left it.
    void clearAsync(void* stream = nullptr, bool all = false);
    // Number of guard bytes that changed (0 = nothing was written outside).
    std::uint64_t guardDamage() const;
    // Copies the buffer (without guards) to the host.
    std::vector<std::uint8_t> download() const;

private:
    DeviceBuffer m_mem;
    std::size_t m_guard = 0;
    std::uint64_t m_bytes = 0;
    trace::TraceBufferHeader m_header{};
};

struct TraceCheck {
    std::vector<std::string> errors;  // empty = sane
    std::uint64_t events = 0;         // events written (sum of min(count, capacity)), packed k-steps expanded
    std::uint64_t packedRecords = 0;  // packed records among them (kEventKStep4: four events, kEventLoad2: two)
    std::uint64_t overflowedWarps = 0;
    std::uint64_t maxCount = 0;
    std::uint64_t warps = 0;
    std::uint64_t ctas = 0;
    // Events whose clock lies over 1e6 cycles outside their CTA's
    // [clockStart, clockEnd]: reported as a warning (the CTA record may be
    // written by one warp before others finish), not an error.
    std::uint64_t eventsOutsideCta = 0;
    // Phase events by kind (0..15: ws::IntervalKind; markers not counted), e.g. stream-K's WaitPartial (14), Fixup (15).
    std::array<std::uint64_t, 16> kindEvents{};
};
// Checks a downloaded buffer: header unchanged, every CTA record has both
// flags and ordered timestamps, every warp region declared a role, events are
// valid kinds with non-decreasing clocks, and counts <= capacity unless
// `allowOverflow` (then counts above capacity are tallied, not errors).
TraceCheck checkTrace(const std::vector<std::uint8_t>& buf, const trace::TraceBufferHeader& expected,
                      int smCount, bool allowOverflow);

// Parses "4096x4096x4096" or "4096" (cube); throws std::invalid_argument.
ladder::Shape parseShape(const std::string& s);
std::string shapeStr(const ladder::Shape& s);

}  // namespace ws::ktest
