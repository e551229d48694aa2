// ladder_bench: the kernel ladder side by side with cuBLAS, on the same inputs, in one run.
//
// For each shape (default 4096^3 and 8192^3):
//   1. fresh random-normal bf16 inputs in several buffer sets (rotated so the L2 cache
//      cannot hold them between launches), C poisoned before the correctness launches;
//   2. every rung, untraced and traced, checked against cuBLAS (fp32 C) on set 0;
//   3. timing: CUDA events around each launch, after warm-up; the median of many launches;
//      untraced and traced alternate in two rounds (clock drift hits both alike); cuBLAS
//      (bf16 C, the same work as a rung) is timed before and after the rungs; traced
//      launches get their event buffer reset (outside the timed region) before each launch.
// Prints a markdown table last; writes all numbers as CSV (--csv, default $OUT/ladder_bench.csv
// when OUT is set, else ./ladder_bench.csv).
//
// Usage: ladder_bench [--shape MxNxK]... [--rung NAME]... [--target-ms 100] [--rest-ms 250] [--hot] [--heat-ms 200]
//                     [--min-iters 10] [--max-iters 200] [--no-traced] [--idle-cost] [--no-trace-clear]
//                     [--trace-clear-all] [--csv PATH]
// --idle-cost: for the rungs that offer it (pingpong, streamk: ladder.h says what each runs), also the instrumented build NOT recording (its trace calls
// with a null buffer: <warpstage/trace.cuh>'s path when no recorder is attached), timed against the untraced and the
// traced build in 3 ABBA round pairs (U I T, T I U, ...) after its own correctness check; a table of its own.
// --rest-ms: the GPU idles this long before each timed batch, so that every variant starts
// from the same power/clock state (sustained back-to-back GEMMs on random data run into the
// H200's power limit and lower its clock; see the clock log of scripts/device/kernel-checks.sh). That is "cold".
// --hot: the other way users see a GEMM (a training loop): no idle at all; before each timed batch the batch's own
// launches run back to back for --heat-ms (default 200), so timing starts with the GPU at its power limit, at the
// clock it settles at under sustained load. Cold and hot: the table title and the CSV's `mode` column say which.
// cuBLAS is timed under the same conditions as each rung, in the rung's own rounds (session 15): round 0 cuBLAS,
// untraced, traced; round 1 traced, untraced, cuBLAS; each batch after its own rest (cold) or heat (hot). A rung's
// "% cuBLAS" is that paired cuBLAS median over the rung's (CSV column cublas_paired_ms). The two timings of cuBLAS
// alone around a shape's rungs ("cublas", "cublas again", also each after its rest or heat) are its reference line.
// --rung streamk@I: rung 7 with its tile configuration forced to kTiles[I] (streamk_schedule.h; the process's
// WARPSTAGE_STREAMK_TILE is set while that variant runs), so every configuration is timed side by side with the
// rule's pick (plain `streamk`) and cuBLAS at each shape. Session 11: `/streamk` or `/splitk` forces how a lone wave is
// split (WARPSTAGE_STREAMK_SPLIT), e.g. `streamk@2/splitk`; s11-skinny2: `/cluster` (the pieces of a tile as one
// cluster, reduced through distributed shared memory) and `/global` (the rule without it); s13-smallk: `/dp` (no split:
// every tile whole).
// --no-trace-clear: the timed traced launches reuse their trace buffer as the last launch left it (no memset of it
// before each launch; the kernels rewrite every header, count and event they record): separates what the memset's
// dirty L2 lines cost from what the traced kernel costs (session 9, s9-traceflush). The correctness launch still
// starts from a reset buffer. Without it the clear is what the recorders do before a traced launch (session 16:
// trace::clearRanges, the CTA records and the warp regions' headers); --trace-clear-all: every byte after the buffer's
// header, as sessions 9-15 did (and the recorders: a memset of the event arrays that left the L2 dirty).
#include "ladder_testutil.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace ws;
using namespace ws::ktest;

namespace {

struct Options {
    std::vector<ladder::Shape> shapes;
    std::vector<std::string> rungs;
    double targetMs = 100;
    double restMs = 250;  // idle before each timed batch: every variant starts from the same power state
    int minIters = 10, maxIters = 200;
    bool traced = true;
    bool idleCost = false;
    bool traceClear = true;  // --no-trace-clear: false
    bool traceClearAll = false;  // --trace-clear-all: true
    bool hot = false;      // --hot: no rest; heatMs of back-to-back launches before each timed batch
    double heatMs = 200;
    std::string csv;
};

// "streamk@2/splitk" -> rung "streamk", forced tile "2" (WARPSTAGE_STREAMK_TILE), split mode "splitk"
// (WARPSTAGE_STREAMK_SPLIT); each part optional; any other name -> itself.
std::string baseRung(const std::string& v) { return v.substr(0, v.find_first_of("@/")); }
std::string variantPart(const std::string& v, char mark)
{
    const auto at = v.find(mark);
    if (at == std::string::npos) return std::string();
    const auto end = v.find_first_of("@/", at + 1);
    return v.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
}
// the variant's environment: its forced parts set, the others unset (the rule's)
void setVariantEnv(const std::string& v)
{
    const std::pair<char, const char*> parts[] = {{'@', "WARPSTAGE_STREAMK_TILE"}, {'/', "WARPSTAGE_STREAMK_SPLIT"}};
    for (const auto& [mark, name] : parts) {
        const std::string part = variantPart(v, mark);
        if (part.empty()) unsetenv(name);
        else setenv(name, part.c_str(), 1);
    }
}

struct Timing {
    double medianMs = NAN, p10Ms = NAN, p90Ms = NAN;
    int iters = 0;
};

Timing summarize(std::vector<float> v)
{
    Timing t;
    if (v.empty())
        return t;
    std::sort(v.begin(), v.end());
    auto q = [&](double p) { return double(v[std::min(v.size() - 1, std::size_t(p * (v.size() - 1) + 0.5))]); };
    t.medianMs = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    t.p10Ms = q(0.1);
    t.p90Ms = q(0.9);
    t.iters = int(v.size());
    return t;
}

// Times `launch(set)` (which must only enqueue work) with an event pair around each
// launch; `before(set)` runs untimed before each launch. Returns per-launch ms.
std::vector<float> timeLaunches(int iters, int nsets, const std::function<void(int)>& before,
                                const std::function<void(int)>& launch)
{
    std::vector<cudaEvent_t> ev(2 * iters);
    for (auto& e : ev)
        WS_CK(cudaEventCreate(&e));
    for (int i = 0; i < iters; ++i) {
        int set = i % nsets;
        if (before)
            before(set);
        WS_CK(cudaEventRecord(ev[2 * i]));
        launch(set);
        WS_CK(cudaEventRecord(ev[2 * i + 1]));
    }
    WS_CK(cudaDeviceSynchronize());
    std::vector<float> ms(iters);
    for (int i = 0; i < iters; ++i)
        WS_CK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
    for (auto& e : ev)
        cudaEventDestroy(e);
    return ms;
}

// Before each timed batch of `launch`. Cold (default): the GPU idles for restMs (power and clocks recover from
// the previous batch). Hot (--hot): no idle; `launch` runs back to back for heatMs (synchronizing every 16 launches
// to watch the time), so the batch starts at the power limit.
void settle(const Options& o, int nsets, const std::function<void(int)>& before, const std::function<void(int)>& launch)
{
    WS_CK(cudaDeviceSynchronize());
    if (!o.hot) {
        if (o.restMs > 0)
            std::this_thread::sleep_for(std::chrono::microseconds(long(o.restMs * 1000)));
        return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() < o.heatMs) {
        for (int i = 0; i < 16; ++i) {
            if (before)
                before(i % nsets);
            launch(i % nsets);
        }
        WS_CK(cudaDeviceSynchronize());
    }
}

const char* modeStr(const Options& o) { return o.hot ? "hot" : "cold"; }

// Warm-up (3 launches, also an estimate), then the iteration count for ~targetMs.
int itersFor(const Options& o, int nsets, const std::function<void(int)>& before,
             const std::function<void(int)>& launch)
{
    settle(o, nsets, before, launch);
    auto w = timeLaunches(3, nsets, before, launch);
    double est = *std::min_element(w.begin(), w.end());
    int it = est > 0 ? int(o.targetMs / est) : o.maxIters;
    return std::clamp(it, o.minIters, o.maxIters);
}

// One timed batch of `iters` launches, after `launch`'s settle (rest or heat) and 3 warm-up launches: every timed batch
// of every variant (cuBLAS, untraced, traced, instrumented idle) is taken this way.
std::vector<float> settledBatch(const Options& o, int nsets, int iters, const std::function<void(int)>& before,
                                const std::function<void(int)>& launch)
{
    settle(o, nsets, before, launch);
    timeLaunches(3, nsets, before, launch);
    return timeLaunches(std::max(1, iters), nsets, before, launch);
}

// One variant's timed batches: `iters` launches per batch, appended to `out`.
struct Batch {
    std::vector<float>* out;
    std::function<void(int)> before, launch;
    int iters;
};
// `rounds` rounds over `batches`, every odd round in reverse order (A B C, C B A, ...: drift reaches all alike).
void timeRounds(const Options& o, int nsets, int rounds, const std::vector<Batch>& batches)
{
    for (int round = 0; round < rounds; ++round)
        for (std::size_t j = 0; j < batches.size(); ++j) {
            const Batch& b = batches[round % 2 ? batches.size() - 1 - j : j];
            auto a = settledBatch(o, nsets, b.iters, b.before, b.launch);
            b.out->insert(b.out->end(), a.begin(), a.end());
        }
}

// --idle-cost: untraced (u), instrumented not recording (i), traced (t) of one rung and shape.
struct IdleRow {
    std::string shape, rung;
    bool ok = false;
    double relErr = NAN;
    Timing u, i, t;
};

struct Row {
    std::string shape, rung;
    int level = 0;
    bool ok = false, okTraced = false;
    double relErr = NAN, relErrTraced = NAN;
    std::string error;
    Timing u, t;
    Timing cb;  // cuBLAS, timed in this row's rounds under the same settle
};

std::string fmt(const char* f, double v)
{
    if (!(v == v))
        return "n/a";
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

int usage(const char* msg)
{
    if (msg)
        std::fprintf(stderr, "ladder_bench: %s\n", msg);
    std::fprintf(stderr, "usage: ladder_bench [--shape MxNxK]... [--rung NAME]... [--target-ms MS] [--min-iters N] "
                         "[--max-iters N] [--rest-ms MS] [--hot] [--heat-ms MS] [--no-traced] [--idle-cost] [--no-trace-clear] "
                         "[--trace-clear-all] [--csv PATH]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv)
{
    Options o;
    try {
        for (int i = 1; i < argc; ++i) {
            std::string a = argv[i];
            auto next = [&]() -> std::string {
                if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
                return argv[++i];
            };
            if (a == "--shape") o.shapes.push_back(parseShape(next()));
            else if (a == "--rung") o.rungs.push_back(next());
            else if (a == "--target-ms") o.targetMs = std::stod(next());
            else if (a == "--rest-ms") o.restMs = std::stod(next());
            else if (a == "--hot") o.hot = true;
            else if (a == "--heat-ms") o.heatMs = std::stod(next());
            else if (a == "--min-iters") o.minIters = std::stoi(next());
            else if (a == "--max-iters") o.maxIters = std::stoi(next());
            else if (a == "--no-traced") o.traced = false;
            else if (a == "--idle-cost") o.idleCost = true;
            else if (a == "--no-trace-clear") o.traceClear = false;
            else if (a == "--trace-clear-all") o.traceClearAll = true;
            else if (a == "--csv") o.csv = next();
            else return usage(("unknown argument '" + a + "'").c_str());
        }
    } catch (const std::exception& e) {
        return usage(e.what());
    }
    if (o.minIters < 1 || o.maxIters < o.minIters) return usage("need 1 <= --min-iters <= --max-iters");
    if (!(o.heatMs >= 0) || !(o.restMs >= 0)) return usage("--heat-ms and --rest-ms must be >= 0");
    if (o.shapes.empty()) o.shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
    for (auto& r : o.rungs)
        if (!ladder::findRung(baseRung(r))) return usage(("no rung named '" + r + "'").c_str());
    if (o.rungs.empty())
        for (auto& r : ladder::rungs()) o.rungs.push_back(r.name);
    if (o.csv.empty()) {
        const char* out = std::getenv("OUT");
        o.csv = out && *out ? std::string(out) + "/ladder_bench.csv" : "ladder_bench.csv";
    }
    if (const int rc = gpuUnavailableExit("ladder_bench"))
        return rc;

    std::vector<Row> rows;
    std::vector<IdleRow> idleRows;
    std::map<std::string, std::pair<Timing, Timing>> cublasT;  // shape -> (before, after)
    std::string devName;
    int sms = 0;
    char dateBuf[64];
    {
        std::time_t now = std::time(nullptr);
        std::strftime(dateBuf, sizeof dateBuf, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    }
    try {
        cudaDeviceProp p{};
        WS_CK(cudaGetDeviceProperties(&p, 0));
        devName = p.name;
        sms = p.multiProcessorCount;
        int drv = 0, rt = 0;
        cudaDriverGetVersion(&drv);
        cudaRuntimeGetVersion(&rt);
        int clk = 0;
        cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
        std::printf("ladder_bench: %s, %d SMs, L2 %.0f MB, max SM clock %.0f MHz, driver %d, runtime %d, %s\n",
                    p.name, sms, p.l2CacheSize / 1e6, clk / 1e3, drv, rt, dateBuf);
        if (o.hot)
            std::printf("ladder_bench: hot: no rest, %.0f ms of back-to-back launches before each timed batch\n", o.heatMs);
        else
            std::printf("ladder_bench: cold: the GPU idles %.0f ms before each timed batch\n", o.restMs);
        CublasRef cublas;
        for (const auto& s : o.shapes) {
            const std::string ss = shapeStr(s);
            const std::size_t na = std::size_t(s.m) * s.k, nb = std::size_t(s.n) * s.k, nc = std::size_t(s.m) * s.n;
            const double setBytes = 2.0 * (na + nb + nc);
            int nsets = int(std::ceil(3.0 * p.l2CacheSize / setBytes));
            nsets = std::clamp(nsets, 2, 8);
            std::vector<DeviceBuffer> A, B, C;
            const std::uint64_t seed = freshSeed();
            for (int i = 0; i < nsets; ++i) {
                A.emplace_back(na * 2);
                B.emplace_back(nb * 2);
                C.emplace_back(nc * 2);
                fillRandomNormalBf16(A.back().get(), na, seed + 2 * i);
                fillRandomNormalBf16(B.back().get(), nb, seed + 2 * i + 1);
                poisonBf16(C.back().get(), nc);
            }
            DeviceBuffer ref(nc * 4);
            cublas.gemm(s, A[0].get(), B[0].get(), ref.get(), true);
            WS_CK(cudaDeviceSynchronize());
            std::printf("\nshape %s: %d input sets of %.0f MB (L2 %.0f MB), seed %llu\n", ss.c_str(), nsets, setBytes / 1e6,
                        p.l2CacheSize / 1e6, (unsigned long long)seed);

            auto cublasLaunch = [&](int set) { cublas.gemm(s, A[set].get(), B[set].get(), C[set].get(), false); };
            const int itC = itersFor(o, nsets, nullptr, cublasLaunch);
            // the same rest (cold) or heat (hot) as every rung's batch
            auto timeCublas = [&]() { return summarize(settledBatch(o, nsets, itC, nullptr, cublasLaunch)); };
            Timing cb0 = timeCublas();
            std::printf("  cublas        %8.4f ms  %7.1f TFLOP/s  (%d launches)\n", cb0.medianMs,
                        s.flops() / cb0.medianMs / 1e9, cb0.iters);

            for (const auto& variant : o.rungs) {
                const std::string rn = baseRung(variant);
                setVariantEnv(variant);
                Row row;
                row.shape = ss;
                row.rung = variant;
                row.level = ladder::findRung(rn)->level;
                std::string why = ladder::checkShape(rn, s);
                if (!why.empty()) {
                    row.error = "refused: " + why;
                    rows.push_back(row);
                    std::printf("  %-13s refused: %s\n", rn.c_str(), why.c_str());
                    continue;
                }
                std::unique_ptr<TraceBuffer> tb;
                if (o.traced)
                    tb = std::make_unique<TraceBuffer>(ladder::traceGeometry(rn, s, sms), 0, 0);
                std::string launchErr;
                auto launchU = [&](int set) {
                    std::string e = ladder::launch(rn, s, A[set].get(), B[set].get(), C[set].get(), nullptr, nullptr, sms);
                    if (!e.empty()) launchErr = e;
                };
                auto launchT = [&](int set) {
                    std::string e = ladder::launch(rn, s, A[set].get(), B[set].get(), C[set].get(), nullptr, tb->get(), sms);
                    if (!e.empty()) launchErr = e;
                };
                // async: no host sync inside the timing loop
                auto clearT = [&](int) { tb->clearAsync(nullptr, o.traceClearAll); };
                std::function<void(int)> resetT;
                if (o.traceClear) resetT = clearT;
                // Correctness on set 0 (poisoned output), untraced then traced.
                auto checkOnce = [&](bool traced, double& relErr) {
                    poisonBf16(C[0].get(), nc);
                    if (traced) tb->reset();
                    traced ? launchT(0) : launchU(0);
                    WS_CK(cudaGetLastError());
                    WS_CK(cudaDeviceSynchronize());
                    if (!launchErr.empty()) return false;
                    ErrStats e = compareBf16ToF32(C[0].get(), ref.as<float>(), nc);
                    relErr = e.relErr;
                    if (!e.ok())
                        std::printf("  %-13s %s WRONG: %s\n", rn.c_str(), traced ? "traced" : "untraced", e.str().c_str());
                    return e.ok();
                };
                row.ok = checkOnce(false, row.relErr);
                if (o.traced) row.okTraced = checkOnce(true, row.relErrTraced);
                if (!launchErr.empty()) {
                    row.error = "launch: " + launchErr;
                    rows.push_back(row);
                    std::printf("  %-13s launch failed: %s\n", rn.c_str(), launchErr.c_str());
                    continue;
                }
                // Timing: two rounds of (cuBLAS, untraced, traced), the second in reverse order, each batch after its
                // own settle (rest or heat) and 3 warm-up launches.
                int itU = itersFor(o, nsets, nullptr, launchU);
                int itT = o.traced ? itersFor(o, nsets, resetT, launchT) : 0;
                std::vector<float> su, st, sc;
                std::vector<Batch> batches = {{&sc, nullptr, cublasLaunch, itC / 2}, {&su, nullptr, launchU, itU / 2}};
                if (o.traced) batches.push_back({&st, resetT, launchT, itT / 2});
                timeRounds(o, nsets, 2, batches);
                row.u = summarize(su);
                row.cb = summarize(sc);
                if (o.traced) row.t = summarize(st);
                rows.push_back(row);
                std::printf("  %-13s %8.4f ms  %7.1f TFLOP/s  %5.1f%% cuBLAS | traced %8.4f ms  %7.1f TFLOP/s  overhead %+.2f%%  [%s%s]"
                            "  (cuBLAS paired %.4f ms)\n",
                            variant.c_str(), row.u.medianMs, s.flops() / row.u.medianMs / 1e9,
                            100.0 * row.cb.medianMs / row.u.medianMs, row.t.medianMs, s.flops() / row.t.medianMs / 1e9,
                            100.0 * (row.t.medianMs / row.u.medianMs - 1.0), row.ok ? "correct" : "WRONG",
                            o.traced ? (row.okTraced ? ", traced correct" : ", traced WRONG") : "", row.cb.medianMs);
                std::fflush(stdout);
                if (o.idleCost && o.traced && ladder::hasInstrumentedIdle(rn)) {
                    IdleRow ir;
                    ir.shape = ss;
                    ir.rung = rn;
                    auto launchI = [&](int set) {
                        std::string e = ladder::launchInstrumentedIdle(rn, s, A[set].get(), B[set].get(), C[set].get(), nullptr, sms);
                        if (!e.empty()) launchErr = e;
                    };
                    poisonBf16(C[0].get(), nc);
                    launchI(0);
                    WS_CK(cudaGetLastError());
                    WS_CK(cudaDeviceSynchronize());
                    ErrStats e = compareBf16ToF32(C[0].get(), ref.as<float>(), nc);
                    ir.ok = launchErr.empty() && e.ok();
                    ir.relErr = e.relErr;
                    // ABBA over three variants: (u i t), (t i u), ... so that drift hits all alike.
                    const int itI = itersFor(o, nsets, nullptr, launchI);
                    const int it = std::max({itU, itI, itT});
                    std::vector<float> vu, vi, vt;
                    timeRounds(o, nsets, 6, {{&vu, nullptr, launchU, it / 3}, {&vi, nullptr, launchI, it / 3}, {&vt, resetT, launchT, it / 3}});
                    ir.u = summarize(vu);
                    ir.i = summarize(vi);
                    ir.t = summarize(vt);
                    std::printf("  %-13s idle cost: untraced %8.4f ms | instrumented, not recording %8.4f ms (%+.2f%%) | traced "
                                "%8.4f ms (%+.2f%%)  [%s]  (6 ABBA rounds, %d launches each)\n",
                                rn.c_str(), ir.u.medianMs, ir.i.medianMs, 100.0 * (ir.i.medianMs / ir.u.medianMs - 1.0),
                                ir.t.medianMs, 100.0 * (ir.t.medianMs / ir.u.medianMs - 1.0),
                                ir.ok ? "instrumented correct" : "instrumented WRONG", ir.u.iters);
                    std::fflush(stdout);
                    idleRows.push_back(ir);
                }
            }
            Timing cb1 = timeCublas();
            std::printf("  cublas again  %8.4f ms  %7.1f TFLOP/s  (spread vs first: %+.2f%%)\n", cb1.medianMs,
                        s.flops() / cb1.medianMs / 1e9, 100.0 * (cb1.medianMs / cb0.medianMs - 1.0));
            cublasT[ss] = {cb0, cb1};
        }
    } catch (const std::exception& e) {
        std::printf("ladder_bench: FAILED: %s\n", e.what());
        return 1;
    }

    // CSV
    FILE* f = std::fopen(o.csv.c_str(), "w");
    if (!f) {
        std::printf("ladder_bench: cannot write %s\n", o.csv.c_str());
    } else {
        std::fprintf(f, "date,device,shape,variant,level,traced,correct,rel_err,median_ms,p10_ms,p90_ms,launches,tflops,"
                        "pct_cublas,trace_overhead_pct,error,mode,cublas_paired_ms\n");
        for (auto& [ss, cb] : cublasT) {
            ladder::Shape s = parseShape(ss);
            for (int i = 0; i < 2; ++i) {
                const Timing& t = i ? cb.second : cb.first;
                std::fprintf(f, "%s,%s,%s,%s,0,0,1,,%.5f,%.5f,%.5f,%d,%.2f,100,,,%s,\n", dateBuf, devName.c_str(), ss.c_str(),
                             i ? "cublas_after" : "cublas", t.medianMs, t.p10Ms, t.p90Ms, t.iters,
                             s.flops() / t.medianMs / 1e9, modeStr(o));
            }
        }
        for (auto& r : rows) {
            ladder::Shape s = parseShape(r.shape);
            const double cbMs = r.cb.medianMs;  // paired: timed in the row's own rounds
            for (int tr = 0; tr < (o.traced ? 2 : 1); ++tr) {
                const Timing& t = tr ? r.t : r.u;
                std::fprintf(f, "%s,%s,%s,%s,%d,%d,%d,%.4e,%.5f,%.5f,%.5f,%d,%.2f,%.2f,%s,\"%s\",%s,%.5f\n", dateBuf, devName.c_str(),
                             r.shape.c_str(), r.rung.c_str(), r.level, tr, int(tr ? r.okTraced : r.ok),
                             tr ? r.relErrTraced : r.relErr, t.medianMs, t.p10Ms, t.p90Ms, t.iters,
                             s.flops() / t.medianMs / 1e9, 100.0 * cbMs / t.medianMs,
                             tr ? fmt("%.2f", 100.0 * (r.t.medianMs / r.u.medianMs - 1.0)).c_str() : "",
                             r.error.c_str(), modeStr(o), cbMs);
            }
        }
        std::fclose(f);
        std::printf("\nCSV: %s\n", o.csv.c_str());
    }

    // Markdown table (last). A rung's % cuBLAS against the cuBLAS batches of its own rounds; the cuBLAS line shows the
    // faster of the two timings of cuBLAS alone.
    std::printf("\n### Kernel ladder vs cuBLAS: %s, %s, %s (medians; %% of cuBLAS = cuBLAS time / rung time, cuBLAS timed in the rung's own rounds)\n\n",
                devName.c_str(), dateBuf,
                o.hot ? ("hot: " + fmt("%.0f", o.heatMs) + " ms back to back before each batch").c_str()
                      : ("cold: " + fmt("%.0f", o.restMs) + " ms idle before each batch").c_str());
    std::printf("| shape | rung | correct (rel. err) | untraced ms | TFLOP/s | %% cuBLAS | traced ms | TFLOP/s | %% cuBLAS | trace overhead | faster than rung below |\n");
    std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    int failures = 0;
    for (auto& [ss, cb] : cublasT) {
        ladder::Shape s = parseShape(ss);
        double cbMs = std::min(cb.first.medianMs, cb.second.medianMs);
        std::printf("| %s | cuBLAS | reference | %.4f | %.1f | 100 | | | | | (cuBLAS twice: %.4f / %.4f ms) |\n", ss.c_str(), cbMs,
                    s.flops() / cbMs / 1e9, cb.first.medianMs, cb.second.medianMs);
        double prevMs = NAN;
        for (auto& r : rows) {
            if (r.shape != ss) continue;
            if (!r.error.empty()) {
                std::printf("| %s | %s | %s | | | | | | | | |\n", ss.c_str(), r.rung.c_str(), r.error.c_str());
                ++failures;
                continue;
            }
            bool okAll = r.ok && (!o.traced || r.okTraced);
            failures += !okAll;
            std::string corr = std::string(okAll ? "yes" : "**NO**") + " (" + fmt("%.1e", r.relErr)
                + (o.traced ? ", " + fmt("%.1e", r.relErrTraced) : "") + ")";
            std::string faster = prevMs == prevMs ? (r.u.medianMs < prevMs ? "yes" : "**no**") + std::string(" (")
                    + fmt("%.2fx", prevMs / r.u.medianMs) + ")"
                                                  : "-";
            std::printf("| %s | %s | %s | %.4f | %.1f | %.1f | %s | %s | %s | %s | %s |\n", ss.c_str(), r.rung.c_str(),
                        corr.c_str(), r.u.medianMs, s.flops() / r.u.medianMs / 1e9, 100.0 * r.cb.medianMs / r.u.medianMs,
                        o.traced ? fmt("%.4f", r.t.medianMs).c_str() : "-",
                        o.traced ? fmt("%.1f", s.flops() / r.t.medianMs / 1e9).c_str() : "-",
                        o.traced ? fmt("%.1f", 100.0 * r.cb.medianMs / r.t.medianMs).c_str() : "-",
                        o.traced ? fmt("%+.2f%%", 100.0 * (r.t.medianMs / r.u.medianMs - 1.0)).c_str() : "-",
                        faster.c_str());
            prevMs = r.u.medianMs;
        }
    }
    if (!idleRows.empty()) {
        std::printf("\n### Instrumented but not recording: %s, %s (medians of 6 ABBA rounds; overhead vs untraced)\n\n",
                    devName.c_str(), dateBuf);
        std::printf("| shape | rung | untraced ms | instrumented, not recording ms | overhead | traced ms | overhead | correct |\n");
        std::printf("|---|---|---:|---:|---:|---:|---:|---|\n");
        for (const auto& r : idleRows) {
            failures += !r.ok;
            std::printf("| %s | %s | %.4f | %.4f | %+.2f%% | %.4f | %+.2f%% | %s (%s) |\n", r.shape.c_str(), r.rung.c_str(),
                        r.u.medianMs, r.i.medianMs, 100.0 * (r.i.medianMs / r.u.medianMs - 1.0), r.t.medianMs,
                        100.0 * (r.t.medianMs / r.u.medianMs - 1.0), r.ok ? "yes" : "**NO**", fmt("%.1e", r.relErr).c_str());
        }
    }
    return failures ? 1 : 0;
}
