// Host side of the kernel ladder (warpstage/ladder.h): rung table, shape checks, trace
// geometry, launch dispatch, kernel symbols, and the TMA tensor-map encoding helpers.
#include "warpstage/ladder.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <mutex>
#include <string>

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include "hopper.cuh"
#include "rungs.h"
#include "streamk_schedule.h"
#include "warpstage/trace_format.h"

namespace ws::kern {

namespace {
PFN_cuTensorMapEncodeTiled_v12000 encodeFn()
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

std::string encode(CUtensorMap* map, const void* base, int rows, int cols, int boxRows, int boxCols,
                   CUtensorMapSwizzle swz)
{
    auto fn = encodeFn();
    if (!fn) return "cuTensorMapEncodeTiled is not available from the CUDA driver";
    const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
    const cuuint64_t strides[1] = {cuuint64_t(cols) * 2};
    const cuuint32_t box[2] = {cuuint32_t(boxCols), cuuint32_t(boxRows)};
    const cuuint32_t elemStr[2] = {1, 1};
    CUresult r = fn(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box, elemStr,
                    CU_TENSOR_MAP_INTERLEAVE_NONE, swz, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "cuTensorMapEncodeTiled failed (CUresult %d) for a %dx%d bf16 matrix",
                      int(r), rows, cols);
        return buf;
    }
    return {};
}
}  // namespace

std::string encodeTmaK64(CUtensorMap* map, const void* base, int rows, int cols, int boxRows)
{
    return encode(map, base, rows, cols, boxRows, 64, CU_TENSOR_MAP_SWIZZLE_128B);
}

std::string encodeTmaStoreSw64(CUtensorMap* map, const void* base, int rows, int cols, int boxRows)
{
    return encode(map, base, rows, cols, boxRows, 32, CU_TENSOR_MAP_SWIZZLE_64B);
}

}  // namespace ws::kern

namespace ws::ladder {

using namespace ws::kern::geom;

namespace {

struct RungImpl {
    RungInfo info;
    int bm, bn, bk;      // tile (edge tiles may be partial)
    int threads;
    int stages;
    bool persistent;
    cudaError_t (*launch)(const ws::kern::LaunchArgs&, const char**);
    const void* (*kernel)(bool);
    bool optIn = false;  // not in rungs() (nor `--rungs all`): reachable by name only, until verified on a GPU
};

const std::vector<RungImpl>& impls()
{
    static const std::vector<RungImpl> v = {
        {{"sync", "Synchronous: shared-memory tiles, CUDA-core FFMA, __syncthreads between load and math",
          "The textbook shared-memory tiled GEMM on CUDA cores: load a 128x32 slice of A and B, "
          "__syncthreads, FFMA, __syncthreads. Nothing overlaps inside a CTA.",
          "kernels/src/sync.cu", 1, false, false},
         kSyncBM, kSyncBN, kSyncBK, kSyncThreads, 0, false, &ws::kern::launchSync, &ws::kern::kernelSync},
        {{"tma_sync", "TMA + wgmma, one buffer: load, wait, MMA, wait",
          "The fast units, still no overlap: TMA loads into one shared buffer, wgmma tensor-core math, "
          "and each waits for the other.",
          "kernels/src/tma_sync.cu", 2, true, true},
         kTmaSyncBM, kTmaSyncBN, kBK, kTmaSyncThreads, 1, false, &ws::kern::launchTmaSync,
         &ws::kern::kernelTmaSync},
        {{"multistage", "Multistage: a 4-stage ring filled ahead by the computing warps",
          "Software pipelining without specialization: the same warps fill a ring of 4 shared-memory "
          "stages 3 k-steps ahead, so loads fly while the tensor cores work; a CTA barrier still ends "
          "each k-step.",
          "kernels/src/multistage.cu", 3, true, true},
         kMsBM, kMsBN, kBK, kMsThreads, kMsStages, false, &ws::kern::launchMultistage,
         &ws::kern::kernelMultistage},
        {{"warp_specialized", "Warp-specialized: TMA producer warp + two wgmma consumer warpgroups",
          "Loading and computing go to different warps: a producer warp issues TMA into a 4-slot ring "
          "guarded by full/empty mbarriers, two consumer warpgroups run wgmma and release slots; no CTA "
          "barrier in the main loop.",
          "kernels/src/warp_specialized.cu", 4, true, true},
         kWsBM, kWsBN, kBK, kWsThreads, kWsStages, false, &ws::kern::launchWarpSpecialized,
         &ws::kern::kernelWarpSpecialized},
        {{"cooperative", "Cooperative: persistent grid, two consumer warpgroups share a 128x256 tile, setmaxnreg",
          "A persistent grid walks the tiles (loads of the next tile overlap the epilogue) and setmaxnreg "
          "moves registers from the producer warpgroup to the two consumer warpgroups sharing a 128x256 tile.",
          "kernels/src/cooperative.cu", 5, true, true},
         kCoopBM, kCoopBN, kBK, kCoopThreads, kCoopStages, true, &ws::kern::launchCooperative,
         &ws::kern::kernelCooperative},
        {{"pingpong", "Ping-pong: two consumer warpgroups on different tiles, out of step",
          "Two consumer warpgroups work on different 64x256 tiles; an ordering barrier starts the second "
          "a few k-steps after the first on every tile, so one's epilogue runs while the other keeps the "
          "tensor cores busy. The two tiles share each B block, and CTA pairs (clusters of 2) share it "
          "across SMs by TMA multicast.",
          "kernels/src/pingpong.cu", 6, true, true},
         // shape unit: the 256x256 pair of blocks that one cluster of 2 CTAs computes together
         kPpBM * kPpCluster, kPpBN, kBK, kPpThreads, kPpStages, true, &ws::kern::launchPingpong,
         &ws::kern::kernelPingpong},
        {{"streamk", "Stream-K: the last wave's tiles split along K among all clusters, partials fixed up",
          "Pingpong with a different tile walk: whole waves of tiles stay data-parallel, and the k-steps of "
          "the remaining tiles are divided evenly among all clusters, each taking a contiguous range that may "
          "cross tile boundaries. Clusters that do not finish a tile write fp32 partials to a workspace and "
          "raise a flag; the cluster that computes the tile's last k-steps adds them in a fixed order and "
          "stores C, so a small or uneven problem keeps every SM busy to the end.",
          "kernels/src/streamk.cu", 7, true, true},
         kPpBM * kPpCluster, kPpBN, kBK, kPpThreads, kPpStages, true, &ws::kern::launchStreamk,
         &ws::kern::kernelStreamk},  // verified on the H200 (docs/device-log.md, session 6)
    };
    return v;
}

const RungImpl* findImpl(std::string_view name)
{
    for (const auto& r : impls())
        if (r.info.name == name) return &r;
    return nullptr;
}

// pingpong and streamk: clusters of kPpCluster CTAs, one 256x256 pair tile per cluster (shape unit)
bool n_is_pingpong(std::string_view n) { return n == "pingpong" || n == "streamk"; }

constexpr int kTmaRowElems = 8;  // 16 bytes of bf16: TMA's row-stride unit
constexpr int kMaxDim = 1 << 17;  // 131072: keeps every index and TMA coordinate well inside int32

int smCountOrQuery(int smCount)
{
    if (smCount > 0) return smCount;
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 132;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n <= 0) return 132;
    return n;
}

// Tiles of the output (ceil-div: the tensor-core rungs compute partial tiles at the right and bottom edges).
std::uint64_t tileCount(const RungImpl& r, const Shape& s)
{
    return std::uint64_t((s.m + r.bm - 1) / r.bm) * std::uint64_t((s.n + r.bn - 1) / r.bn);
}

std::uint32_t gridCtas(const RungImpl& r, const Shape& s, int smCount)
{
    const std::uint64_t tiles = tileCount(r, s);
    if (!r.persistent) return std::uint32_t(tiles);
    if (n_is_pingpong(r.info.name)) {  // clusters of kPpCluster CTAs, one pair tile each at a time
        int clusters = ws::kern::pingpongMaxClusters();  // (streamk: the same kernel resources)
        if (clusters <= 0) clusters = smCountOrQuery(smCount) / kPpCluster;
        // stream-K: every cluster that fits (the k-steps of a small problem are spread over all of them)
        if (r.info.name == "streamk") return std::uint32_t(kPpCluster * clusters);
        return std::uint32_t(kPpCluster * std::min<std::uint64_t>(tiles, std::uint64_t(clusters)));
    }
    return std::uint32_t(std::min<std::uint64_t>(tiles, std::uint64_t(smCountOrQuery(smCount))));
}

}  // namespace

const std::vector<RungInfo>& rungs()
{
    static const std::vector<RungInfo> v = [] {
        std::vector<RungInfo> out;
        for (const auto& r : impls())
            if (!r.optIn) out.push_back(r.info);
        return out;
    }();
    return v;
}

const RungInfo* findRung(std::string_view name)
{
    for (const auto& r : impls())  // opt-in rungs too (by name)
        if (r.info.name == name) return &r.info;
    return nullptr;
}

std::string checkShape(std::string_view rung, const Shape& s)
{
    const RungImpl* r = findImpl(rung);
    if (!r) return "unknown rung '" + std::string(rung) + "'";
    char buf[256];
    if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.m > kMaxDim || s.n > kMaxDim || s.k > kMaxDim) {
        std::snprintf(buf, sizeof buf, "%s needs M, N and K between 1 and %d; got %dx%dx%d", r->info.name.c_str(),
                      kMaxDim, s.m, s.n, s.k);
        return buf;
    }
    if (!r->info.tensorCores) {  // the CUDA-core rung: partial tiles by bounds tests, loads in 16-byte pieces
        if (s.k % kTmaRowElems != 0) {
            std::snprintf(buf, sizeof buf,
                          "%s needs K a multiple of %d: it loads the rows of A and B in pieces of %d bf16 (16 bytes), "
                          "which must start 16-byte aligned; got %dx%dx%d",
                          r->info.name.c_str(), kTmaRowElems, kTmaRowElems, s.m, s.n, s.k);
            return buf;
        }
        return {};
    }
    // Tensor-core rungs: partial tiles come from TMA (zero fill past M, N, K; stores clipped), so the only
    // limit left is TMA's: the rows of A and B (K bf16 each) must be a multiple of 16 bytes apart.
    if (s.k % kTmaRowElems) {
        std::snprintf(buf, sizeof buf,
                      "%s needs K a multiple of %d: TMA reads rows of A and B whose length (K x 2 bytes) must be a "
                      "multiple of 16 bytes; got %dx%dx%d",
                      r->info.name.c_str(), kTmaRowElems, s.m, s.n, s.k);
        return buf;
    }
    return {};
}

TraceGeometry traceGeometry(std::string_view rung, const Shape& s, int smCount)
{
    TraceGeometry g;
    const RungImpl* r = findImpl(rung);
    if (!r || !checkShape(rung, s).empty()) return g;
    g.numCtas = gridCtas(*r, s, smCount);
    g.warpsPerCta = std::uint32_t(r->threads / 32);
    g.stages = std::uint32_t(r->stages);
    // bytes one CTA's k-step stage receives (pingpong's shape unit spans the cluster's two CTAs)
    g.bytesPerKStep = n_is_pingpong(r->info.name) ? std::uint32_t((kPpBM + kPpBN) * kBK * 2)
                                                   : std::uint32_t((r->bm + r->bn) * r->bk * 2);
    const std::uint64_t kt = std::uint64_t((s.k + r->bk - 1) / r->bk);  // k-steps (the last may be partial)
    std::uint64_t tiles = tileCount(*r, s);
    // tiles (pingpong: pair tiles, one per cluster) each CTA walks
    std::uint64_t walkers = n_is_pingpong(r->info.name) ? g.numCtas / kPpCluster : g.numCtas;
    if (r->info.name == "streamk") {  // the tile configuration this shape gets (streamk_schedule.h: kTiles)
        const auto& t = ws::kern::sk::kTiles[ws::kern::streamkTile(s.m, s.n, s.k, int(g.numCtas))];
        g.stages = std::uint32_t(t.stages);  // the ring of this configuration (kTiles), not pingpong's
        g.bytesPerKStep = std::uint32_t((ws::kern::sk::boxRowsA(t, s.m) + t.bn) * kBK * 2);  // A's box: M's rows (s9)
        tiles = std::uint64_t(ws::kern::sk::tileCountOf(t, s.m, s.n));
        walkers = g.numCtas / std::uint32_t(t.cl);
    }
    const std::uint64_t tilesPerCta = (tiles + walkers - 1) / walkers;
    std::uint64_t events = 0;
    const std::string_view n = r->info.name;
    if (n == "sync") events = 4 * kt + 4;                   // Load, Sync, Compute, Sync / k-step
    else if (n == "tma_sync") events = 5 * kt + 4;          // IssueLoad, WaitData, MmaIssue, MmaWait, Sync
    else if (n == "multistage") events = 5 * kt + r->stages + 4;
    else if (n == "warp_specialized") events = 4 * kt + 6;  // consumers: 4 / k-step; producer 2
    else if (n == "cooperative") events = tilesPerCta * (4 * kt + 6) + 4;
    else if (n == "streamk") {  // the busiest cluster's units: 4 / k-step + markers, WaitOrder, fixup phases
        const auto p = ws::kern::sk::plan(int(tiles), int(kt), int(walkers),
                                          ws::kern::streamkPlanMode(s.m, s.n, s.k, int(g.numCtas)));
        for (int c = 0; c < p.clusters; ++c) {
            std::uint64_t e = 4;
            for (int i = 0; i < ws::kern::sk::dpCount(p, c); ++i) e += 4 * kt + 12;
            auto cur = ws::kern::sk::skBegin(p, c);
            ws::kern::sk::Unit u;
            while (ws::kern::sk::skNext(p, cur, u)) e += 4 * std::uint64_t(u.ke - u.kb) + 12;
            events = std::max(events, e);
        }
    } else  // pingpong: every warp sees all of its CTA's tiles; consumers 4 / k-step + WaitOrder and markers
        events = tilesPerCta * (4 * kt + 8) + 4;
    // margin: 1/16 plus a constant, so a normal launch never overflows
    events += events / 16 + 32;
    g.eventsPerWarp = std::uint32_t(std::min<std::uint64_t>(events, 0xFFFFFFF0u));
    g.bufferBytes = ws::trace::bufferBytes(g.numCtas, g.warpsPerCta, g.eventsPerWarp);
    return g;
}

LaunchTiles launchTiles(std::string_view rung, const Shape& s, int smCount)
{
    LaunchTiles g;
    const RungImpl* r = findImpl(rung);
    if (!r || !checkShape(rung, s).empty()) return g;
    const int ctas = int(gridCtas(*r, s, smCount));
    g.blockK = r->bk;
    g.kSteps = (s.k + r->bk - 1) / r->bk;
    if (n_is_pingpong(r->info.name)) {  // TileBegin counts CTA blocks (128 rows), a cluster of kPpCluster along M
        g.blockM = kPpBM;
        g.blockN = kPpBN;
        g.clusterM = kPpCluster;
        g.stages = kPpStages;
    } else {
        g.blockM = r->bm;
        g.blockN = r->bn;
        g.stages = r->stages;
    }
    if (r->info.name == "streamk") {  // the configuration this launch gets: read from kTiles (one source of truth)
        const int i = ws::kern::streamkTile(s.m, s.n, s.k, ctas);
        const auto& t = ws::kern::sk::kTiles[i];
        g.blockM = t.bm;  // 64-row blocks (s9-smallm: kTiles 5-6) count TileBegin rows in 64s
        g.blockN = t.bn;
        g.clusterM = t.cl;
        g.stages = t.stages;
        g.config = i;
        g.configCount = ws::kern::sk::kTileCount;
        const char* f = std::getenv("WARPSTAGE_STREAMK_TILE");  // as streamkTile reads it
        g.forced = f && *f && std::atoi(f) == i;
    }
    // both CTAs of a cluster mark their block, also one wholly past M (M = 300 in 256-row clusters: block row 3)
    const int clusterRows = (s.m + g.blockM * g.clusterM - 1) / (g.blockM * g.clusterM);
    g.tilesM = clusterRows * g.clusterM;
    g.tilesN = (s.n + g.blockN - 1) / g.blockN;
    g.workTiles = clusterRows * g.tilesN;
    g.walkers = r->persistent ? ctas / g.clusterM : g.workTiles;
    if (r->info.name == "streamk") {
        const auto p = ws::kern::sk::plan(g.workTiles, g.kSteps, g.walkers, ws::kern::streamkPlanMode(s.m, s.n, s.k, ctas));
        g.dpTiles = p.dpTiles;
        g.skClusters = p.skClusters;
        g.skIters = p.skIters;
    }
    return g;
}

namespace {
std::string launchWith(std::string_view rung, const Shape& s, const void* a, const void* b, void* c, void* stream,
                       void* traceBuffer, int smCount, bool instrumentedIdle);
}

std::string launch(std::string_view rung, const Shape& s, const void* a, const void* b, void* c, void* stream,
                   void* traceBuffer, int smCount)
{
    return launchWith(rung, s, a, b, c, stream, traceBuffer, smCount, false);
}

bool hasInstrumentedIdle(std::string_view rung) { return rung == "pingpong" || rung == "streamk"; }

std::string launchInstrumentedIdle(std::string_view rung, const Shape& s, const void* a, const void* b, void* c,
                                   void* stream, int smCount)
{
    if (!hasInstrumentedIdle(rung))
        return "'" + std::string(rung) + "' has no instrumented-but-not-recording launch (only pingpong and streamk)";
    return launchWith(rung, s, a, b, c, stream, nullptr, smCount, true);
}

namespace {
std::string launchWith(std::string_view rung, const Shape& s, const void* a, const void* b, void* c, void* stream,
                       void* traceBuffer, int smCount, bool instrumentedIdle)
{
    const RungImpl* r = findImpl(rung);
    if (!r) return "unknown rung '" + std::string(rung) + "'";
    std::string why = checkShape(rung, s);
    if (!why.empty()) return why;
    if (!a || !b || !c) return std::string(r->info.name) + ": null matrix pointer";
    if ((reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b)
         | reinterpret_cast<std::uintptr_t>(c)) & 15u)
        return std::string(r->info.name) + ": A, B and C must be 16-byte aligned";
    ws::kern::LaunchArgs args;
    args.m = s.m;
    args.n = s.n;
    args.k = s.k;
    args.a = a;
    args.b = b;
    args.c = c;
    args.stream = static_cast<cudaStream_t>(stream);
    args.trace = traceBuffer;
    args.instrumented = instrumentedIdle;
    args.gridCtas = int(gridCtas(*r, s, smCount));
    const char* err = nullptr;
    const cudaError_t e = r->launch(args, &err);
    if (e != cudaSuccess) {
        std::string msg = r->info.name + ": launch failed: ";
        msg += err ? err : cudaGetErrorString(e);
        return msg;
    }
    return {};
}
}  // namespace

// The mangled name spelled out (used when the runtime cannot tell, e.g. without a GPU driver):
// _ZN2ws4kern<len>r_<rung><len><kernel>ILb<0|1>EEEv<parameters>.
static std::string mangledKernelName(std::string_view rung, bool traced)
{
    struct Name {
        const char* rung;
        const char* kernel;
    };
    static const Name names[] = {{"sync", "gemmSync"},
                                 {"tma_sync", "gemmTmaSync"},
                                 {"multistage", "gemmMultistage"},
                                 {"warp_specialized", "gemmWarpSpecialized"},
                                 {"cooperative", "gemmCooperative"},
                                 {"pingpong", "gemmPingpong"},
                                 {"streamk", "gemmStreamk"}};
    for (const Name& n : names) {
        if (rung != n.rung) continue;
        const std::string ns = std::string("r_") + n.rung;
        const std::string k = n.kernel;
        const char* params = rung == "sync"       ? "PK13__nv_bfloat16S5_PS3_iiiPv"
                             : rung == "pingpong" ? "14CUtensorMap_stS3_S3_P13__nv_bfloat16iiiPv"  // A, B, C maps
                             : rung == "streamk"  ? "14CUtensorMap_stS3_S3_P13__nv_bfloat16iiiPvNS1_8SkParamsE"
                                                  : "14CUtensorMap_stS3_P13__nv_bfloat16iiiPv";
        // streamk: gemmStreamk<Traced, TileI = 0> (the default configuration's kernel)
        return "_ZN2ws4kern" + std::to_string(ns.size()) + ns + std::to_string(k.size()) + k + "ILb"
            + (traced ? "1" : "0") + (rung == "streamk" ? "ELi0EEEv" : "EEEv") + params;
    }
    return {};
}

std::string kernelSymbol(std::string_view rung, bool traced)
{
    const RungImpl* r = findImpl(rung);
    if (!r) return {};
    const char* name = nullptr;
    if (cudaFuncGetName(&name, r->kernel(traced)) == cudaSuccess && name) return name;
    cudaGetLastError();  // no driver / no device: clear the error, spell the name out
    return mangledKernelName(rung, traced);
}

}  // namespace ws::ladder
