// `lce`: the driver of the linear-compression family (kernels/lce). Runs one rung or all on one shape
// or the sweep, checks against the fp32 reference, times with CUDA events (median after warmup) and
// prints TFLOP/s (useful FLOPs 2*M*N*(K_cand*B + K_user*users)) and the bytes each rung moves.
// It is also the program `warpstage-record -- lce ... --kernels REGEX` records (rungs 3-4 are
// instrumented with <warpstage/trace.cuh>). --trace-cost measures what recording costs them (traceCost below).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda.h>

#include "lce_rungs.h"
#include "warpstage/trace_format.h"

using namespace ws::lce;

namespace {

struct Row {
    int rung;
    double ms = -1;
    bool checked = false, passed = false;
};

// --trace-cost: the cost of the per-warp timeline on rungs 3-4, measured the way warpstage-record records: the
// launched kernel's module's control symbol (warpstage_trace_control, found through the driver as the recorder finds
// it) pointed at a zeroed trace buffer with a valid header before a launch, and back to null after it. Untraced and
// traced launches alternate (warmup, then iters pairs); each is timed by CUDA events around the whole rung (rung 3:
// with its cuBLAS user GEMM). The buffer reset is outside the timed span. Prints the medians and the difference,
// and the events CTA 0 recorded in the last traced launch (0 would mean the buffer was not attached). The buffer is
// cleared whole before each traced launch, as the recorders clear a buffer before its first traced launch; since
// session 16 they clear only its heads before a later one (trace::clearRanges), which LCE_TRACE_CLEAR=heads times (H200,
// rung 4: +5.6 against +5.1 / +5.4 % in one call, s16-lcetrace.sh; +6.4-6.6 in s16-lcerelay.sh against +3.5-5.4 % for
// the whole clear in the calls before: the heads-only clear is not cheaper for lce, perhaps dearer; why is open).
struct TraceCost {
    double untracedMs = 0, tracedMs = 0;
    unsigned long long events = 0;
};
std::string traceCost(int rung, Problem& p, const Options& o, TraceCost& out)
{
    using FnGetModule = CUresult (*)(CUmodule*, CUfunction);
    using FnGetGlobal = CUresult (*)(CUdeviceptr*, size_t*, CUmodule, const char*);
    static FnGetModule getModule = nullptr;
    static FnGetGlobal getGlobal = nullptr;
    if (!getModule || !getGlobal) {
        void* a = nullptr;
        void* b = nullptr;
        cudaDriverEntryPointQueryResult qa{}, qb{};
        if (cudaGetDriverEntryPointByVersion("cuFuncGetModule", &a, 11000, cudaEnableDefault, &qa) != cudaSuccess
            || qa != cudaDriverEntryPointSuccess
            || cudaGetDriverEntryPointByVersion("cuModuleGetGlobal", &b, 11000, cudaEnableDefault, &qb) != cudaSuccess
            || qb != cudaDriverEntryPointSuccess)
            return "the driver offers no cuFuncGetModule / cuModuleGetGlobal";
        getModule = reinterpret_cast<FnGetModule>(a);
        getGlobal = reinterpret_cast<FnGetGlobal>(b);
    }
    // The untraced launches run the kernels compiled without trace code, the traced ones the traced kernels
    // (traceLaunches(), s15-lceuntraced: before, both were the traced kernel, the untraced with no buffer attached).
    struct Restore {
        bool was = traceLaunches();
        ~Restore() { traceLaunches() = was; }
    } restore;
    traceLaunches() = true;
    p.lastKernel = nullptr;
    std::string err = runRung(rung, p);
    if (err.empty() && cudaStreamSynchronize(p.stream) != cudaSuccess) err = "the first launch failed";
    if (!err.empty()) return err;
    if (!p.lastKernel) return "rung " + std::to_string(rung) + " is not instrumented";
    cudaFunction_t f = nullptr;
    CUmodule mod = nullptr;
    CUdeviceptr ctl = 0;
    size_t ctlBytes = 0;
    if (cudaGetFuncBySymbol(&f, p.lastKernel) != cudaSuccess || getModule(&mod, reinterpret_cast<CUfunction>(f)) != CUDA_SUCCESS
        || getGlobal(&ctl, &ctlBytes, mod, "warpstage_trace_control") != CUDA_SUCCESS || ctlBytes != 16)
        return "cannot find the kernel's warpstage_trace_control";
    // LCE_TRACE_EVENTS=N (session 16, diagnostic): N events per warp instead of the recorder's default 8192 (a smaller
    // buffer: the warps' regions closer together)
    const char* evEnv = std::getenv("LCE_TRACE_EVENTS");
    const std::uint32_t ctas = p.lastGrid, warps = 12,
                        events = evEnv && std::atoi(evEnv) >= 64 ? std::uint32_t(std::atoi(evEnv)) : 8192u;
    if (evEnv) std::fprintf(stderr, "lce: --trace-cost with %u events per warp (LCE_TRACE_EVENTS)\n", events);
    ws::trace::TraceBufferHeader h{};
    h.magic = ws::trace::kMagic;
    h.version = ws::trace::kFormatVersion;
    h.numCtas = ctas;
    h.warpsPerCta = warps;
    h.eventsPerWarp = events;
    const size_t bytes = size_t(ws::trace::bufferBytes(ctas, warps, events));
    void* buf = nullptr;
    if (cudaMalloc(&buf, bytes) != cudaSuccess) return "no memory for the trace buffer";
    struct {
        void* buffer;
        std::uint32_t magic, version;
    } on{buf, ws::trace::kMagic, ws::trace::kFormatVersion}, off{nullptr, ws::trace::kMagic, ws::trace::kFormatVersion};
    cudaEvent_t e[4];
    for (auto& x : e) cudaEventCreate(&x);
    std::vector<float> plain, traced;
    const ws::trace::ClearRanges cr = ws::trace::clearRanges(ctas, warps, events);
    const char* clearEnv = std::getenv("LCE_TRACE_CLEAR");
    const bool headsOnly = clearEnv && std::strcmp(clearEnv, "heads") == 0;
    if (cudaMemset(buf, 0, bytes) != cudaSuccess) err = "cannot clear the trace buffer";  // once, whole
    for (int i = 0; i < o.warmup + o.iters && err.empty(); ++i) {
        traceLaunches() = false;
        cudaEventRecord(e[0], p.stream);
        err = runRung(rung, p);
        cudaEventRecord(e[1], p.stream);
        traceLaunches() = true;
        // the whole buffer, as the recorders clear it before the first traced launch of a buffer (LCE_TRACE_CLEAR=heads:
        // only the CTA records and region headers, trace::clearRanges, as before a later launch of the same buffer)
        if (headsOnly) {
            cudaMemsetAsync(static_cast<char*>(buf) + cr.ctaOffset, 0, cr.ctaBytes, p.stream);
            cudaMemset2DAsync(static_cast<char*>(buf) + cr.headerOffset, cr.headerPitch, 0, cr.headerBytes, cr.headerRows,
                              p.stream);
        } else {
            cudaMemsetAsync(buf, 0, bytes, p.stream);
        }
        cudaMemcpyAsync(buf, &h, sizeof h, cudaMemcpyHostToDevice, p.stream);
        cudaMemcpyAsync(reinterpret_cast<void*>(ctl), &on, 16, cudaMemcpyHostToDevice, p.stream);
        cudaEventRecord(e[2], p.stream);
        if (err.empty()) err = runRung(rung, p);
        cudaEventRecord(e[3], p.stream);
        cudaMemcpyAsync(reinterpret_cast<void*>(ctl), &off, 16, cudaMemcpyHostToDevice, p.stream);
        if (cudaStreamSynchronize(p.stream) != cudaSuccess && err.empty()) err = "a traced launch failed";
        float a = 0, b = 0;
        cudaEventElapsedTime(&a, e[0], e[1]);
        cudaEventElapsedTime(&b, e[2], e[3]);
        if (i >= o.warmup) {
            plain.push_back(a);
            traced.push_back(b);
        }
    }
    if (err.empty()) {  // events of CTA 0's warps in the last traced launch
        for (std::uint32_t w = 0; w < warps; ++w) {
            ws::trace::WarpRegionHeader r{};
            cudaMemcpy(&r, static_cast<char*>(buf) + ws::trace::warpRegionOffset(ctas, warps, events, 0, w), sizeof r,
                       cudaMemcpyDeviceToHost);
            out.events += r.count;
        }
        std::sort(plain.begin(), plain.end());
        std::sort(traced.begin(), traced.end());
        out.untracedMs = plain[plain.size() / 2];
        out.tracedMs = traced[traced.size() / 2];
    }
    for (auto& x : e) cudaEventDestroy(x);
    cudaFree(buf);
    return err;
}

// --interleave A,B: the two rungs launched alternately, in pairs A B, B A, A B, ... (the order flips every pair: the
// first launch after the host's synchronisation starts on an idle card), each timed by CUDA events around the whole
// rung, so that the card's clock and temperature drift reach both alike. Prints the medians, B/A and in how many of
// the pairs B was faster. LCE_TVAR_B=v (s10-lcespeed): rung B's launches use rungs 3-4's kernel configuration v
// (lce_shape.h; A's stay LCE_TVAR's), so `LCE_TVAR_B=10 lce --interleave 4,4` times rung 4's broadcast walk against
// the rung as built. LCE_TRACED_A=1 (s15-lceuntraced): rung A's launches run rungs 3-4's traced kernels with no trace
// buffer attached (what the rungs launched untraced before s15: the same machine code), so `LCE_TRACED_A=1 lce
// --interleave 4,4` times that against the untraced kernels in one process.
std::string interleave(int ra, int rb, Problem& p, const Options& o)
{
    const bool tracedA = std::getenv("LCE_TRACED_A") != nullptr;
    const bool tracedAsBuilt = traceLaunches();
    const char* vb = std::getenv("LCE_TVAR_B");
    int varB = -1;
    if (vb) {  // (parseOptions refused a bad value already)
        const std::string bad = parseConfigSwitch("LCE_TVAR_B", vb, varB);
        if (!bad.empty()) return bad;
    }
    if (varB >= 0 && !setRungVariant(varB)) return "LCE_TVAR_B=" + std::string(vb) + " is not a configuration of rungs 3-4";
    setRungVariant(-1);
    auto run = [&](int r, bool isB) {
        if (isB && varB >= 0) setRungVariant(varB);
        if (!isB && tracedA) traceLaunches() = true;
        std::string e = runRung(r, p);
        if (isB && varB >= 0) setRungVariant(-1);
        traceLaunches() = tracedAsBuilt;
        return e;
    };
    cudaEvent_t e[4];
    for (auto& x : e) cudaEventCreate(&x);
    std::vector<float> ta, tb;
    int bWins = 0;
    std::string err;
    for (int i = 0; i < o.warmup + o.iters && err.empty(); ++i) {
        const bool aFirst = i % 2 == 0;
        cudaEventRecord(e[0], p.stream);
        err = run(aFirst ? ra : rb, !aFirst);
        cudaEventRecord(e[1], p.stream);
        if (err.empty()) err = run(aFirst ? rb : ra, aFirst);
        cudaEventRecord(e[2], p.stream);
        if (cudaStreamSynchronize(p.stream) != cudaSuccess && err.empty()) err = "a launch failed";
        float first = 0, second = 0;
        cudaEventElapsedTime(&first, e[0], e[1]);
        cudaEventElapsedTime(&second, e[1], e[2]);
        const float a = aFirst ? first : second, b = aFirst ? second : first;
        if (i >= o.warmup) {
            ta.push_back(a);
            tb.push_back(b);
            bWins += b < a;
        }
    }
    for (auto& x : e) cudaEventDestroy(x);
    if (!err.empty()) return err;
    std::sort(ta.begin(), ta.end());
    std::sort(tb.begin(), tb.end());
    const double ma = ta[ta.size() / 2], mb = tb[tb.size() / 2];
    std::printf("INTERLEAVED rung %d %.4f ms  rung %d %.4f ms  %d/%d = %.4f  (rung %d faster in %d of %zu pairs)\n", ra,
                ma, rb, mb, rb, ra, mb / ma, rb, bWins, ta.size());
    if (varB >= 0) std::printf("INTERLEAVED_VARIANT B=%d\n", varB);
    if (tracedA) std::printf("INTERLEAVED_TRACED_A (rung %d: the traced kernels, no buffer)\n", ra);
    return {};
}

// --user-stage (s11-lceuser): where rung 4 stands against rung 3 stage by stage. Three launches interleaved (the order
// rotates every round): cuBLAS's user GEMM (rung 3's first launch), rung 4's kernel running its user-first walk's user
// units alone (userStageOnly: the same kernel, the candidate units cut off), and rung 3's kernel alone (the
// candidate GEMM with U added, U from the launches before). Prints the medians.
std::string userStageCost(Problem& p, const Options& o)
{
    cudaEvent_t e[2];
    for (auto& x : e) cudaEventCreate(&x);
    std::vector<float> t[3];
    std::string err;
    auto launch = [&](int k) {
        if (k == 0) return userGemm(p, true);
        if (k == 2) return runCandidateKernel(p);
        userStageOnly() = true;
        std::string r = runUserFirst(p);
        userStageOnly() = false;
        return r;
    };
    for (int i = 0; i < o.warmup + o.iters && err.empty(); ++i)
        for (int j = 0; j < 3 && err.empty(); ++j) {
            const int k = (i + j) % 3;
            cudaEventRecord(e[0], p.stream);
            err = launch(k);
            cudaEventRecord(e[1], p.stream);
            if (cudaEventSynchronize(e[1]) != cudaSuccess && err.empty()) err = "a launch failed";
            float ms = 0;
            cudaEventElapsedTime(&ms, e[0], e[1]);
            if (i >= o.warmup) t[k].push_back(ms);
        }
    for (auto& x : e) cudaEventDestroy(x);
    if (!err.empty()) return err;
    double med[3];
    for (int k = 0; k < 3; ++k) {
        std::sort(t[k].begin(), t[k].end());
        med[k] = t[k][t[k].size() / 2];
    }
    const double userFlops = 2.0 * p.s.m * p.s.n * double(p.s.kUser) * p.users;
    std::printf("USERSTAGE cublas-user-gemm %.4f ms (%.1f TFLOP/s)  rung4-user-units %.4f ms (%.1f TFLOP/s, %.4f x)  "
                "rung3-kernel %.4f ms\n",
                med[0], userFlops / (med[0] * 1e-3) * 1e-12, med[1], userFlops / (med[1] * 1e-3) * 1e-12,
                med[1] / med[0], med[2]);
    return {};
}

int runShape(const Shape& s, const Options& o, Problem& p, std::vector<Row>& rows)
{
    int rc = 0;
    std::string err = allocate(p, s);
    if (!err.empty()) {
        std::printf("FAIL %s: %s\n", s.text().c_str(), err.c_str());
        return 1;
    }
    float* ref = nullptr;
    if (o.check) {
        if (cudaMalloc(&ref, size_t(s.b) * s.m * s.n * sizeof(float)) != cudaSuccess) {
            std::printf("FAIL %s: no memory for the reference\n", s.text().c_str());
            return 1;
        }
        err = reference(p, ref);
        if (!err.empty()) {
            std::printf("FAIL %s: %s\n", s.text().c_str(), err.c_str());
            return 1;
        }
    }
    std::printf("shape %s: users=%d, %.1f GFLOP useful, compulsory traffic %.1f MB\n", s.text().c_str(), p.users,
                s.flops() * 1e-9, compulsoryBytes(s) * 1e-6);
    for (int r = 0; r < kRungs; ++r) {
        if (o.rung >= 0 && r != o.rung) continue;
        const std::string why = refusal(r, s);
        if (!why.empty()) {
            std::printf("rung %d %-15s refuses: %s\n", r, rungName(r), why.c_str());
            if (o.rung >= 0) rc = rc ? rc : 3;
            continue;
        }
        Row row;
        row.rung = r;
        if (o.check) {
            CheckResult c;
            err = checkRung(r, p, ref, c);  // reference.cu: the output poisoned with NaN, the rung, the comparison
            row.checked = true;
            row.passed = err.empty() && c.passed();
            std::printf("%s\n", checkVerdict(r, err, c).c_str());
            if (!row.passed) {
                rc = 1;
                rows.push_back(row);
                if (cudaGetLastError() != cudaSuccess) return 1;  // a sticky error: nothing else can run
                continue;
            }
        }
        if (o.time) {
            cudaEvent_t a, b;
            cudaEventCreate(&a);
            cudaEventCreate(&b);
            std::vector<float> ms;
            for (int i = 0; i < o.warmup + o.iters && err.empty(); ++i) {
                cudaEventRecord(a, p.stream);
                err = runRung(r, p);
                cudaEventRecord(b, p.stream);
                cudaEventSynchronize(b);
                float t = 0;
                cudaEventElapsedTime(&t, a, b);
                if (i >= o.warmup) ms.push_back(t);
            }
            cudaEventDestroy(a);
            cudaEventDestroy(b);
            if (!err.empty()) {
                std::printf("FAIL rung %d %s: %s\n", r, rungName(r), err.c_str());
                rc = 1;
                continue;
            }
            std::sort(ms.begin(), ms.end());
            row.ms = ms[ms.size() / 2];
            const double bytes = bytesMoved(r, s);
            std::printf("TIME rung %d %-15s %8.4f ms  %6.1f TFLOP/s  %7.1f MB moved (%5.2f TB/s)  min %.4f max %.4f\n",
                        r, rungName(r), row.ms, s.flops() / (row.ms * 1e-3) * 1e-12, bytes * 1e-6,
                        bytes / (row.ms * 1e-3) * 1e-12, ms.front(), ms.back());
        }
        if (o.traceCost && r >= 3) {
            TraceCost t;
            err = traceCost(r, p, o, t);
            if (!err.empty()) {
                std::printf("FAIL rung %d %s trace cost: %s\n", r, rungName(r), err.c_str());
                rc = 1;
            } else {
                std::printf("TRACECOST rung %d %-15s untraced %.4f ms  traced %.4f ms  %+.2f%%  (%llu events in CTA 0)\n",
                            r, rungName(r), t.untracedMs, t.tracedMs, (t.tracedMs / t.untracedMs - 1) * 100,
                            t.events);
            }
        }
        rows.push_back(row);
    }
    if (o.abA >= 0) {
        const std::string why = refusal(o.abA, s) + refusal(o.abB, s);
        err = why.empty() ? interleave(o.abA, o.abB, p, o) : "a rung refuses the shape: " + why;
        if (!err.empty()) {
            std::printf("FAIL interleave %d,%d: %s\n", o.abA, o.abB, err.c_str());
            rc = 1;
        }
    }
    if (o.userStage) {
        const std::string why = refusal(3, s) + refusal(4, s);
        err = why.empty() ? userStageCost(p, o) : "a rung refuses the shape: " + why;
        if (!err.empty()) {
            std::printf("FAIL user-stage: %s\n", err.c_str());
            rc = 1;
        }
    }
    if (ref) cudaFree(ref);
    release(p);
    std::fflush(stdout);
    return rc;
}

}  // namespace

int main(int argc, char** argv)
{
    Options o;
    const std::string perr = parseOptions(argc, argv, o);
    if (perr == "help") {
        std::fputs(usage(), stdout);
        return 0;
    }
    if (!perr.empty()) {
        std::fprintf(stderr, "lce: %s\n%s", perr.c_str(), usage());
        return 2;
    }
    int devices = 0;
    cudaDeviceProp prop{};
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess
        || prop.major != 9) {
        cudaGetLastError();
        std::printf("SKIP: lce: needs an sm_90 GPU (the rungs are built for sm_90a)\n");
        return 77;
    }
    std::vector<Shape> shapes;
    if (o.sweep) {
        for (int b : {512, 1024, 2048, 3072})
            for (int pu : {2, 5, 10, 50, 100, 1000}) {
                Shape s = o.shape;
                s.b = b;
                s.perUser = pu;
                shapes.push_back(s);
            }
    } else {
        shapes.push_back(o.shape);
    }
    Problem p;
    int rc = 0;
    std::vector<Row> rows;
    for (const Shape& s : shapes) {
        std::vector<Row> shapeRows;
        const int r = runShape(s, o, p, shapeRows);
        if (r != 0 && (rc == 0 || rc == 3)) rc = r;
        if (o.sweep && o.time) {
            std::printf("SWEEP B=%d per-user=%d", s.b, s.perUser);
            for (const Row& x : shapeRows) std::printf("  r%d %.4f ms", x.rung, x.ms);
            std::printf("\n");
        }
    }
    if (p.blas) cublasDestroy(p.blas);
    if (p.stream) cudaStreamDestroy(p.stream);
    std::printf("%s\n", rc == 0 ? "lce: OK" : rc == 3 ? "lce: REFUSED" : "lce: FAILED");
    return rc;
}
