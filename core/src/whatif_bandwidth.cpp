// Load bandwidth per SM in the what-if replay (docs/whatif.md, "Load bandwidth"): the bytes a CTA's loads bring into
// its SM's shared memory arrive at a bounded rate. s8-gemmtiles measured it on the H200 (docs/kernel-notes.md,
// "A k-step's time is the bytes the CTA receives"): five tile shapes' k-steps all fit ~70 GB/s per SM, ~35 B per
// clock (~9 TB/s over 132 SMs, so the chip's limit is the SMs' sum and is not a second constraint here). A replayed
// load keeps its recorded flight, which already includes the queueing it met; what changes is how many bytes are
// in flight at once. As for the tensor cores (whatif_resources.cpp): a fill asks for bytes / flight while in
// flight, the SM's demand is the sum over the fills in flight on it, D0 its average over the fill's recorded
// flight and D1 over its replayed one; the flight stretches by max(1, D1 / cap) / max(1, D0 / cap). A flight
// recorded while the SM was over-asked already includes that excess; only the change counts, so the unchanged
// replay stays exact (D1 = D0, the same code on the same times).
#include "whatif_impl.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ws {

namespace {

constexpr double kSm90LoadBytesPerCycle = 35.0;  // docs/kernel-notes.md, s8-gemmtiles (H200, measured)
constexpr double kEps = 1e-9;

// The average, over each fill's flight [s, e], of the summed rates of the fills in flight on the same SM.
void loadDemand(const std::vector<std::int64_t>& s, const std::vector<std::int64_t>& e,
                const std::vector<std::int32_t>& sm, const std::vector<double>& rate, std::vector<double>& out)
{
    const std::size_t n = s.size();
    struct Ev {
        std::int32_t sm;
        std::int64_t t;
        std::int32_t ev;  // 2 x: start of x, 2 x + 1: its end
    };
    std::vector<Ev> evs;
    evs.reserve(2 * n);
    for (std::size_t x = 0; x < n; ++x) {
        if (rate[x] <= 0)
            continue;
        evs.push_back({sm[x], s[x], std::int32_t(2 * x)});
        evs.push_back({sm[x], e[x], std::int32_t(2 * x + 1)});
    }
    std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
        return a.sm != b.sm ? a.sm < b.sm : a.t != b.t ? a.t < b.t : a.ev < b.ev;
    });
    out.assign(n, 0);
    std::vector<double> atStart(n, 0);
    double integral = 0, cur = 0;
    std::int32_t curSm = INT32_MIN;
    std::int64_t prevT = 0;
    for (const Ev& v : evs) {
        if (v.sm != curSm) {
            curSm = v.sm;
            integral = 0;
            cur = 0;
            prevT = v.t;
        }
        integral += cur * double(v.t - prevT);
        prevT = v.t;
        const std::size_t x = std::size_t(v.ev >> 1);
        if (v.ev & 1) {
            cur -= rate[x];
            const std::int64_t span = e[x] - s[x];
            out[x] = span > 0 ? (integral - atStart[x]) / double(span) : rate[x];
        } else {
            cur += rate[x];
            atStart[x] = integral;
        }
    }
}

// Per fill (kstep table index): its CTA.
std::vector<std::int32_t> fillCta(const WhatIfModel::Impl& m)
{
    std::vector<std::int32_t> c(m.kFlight.size(), -1);
    for (std::size_t cta = 0; cta < m.ctaKbase.size(); ++cta)
        for (std::int32_t k = 0; k < m.ctaKcount[cta]; ++k)
            c[std::size_t(m.ctaKbase[cta] + k)] = std::int32_t(cta);
    return c;
}

}  // namespace

void buildBandwidth(WhatIfModel::Impl& g, const std::vector<std::int64_t>& mst)
{
    const KernelTrace& t = g.trace;
    GraphSummary& s = g.summary;
    g.loadCap = 0;
    g.kBytes.assign(g.kFlight.size(), 0);
    double total = 0;
    for (const LoadTransfer& ld : t.loads) {
        if (ld.ctaId < 0 || std::size_t(ld.ctaId) >= t.ctas.size() || ld.bytes <= 0)
            continue;
        const int c = int(ld.ctaId);
        if (ld.kstep < g.ctaKmin[std::size_t(c)] || ld.kstep >= g.ctaKmin[std::size_t(c)] + g.ctaKcount[std::size_t(c)])
            continue;
        g.kBytes[std::size_t(g.ctaKbase[std::size_t(c)] + ld.kstep - g.ctaKmin[std::size_t(c)])] += double(ld.bytes);
        total += double(ld.bytes);
    }
    if (total <= 0) {
        s.bandwidth = "load bandwidth not modelled: the loads record no bytes";
        return;
    }
    if (t.run.device.computeMajor != 9 || t.run.device.smClockKHz <= 0) {
        s.bandwidth = "load bandwidth not modelled: the rate an SM receives was measured on sm_90 (H200) only, and "
                      "needs the recorded SM clock";
        return;
    }
    g.loadCap = kSm90LoadBytesPerCycle * double(t.run.device.smClockKHz) * 1e-6;  // bytes per ns
    s.loadBytesPerNsPerSm = g.loadCap;
    char buf[200];
    std::snprintf(buf, sizeof buf, "load bandwidth: %.0f B/ns per SM (35 B per cycle, measured on the H200, x the "
                  "recorded %.2f GHz)", g.loadCap, double(t.run.device.smClockKHz) * 1e-6);
    s.bandwidth = buf;
    const std::vector<std::int32_t> cta = fillCta(g);
    const std::size_t n = g.kFlight.size();
    std::vector<std::int64_t> a(n, 0), b(n, 0);
    std::vector<std::int32_t> sm(n, 0);
    std::vector<double> rate(n, 0);
    for (std::size_t x = 0; x < n; ++x) {
        const std::int32_t iss = g.kIssue[x];
        if (cta[x] < 0 || iss < 0 || g.kFlight[x] <= 0 || g.kBytes[x] <= 0)
            continue;
        a[x] = t.ctas[std::size_t(cta[x])].start + mst[std::size_t(iss)];
        b[x] = a[x] + g.kFlight[x];
        sm[x] = t.ctas[std::size_t(cta[x])].smId;
        rate[x] = g.kBytes[x] / double(g.kFlight[x]);
    }
    loadDemand(a, b, sm, rate, g.kDemand0);
}

bool updateLoadStretch(const WhatIfModel::Impl& m, const WhatIfParams& p, Replay& r, std::vector<std::uint8_t>& redo)
{
    if (m.loadCap <= 0 || !p.loadBandwidth || p.isDefault())
        return false;
    const std::vector<std::int32_t> cta = fillCta(m);
    const std::size_t n = m.kFlight.size();
    std::vector<std::int64_t> a(n, 0), b(n, 0);
    std::vector<std::int32_t> sm(n, 0);
    std::vector<double> rate(n, 0);
    for (std::size_t x = 0; x < n; ++x) {
        const int c = cta[x];
        if (c < 0 || m.kIssue[x] < 0 || m.kFlight[x] <= 0 || m.kBytes[x] <= 0)
            continue;
        const std::int32_t iss = dataIssueItem(m, r, c, m.ctaKmin[std::size_t(c)] + std::int32_t(x) - m.ctaKbase[std::size_t(c)]);
        if (iss < 0 || r.st[std::size_t(iss)] == INT64_MIN)
            continue;
        // the same expression as the recorded one when nothing changed (bit-identical demand)
        const std::int64_t flight = r.loadStretch.empty() && r.fLoad == 1.0
            ? m.kFlight[x] : std::int64_t(std::llround(double(m.kFlight[x]) * flightFactor(r, std::int32_t(x))));
        a[x] = r.ctaStart[std::size_t(c)] + r.st[std::size_t(iss)];
        b[x] = a[x] + std::max<std::int64_t>(1, flight);
        sm[x] = r.ctaSm[std::size_t(c)];
        rate[x] = m.kBytes[x] / double(std::max<std::int64_t>(1, flight));
    }
    std::vector<double> d1;
    loadDemand(a, b, sm, rate, d1);
    std::vector<double> next(n, 1.0);
    double change = 0;
    bool any = false;
    for (std::size_t x = 0; x < n; ++x) {
        if (rate[x] <= 0)
            continue;
        const double target = std::max(1.0, d1[x] / m.loadCap) / std::max(1.0, m.kDemand0[x] / m.loadCap);
        const double old = r.loadStretch.empty() ? 1.0 : r.loadStretch[x];
        next[x] = r.loadStretch.empty() ? target : 0.5 * (old + target);
        if (std::fabs(next[x] - 1.0) < kEps)
            next[x] = 1.0;
        any = any || next[x] != 1.0;
        change = std::max(change, std::fabs(next[x] - old));
    }
    if (r.loadStretch.empty() && !any)
        return false;  // no SM asks for more than it was recorded with
    if (change < 1e-3)
        return false;
    for (std::size_t x = 0; x < n; ++x)
        if (next[x] != (r.loadStretch.empty() ? 1.0 : r.loadStretch[x]) && cta[x] >= 0)
            redo[std::size_t(cta[x])] = 1;
    r.loadStretch.swap(next);
    return true;
}

}  // namespace ws
