// <warpstage/trace.cuh>: per-warp timeline instrumentation for your own CUDA kernels.
//
// The one instrumentation API of Warpstage: users' kernels and the bundled ladder (through the thin
// layer trace_device.cuh) make the same calls. docs/your-kernels.md is the walkthrough and the
// reference with costs; trace_format.h is the buffer layout the recorder decodes.
//
//   #include <warpstage/trace.cuh>
//   WARPSTAGE_PHASE_NAMES("reduce", "normalize");        // optional: your phases, kinds userPhase(0), (1)
//   WARPSTAGE_ROLE_NAMES("loader", "reducer");            // optional: display names of your roles
//
//   __global__ void kernel(...) {
//       ws::trace::Cta cta;                                  // one load of the control word
//       cta.pipeline(2, 8192);                                // optional: ring slots, bytes per load
//       ws::trace::Warp w(cta, ws::trace::role::Producer);   // this warp's role (all 32 lanes)
//       w.phase(ws::trace::phase::WaitSlot, k, slot);        // the warp enters a phase
//       w.loadIssue(k, slot);  ...  w.loadReady(k, slot);
//       w.phase(ws::trace::userPhase(0));                     // a phase of your own ("reduce")
//       w.end();                                              // every traced warp, once, at its end
//       cta.end();                                            // every thread of the CTA (a barrier when tracing)
//   }
//
// Run normally, the kernel reads one control word per thread at Cta construction, finds it null, and
// every later call is a predicated-off branch. Under `warpstage-record --kernels REGEX -- ./app` the
// injection library finds the control symbol of the kernel's module, points it at a buffer before the
// launches it traces and reads the buffer back after them. Compile with -DWARPSTAGE_TRACE=0 and every
// call is an empty inline function: no trace instruction is left (a SASS test checks it).
//
// Rules: every call is warp-uniform (all 32 lanes of the warp, same arguments); a Warp records from
// lane 0 only. Phases: an event marks the moment the warp ENTERS a phase; the phase lasts until the
// warp's next phase event or its end(). Markers (tile begin/end, load ready) do not end a phase.
//
// Host symbols (one set per module, i.e. per .cu file compiled without -rdc; with -rdc define
// WARPSTAGE_TRACE_NO_SYMBOLS in every file but one):
//   warpstage_trace_control  (ws::trace::Control, 16 bytes): the buffer pointer (null: not recording),
//                            the header's magic and format version, for the recorder to check;
//   warpstage_phase_names / warpstage_role_names (char[], "a\0b\0\0"): names from the macros above;
//   warpstage_trace_source   (char[]): __BASE_FILE__, the .cu file being compiled
//                            (the recorder stores that file's text with the run).
#pragma once

#include <cstdint>
#include <type_traits>

#include "warpstage/trace_format.h"

#ifndef WARPSTAGE_TRACE
#define WARPSTAGE_TRACE 1
#endif

namespace ws::trace {

// ---------------------------------------------------------------- kinds and roles
// ws::IntervalKind / ws::WarpRole numeric values (core/include/warpstage/model.h), spelled out here so
// device code does not include the core model header. `phase` is the public spelling, `kind` the
// ladder's (same values).
namespace kind {
inline constexpr std::uint8_t Other = 0, Setup = 1, WaitSlot = 2, IssueLoad = 3, WaitData = 4, MmaIssue = 5,
                              MmaWait = 6, Release = 7, Epilogue = 8, Store = 9, Load = 10, Sync = 11,
                              Compute = 12, WaitOrder = 13;
inline constexpr std::uint8_t WaitPartial = 14, Fixup = 15;  // stream-K (ladder rung 7): flag wait, partial sums
}
namespace phase = kind;
namespace role {
inline constexpr std::uint8_t Unknown = 0, Producer = 1, Consumer = 2, Epilogue = 3, Worker = 4, Idle = 5;
}
inline constexpr std::uint8_t kNoSlot = 0xFF;
inline constexpr std::uint8_t kNoUserRole = 0xFF;
// Kind of the i-th name of WARPSTAGE_PHASE_NAMES (i < kMaxUserPhaseNames).
inline constexpr std::uint8_t kUserPhaseBase = 64;
inline constexpr int kMaxUserPhaseNames = 176;
#ifdef __CUDACC__
__host__ __device__
#endif
constexpr std::uint8_t userPhase(int i) { return std::uint8_t(kUserPhaseBase + i); }
// Shared memory a warp in staged mode gives the engine (2 x 32 events).
inline constexpr std::uint32_t kTraceSmemPerWarp = 1024;

// The control symbol's layout (what the recorder reads and writes with cuModuleGetGlobal).
struct Control {
    void* buffer;            // TraceBufferHeader* of the current launch, or null: not recording
    std::uint32_t magic;     // kMagic
    std::uint32_t version;   // kFormatVersion this kernel was compiled with
};
static_assert(sizeof(Control) == 16);

// One event whose moment was taken earlier (now()), for eventsAt(): a batch staged by one call.
struct StampedEvent {
    std::uint64_t clock;
    std::int32_t kstep;
    std::uint8_t kind;
    std::uint8_t slot;
    std::int16_t aux;
};

}  // namespace ws::trace

// ---------------------------------------------------------------- module symbols
#define WARPSTAGE_DETAIL_NAME_(x) x "\0"
#define WARPSTAGE_DETAIL_E1_(m, a) m(a)
#define WARPSTAGE_DETAIL_E2_(m, a, ...) m(a) WARPSTAGE_DETAIL_E1_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E3_(m, a, ...) m(a) WARPSTAGE_DETAIL_E2_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E4_(m, a, ...) m(a) WARPSTAGE_DETAIL_E3_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E5_(m, a, ...) m(a) WARPSTAGE_DETAIL_E4_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E6_(m, a, ...) m(a) WARPSTAGE_DETAIL_E5_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E7_(m, a, ...) m(a) WARPSTAGE_DETAIL_E6_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E8_(m, a, ...) m(a) WARPSTAGE_DETAIL_E7_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E9_(m, a, ...) m(a) WARPSTAGE_DETAIL_E8_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E10_(m, a, ...) m(a) WARPSTAGE_DETAIL_E9_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E11_(m, a, ...) m(a) WARPSTAGE_DETAIL_E10_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E12_(m, a, ...) m(a) WARPSTAGE_DETAIL_E11_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E13_(m, a, ...) m(a) WARPSTAGE_DETAIL_E12_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E14_(m, a, ...) m(a) WARPSTAGE_DETAIL_E13_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E15_(m, a, ...) m(a) WARPSTAGE_DETAIL_E14_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_E16_(m, a, ...) m(a) WARPSTAGE_DETAIL_E15_(m, __VA_ARGS__)
#define WARPSTAGE_DETAIL_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, N, ...) N
// "a" "\0" "b" "\0" ... : up to 16 names per macro.
#define WARPSTAGE_DETAIL_JOIN_(...)                                                                              \
    WARPSTAGE_DETAIL_PICK_(__VA_ARGS__, WARPSTAGE_DETAIL_E16_, WARPSTAGE_DETAIL_E15_, WARPSTAGE_DETAIL_E14_,        \
                           WARPSTAGE_DETAIL_E13_, WARPSTAGE_DETAIL_E12_, WARPSTAGE_DETAIL_E11_, WARPSTAGE_DETAIL_E10_, \
                           WARPSTAGE_DETAIL_E9_, WARPSTAGE_DETAIL_E8_, WARPSTAGE_DETAIL_E7_, WARPSTAGE_DETAIL_E6_,     \
                           WARPSTAGE_DETAIL_E5_, WARPSTAGE_DETAIL_E4_, WARPSTAGE_DETAIL_E3_, WARPSTAGE_DETAIL_E2_,     \
                           WARPSTAGE_DETAIL_E1_)(WARPSTAGE_DETAIL_NAME_, __VA_ARGS__)

#if defined(__CUDACC__) && WARPSTAGE_TRACE
// Names of your phases: userPhase(0) is the first. At namespace scope, once per module; 1..16 string literals.
#define WARPSTAGE_PHASE_NAMES(...) \
    extern "C" {                                                                                        \
    __device__ char warpstage_phase_names[] = WARPSTAGE_DETAIL_JOIN_(__VA_ARGS__);                      \
    }                                                                                                   \
    static_assert(true, "")
// Display names of your roles: Warp(cta, role, warpgroup, roleIndex, userRole = i) shows names[i].
#define WARPSTAGE_ROLE_NAMES(...) \
    extern "C" {                                                                                        \
    __device__ char warpstage_role_names[] = WARPSTAGE_DETAIL_JOIN_(__VA_ARGS__);                       \
    }                                                                                                   \
    static_assert(true, "")
#else
#define WARPSTAGE_PHASE_NAMES(...) static_assert(true, "")
#define WARPSTAGE_ROLE_NAMES(...) static_assert(true, "")
#endif

#if defined(__CUDACC__) && WARPSTAGE_TRACE && !defined(WARPSTAGE_TRACE_NO_SYMBOLS)
// (extern "C" { } block: nvcc's host shadow of an `extern "C" __device__ T x = ...;` is left undefined)
extern "C" {
__device__ ws::trace::Control warpstage_trace_control = {nullptr, ws::trace::kMagic, ws::trace::kFormatVersion};
__device__ char warpstage_trace_source[] = __BASE_FILE__;
}
#define WARPSTAGE_DETAIL_HAVE_CONTROL_ 1
#elif defined(__CUDACC__) && WARPSTAGE_TRACE && defined(__CUDACC_RDC__)
extern "C" {
extern __device__ ws::trace::Control warpstage_trace_control;
}
#define WARPSTAGE_DETAIL_HAVE_CONTROL_ 1
#endif

#ifdef __CUDACC__
namespace ws::trace {

// ---------------------------------------------------------------- special registers
__device__ __forceinline__ std::uint64_t readClock64()
{
#ifdef WS_TRACE_EXPERIMENT_NO_CLOCK  // experiment only: no clock read
    return 0x12345ull;
#else
    std::uint64_t c;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c));
    return c;
#endif
}
__device__ __forceinline__ std::uint64_t readGlobalTimer()
{
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ std::uint32_t readSmId()
{
    std::uint32_t s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}
// Linear CTA index, as the decoder indexes CtaRecords.
__device__ __forceinline__ std::uint32_t linearCta()
{
    return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}
// Warp index within the CTA (linear thread index / 32).
__device__ __forceinline__ std::uint32_t warpInCta()
{
    return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) >> 5;
}
// True when the host-filled header matches this launch and this header's format version (else
// tracing is switched off for the launch rather than writing outside the buffer).
__device__ __forceinline__ bool headerMatches(const TraceBufferHeader* h)
{
    const std::uint32_t ctas = gridDim.x * gridDim.y * gridDim.z;
    const std::uint32_t warps = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
    return h->magic == kMagic && h->version == kFormatVersion && h->numCtas == ctas && h->warpsPerCta == warps;
}
// Word 1 of a WarpRegionHeader: role, warpgroup, roleIndex, flags (bit 0 role declared, bit 1 user role name).
__device__ __forceinline__ std::uint32_t roleWord(std::uint8_t role, std::uint8_t warpgroup, std::uint8_t roleIndex,
                                                  std::uint8_t userRole)
{
    return std::uint32_t(role) | (std::uint32_t(warpgroup) << 8) | (std::uint32_t(roleIndex) << 16)
        | ((userRole == kNoUserRole ? 1u : 3u) << 24);
}
// The warp's region in the buffer (host constexpr warpRegionOffset() of trace_format.h, spelled out).
__device__ __forceinline__ WarpRegionHeader* warpRegion(void* buffer, const TraceBufferHeader* h, std::uint32_t warp)
{
    const std::uint64_t off = sizeof(TraceBufferHeader) + std::uint64_t(h->numCtas) * sizeof(CtaRecord)
        + (std::uint64_t(linearCta()) * h->warpsPerCta + warp)
            * (sizeof(WarpRegionHeader) + std::uint64_t(h->eventsPerWarp) * sizeof(TraceEvent));
    return reinterpret_cast<WarpRegionHeader*>(static_cast<char*>(buffer) + off);
}

// ---------------------------------------------------------------- engines
// Null engine: every call empty (WARPSTAGE_TRACE=0, and the ladder's untraced build).
struct NullWarp {
    __device__ __forceinline__ void begin(void*, std::uint32_t, std::uint8_t, std::uint8_t, std::uint8_t, void* = nullptr,
                                          std::uint8_t = kNoUserRole)
    {
    }
    __device__ __forceinline__ void event(std::uint8_t, std::int32_t = -1, std::uint8_t = kNoSlot, std::int16_t = 0) {}
    __device__ __forceinline__ std::uint64_t now() { return 0; }
    __device__ __forceinline__ void eventAt(std::uint64_t, std::uint8_t, std::int32_t = -1, std::uint8_t = kNoSlot,
                                            std::int16_t = 0)
    {
    }
    template <int N>
    __device__ __forceinline__ void eventsAt(const StampedEvent (&)[N])
    {
    }
    template <int Stages, int Lag>
    __device__ __forceinline__ void kStepAt(const StampedEvent (&)[4])
    {
    }
    template <int Stages>
    __device__ __forceinline__ void loadAt(const StampedEvent (&)[2])
    {
    }
    template <int Stages>
    __device__ __forceinline__ void pairAt(const StampedEvent (&)[2])
    {
    }
    __device__ __forceinline__ void end() {}
    __device__ __forceinline__ void endAsync() {}
    __device__ __forceinline__ bool writes() const { return false; }
};

// Direct engine (default for your kernels, needs no shared memory): lane 0 stores each 16-byte event
// straight to its region in global memory. An event costs a clock read and one st.global.v4 from
// lane 0; nothing when not recording (one predicated branch). Events past the capacity are not
// written; the count keeps counting so that the recorder reports the overflow.
struct DirectWarp {
    TraceEvent* ev = nullptr;
    WarpRegionHeader* hdr = nullptr;
    std::uint32_t count = 0;
    std::uint32_t cap = 0;
    bool writer = false;  // lane 0 of a traced warp

    __device__ __forceinline__ void begin(void* buffer, std::uint32_t warp, std::uint8_t role, std::uint8_t warpgroup,
                                          std::uint8_t roleIndex, void* = nullptr, std::uint8_t userRole = kNoUserRole)
    {
        if (buffer == nullptr || (threadIdx.x & 31u) != 0) return;
        const auto* h = static_cast<const TraceBufferHeader*>(buffer);
        if (!headerMatches(h)) return;
        hdr = warpRegion(buffer, h, warp);
        ev = reinterpret_cast<TraceEvent*>(hdr + 1);
        cap = h->eventsPerWarp;
        writer = true;
        const std::uint32_t w2 = userRole == kNoUserRole ? 0u : std::uint32_t(userRole);
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(hdr), "r"(0u),
                     "r"(roleWord(role, warpgroup, roleIndex, userRole)), "r"(w2), "r"(0u)
                     : "memory");
    }
    __device__ __forceinline__ std::uint64_t now() { return writer ? readClock64() : 0; }
    __device__ __forceinline__ void event(std::uint8_t kind, std::int32_t kstep = -1, std::uint8_t slot = kNoSlot,
                                          std::int16_t aux = 0)
    {
        if (writer) eventAt(readClock64(), kind, kstep, slot, aux);
    }
    __device__ __forceinline__ void eventAt(std::uint64_t c, std::uint8_t kind, std::int32_t kstep = -1,
                                            std::uint8_t slot = kNoSlot, std::int16_t aux = 0)
    {
        if (!writer) return;
        const std::uint32_t w3 = std::uint32_t(std::uint16_t(aux)) | (std::uint32_t(slot) << 16)
            | (std::uint32_t(kind) << 24);
        if (count < cap)
            asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(ev + count), "r"(std::uint32_t(c)),
                         "r"(std::uint32_t(c >> 32)), "r"(std::uint32_t(kstep)), "r"(w3)
                         : "memory");
        ++count;
    }
    template <int N>
    __device__ __forceinline__ void eventsAt(const StampedEvent (&e)[N])
    {
#pragma unroll
        for (int j = 0; j < N; ++j) eventAt(e[j].clock, e[j].kind, e[j].kstep, e[j].slot, e[j].aux);
    }
    template <int Stages, int Lag>
    __device__ __forceinline__ void kStepAt(const StampedEvent (&e)[4])
    {
        eventsAt(e);  // no packing: the direct engine stores events as they are
    }
    template <int Stages>
    __device__ __forceinline__ void loadAt(const StampedEvent (&e)[2])
    {
        eventsAt(e);
    }
    template <int Stages>
    __device__ __forceinline__ void pairAt(const StampedEvent (&e)[2])
    {
        eventsAt(e);
    }
    __device__ __forceinline__ void end()
    {
        if (!writer) return;
        eventAt(readClock64(), kEventEnd);
        asm volatile("st.global.u32 [%0], %1;" ::"l"(&hdr->count), "r"(count) : "memory");
    }
    __device__ __forceinline__ void endAsync() { end(); }
    __device__ __forceinline__ bool writes() const { return writer; }
};

// Staged engine (the ladder's; for your kernels: Warp<Staged>): lane 0 writes each event (16 bytes) into
// the warp's 1 KB shared-memory staging ring (64 events, two halves of 32); when a half is full, lane 0
// hands it to the TMA engine (cp.async.bulk shared -> global, one 512-byte copy per 32 events). So an
// event costs a clock read, a little packing and one st.shared; the warp never stores to global memory
// in its loop. (Global stores from the warp made its next mbarrier arrive wait for them and cost the
// pingpong rung 40-50%: device log.) Needs sm_90. Events past the capacity are not copied; the count
// keeps counting, so an overflow is visible to the recorder.
struct StagedWarp {
    TraceEvent* ev = nullptr;         // this warp's event array (lane 0)
    WarpRegionHeader* hdr = nullptr;  // lane 0 only
    std::uint32_t count = 0;          // events so far (warp-uniform)
    std::uint32_t cap = 0;            // capacity (lane 0); 0 when tracing is off
    std::uint32_t stage = 0;          // shared address of the warp's staging ring
    bool writer = false;              // lane 0 of a traced warp
#ifdef WS_TRACE_EXPERIMENT_CLOCK_ONLY
    std::uint32_t sink = 0;  // keeps the clock reads alive (ptxas drops an unused %clock64 read)
#endif

    // Declares the warp's role and points it at its region. Call once per warp, early, from all 32
    // lanes, with warp-uniform arguments. `staging`: kTraceSmemPerWarp bytes of shared memory owned by
    // this warp, 16-byte aligned.
    __device__ __forceinline__ void begin(void* buffer, std::uint32_t warp, std::uint8_t role, std::uint8_t warpgroup,
                                          std::uint8_t roleIndex, void* staging, std::uint8_t userRole = kNoUserRole)
    {
        stage = static_cast<std::uint32_t>(__cvta_generic_to_shared(staging));
#ifdef WS_TRACE_EXPERIMENT_UNIFORM
        {
            bool ok = false;
            if (buffer != nullptr) {
                const auto* h = static_cast<const TraceBufferHeader*>(buffer);
                if (headerMatches(h)) {
                    ok = true;
                    hdr = warpRegion(buffer, h, warp);
                    cap = h->eventsPerWarp;
                }
            }
            const auto a = reinterpret_cast<std::uint64_t>(hdr);
            const std::uint32_t lo = __shfl_sync(0xffffffffu, std::uint32_t(a), 0);
            const std::uint32_t hi = __shfl_sync(0xffffffffu, std::uint32_t(a >> 32), 0);
            hdr = reinterpret_cast<WarpRegionHeader*>((std::uint64_t(hi) << 32) | lo);
            cap = __shfl_sync(0xffffffffu, cap, 0);
            ev = reinterpret_cast<TraceEvent*>(hdr + 1);
            if (!ok || (threadIdx.x & 31u) != 0) return;
        }
#else
        if (buffer == nullptr || (threadIdx.x & 31u) != 0) return;
        const auto* h = static_cast<const TraceBufferHeader*>(buffer);
        if (!headerMatches(h)) return;
        hdr = warpRegion(buffer, h, warp);
        ev = reinterpret_cast<TraceEvent*>(hdr + 1);
        cap = h->eventsPerWarp;
#endif
        writer = true;
        const std::uint32_t w2 = userRole == kNoUserRole ? 0u : std::uint32_t(userRole);
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(hdr), "r"(0u),
                     "r"(roleWord(role, warpgroup, roleIndex, userRole)), "r"(w2), "r"(0u)
                     : "memory");
    }

    // The warp enters phase `kind` (or passes a marker) at this moment. Warp-uniform call.
    __device__ __forceinline__ void event(std::uint8_t kind, std::int32_t kstep = -1, std::uint8_t slot = kNoSlot,
                                          std::int16_t aux = 0)
    {
        eventAt(readClock64(), kind, kstep, slot, aux);
    }

    // Split form: take the time with now() where the phase begins, record it later.
    __device__ __forceinline__ std::uint64_t now() { return readClock64(); }

    __device__ __forceinline__ void eventAt(std::uint64_t c, std::uint8_t kind, std::int32_t kstep = -1,
                                            std::uint8_t slot = kNoSlot, std::int16_t aux = 0)
    {
#ifdef WS_TRACE_EXPERIMENT_CLOCK_ONLY  // experiment only: clock reads kept (folded into `sink`), nothing stored
        sink ^= std::uint32_t(c) ^ std::uint32_t(kstep) ^ (std::uint32_t(kind) | std::uint32_t(slot) << 8)
            ^ (std::uint32_t(std::uint16_t(aux)) << 16);
        ++count;
        return;
#endif
        const std::uint32_t w3 = std::uint32_t(std::uint16_t(aux)) | (std::uint32_t(slot) << 16)
            | (std::uint32_t(kind) << 24);
        const std::uint32_t at = stage + ((count & 63u) << 4);
        asm volatile(
            "{\n.reg .pred p;\n"
            "setp.ne.u32 p, %5, 0;\n"
            "@p st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n}" ::"r"(at),
            "r"(std::uint32_t(c)), "r"(std::uint32_t(c >> 32)), "r"(std::uint32_t(kstep)), "r"(w3),
            "r"(std::uint32_t(writer))
            : "memory");
        ++count;
        if ((count & 31u) == 0) flush(32);
    }

    // Batched form: N events whose moments were taken earlier with now(), staged by one call -- the same events, in
    // the same order, as N eventAt() calls. When the batch stays inside the current half without filling it (the
    // common case: 32 - N of 32 positions), the N stores share one address and one count update and no flush test runs;
    // otherwise the N events go through eventAt() one by one (the half is flushed where it fills, as always). So a
    // hot loop can take only clock reads where its phases begin and stage them together where the warp waits anyway
    // (the GEMM ladder's consumer k-step, session 11: N = 4 events per k-step, one test instead of four).
    // The batch's stores are lane 0's, recording or not (a lane index the compiler can recompute, where `writer` had to
    // be kept through the caller's loop: traced stream-K kTiles[0] spilled it there); a launch that does not record
    // stages into the warp's own ring, which only a writer copies out. So the warp must have passed its staging memory
    // to begin() (Warp<Staged> always needs it), even when not recording.
    template <int N>
    __device__ __forceinline__ void eventsAt(const StampedEvent (&e)[N])
    {
        static_assert(N >= 1 && N < 32, "a batch fits in one half of the staging ring");
#ifndef WS_TRACE_EXPERIMENT_CLOCK_ONLY
        if ((count & 31u) + N < 32u) {
            const std::uint32_t at = stage + ((count & 63u) << 4);
#pragma unroll
            for (int j = 0; j < N; ++j) {
                const std::uint32_t w3 = std::uint32_t(std::uint16_t(e[j].aux)) | (std::uint32_t(e[j].slot) << 16)
                    | (std::uint32_t(e[j].kind) << 24);
                asm volatile(
                    "{\n.reg .pred p;\n"
                    "setp.ne.u32 p, %5, 0;\n"
                    "@p st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n}" ::"r"(at + 16u * j),
                    "r"(std::uint32_t(e[j].clock)), "r"(std::uint32_t(e[j].clock >> 32)), "r"(std::uint32_t(e[j].kstep)),
                    "r"(w3), "r"(std::uint32_t((threadIdx.x & 31u) == 0u))
                    : "memory");
            }
            count += N;
            return;
        }
#endif
#pragma unroll
        for (int j = 0; j < N; ++j) eventAt(e[j].clock, e[j].kind, e[j].kstep, e[j].slot, e[j].aux);
    }

    // One 16-byte packed record (trace_format.h: kEventKStep4 / kEventLoad2) at the next staging position, lane 0's
    // store as in eventsAt's fast path, then the flush test: the one store of kStepAt and loadAt.
    __device__ __forceinline__ void storeRecord(std::uint32_t w0, std::uint32_t w1, std::uint32_t w2, std::uint32_t w3)
    {
        const std::uint32_t at = stage + ((count & 63u) << 4);
        asm volatile(
            "{\n.reg .pred p;\n"
            "setp.ne.u32 p, %5, 0;\n"
            "@p st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n}" ::"r"(at),
            "r"(w0), "r"(w1), "r"(w2), "r"(w3), "r"(std::uint32_t((threadIdx.x & 31u) == 0u))
            : "memory");
        ++count;
        if ((count & 31u) == 0) flush(32);
    }

    // One consumer k-step (session 14, the GEMM ladder's ping-pong body): e = MmaWait and Release of k-step
    // e[2].kstep - Lag, WaitData and MmaIssue of e[2].kstep, stamped earlier, every slot = its kstep % Stages. When the
    // three gaps between the four clocks fit 16 bits (cycles), they go into ONE 16-byte record (kEventKStep4,
    // trace_format.h: the first clock's low word, the gaps, the kstep, Stages and Lag); the decoder expands it into
    // the same four events. Otherwise the four events go as eventsAt(e) writes them. A quarter of the stores, the
    // flushes and the staging ring's fill per k-step, and no clock's high word or kind/slot word to build.
    // As eventsAt's fast path, the store is lane 0's, recording or not (the warp's own ring).
    template <int Stages, int Lag>
    __device__ __forceinline__ void kStepAt(const StampedEvent (&e)[4])
    {
        static_assert(Stages >= 1 && Stages < 16 && Lag >= 0 && Lag < 16, "Stages and Lag fit four bits each");
#ifndef WS_TRACE_EXPERIMENT_CLOCK_ONLY
        const std::uint32_t c0 = std::uint32_t(e[0].clock), c1 = std::uint32_t(e[1].clock),
                            c2 = std::uint32_t(e[2].clock), c3 = std::uint32_t(e[3].clock);
        const std::uint32_t d1 = c1 - c0, d2 = c2 - c1, d3 = c3 - c2;
        if (((d1 | d2 | d3) >> 16) == 0u) {
            const std::uint32_t w3 = d3 | (std::uint32_t(Stages | (Lag << 4)) << 16) | (std::uint32_t(kEventKStep4) << 24);
            storeRecord(c0, d1 | (d2 << 16), std::uint32_t(e[2].kstep), w3);
            return;
        }
#endif
        eventsAt(e);
    }
    // The producer's k-step (session 14): e = WaitSlot then IssueLoad of k-step e[0].kstep, both slots kstep % Stages, in
    // ONE record (kEventLoad2: the first clock's low word and the gap) when the gap fits 32 bits; else eventsAt(e).
    template <int Stages>
    __device__ __forceinline__ void loadAt(const StampedEvent (&e)[2])
    {
        static_assert(Stages >= 1 && Stages < 16, "Stages fits four bits");
#ifndef WS_TRACE_EXPERIMENT_CLOCK_ONLY
        const std::uint64_t gap = e[1].clock - e[0].clock;
        if ((gap >> 32) == 0u) {
            const std::uint32_t w3 = (std::uint32_t(Stages) << 16) | (std::uint32_t(kEventLoad2) << 24);
            storeRecord(std::uint32_t(e[0].clock), std::uint32_t(gap), std::uint32_t(e[0].kstep), w3);
            return;
        }
#endif
        eventsAt(e);
    }

    // Two phase events of one k-step (session 16, format version 3): e[0] then e[1], the same kstep, slots kstep % Stages
    // (Stages = 0: no slot), any phase kinds: ONE record (kEventPair: the first clock's low word and the gap, both kinds
    // in aux) when the gap fits 32 bits; else eventsAt(e).
    template <int Stages>
    __device__ __forceinline__ void pairAt(const StampedEvent (&e)[2])
    {
        static_assert(Stages >= 0 && Stages < 16, "Stages fits four bits");
#ifndef WS_TRACE_EXPERIMENT_CLOCK_ONLY
        const std::uint64_t gap = e[1].clock - e[0].clock;
        if ((gap >> 32) == 0u) {
            const std::uint32_t w3 = std::uint32_t(e[0].kind) | (std::uint32_t(e[1].kind) << 8)
                | (std::uint32_t(Stages) << 16) | (std::uint32_t(kEventPair) << 24);
            storeRecord(std::uint32_t(e[0].clock), std::uint32_t(gap), std::uint32_t(e[0].kstep), w3);
            return;
        }
#endif
        eventsAt(e);
    }

    // Lane 0 copies the staged half holding events [base, base + n) to global memory.
    __device__ __forceinline__ void flush(std::uint32_t n)
    {
#ifdef WS_TRACE_EXPERIMENT_NO_FLUSH  // experiment only: no fence, no copy (the trace is not valid; session 8)
        return;
#endif
        if (!writer) return;
        const std::uint32_t base = (count - 1u) & ~31u;  // index of the batch's first event
        const std::uint32_t half = stage + (base & 32u) * 16u;
        const std::uint32_t room = cap > base ? cap - base : 0u;
        const std::uint32_t m = n < room ? n : room;
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // st.shared -> visible to the copy
#ifndef WS_TRACE_EXPERIMENT_NO_STORE
        if (m > 0)
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(ev + base),
                         "r"(half), "r"(m * 16u)
                         : "memory");
#endif
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        // the other half is written next: its copy (issued 32 events ago) must be done reading
        asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
    }

    // Last event (kEventEnd), the partial batch, completion of the copies, and the final attempted-event
    // count (lane 0).
    // WaitWrites = false (endAsync, session 14): wait only until the copies have READ the staging ring (the shared
    // memory may go when the CTA ends); their global writes complete with the kernel, before the host reads the buffer.
    template <bool WaitWrites = true>
    __device__ __forceinline__ void end()
    {
        event(kEventEnd);
#ifdef WS_TRACE_EXPERIMENT_CLOCK_ONLY
        if (writer && sink == 0x9e3779b9u) asm volatile("st.global.u32 [%0], %1;" ::"l"(&hdr->count), "r"(sink) : "memory");
        return;
#endif
        if ((count & 31u) != 0) flush(count & 31u);
        if (writer) {
            if constexpr (WaitWrites) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
            else asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
            asm volatile("st.global.u32 [%0], %1;" ::"l"(&hdr->count), "r"(count) : "memory");
        }
    }
    __device__ __forceinline__ void endAsync() { end<false>(); }
    __device__ __forceinline__ bool writes() const { return writer; }
};

// The CTA record engine: one thread writes the start pair and %smid; the end pair is written after a
// CTA-wide barrier so it follows every warp's last event.
struct NullCtaRecord {
    __device__ __forceinline__ void begin(void*) {}
    __device__ __forceinline__ void end(void*) {}
    __device__ __forceinline__ void endKnown(void*, bool, bool) {}
};
struct CtaRecordWriter {
    __device__ __forceinline__ CtaRecord* record(void* buffer)
    {
        auto* h = static_cast<TraceBufferHeader*>(buffer);
        return reinterpret_cast<CtaRecord*>(h + 1) + linearCta();
    }
    // `first`: the thread that writes the record (the ladder's 1-D blocks: threadIdx.x == 0).
    __device__ __forceinline__ void begin(void* buffer) { begin(buffer, threadIdx.x == 0); }
    __device__ __forceinline__ void end(void* buffer) { end(buffer, threadIdx.x == 0); }
    __device__ __forceinline__ void begin(void* buffer, bool first)
    {
        if (buffer == nullptr || !first) return;
        if (!headerMatches(static_cast<const TraceBufferHeader*>(buffer))) return;
        const std::uint64_t g = readGlobalTimer();
        const std::uint64_t c = readClock64();
        CtaRecord* r = record(buffer);
        r->globaltimerStart = g;
        r->clockStart = c;
        r->smId = readSmId();
        r->flags = 1u;
    }
    // The start pair read earlier (g = %globaltimer, c = %clock64, in the thread that writes), written now: a kernel
    // whose first thread must not wait for the header's load before its own work (the relay, trace_relay.cuh).
    __device__ __forceinline__ void beginAt(void* buffer, bool first, std::uint64_t g, std::uint64_t c)
    {
        if (buffer == nullptr || !first) return;
        if (!headerMatches(static_cast<const TraceBufferHeader*>(buffer))) return;
        CtaRecord* r = record(buffer);
        r->globaltimerStart = g;
        r->clockStart = c;
        r->smId = readSmId();
        r->flags = 1u;
    }
    // Every thread of the CTA must call this (it contains __syncthreads() when buffer != null).
    __device__ __forceinline__ void end(void* buffer, bool first)
    {
        if (buffer == nullptr) return;
        __syncthreads();
        if (!first) return;
        if (!headerMatches(static_cast<const TraceBufferHeader*>(buffer))) return;
        const std::uint64_t g = readGlobalTimer();
        const std::uint64_t c = readClock64();
        CtaRecord* r = record(buffer);
        r->globaltimerEnd = g;
        r->clockEnd = c;
        r->flags = 3u;
    }
    // end() without the header's load: `valid` = this launch records into a matching buffer, as the writing thread
    // learnt at its start (the ladder's ping-pong body: warp 0's Warp::writes() in thread 0, session 14).
    __device__ __forceinline__ void endKnown(void* buffer, bool first, bool valid)
    {
        if (buffer == nullptr) return;
        __syncthreads();
        if (!first || !valid) return;
        const std::uint64_t g = readGlobalTimer();
        const std::uint64_t c = readClock64();
        CtaRecord* r = record(buffer);
        r->globaltimerEnd = g;
        r->clockEnd = c;
        r->flags = 3u;
    }
};

// ---------------------------------------------------------------- the public API
inline constexpr bool kEnabled = WARPSTAGE_TRACE != 0;
struct Direct {};  // engine tags for Warp<>: lane 0 stores to global memory (default)
struct Staged {};  //   staging in the warp's shared memory + TMA bulk copies (the ladder's)
struct Off {};     //   no tracing at all (the ladder's untraced build)

// The CTA's trace: which buffer this launch records into (null: not recording) and the CTA record.
// Construct it in every thread at kernel start: Cta() reads warpstage_trace_control (the recorder's
// buffer or null), Cta(buffer) takes a buffer the host passed explicitly (the ladder's way).
class Cta {
public:
#if !WARPSTAGE_TRACE || defined(WARPSTAGE_DETAIL_HAVE_CONTROL_)
    __device__ __forceinline__ Cta()
    {
#if WARPSTAGE_TRACE
        m_buffer = *static_cast<void* volatile*>(&warpstage_trace_control.buffer);
        m_rec.begin(m_buffer, firstThread());
#endif
    }
#endif
    __device__ __forceinline__ explicit Cta(void* buffer)
    {
#if WARPSTAGE_TRACE
        m_buffer = buffer;
        m_rec.begin(m_buffer, firstThread());
#endif
    }
    // Describes the kernel's pipeline for the recorder: `slots` (stages of the ring) and the bytes one
    // load (one k-step) brings; the loads lane and the throughput metrics use them. Call it from every
    // thread or any; only thread 0 of CTA 0 writes (two stores, once), and only while recording.
    __device__ __forceinline__ void pipeline(std::uint32_t slots, std::uint32_t bytesPerLoad)
    {
#if WARPSTAGE_TRACE
        if (m_buffer == nullptr || !firstThread() || linearCta() != 0) return;
        auto* h = static_cast<TraceBufferHeader*>(m_buffer);
        h->stages = slots;
        h->bytesPerKStep = bytesPerLoad;
#endif
    }
    // True while this launch records (warp-uniform; use it to skip work done only for the trace).
    __device__ __forceinline__ bool recording() const { return kEnabled && m_buffer != nullptr; }
    __device__ __forceinline__ void* buffer() const { return m_buffer; }
    // CTA end record. Every thread of the CTA must call it (a __syncthreads() while recording).
    __device__ __forceinline__ void end()
    {
#if WARPSTAGE_TRACE
        m_rec.end(m_buffer, firstThread());
#endif
    }

private:
    __device__ __forceinline__ static bool firstThread() { return (threadIdx.x | threadIdx.y | threadIdx.z) == 0; }
    void* m_buffer = nullptr;
#if WARPSTAGE_TRACE
    CtaRecordWriter m_rec;
#endif
};

template <class Engine>
using EngineFor = typename std::conditional<
    !kEnabled || std::is_same<Engine, Off>::value, NullWarp,
    typename std::conditional<std::is_same<Engine, Staged>::value, StagedWarp, DirectWarp>::type>::type;

// One warp's trace. Construct it in all 32 lanes of the warp with warp-uniform arguments. `role`:
// role::Producer / Consumer / Epilogue / Worker / Idle; `warpgroup` and `roleIndex` name the lane
// ("consumer WG1"); `userRole`: index into WARPSTAGE_ROLE_NAMES for the display name.
template <class Engine = Direct>
class Warp {
public:
    __device__ __forceinline__ Warp() {}
    __device__ __forceinline__ Warp(const Cta& cta, std::uint8_t r, std::uint8_t warpgroup = 0xFF,
                                    std::uint8_t roleIndex = 0, std::uint8_t userRole = kNoUserRole,
                                    void* staging = nullptr)
    {
        begin(cta.buffer(), warpInCta(), r, warpgroup == 0xFF ? std::uint8_t(warpInCta() / 4) : warpgroup, roleIndex,
              staging, userRole);
    }
    // Explicit form (the ladder's): buffer, warp index in the CTA, role, warpgroup, roleIndex, staging.
    __device__ __forceinline__ void begin(void* buffer, std::uint32_t warp, std::uint8_t r, std::uint8_t warpgroup,
                                          std::uint8_t roleIndex, void* staging = nullptr,
                                          std::uint8_t userRole = kNoUserRole)
    {
        m_e.begin(buffer, warp, r, warpgroup, roleIndex, staging, userRole);
    }

    // The warp enters a phase: a standard kind (phase::WaitData, ...) or userPhase(i).
    __device__ __forceinline__ void phase(std::uint8_t k, std::int32_t kstep = -1, std::uint8_t slot = kNoSlot)
    {
        m_e.event(k, kstep, slot);
    }
    // The warp issues the load of k-step `kstep` into `slot` (enters phase::IssueLoad).
    __device__ __forceinline__ void loadIssue(std::int32_t kstep, std::uint8_t slot = kNoSlot)
    {
        m_e.event(kind::IssueLoad, kstep, slot);
    }
    // The data of k-step `kstep` is ready (a marker: the current phase goes on). Call it right after the
    // wait on the full barrier returns, in the warp that waited.
    __device__ __forceinline__ void loadReady(std::int32_t kstep, std::uint8_t slot = kNoSlot)
    {
        m_e.event(kEventLoadReady, kstep, slot);
    }
    // Output tile (tileM, tileN) begins / ends (markers).
    __device__ __forceinline__ void tileBegin(std::int32_t tileM, std::int16_t tileN)
    {
        m_e.event(kEventTileBegin, tileM, kNoSlot, tileN);
    }
    __device__ __forceinline__ void tileEnd() { m_e.event(kEventTileEnd); }
    // The warp's last event: closes its last phase and writes its event count. Once per warp.
    __device__ __forceinline__ void end() { m_e.end(); }
    // end() that does not wait for the warp's last bulk copies to reach global memory, only for them to have read its
    // staging memory (Warp<Staged>; the others: end()); the kernel's completion completes the writes.
    __device__ __forceinline__ void endAsync() { m_e.endAsync(); }
    // True in the lane that stores this warp's events while the launch records into a matching buffer (lane 0).
    __device__ __forceinline__ bool writes() const { return m_e.writes(); }

    // Low level (the ladder's calls): any kind or marker; now() + eventAt() to stamp a moment and record
    // it later.
    __device__ __forceinline__ void event(std::uint8_t k, std::int32_t kstep = -1, std::uint8_t slot = kNoSlot,
                                          std::int16_t aux = 0)
    {
        m_e.event(k, kstep, slot, aux);
    }
    __device__ __forceinline__ std::uint64_t now() { return m_e.now(); }
    __device__ __forceinline__ void eventAt(std::uint64_t c, std::uint8_t k, std::int32_t kstep = -1,
                                            std::uint8_t slot = kNoSlot, std::int16_t aux = 0)
    {
        m_e.eventAt(c, k, kstep, slot, aux);
    }
    // N events stamped earlier (now()), staged by one call: the same trace as N eventAt() calls, cheaper with
    // Warp<Staged> (one address, one flush test).
    template <int N>
    __device__ __forceinline__ void eventsAt(const StampedEvent (&e)[N])
    {
        m_e.eventsAt(e);
    }
    // A consumer k-step's four events stamped earlier -- MmaWait and Release of k-step e[2].kstep - Lag, WaitData and
    // MmaIssue of e[2].kstep, each slot its kstep % Stages (a ring of Stages slots): the same trace as eventsAt(e);
    // Warp<Staged> stores them as one packed record when it can (trace_format.h, kEventKStep4).
    template <int Stages, int Lag>
    __device__ __forceinline__ void kStepAt(const StampedEvent (&e)[4])
    {
        m_e.template kStepAt<Stages, Lag>(e);
    }
    // The producer's WaitSlot then IssueLoad of k-step e[0].kstep, both slots kstep % Stages: the same trace as
    // eventsAt(e); Warp<Staged> stores them as one record when it can (kEventLoad2).
    template <int Stages>
    __device__ __forceinline__ void loadAt(const StampedEvent (&e)[2])
    {
        m_e.template loadAt<Stages>(e);
    }
    // Two phase events of one k-step, slots kstep % Stages (0: none): the same trace as eventsAt(e); Warp<Staged> stores
    // them as one record when it can (kEventPair, format version 3).
    template <int Stages>
    __device__ __forceinline__ void pairAt(const StampedEvent (&e)[2])
    {
        m_e.template pairAt<Stages>(e);
    }

private:
    EngineFor<Engine> m_e;
};

// A trace that keeps its last event instead of recording it, for hot loops (the GEMM ladder's consumer k-step since
// session 11, the lce family's since session 16): hand a Stamp<> where a Warp would go (a ring's waitData / release /
// issueLoad, mmaWait) or call `stamp.event(kind, ...)` where a phase begins -- it only reads the clock -- and stage the
// kept events `stamp.e` later, together, where the warp waits anyway: Warp::eventsAt, or kStepAt / loadAt (one packed
// record). The source still names every phase where it begins (the stall pass's stage map reads those calls).
// Stamp<false>: nothing (an untraced instance; it has no `e`: use it under `if constexpr`).
template <bool Traced = true>
struct Stamp : NullWarp {
};
template <>
struct Stamp<true> {
    StampedEvent e{};
    __device__ __forceinline__ std::uint64_t now() { return e.clock = readClock64(); }
    __device__ __forceinline__ void event(std::uint8_t kind, std::int32_t kstep = -1, std::uint8_t slot = kNoSlot,
                                          std::int16_t aux = 0)
    {
        e = {readClock64(), kstep, kind, slot, aux};
    }
    __device__ __forceinline__ void eventAt(std::uint64_t c, std::uint8_t kind, std::int32_t kstep = -1,
                                            std::uint8_t slot = kNoSlot, std::int16_t aux = 0)
    {
        e = {c, kstep, kind, slot, aux};
    }
};

}  // namespace ws::trace
#endif  // __CUDACC__
