// GPU test of the batched event form (<warpstage/trace.cuh>: Warp::eventsAt, session 11), which the ping-pong body's
// k-steps use: N events stamped earlier, staged by one call, must give exactly the trace of N eventAt() calls. A CTA
// of 8 warps, each recording a known number of events (CTA c, warp w: 40 + 37 w + c: regions ending anywhere in a
// half) as a mix of single eventAt() calls and batches of 2, 3 and 4 whose sizes cycle with a per-warp offset, so
// that over the run a batch starts at every position of a 32-event half: inside it (the one-test fast path), filling
// it exactly and crossing into the next half (the event-by-event path, which flushes where the half fills). Every
// event carries its own payload (clock = a synthetic value from warp and index, kstep = index, slot = warp,
// aux = index * 3 + CTA) and is checked on the host, all 16 bytes, in order, with the count, the role word and the
// end mark; then with a capacity of 50 and of 32 events (overflow: the count still exact, nothing past the
// capacity), and with a null buffer (not recording). Both engines: Warp<Staged> (the fast path) and Warp<Direct>
// (eventsAt = N eventAt calls).
// Exit: 0 passed, 1 failed, 77 no sm_90 device (SKIP; WARPSTAGE_REQUIRE_GPU=1 makes that a failure).
#include "warpstage/trace.cuh"

#include "common/gpu_skip.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kWarps = 8, kCtas = 4;
__host__ __device__ constexpr int eventsOf(int warp, int cta) { return 40 + 37 * warp + cta; }
__host__ __device__ constexpr std::uint64_t clockOf(int warp, int i)
{
    return (std::uint64_t(warp + 1) << 40) + 0x100000000ull + std::uint64_t(i) * 7u;
}
// batch sizes, cycled from a per-warp offset (1: a single eventAt)
__device__ constexpr int kSizes[8] = {4, 1, 2, 4, 3, 4, 4, 1};

__device__ __forceinline__ ws::trace::StampedEvent eventOf(int warp, int cta, int i)
{
    return {clockOf(warp, i), i, ws::trace::kind::Compute, std::uint8_t(warp), std::int16_t(i * 3 + cta)};
}

template <class Engine>
__global__ void batchKernel(void* buffer)
{
    extern __shared__ __align__(1024) std::uint8_t smem[];
    namespace wt = ws::trace;
    const int warp = threadIdx.x / 32, cta = blockIdx.x;
    wt::Warp<Engine> w;
    w.begin(buffer, warp, wt::role::Worker, std::uint8_t(warp / 4), std::uint8_t(warp % 4),
            smem + warp * wt::kTraceSmemPerWarp);
    const int n = eventsOf(warp, cta);
    int i = 0, g = warp + cta;
    while (i < n) {
        int size = kSizes[g++ % 8];
        if (size > n - i) size = 1;
        if (size == 1) {
            const wt::StampedEvent e = eventOf(warp, cta, i);
            w.eventAt(e.clock, e.kind, e.kstep, e.slot, e.aux);
        } else if (size == 2) {
            const wt::StampedEvent e[2] = {eventOf(warp, cta, i), eventOf(warp, cta, i + 1)};
            w.eventsAt(e);
        } else if (size == 3) {
            const wt::StampedEvent e[3] = {eventOf(warp, cta, i), eventOf(warp, cta, i + 1), eventOf(warp, cta, i + 2)};
            w.eventsAt(e);
        } else {
            const wt::StampedEvent e[4] = {eventOf(warp, cta, i), eventOf(warp, cta, i + 1), eventOf(warp, cta, i + 2),
                                           eventOf(warp, cta, i + 3)};
            w.eventsAt(e);
        }
        i += size;
    }
    w.end();
}

// Session 14: Warp::kStepAt<6, 2> (the ping-pong body's consumer k-step: MmaWait and Release of k - 2, WaitData and
// MmaIssue of k, slots k % 6): after a Setup event, warp w of CTA c records kstepsOf(w, c) k-steps whose gaps are
// small (packed into one kEventKStep4 record by Warp<Staged>) except every 7th k-step's WaitData gap and every 11th's
// MmaIssue gap, 70000 cycles (> 16 bits: the four plain events); then its end. Expanded with forEachEvent, every
// region must be the plain events, clocks included.
__host__ __device__ constexpr int kstepsOf(int warp, int cta) { return 20 + 13 * warp + 5 * cta; }
// the four clocks of k-step j (k = j + 2) of warp w: MmaWait, Release, WaitData, MmaIssue
// Warp::loadAt<6> (the producer's WaitSlot + IssueLoad of k-step j + 2) after k-step j when j % 3 == 0 or j % 13 == 4;
// at j % 13 == 4 its gap is 2^32 + 5 cycles (> 32 bits: the two plain events), and the later clocks move on by as much.
__host__ __device__ constexpr bool hasLoad(int j) { return j % 3 == 0 || j % 13 == 4; }
__host__ __device__ constexpr std::uint64_t loadGap(int j) { return j % 13 == 4 ? (1ull << 32) + 5 : 500u + j; }
__host__ __device__ constexpr std::uint64_t kstepClock(int warp, int j, int e)
{
    const std::uint64_t base = (std::uint64_t(warp + 1) << 36) + 0xFFFFF000ull + std::uint64_t(j) * 400000u
        + std::uint64_t((j + 8) / 13) * ((1ull << 32) + (1ull << 20));  // past the long load gaps before k-step j
    const std::uint64_t gap1 = 17 + j % 5, gap2 = j % 7 == 3 ? 70000 : 300 + j, gap3 = j % 11 == 5 ? 70000 : 60 + 2 * j;
    return base + (e >= 1 ? gap1 : 0) + (e >= 2 ? gap2 : 0) + (e >= 3 ? gap3 : 0);
}
constexpr std::uint64_t kSetupClock = 0x12345ull;

template <class Engine>
__global__ void kstepKernel(void* buffer)
{
    extern __shared__ __align__(1024) std::uint8_t smem[];
    namespace wt = ws::trace;
    const int warp = threadIdx.x / 32, cta = blockIdx.x;
    wt::Warp<Engine> w;
    w.begin(buffer, warp, wt::role::Consumer, std::uint8_t(warp / 4), std::uint8_t(warp % 4),
            smem + warp * wt::kTraceSmemPerWarp);
    w.eventAt(kSetupClock + (std::uint64_t(warp + 1) << 36), wt::kind::Setup);
    for (int j = 0; j < kstepsOf(warp, cta); ++j) {
        const int k = j + 2;
        const wt::StampedEvent e[4] = {{kstepClock(warp, j, 0), k - 2, wt::kind::MmaWait, std::uint8_t((k - 2) % 6), 0},
                                       {kstepClock(warp, j, 1), k - 2, wt::kind::Release, std::uint8_t((k - 2) % 6), 0},
                                       {kstepClock(warp, j, 2), k, wt::kind::WaitData, std::uint8_t(k % 6), 0},
                                       {kstepClock(warp, j, 3), k, wt::kind::MmaIssue, std::uint8_t(k % 6), 0}};
        w.template kStepAt<6, 2>(e);
        if (hasLoad(j)) {
            const std::uint64_t t = kstepClock(warp, j, 3) + 1000;
            const wt::StampedEvent l[2] = {{t, k, wt::kind::WaitSlot, std::uint8_t(k % 6), 0},
                                           {t + loadGap(j), k, wt::kind::IssueLoad, std::uint8_t(k % 6), 0}};
            w.template loadAt<6>(l);
        }
    }
    w.end();
}

int g_fail = 0;
void check(bool ok, const std::string& what)
{
    if (!ok) {
        ++g_fail;
        if (g_fail <= 20) std::printf("FAIL %s\n", what.c_str());
    }
}

template <class Engine>
void launch(void* d)
{
    batchKernel<Engine><<<kCtas, kWarps * 32, kWarps * int(ws::trace::kTraceSmemPerWarp)>>>(d);
}

// One launch with capacity `cap`; checks every region. False on a CUDA error.
template <class Engine>
bool runCase(const char* mode, std::uint32_t cap)
{
    namespace wt = ws::trace;
    const std::uint64_t bytes = wt::bufferBytes(kCtas, kWarps, cap);
    void* d = nullptr;
    if (cudaMalloc(&d, bytes) != cudaSuccess) return false;
    cudaMemset(d, 0, bytes);
    wt::TraceBufferHeader h{};
    h.magic = wt::kMagic;
    h.version = wt::kFormatVersion;
    h.numCtas = kCtas;
    h.warpsPerCta = kWarps;
    h.eventsPerWarp = cap;
    cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
    launch<Engine>(d);
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        std::printf("FAIL %s cap %u: %s\n", mode, cap, cudaGetErrorString(e));
        ++g_fail;
        cudaFree(d);
        return false;
    }
    std::vector<std::uint8_t> buf(bytes);
    cudaMemcpy(buf.data(), d, bytes, cudaMemcpyDeviceToHost);
    cudaFree(d);
    const int before = g_fail;
    for (int c = 0; c < kCtas; ++c)
        for (int w = 0; w < kWarps; ++w) {
            const std::string at = std::string(mode) + " cap " + std::to_string(cap) + " cta " + std::to_string(c)
                + " warp " + std::to_string(w);
            const auto off = wt::warpRegionOffset(kCtas, kWarps, cap, std::uint32_t(c), std::uint32_t(w));
            wt::WarpRegionHeader rh;
            std::memcpy(&rh, buf.data() + off, sizeof rh);
            const auto* ev = reinterpret_cast<const wt::TraceEvent*>(buf.data() + off + sizeof rh);
            check(rh.role == wt::role::Worker && rh.warpgroup == w / 4 && rh.roleIndex == w % 4, at + ": role word");
            const std::uint32_t n = std::uint32_t(eventsOf(w, c));
            check(rh.count == n + 1, at + ": count " + std::to_string(rh.count) + ", expected " + std::to_string(n + 1));
            for (std::uint32_t i = 0; i < n + 1 && i < cap; ++i) {
                const auto& x = ev[i];
                if (i == n) {
                    check(x.kind == wt::kEventEnd, at + ": last event is not the end mark");
                    continue;
                }
                const bool ok = x.clock == clockOf(w, int(i)) && x.kind == wt::kind::Compute
                    && x.kstep == std::int32_t(i) && x.slot == w && x.aux == std::int16_t(i * 3 + c);
                check(ok, at + ": event " + std::to_string(i) + " (kind " + std::to_string(x.kind) + ", kstep "
                              + std::to_string(x.kstep) + ", clock " + std::to_string(x.clock) + ")");
            }
            for (std::uint32_t i = n + 1; i < cap; ++i)  // nothing past the last event (the buffer was zeroed)
                if (ev[i].clock != 0 || ev[i].kind != 0) {
                    check(false, at + ": event written past the count at " + std::to_string(i));
                    break;
                }
            if (cap < n + 1) {  // overflow: the next region's header is intact (this warp wrote nothing past its own)
                const auto next = off + sizeof rh + std::uint64_t(cap) * sizeof(wt::TraceEvent);
                if (next + sizeof rh <= buf.size()) {
                    wt::WarpRegionHeader nh;
                    std::memcpy(&nh, buf.data() + next, sizeof nh);
                    check(nh.flags != 0, at + ": the next region's header was overwritten");
                }
            }
        }
    std::printf("%s %s, capacity %u: %d CTAs x %d warps, single and batched events, counts, payloads, order\n",
                g_fail == before ? "PASS" : "FAIL", mode, cap, kCtas, kWarps);
    return true;
}

// kstepKernel's launch: every region expanded (forEachEvent) must be Setup, the plain k-step events, the end mark;
// `packed`: Warp<Staged> must have packed some k-steps (and not the ones with a gap over 16 bits).
template <class Engine>
void runKSteps(const char* mode, bool packed)
{
    namespace wt = ws::trace;
    const std::uint32_t cap = 4096;
    const std::uint64_t bytes = wt::bufferBytes(kCtas, kWarps, cap);
    void* d = nullptr;
    if (cudaMalloc(&d, bytes) != cudaSuccess) return;
    cudaMemset(d, 0, bytes);
    wt::TraceBufferHeader h{};
    h.magic = wt::kMagic;
    h.version = wt::kFormatVersion;
    h.numCtas = kCtas;
    h.warpsPerCta = kWarps;
    h.eventsPerWarp = cap;
    cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);
    kstepKernel<Engine><<<kCtas, kWarps * 32, kWarps * int(wt::kTraceSmemPerWarp)>>>(d);
    const cudaError_t e = cudaDeviceSynchronize();
    std::vector<std::uint8_t> buf(bytes);
    if (e == cudaSuccess) cudaMemcpy(buf.data(), d, bytes, cudaMemcpyDeviceToHost);
    cudaFree(d);
    check(e == cudaSuccess, std::string(mode) + " k-steps: " + cudaGetErrorString(e));
    if (e != cudaSuccess) return;
    const int before = g_fail;
    std::uint64_t records = 0, packs = 0, loadPacks = 0;
    for (int c = 0; c < kCtas; ++c)
        for (int w = 0; w < kWarps; ++w) {
            const std::string at = std::string(mode) + " k-steps cta " + std::to_string(c) + " warp " + std::to_string(w);
            const auto off = wt::warpRegionOffset(kCtas, kWarps, cap, std::uint32_t(c), std::uint32_t(w));
            wt::WarpRegionHeader rh;
            std::memcpy(&rh, buf.data() + off, sizeof rh);
            const auto* rec = reinterpret_cast<const wt::TraceEvent*>(buf.data() + off + sizeof rh);
            const std::uint32_t n = std::min(rh.count, cap);
            records += n;
            for (std::uint32_t i = 0; i < n; ++i) packs += rec[i].kind == wt::kEventKStep4;
            for (std::uint32_t i = 0; i < n; ++i) loadPacks += rec[i].kind == wt::kEventLoad2;
            std::vector<wt::TraceEvent> ev;
            wt::forEachEvent(rec, n, [&](const wt::TraceEvent& x) { ev.push_back(x); });
            const int m = kstepsOf(w, c);
            int loads = 0;
            for (int j = 0; j < m; ++j) loads += hasLoad(j);
            const std::size_t want = std::size_t(4 * m + 2 * loads + 2);
            check(ev.size() == want, at + ": " + std::to_string(ev.size()) + " events, expected " + std::to_string(want));
            if (ev.size() != want) continue;
            check(ev[0].kind == wt::kind::Setup && ev[0].clock == kSetupClock + (std::uint64_t(w + 1) << 36),
                  at + ": first event is not the Setup");
            check(ev.back().kind == wt::kEventEnd, at + ": last event is not the end mark");
            const std::uint8_t kinds[4] = {wt::kind::MmaWait, wt::kind::Release, wt::kind::WaitData, wt::kind::MmaIssue};
            std::size_t at0 = 1;  // the k-step's first event
            for (int j = 0; j < m; ++j) {
                for (int q = 0; q < 4; ++q) {
                    const auto& x = ev[at0 + std::size_t(q)];
                    const int k = q < 2 ? j : j + 2;
                    const bool ok = x.clock == kstepClock(w, j, q) && x.kind == kinds[q] && x.kstep == k
                        && x.slot == k % 6 && x.aux == 0;
                    check(ok, at + ": k-step " + std::to_string(j) + " event " + std::to_string(q) + " (kind "
                                  + std::to_string(x.kind) + ", kstep " + std::to_string(x.kstep) + ", slot "
                                  + std::to_string(x.slot) + ", clock " + std::to_string(x.clock) + ", expected "
                                  + std::to_string(kstepClock(w, j, q)) + ")");
                }
                at0 += 4;
                if (!hasLoad(j)) continue;
                const std::uint64_t t = kstepClock(w, j, 3) + 1000;
                const auto& a = ev[at0];
                const auto& b = ev[at0 + 1];
                check(a.kind == wt::kind::WaitSlot && a.clock == t && a.kstep == j + 2 && a.slot == (j + 2) % 6
                          && b.kind == wt::kind::IssueLoad && b.clock == t + loadGap(j) && b.kstep == j + 2
                          && b.slot == (j + 2) % 6 && a.aux == 0 && b.aux == 0,
                      at + ": load of k-step " + std::to_string(j) + " (kinds " + std::to_string(a.kind) + "/"
                          + std::to_string(b.kind) + ", clocks " + std::to_string(a.clock) + "/" + std::to_string(b.clock)
                          + ", expected " + std::to_string(t) + "/" + std::to_string(t + loadGap(j)) + ")");
                at0 += 2;
            }
        }
    if (packed) check(packs > 0 && loadPacks > 0 && records < 4 * packs,
                      std::string(mode) + " k-steps: only " + std::to_string(packs) + " packed k-steps and "
                          + std::to_string(loadPacks) + " packed loads of " + std::to_string(records) + " records");
    else check(packs + loadPacks == 0, std::string(mode) + " k-steps: packed records from an engine that does not pack");
    std::printf("%s %s, k-steps (kStepAt<6, 2>, loadAt<6>): %llu records, %llu packed k-steps, %llu packed loads; "
                "expanded, every event and clock as plain\n",
                g_fail == before ? "PASS" : "FAIL", mode, (unsigned long long)records, (unsigned long long)packs,
                (unsigned long long)loadPacks);
}

template <class Engine>
void runAll(const char* mode)
{
    runCase<Engine>(mode, 4096);  // everything fits
    runCase<Engine>(mode, 50);    // overflow: counts exact, nothing past the capacity
    runCase<Engine>(mode, 32);    // the capacity at a half boundary
    launch<Engine>(nullptr);      // not recording: the kernel finishes and writes nothing
    const cudaError_t e = cudaDeviceSynchronize();
    check(e == cudaSuccess, std::string(mode) + " null buffer: " + cudaGetErrorString(e));
    std::printf("%s %s, null buffer: kernel finished (%s)\n", e == cudaSuccess ? "PASS" : "FAIL", mode,
                cudaGetErrorString(e));
}

}  // namespace

int main()
{
    const std::string why = ws::testing::gpuProblem(9);
    if (!why.empty()) return ws::testing::gpuUnavailableExit("gpu_trace_batch", why);
    runAll<ws::trace::Staged>("staged");
    runAll<ws::trace::Direct>("direct");
    runKSteps<ws::trace::Staged>("staged", true);
    runKSteps<ws::trace::Direct>("direct", false);
    std::printf("%s gpu_trace_batch (%d failure(s))\n", g_fail == 0 ? "PASS" : "FAIL", g_fail);
    return g_fail == 0 ? 0 : 1;
}
