// A ladder rung's tile configuration (ladder.h: launchTiles) as core's TileGeometry, for the run's [ws-tiles] tag
// (core/include/warpstage/tilegeom.h). Host C++ only (ladder.h stays core-free for the CUDA translation units).
#pragma once

#include "warpstage/ladder.h"
#include "warpstage/tilegeom.h"

namespace ws::ladder {

inline ws::TileGeometry tileGeometryOf(const LaunchTiles& t)
{
    ws::TileGeometry g;
    g.blockM = t.blockM;
    g.blockN = t.blockN;
    g.clusterM = t.clusterM;
    g.stages = t.stages;
    g.blockK = t.blockK;
    g.config = t.config;
    g.configCount = t.configCount;
    if (t.config >= 0) g.pick = t.forced ? "forced" : "rule";
    g.tilesM = t.tilesM;
    g.tilesN = t.tilesN;
    g.kSteps = t.kSteps;
    g.walkers = t.walkers;
    g.workTiles = t.workTiles;
    g.dpTiles = t.dpTiles;
    g.skClusters = t.skClusters;
    g.skIters = t.skIters;
    return g;
}

}  // namespace ws::ladder
