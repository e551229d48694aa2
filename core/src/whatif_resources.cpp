// Shared resources in the what-if replay (docs/whatif.md, "Shared resources"): the tensor cores of an SM are
// shared by the CTAs resident on it. The MmaIssue/MmaWait phases of one (CTA, fill) form a group that asks for
// the fill's work (2 M N K / groups) over its recorded span; when the groups active at once on an SM ask for
// more than the SM's throughput, they stretch by the excess, relative to the excess they were recorded under.
#include "whatif_impl.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <unordered_map>

namespace ws {

namespace {

// Dense bf16/fp16 wgmma throughput of one sm_90 SM per cycle: 989.4 TFLOP/s (H100/H200 SXM datasheet, dense)
// = 132 SMs x 4096 flop x 1.83 GHz.
constexpr double kSm90FlopPerCycle = 4096.0;

std::string fmtG(const char* f, double v)
{
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

// A demand event: 2g = start of group g, 2g + 1 = its end.
struct Ev {
    std::int64_t t;
    std::int32_t e;
};

// Sorts one SM's events by (time, event). When the SM's times span less than 2^32 ns (always, for a kernel) the pair
// is packed into one 64-bit key, (t - first) << 32 | e, and the keys are sorted instead: the same total order (the
// events are distinct), so the demand sums add in the same order, bit-identical; a third less work than the pair
// compare (docs/benchmarks.md, s10-wispeed).
void sortEvents(Ev* b, Ev* e)
{
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const Ev* x = b; x != e; ++x) {
        lo = std::min(lo, x->t);
        hi = std::max(hi, x->t);
    }
    if (hi - lo >= (std::int64_t(1) << 32) || hi < lo) {
        std::sort(b, e, [](const Ev& x, const Ev& y) { return x.t != y.t ? x.t < y.t : x.e < y.e; });
        return;
    }
    thread_local std::vector<std::uint64_t> keys;
    keys.resize(std::size_t(e - b));
    for (std::size_t k = 0; k < keys.size(); ++k)
        keys[k] = (std::uint64_t(b[k].t - lo) << 32) | std::uint32_t(b[k].e);
    std::sort(keys.begin(), keys.end());
    for (std::size_t k = 0; k < keys.size(); ++k)
        b[k] = {lo + std::int64_t(keys[k] >> 32), std::int32_t(std::uint32_t(keys[k]))};
}

}  // namespace

void smDemand(const WhatIfModel::Impl& m, const std::vector<std::int64_t>& gs, const std::vector<std::int64_t>& ge,
              const std::vector<std::int32_t>& gsm, std::vector<double>& out)
{
    const std::size_t n = gs.size();
    // events: 2g = start of g, 2g + 1 = end of g, ordered by (SM, time, event): bucketed by SM (a counting sort),
    // then each SM's flat (time, event) records sorted: the same total order as one sort by (SM, time, event),
    // so the sums below add in the same order (bit-identical), with smaller sorts. The buffers stay between calls.
    thread_local std::vector<Ev> evs;
    thread_local std::vector<double> fStart;
    thread_local std::vector<std::int32_t> smBegin;
    std::int32_t smLo = INT32_MAX, smHi = INT32_MIN;
    for (std::size_t g = 0; g < n; ++g) {
        smLo = std::min(smLo, gsm[g]);
        smHi = std::max(smHi, gsm[g]);
    }
    out.assign(n, 0);
    if (n == 0)
        return;
    const std::size_t nSm = std::size_t(std::int64_t(smHi) - smLo + 1);
    smBegin.assign(nSm + 1, 0);
    for (std::size_t g = 0; g < n; ++g)
        smBegin[std::size_t(gsm[g] - smLo) + 1] += 2;
    for (std::size_t k = 0; k < nSm; ++k)
        smBegin[k + 1] += smBegin[k];
    evs.resize(2 * n);
    {
        thread_local std::vector<std::int32_t> fill;
        fill.assign(smBegin.begin(), smBegin.end() - 1);
        for (std::size_t g = 0; g < n; ++g) {
            std::int32_t& f = fill[std::size_t(gsm[g] - smLo)];
            evs[std::size_t(f++)] = {gs[g], std::int32_t(2 * g)};
            evs[std::size_t(f++)] = {ge[g], std::int32_t(2 * g + 1)};
        }
    }
    fStart.assign(n, 0);
    for (std::size_t k = 0; k < nSm; ++k) {
        Ev* const b = evs.data() + smBegin[k];
        Ev* const e = evs.data() + smBegin[k + 1];
        if (b == e)
            continue;
        sortEvents(b, e);
        double integral = 0, rate = 0;
        std::int64_t prevT = b->t;
        for (const Ev* x = b; x != e; ++x) {
            const std::int32_t ev = x->e;
            const std::size_t g = std::size_t(ev >> 1);
            const std::int64_t t = x->t;
            integral += rate * double(t - prevT);
            prevT = t;
            if (ev & 1) {
                rate -= m.mmaGroupRate[g];
                const std::int64_t span = ge[g] - gs[g];
                out[g] = span > 0 ? (integral - fStart[g]) / double(span) : m.mmaGroupRate[g];
            } else {
                rate += m.mmaGroupRate[g];
                fStart[g] = integral;
            }
        }
    }
}

void buildResources(WhatIfModel::Impl& g, const std::vector<std::int64_t>& mst)
{
    const KernelTrace& t = g.trace;
    GraphSummary& s = g.summary;
    const std::size_t nItem = g.itemLane.size();
    g.itemMmaGroup.assign(nItem, -1);
    g.mmaCap = 0;
    // Groups: the MmaIssue / MmaWait items of one (CTA, warpgroup, fill): what one warpgroup's wgmma of a fill
    // asks of the tensor cores (the warpgroups of a CTA drift apart once nothing syncs them per k-step).
    std::unordered_map<std::int64_t, std::int32_t> groupOf;
    std::vector<std::int32_t> count;
    for (std::size_t it = 0; it < nItem; ++it) {
        if ((it & 0xffff) == 0)
            checkBuildCancelled(g);
        const IntervalKind k = g.itemKind[it];
        if (k != IntervalKind::MmaIssue && k != IntervalKind::MmaWait)
            continue;
        const int c = t.lanes[std::size_t(g.itemLane[it])].ctaIndex;
        const std::int32_t ks = g.itemKstep[it];
        if (ks < g.ctaKmin[c] || ks >= g.ctaKmin[c] + g.ctaKcount[c])
            continue;
        const std::int64_t key = (std::int64_t(g.ctaKbase[c] + ks - g.ctaKmin[c]) << 8)
            | std::int64_t(t.lanes[std::size_t(g.itemLane[it])].warpgroup & 0xff);
        const auto [pos, fresh] = groupOf.try_emplace(key, std::int32_t(g.mmaGroupCta.size()));
        const std::int32_t grp = pos->second;
        if (fresh) {
            g.mmaGroupCta.push_back(c);
            count.push_back(0);
        }
        g.itemMmaGroup[it] = grp;
        ++count[std::size_t(grp)];
    }
    checkBuildCancelled(g);
    const std::size_t nG = g.mmaGroupCta.size();
    s.mmaGroups = std::int64_t(nG);
    g.mmaGroupBegin.assign(nG + 1, 0);
    for (std::size_t j = 0; j < nG; ++j)
        g.mmaGroupBegin[j + 1] = g.mmaGroupBegin[j] + count[j];
    g.mmaGroupItems.assign(std::size_t(g.mmaGroupBegin[nG]), 0);
    {
        std::vector<std::int32_t> fill(g.mmaGroupBegin.begin(), g.mmaGroupBegin.end() - 1);
        for (std::size_t it = 0; it < nItem; ++it)
            if (g.itemMmaGroup[it] >= 0)
                g.mmaGroupItems[std::size_t(fill[std::size_t(g.itemMmaGroup[it])]++)] = std::int32_t(it);
    }

    const double mnk2 = 2.0 * double(t.run.m) * double(t.run.n) * double(t.run.k);
    if (nG == 0) {
        s.resources = "shared tensor cores not modelled: no MmaIssue/MmaWait phases with a fill number";
    } else if (mnk2 <= 0) {
        s.resources = "shared tensor cores not modelled: the run records no GEMM shape (M, N, K), so the work of a "
                      "fill is unknown";
    } else if (t.run.device.computeMajor != 9 || t.run.device.smClockKHz <= 0) {
        s.resources = "shared tensor cores not modelled: the tensor-core throughput is known here for sm_90 "
                      "(H100/H200) with a recorded SM clock only";
    } else {
        g.mmaCap = kSm90FlopPerCycle * double(t.run.device.smClockKHz) * 1e-6;  // flop per ns
        s.mmaFlopPerNsPerSm = g.mmaCap;
        s.mmaFlopPerFill = mnk2 / double(nG);  // per (warpgroup, fill) group
        s.resources = "shared tensor cores: " + fmtG("%.0f", g.mmaCap) + " flop/ns per SM (4096 dense bf16 flop "
                      "per cycle x the recorded " + fmtG("%.2f", double(t.run.device.smClockKHz) * 1e-6)
                      + " GHz), " + fmtG("%.2f", s.mmaFlopPerFill * 1e-6) + " Mflop per warpgroup and fill (2 M N K / "
                      + std::to_string(nG) + " MMA groups)";
    }
    if (g.mmaCap <= 0)
        return;
    g.mmaGroupRate.assign(nG, 0);
    std::vector<std::int64_t> gs(nG, INT64_MAX), ge(nG, INT64_MIN);
    std::vector<std::int32_t> gsm(nG, 0);
    for (std::size_t j = 0; j < nG; ++j) {
        const int c = g.mmaGroupCta[j];
        for (std::int32_t x = g.mmaGroupBegin[j]; x < g.mmaGroupBegin[j + 1]; ++x) {
            const std::int32_t it = g.mmaGroupItems[std::size_t(x)];
            gs[j] = std::min(gs[j], t.ctas[std::size_t(c)].start + mst[std::size_t(it)]);
            ge[j] = std::max(ge[j], t.ctas[std::size_t(c)].start + mst[std::size_t(it)] + g.itemDur[std::size_t(it)]);
        }
        gsm[j] = t.ctas[std::size_t(c)].smId;
        g.mmaGroupRate[j] = s.mmaFlopPerFill / double(std::max<std::int64_t>(1, ge[j] - gs[j]));
    }
    checkBuildCancelled(g);
    smDemand(g, gs, ge, gsm, g.mmaGroupDemand0);
}

void replayWithResources(const WhatIfModel::Impl& m, const WhatIfParams& p, std::vector<std::string>* notes,
                         Replay& r)
{
    r.mmaFactor.clear();
    r.resourceRounds = 0;
    runReplay(m, p, notes, r);
    if (!p.sharedResources || m.mmaCap <= 0 || p.isDefault())
        return;
    const std::size_t nG = m.mmaGroupCta.size();
    // the rounds' arrays live in r (kept between calls: no page faults per slider move)
    Replay::Rounds& w = r.rounds;
    w.gs.resize(nG);
    w.ge.resize(nG);
    w.gsm.resize(nG);
    std::vector<std::string> quiet;
    // Only the CTAs with a group whose stretch changed are replayed again (the others' timelines would come out
    // bit-identical); the placement of all CTAs on their SM slots is redone every round.
    w.redo.assign(m.ctaLaneBegin.size(), 0);
    // Fixed point of f = stretch(schedule(f)), each group stepping by its secant weight (below; session 10: the
    // halves of sessions 7-9 took 4 rounds on tma_sync and stopped 0.3% short of the fixed point). Single groups at
    // the edge of an overlap keep flipping, so the rounds stop when the kernel's end moves by less than 0.2% from
    // one round to the next (1-3 rounds on the ladder; docs/benchmarks.md), or after kMaxRounds replays.
    // WARPSTAGE_WHATIF_ROUNDS=N (tests, diagnostics; read per prediction): up to N rounds without the 0.2% rule,
    // i.e. the fixed point itself that the default rounds approximate (tst_whatif_rounds).
    const char* env = std::getenv("WARPSTAGE_WHATIF_ROUNDS");
    const bool fixedRounds = env && std::atoi(env) > 0;
    const int kMaxRounds = fixedRounds ? std::min(1000, std::atoi(env)) : 4;
    std::int64_t prevEnd = r.kernelEnd;
    w.ga.resize(nG);
    w.gb.resize(nG);
    for (int round = 0; round < kMaxRounds; ++round) {
        checkCancelled(r);
        for (std::size_t j = 0; j < nG; ++j) {
            const int c = m.mmaGroupCta[j];
            // a group's span within its CTA changes only when its CTA was replayed again
            if (round == 0 || w.redo[std::size_t(c)]) {
                std::int64_t a = INT64_MAX, b = INT64_MIN;
                for (std::int32_t x = m.mmaGroupBegin[j]; x < m.mmaGroupBegin[j + 1]; ++x) {
                    const std::int32_t it = m.mmaGroupItems[std::size_t(x)];
                    a = std::min(a, r.st[std::size_t(it)]);
                    b = std::max(b, r.en[std::size_t(it)]);
                }
                w.ga[j] = a;
                w.gb[j] = b;
            }
            w.gs[j] = r.ctaStart[std::size_t(c)] + w.ga[j];
            w.ge[j] = r.ctaStart[std::size_t(c)] + w.gb[j];
            w.gsm[j] = r.ctaSm[std::size_t(c)];
        }
        smDemand(m, w.gs, w.ge, w.gsm, w.demand);
        double change = 0;
        bool any = false;
        std::vector<double>& next = w.next;
        next.assign(nG, 1.0);
        if (round == 0) {
            w.lastF.assign(nG, 1.0);
            w.lastT.assign(nG, 1.0);
        }
        for (std::size_t j = 0; j < nG; ++j) {
            const double target = std::max(1.0, w.demand[j] / m.mmaCap) / std::max(1.0, m.mmaGroupDemand0[j] / m.mmaCap);
            const double old = r.mmaFactor.empty() ? 1.0 : r.mmaFactor[j];
            // The step towards the target: the secant (Newton) step for the fixed point f = T(f), weight 1 / (1 - s)
            // with s the slope of T measured between this round and the last, bounded to [0.5, 1]: a group whose
            // target moves against its stretch (s < 0, the flipping groups at the edge of an overlap) is damped,
            // down to the halves of the old rule; one whose target moves with it or not at all goes the whole way
            // (never beyond its target). A group with no slope yet (first step, or its stretch did not move), or one
            // whose slope is >= 1 (no fixed point the secant could step to), halves.
            double wgt = 0.5;
            if (round > 0 && old != w.lastF[j]) {
                const double s = (target - w.lastT[j]) / (old - w.lastF[j]);
                wgt = s < 0 ? std::max(0.5, 1.0 / (1.0 - s)) : s < 1 ? 1.0 : 0.5;
            }
            w.lastF[j] = old;
            w.lastT[j] = target;
            next[j] = r.mmaFactor.empty() ? target : old + wgt * (target - old);
            if (std::fabs(next[j] - 1.0) < 1e-9)
                next[j] = 1.0;
            any = any || next[j] != 1.0;
            change = std::max(change, std::fabs(next[j] - old));
        }
        if (r.mmaFactor.empty() && !any)
            return;  // nothing on any SM asks for more than it was recorded with
        if (change < 1e-3)
            break;
        std::fill(w.redo.begin(), w.redo.end(), std::uint8_t(0));
        for (std::size_t j = 0; j < nG; ++j)
            if (next[j] != (r.mmaFactor.empty() ? 1.0 : r.mmaFactor[j]))
                w.redo[std::size_t(m.mmaGroupCta[j])] = 1;
        if (!m.ctaPartner.empty())  // a cluster pair is replayed together (whatif_cluster.cpp): both halves change
            for (std::size_t c = 0; c < w.redo.size(); ++c)
                if (w.redo[c] && m.ctaPartner[c] >= 0)
                    w.redo[std::size_t(m.ctaPartner[c])] = 1;
        std::swap(r.mmaFactor, next);  // next keeps the old buffer for the following round
        quiet.clear();
        runReplay(m, p, &quiet, r, &w.redo);
        ++r.resourceRounds;
        const std::int64_t span = std::max<std::int64_t>(1, r.kernelEnd - m.launchStart);
        const bool settled = round > 0 && std::llabs(r.kernelEnd - prevEnd) * 500 < span;
        prevEnd = r.kernelEnd;
        if (settled && !fixedRounds)
            break;
    }
}

}  // namespace ws
