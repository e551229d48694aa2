// The kernel ladder's host API: one bf16 GEMM (C = A * B^T, A MxK and B NxK
// K-major, C MxN row-major bf16, fp32 accumulation) written as rungs of
// increasing pipelining. Used by the benchmark, the GPU tests and the
// recorder. Host C++ only: no device code and no CUDA types in this header
// (pointers are device pointers passed as void*, streams as void*).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ws::ladder {

struct Shape {
    int m = 0, n = 0, k = 0;
    double flops() const { return 2.0 * double(m) * double(n) * double(k); }
};

struct RungInfo {
    std::string name;        // "sync", "tma_sync", "multistage", "warp_specialized", "cooperative", "pingpong", "streamk"
    std::string title;       // one line for the UI: "Warp-specialized: TMA producer + wgmma consumer"
    std::string idea;        // the one new idea of this rung (same text as the top of its source file)
    std::string sourceFile;  // path of its .cu relative to the repository root, for the source view
    int level = 0;           // 1..7, position on the ladder
    bool tensorCores = false;  // uses wgmma
    bool tma = false;          // uses TMA loads
};

// All rungs, bottom to top (without opt-in ones, if any: a rung marked opt-in in ladder.cu, e.g. while it is
// not yet verified on a GPU, is left out here and of `--rungs all`; findRung, checkShape, traceGeometry and
// launch take it by name).
const std::vector<RungInfo>& rungs();
const RungInfo* findRung(std::string_view name);

// "" if the rung accepts the shape, else a sentence saying why not. The tensor-core rungs take any
// M, N >= 1 and any K that is a multiple of 8 (partial tiles by TMA zero fill and clipped stores):
// ("pingpong needs K a multiple of 8: TMA reads rows of A and B whose length (K x 2 bytes) must be a multiple
// of 16 bytes; got 1000x4096x4100"); sync needs whole 128x128x32 tiles.
std::string checkShape(std::string_view rung, const Shape& s);

// Geometry of a traced launch, so the caller can size and decode the event buffer.
struct TraceGeometry {
    std::uint32_t numCtas = 0;        // grid size (persistent rungs: the persistent grid)
    std::uint32_t warpsPerCta = 0;
    std::uint32_t eventsPerWarp = 0;  // capacity needed for this shape, with margin
    std::uint32_t stages = 0;         // pipeline slots, 0 if none
    std::uint32_t bytesPerKStep = 0;  // bytes loaded into shared memory per k-step
    std::uint64_t bufferBytes = 0;    // ws::trace::bufferBytes(...) of the above
};
TraceGeometry traceGeometry(std::string_view rung, const Shape& s, int smCount);

// The tile configuration a launch of the rung at this shape runs with (what TileBegin's (tileM, tileN) count in,
// the ring, stream-K's configuration from kTiles and its plan). The recorder turns it into core's ws::TileGeometry
// (the same fields, core/include/warpstage/tilegeom.h) for the run's [ws-tiles] tag; this header stays core-free
// because CUDA translation units include it. Empty (blockM 0) for an unknown rung or a refused shape.
struct LaunchTiles {
    int blockM = 0, blockN = 0;  // rows x columns of C per CTA block (TileBegin's units)
    int clusterM = 1;            // CTAs per cluster along M
    int stages = 0;              // ring stages
    int blockK = 0;              // K per k-step
    int config = -1;             // stream-K: index into kTiles (streamk_schedule.h); -1: the rung has one
    int configCount = 0;
    bool forced = false;         // WARPSTAGE_STREAMK_TILE chose it (else the tile rule)
    int tilesM = 0, tilesN = 0;  // blocks of C along M, N
    int kSteps = 0;              // per tile
    int walkers = 0;             // clusters (persistent) or work tiles (one CTA each)
    int workTiles = 0;           // tiles of the walk (a cluster's block)
    int dpTiles = -1;            // stream-K plan: data-parallel tiles (-1: not stream-K)
    int skClusters = 0;
    long long skIters = 0;
};
LaunchTiles launchTiles(std::string_view rung, const Shape& s, int smCount);

// Launch one rung on `stream` (a cudaStream_t, may be null).
//   a, b, c: device pointers (bf16). traceBuffer: device pointer to a buffer of
//   at least traceGeometry(...).bufferBytes whose TraceBufferHeader the caller
//   has filled (magic, version, counts), or nullptr for the untraced build
//   (which contains no trace code at all).
// Returns "" on success, else an error message (bad shape, launch failure).
// Does not synchronize.
std::string launch(std::string_view rung, const Shape& s, const void* a, const void* b, void* c,
                   void* stream, void* traceBuffer = nullptr, int smCount = 0);

// The rung's instrumented (traced) build launched NOT recording: its trace calls run with a null buffer, the path
// of <warpstage/trace.cuh> when no recorder is attached; what the instrumentation costs when nobody records
// (ladder_bench --idle-cost). Only the top rungs offer it; other rungs get a sentence saying so. "pingpong": its
// dispatch kernel (both bodies in one kernel, the untraced body runs: the instrumentation's structural cost);
// "streamk" (session 10): its traced kernel with a null buffer (the traced body runs: its structure and clock reads,
// no header load, no store, no flush). So the two measure different things; WARPSTAGE_PINGPONG_IDLE=traced (session 14,
// s14-tracestruct) makes pingpong's launch its traced kernel with the null buffer too, comparable with streamk's.
bool hasInstrumentedIdle(std::string_view rung);
std::string launchInstrumentedIdle(std::string_view rung, const Shape& s, const void* a, const void* b, void* c,
                                   void* stream, int smCount = 0);

// The exact kernel function names (as CUPTI reports them, mangled) of a rung's
// traced and untraced builds, so the recorder can tell its launches apart.
std::string kernelSymbol(std::string_view rung, bool traced);

}  // namespace ws::ladder
