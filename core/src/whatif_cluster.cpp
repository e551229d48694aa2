// The two CTAs of a 2-CTA cluster in the what-if graph and replay (docs/whatif.md, "Clusters"): a multicast pair's
// producer refills a slot only when the consumers of both CTAs released it (the empty barrier counts the arrivals
// of both), and a fill is complete only when both CTAs' loads landed (each loads its part and multicasts it).
// The replay runs the pair's items together, each relative to its own CTA start, with the partner's recorded
// start offset between them; the pair starts together in the placement.
#include "whatif_impl.h"

#include <cmath>
#include <map>

namespace ws {

namespace {

constexpr std::int64_t kUnset = INT64_MIN;

std::int32_t kIndex(const WhatIfModel::Impl& m, int c, std::int32_t k)
{
    if (k < m.ctaKmin[c] || k >= m.ctaKmin[c] + m.ctaKcount[c])
        return -1;
    return m.ctaKbase[c] + k - m.ctaKmin[c];
}

}  // namespace

void buildClusters(WhatIfModel::Impl& g, const std::vector<std::int64_t>& mst)
{
    const KernelTrace& t = g.trace;
    const int nCta = int(t.ctas.size());
    g.ctaPartner.assign(nCta, -1);
    g.ctaPartnerOff.assign(nCta, 0);
    g.ctaClusterLead.assign(nCta, 0);
    g.kPartnerData.assign(g.kIssue.size(), 0);
    const int cx = std::max(1, t.launch.cluster[0]), cy = std::max(1, t.launch.cluster[1]),
              cz = std::max(1, t.launch.cluster[2]);
    const int size = cx * cy * cz;
    if (size <= 1)
        return;
    if (size != 2) {
        g.summary.missing.push_back("clusters of " + std::to_string(size)
                                    + " CTAs: only 2-CTA clusters are replayed together; these CTAs run "
                                      "independently (a partner's release or load is inside the recorded lags)");
        return;
    }
    const int gx = std::max(1, t.launch.grid[0]), gy = std::max(1, t.launch.grid[1]);
    if (gx % cx != 0 || gy % cy != 0) {
        g.summary.missing.push_back("cluster dimensions do not divide the recorded grid: CTAs not paired");
        return;
    }
    // blockLinear -> (x, y, z); the partner is the other CTA of the same cluster.
    std::map<int, int> byBlock;
    for (int c = 0; c < nCta; ++c)
        byBlock[t.ctas[c].blockLinear] = c;
    for (int c = 0; c < nCta; ++c) {
        const int bl = t.ctas[c].blockLinear;
        int x = bl % gx, y = (bl / gx) % gy;
        const int z = bl / (gx * gy);
        if (cx == 2) x ^= 1; else if (cy == 2) y ^= 1;
        const int zz = cz == 2 ? (z ^ 1) : z;
        const auto it = byBlock.find(x + y * gx + zz * gx * gy);
        if (it == byBlock.end() || it->second == c || g.ctaKcount[c] == 0 || g.ctaKcount[it->second] == 0)
            continue;
        g.ctaPartner[c] = it->second;
    }
    for (int c = 0; c < nCta; ++c) {
        const int p = g.ctaPartner[c];
        if (p < 0)
            continue;
        if (g.ctaPartner[p] != c) {
            g.ctaPartner[c] = -1;
            continue;
        }
        g.ctaPartnerOff[c] = t.ctas[p].start - t.ctas[c].start;
        g.ctaClusterLead[c] = t.ctas[c].start < t.ctas[p].start
            || (t.ctas[c].start == t.ctas[p].start && t.ctas[c].blockLinear < t.ctas[p].blockLinear);
        g.summary.clusterPairs += g.ctaClusterLead[c];
    }
    // Data: the fill is complete when the later of the two loads landed; its flight counts from the later issue
    // (ready - later issue, never more than the flight it had). A fill whose partner issued after its own data
    // was observed ready (not this structure) keeps its own load only.
    std::vector<std::int64_t> ready(g.kIssue.size(), kUnset);
    for (const LoadTransfer& ld : t.loads) {
        if (ld.ctaId < 0 || ld.ctaId >= nCta)
            continue;
        const std::int32_t x = kIndex(g, int(ld.ctaId), ld.kstep);
        if (x >= 0)
            ready[x] = std::max(ready[x], ld.ready - t.ctas[ld.ctaId].start);
    }
    for (int c = 0; c < nCta; ++c) {
        const int p = g.ctaPartner[c];
        if (p < 0)
            continue;
        for (std::int32_t x = g.ctaKbase[c]; x < g.ctaKbase[c] + g.ctaKcount[c]; ++x) {
            const std::int32_t k = g.ctaKmin[c] + (x - g.ctaKbase[c]);
            const std::int32_t xp = kIndex(g, p, k);
            if (xp < 0 || g.kIssue[x] < 0 || g.kIssue[xp] < 0 || g.kFlight[x] < 0 || ready[x] == kUnset)
                continue;
            const std::int64_t own = mst[g.kIssue[x]], other = mst[g.kIssue[xp]] + g.ctaPartnerOff[c];
            if (other > ready[x])
                continue;
            g.kPartnerData[x] = 1;
            if (other > own)
                g.kFlight[x] = std::min(g.kFlight[x], ready[x] - other);
        }
    }
}

std::int64_t recordedDataDep(const WhatIfModel::Impl& m, const std::vector<std::int64_t>& mst, int c,
                             std::int32_t x)
{
    std::int64_t issue = mst[m.kIssue[x]];
    if (!m.kPartnerData.empty() && m.kPartnerData[x]) {
        const int p = m.ctaPartner[c];
        const std::int32_t xp = kIndex(m, p, m.ctaKmin[c] + (x - m.ctaKbase[c]));
        issue = std::max(issue, mst[m.kIssue[xp]] + m.ctaPartnerOff[c]);
    }
    return issue + m.kFlight[x];
}

std::int64_t recordedSlotDep(const WhatIfModel::Impl& m, const std::vector<std::int64_t>& mst, int c,
                             std::int32_t k)
{
    std::int64_t rel = INT64_MIN;
    const std::int32_t x = kIndex(m, c, k);
    if (x >= 0)
        for (std::int32_t j = m.kRelBegin[x]; j < m.kRelEnd[x]; ++j)
            rel = std::max(rel, mst[m.relItems[j]]);
    const int p = m.ctaPartner.empty() ? -1 : m.ctaPartner[c];
    const std::int32_t xp = p >= 0 && partnerSlotCoupled(m, x) ? kIndex(m, p, k) : -1;
    if (xp >= 0 && rel != INT64_MIN)
        for (std::int32_t j = m.kRelBegin[xp]; j < m.kRelEnd[xp]; ++j)
            rel = std::max(rel, mst[m.relItems[j]] + m.ctaPartnerOff[c]);
    return rel;
}

std::int32_t partnerDataIssue(const WhatIfModel::Impl& m, const Replay& r, int c, std::int32_t k)
{
    const std::int32_t x = kIndex(m, c, k);
    if (m.kPartnerData.empty() || x < 0 || !m.kPartnerData[x])
        return -1;
    const int p = m.ctaPartner[c];
    const std::int32_t own = dataIssueItem(m, r, c, k), other = dataIssueItem(m, r, p, k);
    if (other < 0)
        return -1;
    const std::int64_t a = r.ctaStart[c] + r.st[own], b = r.ctaStart[p] + r.st[other];
    return b > a ? other : -1;
}

std::int32_t partnerSlotRelease(const WhatIfModel::Impl& m, const Replay& r, int c, std::int32_t k)
{
    const int p = m.ctaPartner.empty() ? -1 : m.ctaPartner[c];
    const std::int32_t x = kIndex(m, c, k), xp = p >= 0 && partnerSlotCoupled(m, x) ? kIndex(m, p, k) : -1;
    if (xp < 0 || x < 0 || m.kRelBegin[x] == m.kRelEnd[x])
        return -1;
    std::int64_t own = INT64_MIN;
    for (std::int32_t j = m.kRelBegin[x]; j < m.kRelEnd[x]; ++j)
        own = std::max(own, r.ctaStart[c] + r.st[m.relItems[j]]);
    std::int32_t best = -1;
    std::int64_t bestAt = own;
    for (std::int32_t j = m.kRelBegin[xp]; j < m.kRelEnd[xp]; ++j) {
        const std::int64_t at = r.ctaStart[p] + r.st[m.relItems[j]];
        if (at > bestAt)
            bestAt = at, best = m.relItems[j];
    }
    return best;
}

void replayClusterPair(const WhatIfModel::Impl& m, Replay& r, int a, int b)
{
    const int ctas[2] = {a, b};
    struct LaneCursor {
        int cta, lane;
        std::int32_t i, end, clockItem;
        std::int64_t clock;
    };
    std::vector<LaneCursor> lanes;
    for (int c : ctas) {
        for (int li = m.ctaLaneBegin[c]; li < m.ctaLaneEnd[c]; ++li) {
            const int l = m.ctaLanes[li];
            for (std::int32_t i = m.laneBegin[l]; i < m.laneEnd[l]; ++i) {
                r.st[i] = kUnset;
                r.en[i] = kUnset;
                r.bound[i] = 0;
                r.clockFrom[i] = -1;
            }
            if (m.laneBegin[l] < m.laneEnd[l])
                lanes.push_back({c, l, m.laneBegin[l], m.laneEnd[l], -1, 0});
        }
    }
    auto scaledBy = [](std::int64_t v, double f) { return f == 1.0 ? v : std::int64_t(std::llround(double(v) * f)); };
    std::size_t left = lanes.size();
    while (left > 0) {
        bool progress = false;
        for (LaneCursor& lc : lanes) {
            const int c = lc.cta;
            const int p = m.ctaPartner[c];
            const std::int64_t off = m.ctaPartnerOff[c];  // partner time + off = time in c's frame
            while (lc.i < lc.end) {
                const std::int32_t i = lc.i;
                if (r.st[i] == kUnset) {
                    r.st[i] = lc.clock + m.itemGap[i];
                    r.clockFrom[i] = lc.clockItem;
                }
                const std::int64_t st = r.st[i];
                std::int64_t dep = kUnset;
                bool ready = true;
                switch (m.itemDep[i]) {
                case DepKind::None:
                    break;
                case DepKind::Data: {
                    const std::int32_t k = m.itemKstep[i];
                    const std::int32_t x = kIndex(m, c, k);
                    const std::int32_t iss = dataIssueItem(m, r, c, k);
                    if (iss < 0 || r.st[iss] == kUnset) {
                        ready = iss < 0;
                        break;
                    }
                    std::int64_t at = r.st[iss];
                    if (x >= 0 && m.kPartnerData[x]) {
                        const std::int32_t pss = dataIssueItem(m, r, p, k);
                        if (pss >= 0) {
                            if (r.st[pss] == kUnset) {
                                ready = false;
                                break;
                            }
                            at = std::max(at, r.st[pss] + off);
                        }
                    }
                    dep = at + scaledBy(m.kFlight[x], flightFactor(r, x));
                    break;
                }
                case DepKind::Flag:  // another CTA's ready flag (whatif_flags.cpp)
                    dep = r.flagDep[std::size_t(m.itemDepArg[i])];
                    break;
                case DepKind::Slot: {
                    const std::int32_t k = m.itemKstep[i] - r.stages;
                    const std::int32_t x = kIndex(m, c, k);
                    if (x < 0)
                        break;
                    for (std::int32_t j = m.kRelBegin[x]; j < m.kRelEnd[x] && ready; ++j) {
                        const std::int64_t e = r.st[m.relItems[j]];
                        if (e == kUnset)
                            ready = false;
                        else
                            dep = std::max(dep, e);
                    }
                    const std::int32_t xp = partnerSlotCoupled(m, x) ? kIndex(m, p, k) : -1;
                    if (xp >= 0 && m.kRelBegin[x] != m.kRelEnd[x])
                        for (std::int32_t j = m.kRelBegin[xp]; j < m.kRelEnd[xp] && ready; ++j) {
                            const std::int64_t e = r.st[m.relItems[j]];
                            if (e == kUnset)
                                ready = false;
                            else
                                dep = std::max(dep, e + off);
                        }
                    break;
                }
                case DepKind::Sync:
                case DepKind::Collective: {
                    if (r.dropSync && m.itemDep[i] == DepKind::Sync)
                        break;
                    const std::int32_t grp = m.itemDepArg[i];
                    for (std::int32_t j = m.syncBegin[grp]; j < m.syncEnd[grp] && ready; ++j) {
                        const std::int64_t s2 = r.st[m.syncItems[j]];
                        if (s2 == kUnset)
                            ready = false;
                        else
                            dep = std::max(dep, s2);
                    }
                    break;
                }
                case DepKind::Handoff: {
                    const std::int64_t e = r.st[m.itemDepArg[i]];
                    if (e == kUnset)
                        ready = false;
                    else
                        dep = e;
                    break;
                }
                case DepKind::Order: {
                    const std::int64_t e = r.en[m.itemDepArg[i]];
                    if (e == kUnset)
                        ready = false;
                    else
                        dep = e;
                    break;
                }
                }
                if (!ready)
                    break;
                std::int64_t en;
                if (m.itemDep[i] == DepKind::None || (m.itemDep[i] == DepKind::Sync && r.dropSync)) {
                    en = st + itemDuration(m, r, i);
                } else if (dep == kUnset) {
                    en = st + m.itemMinDur[i];
                } else {
                    const std::int64_t byDep = dep + itemLagNow(m, r, i);
                    const std::int64_t own = st + m.itemMinDur[i];
                    en = std::max(own, byDep);
                    r.bound[i] = byDep > own;
                }
                r.en[i] = en;
                const bool aside = r.overlapEpilogue && isEpilogueKind(m.itemKind[i]) && m.itemLaterMma[i];
                if (!aside && (lc.clockItem < 0 || en >= lc.clock)) {
                    lc.clock = en;
                    lc.clockItem = i;
                }
                ++lc.i;
                progress = true;
                if (lc.i == lc.end)
                    --left;
            }
        }
        if (!progress)
            throw WhatIfError("the replay cannot go on: the edited parameters make warps wait for each other in a "
                              "cycle (cluster of CTAs " + std::to_string(m.trace.ctas[a].blockLinear) + " and "
                              + std::to_string(m.trace.ctas[b].blockLinear) + ")");
    }
    // Per CTA: its length, main loop and first flight (as runReplay does for a single CTA).
    for (int c : ctas) {
        std::int64_t last = 0, mainS = kUnset, mainE = 0;
        for (int li = m.ctaLaneBegin[c]; li < m.ctaLaneEnd[c]; ++li) {
            const int l = m.ctaLanes[li];
            for (std::int32_t i = m.laneBegin[l]; i < m.laneEnd[l]; ++i) {
                last = std::max(last, r.en[i]);
                if (isMmaLike(m.itemKind[i])) {
                    mainS = mainS == kUnset ? r.st[i] : std::min(mainS, r.st[i]);
                    mainE = std::max(mainE, r.en[i]);
                }
            }
        }
        r.ctaDur[c] = last + m.ctaEndGap[c];
        r.ctaMainStart[c] = mainS == kUnset ? 0 : mainS;
        r.ctaMainEnd[c] = mainS == kUnset ? last : mainE;
        if (m.ctaKcount[c] > 0 && m.kFlight[m.ctaKbase[c]] >= 0)
            r.ctaFirstFlight[c] = scaledBy(m.kFlight[m.ctaKbase[c]], r.fLoad);
    }
}

}  // namespace ws
