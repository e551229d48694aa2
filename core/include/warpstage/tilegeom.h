// The tile configuration a recorded GEMM launch ran with (issue 14, session 9): what a TileBegin marker's
// (tileM, tileN) count in, the ring depth, and for stream-K the plan (data-parallel tiles vs split k-steps).
// Stream-K picks one of several configurations per shape (kernels/src/streamk_schedule.h, kTiles), so a tile
// index alone does not say which rows and columns of C it covers. The recorder writes the configuration into the
// run's notes as one bracketed token list (like runfamily.h's [ws-rung] tag: no schema change, readable in the
// sqlite3 shell, old files simply have none):
//   [ws-tiles block=128x128 cluster=1 stages=6 bk=64 config=2/5 pick=forced grid=3x8 kt=17 walkers=132
//    tiles=24 dp=0 sk_clusters=102 sk_iters=408]
// Qt-free, CUDA-free.
#pragma once

#include "warpstage/model.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ws {

struct TileGeometry {
    int blockM = 0, blockN = 0;  // rows x columns of C per CTA block: the units of TileBegin's (tileM, tileN)
    int clusterM = 1;            // CTAs per cluster along M (a work tile of the walk is clusterM x blockM rows)
    int stages = 0;              // pipeline ring stages (0: none)
    int blockK = 0;              // K per k-step
    int config = -1;             // index of the configuration among the rung's (stream-K: kTiles); -1: only one
    int configCount = 0;         // how many the rung has (0: not stated)
    std::string pick;            // how it was chosen: "rule" (the cost model), "forced" (WARPSTAGE_STREAMK_TILE), ""
    int tilesM = 0, tilesN = 0;  // blocks along M and N (TileBegin's coordinates lie in [0, tilesM) x [0, tilesN));
                                 // tilesM counts whole clusters (a cluster's last block may lie wholly past M)
    int kSteps = 0;              // k-steps per tile (the last may be partial)
    int walkers = 0;             // clusters (or CTAs) that walk the work tiles
    int workTiles = 0;           // tiles of the walk (cluster tiles)
    // stream-K's plan (dpTiles < 0: not stream-K)
    int dpTiles = -1;            // work tiles [0, dpTiles) are computed whole, data-parallel
    int skClusters = 0;          // walkers that share the k-steps of the remaining tiles
    long long skIters = 0;       // those k-steps: (workTiles - dpTiles) x kSteps

    bool streamK() const { return dpTiles >= 0; }
    bool operator==(const TileGeometry&) const = default;
};

// What the viewer says where a recording carries no [ws-tiles] tag (files recorded before session 9, programs).
inline constexpr std::string_view kTileConfigNotRecorded = "configuration not recorded";

std::string formatTileTag(const TileGeometry& g);
// The first "[ws-tiles ...]" in `notes`; nullopt if none or malformed (unknown keys are ignored).
std::optional<TileGeometry> parseTileTag(std::string_view notes);
inline std::optional<TileGeometry> tileGeometryOf(const RunInfo& run) { return parseTileTag(run.notes); }

// One line: "128x128 block (configuration 2 of 5, forced), 6 stages, 3x8 blocks of C, 17 k-steps of 64 per tile;
// stream-K: 0 tiles data-parallel, 24 split (408 k-steps) over 102 of 132 walkers".
std::string tileGeometryText(const TileGeometry& g);
// The short form for a header: "128x128 block, 6 stages, stream-K 0 + 24 split" (or kTileConfigNotRecorded).
std::string tileGeometryShort(const std::optional<TileGeometry>& g);

// "tile (3, 5) = rows 384-511, cols 640-767 of C, 128x128 block, 6 stages"; the rows/cols clipped to M x N where the
// block is partial ("rows 384-399 of 400 (partial)"); without a geometry "tile (3, 5) (configuration not recorded)".
std::string tileText(const std::optional<TileGeometry>& g, int tileM, int tileN, int m, int n);

// Checks a decoded kernel's tile coordinates against the geometry: every TileBegin (tiles) and every CTA's first
// tile inside [0, tilesM) x [0, tilesN). Returns one sentence per problem (empty: consistent).
std::vector<std::string> checkTileCoordinates(const TileGeometry& g, const std::vector<TileSpan>& tiles,
                                              const std::vector<Cta>& ctas);

}  // namespace ws
