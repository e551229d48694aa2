#include "warpstage/tilegeom.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace ws {

namespace {

constexpr std::string_view kTagStart = "[ws-tiles ";

bool parseInt(const std::string& s, long long* out)
{
    if (s.empty() || s.size() > 15 || s.find_first_not_of("-0123456789") != std::string::npos
        || s.find('-', 1) != std::string::npos || s == "-")
        return false;
    *out = std::atoll(s.c_str());
    return true;
}

bool parseInt(const std::string& s, int* out)
{
    long long v = 0;
    if (!parseInt(s, &v) || v < -1 || v > 0x7fffffff)
        return false;
    *out = int(v);
    return true;
}

// "AxB" -> a, b (both > 0)
bool parsePair(const std::string& s, char sep, int* a, int* b)
{
    const auto x = s.find(sep);
    if (x == std::string::npos)
        return false;
    return parseInt(s.substr(0, x), a) && parseInt(s.substr(x + 1), b) && *a >= 0 && *b >= 0;
}

std::string span(int first, int blockLen, int limit, const char* what)
{
    const int last = first + blockLen - 1;
    std::string s = std::string(what) + " " + std::to_string(first) + "-";
    if (limit > 0 && last >= limit) {
        if (first >= limit)
            return s + std::to_string(last) + " (outside C's " + std::to_string(limit) + ")";
        return s + std::to_string(limit - 1) + " of " + std::to_string(limit) + " (partial)";
    }
    return s + std::to_string(last);
}

}  // namespace

std::string formatTileTag(const TileGeometry& g)
{
    std::ostringstream o;
    o << kTagStart << "block=" << g.blockM << "x" << g.blockN << " cluster=" << g.clusterM << " stages=" << g.stages
      << " bk=" << g.blockK;
    if (g.config >= 0)
        o << " config=" << g.config << "/" << g.configCount;
    if (!g.pick.empty())
        o << " pick=" << g.pick;
    o << " grid=" << g.tilesM << "x" << g.tilesN << " kt=" << g.kSteps << " walkers=" << g.walkers
      << " tiles=" << g.workTiles;
    if (g.streamK())
        o << " dp=" << g.dpTiles << " sk_clusters=" << g.skClusters << " sk_iters=" << g.skIters;
    o << "]";
    return o.str();
}

std::optional<TileGeometry> parseTileTag(std::string_view notes)
{
    const auto b = notes.find(kTagStart);
    if (b == std::string_view::npos)
        return std::nullopt;
    const auto e = notes.find(']', b);
    if (e == std::string_view::npos)
        return std::nullopt;
    std::istringstream in(std::string(notes.substr(b + kTagStart.size(), e - b - kTagStart.size())));
    TileGeometry g;
    std::string tok;
    bool haveBlock = false, haveGrid = false;
    while (in >> tok) {
        const auto eq = tok.find('=');
        if (eq == std::string::npos)
            return std::nullopt;
        const std::string k = tok.substr(0, eq), v = tok.substr(eq + 1);
        bool ok = true;
        if (k == "block") ok = haveBlock = parsePair(v, 'x', &g.blockM, &g.blockN) && g.blockM > 0 && g.blockN > 0;
        else if (k == "cluster") ok = parseInt(v, &g.clusterM) && g.clusterM >= 1;
        else if (k == "stages") ok = parseInt(v, &g.stages) && g.stages >= 0;
        else if (k == "bk") ok = parseInt(v, &g.blockK) && g.blockK >= 0;
        else if (k == "config") ok = parsePair(v, '/', &g.config, &g.configCount) && g.config < std::max(1, g.configCount);
        else if (k == "pick") g.pick = v;
        else if (k == "grid") ok = haveGrid = parsePair(v, 'x', &g.tilesM, &g.tilesN);
        else if (k == "kt") ok = parseInt(v, &g.kSteps) && g.kSteps >= 0;
        else if (k == "walkers") ok = parseInt(v, &g.walkers) && g.walkers >= 0;
        else if (k == "tiles") ok = parseInt(v, &g.workTiles) && g.workTiles >= 0;
        else if (k == "dp") ok = parseInt(v, &g.dpTiles) && g.dpTiles >= 0;
        else if (k == "sk_clusters") ok = parseInt(v, &g.skClusters) && g.skClusters >= 0;
        else if (k == "sk_iters") ok = parseInt(v, &g.skIters) && g.skIters >= 0;
        // unknown keys: from a newer recorder, ignored
        if (!ok)
            return std::nullopt;
    }
    if (!haveBlock || !haveGrid)
        return std::nullopt;
    return g;
}

std::string tileGeometryText(const TileGeometry& g)
{
    std::ostringstream o;
    o << g.blockM << "x" << g.blockN << " block";
    if (g.config >= 0) {
        o << " (configuration " << g.config;
        if (g.configCount > 0)
            o << " of " << g.configCount;
        if (!g.pick.empty())
            o << ", " << (g.pick == "rule" ? "chosen by the tile rule" : g.pick == "forced" ? "forced" : g.pick);
        o << ")";
    }
    if (g.clusterM > 1)
        o << ", clusters of " << g.clusterM << " CTAs along M (" << g.clusterM * g.blockM << "x" << g.blockN
          << " per cluster)";
    if (g.stages > 0)
        o << ", " << g.stages << " stages";
    o << ", " << g.tilesM << "x" << g.tilesN << " blocks of C";
    if (g.kSteps > 0)
        o << ", " << g.kSteps << " k-steps" << (g.blockK > 0 ? " of " + std::to_string(g.blockK) : std::string())
          << " per tile";
    if (g.streamK()) {
        o << "; stream-K: " << g.dpTiles << " of " << g.workTiles << " tiles data-parallel, "
          << (g.workTiles - g.dpTiles) << " split";
        if (g.skIters > 0)
            o << " (" << g.skIters << " k-steps over " << g.skClusters << " of " << g.walkers << " "
              << (g.clusterM > 1 ? "clusters" : "CTAs") << ")";
    }
    return o.str();
}

std::string tileGeometryShort(const std::optional<TileGeometry>& g)
{
    if (!g)
        return std::string("tile ") + std::string(kTileConfigNotRecorded);
    std::ostringstream o;
    o << g->blockM * g->clusterM << "x" << g->blockN << (g->clusterM > 1 ? " cluster" : " block");
    if (g->clusterM > 1)
        o << " (" << g->clusterM << " CTAs of " << g->blockM << "x" << g->blockN << ")";
    if (g->stages > 0)
        o << ", " << g->stages << " stages";
    if (g->streamK())
        o << ", stream-K " << g->dpTiles << " + " << (g->workTiles - g->dpTiles) << " split";
    return o.str();
}

std::string tileText(const std::optional<TileGeometry>& g, int tileM, int tileN, int m, int n)
{
    std::string s = "tile (" + std::to_string(tileM) + ", " + std::to_string(tileN) + ")";
    if (!g)
        return s + " (" + std::string(kTileConfigNotRecorded) + ")";
    s += " = " + span(tileM * g->blockM, g->blockM, m, "rows") + ", " + span(tileN * g->blockN, g->blockN, n, "cols")
         + " of C, " + std::to_string(g->blockM) + "x" + std::to_string(g->blockN) + " block";
    if (g->stages > 0)
        s += ", " + std::to_string(g->stages) + " stages";
    return s;
}

std::vector<std::string> checkTileCoordinates(const TileGeometry& g, const std::vector<TileSpan>& tiles,
                                              const std::vector<Cta>& ctas)
{
    std::vector<std::string> out;
    auto inside = [&](int tm, int tn) { return tm >= 0 && tn >= 0 && tm < g.tilesM && tn < g.tilesN; };
    std::size_t bad = 0;
    const TileSpan* first = nullptr;
    for (const TileSpan& t : tiles)
        if (!inside(t.tileM, t.tileN) && bad++ == 0)
            first = &t;
    const std::string grid = std::to_string(g.tilesM) + "x" + std::to_string(g.tilesN) + " grid of "
                             + std::to_string(g.blockM) + "x" + std::to_string(g.blockN) + " blocks";
    if (bad)
        out.push_back(std::to_string(bad) + " of " + std::to_string(tiles.size()) + " tile markers lie outside the "
                      + grid + " (first: tile (" + std::to_string(first->tileM) + ", " + std::to_string(first->tileN)
                      + ")): the recorded configuration does not match the kernel's");
    std::size_t badCta = 0;
    for (const Cta& c : ctas)
        if (c.tileM >= 0 && !inside(c.tileM, c.tileN))
            ++badCta;
    if (badCta)
        out.push_back(std::to_string(badCta) + " CTAs start at a tile outside the " + grid);
    return out;
}

}  // namespace ws
