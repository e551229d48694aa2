// The what-if replay (docs/whatif.md, "Replay"): each CTA's items in dependency order relative to the CTA's
// start, then the CTAs on their SM slots (as recorded, or re-placed for --sms / --persistent).
#include "whatif_impl.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <queue>
#include <system_error>
#include <thread>

namespace ws {

namespace {

constexpr std::int64_t kUnset = INT64_MIN;

std::int64_t scaled(std::int64_t v, double f)
{
    return f == 1.0 ? v : std::int64_t(std::llround(double(v) * f));
}

bool goodFactor(double f) { return std::isfinite(f) && f > 0 && f <= 1000; }

}  // namespace

bool WhatIfParams::isDefault() const
{
    return stages == 0 && loadLatency == 1.0 && mma == 1.0 && epilogue == 1.0 && !overlapEpilogue && !persistent
        && sms == 0 && !dropCtaSync && slotsPerSm == 0 && sharedResources && !producerWarp
        && tileOrder == TileOrder::Recorded && !loadBandwidth;
}

namespace {

inline double mmaScale(const WhatIfModel::Impl& m, const Replay& r, std::int32_t i)
{
    if (!r.mmaFactor.empty() && m.itemMmaGroup[std::size_t(i)] >= 0)
        return r.fMma * r.mmaFactor[std::size_t(m.itemMmaGroup[std::size_t(i)])];
    return r.fMma;
}

// Inline copies for the replay's inner loop (the exported ones below are for the critical path walk).
inline std::int64_t lagNow(const WhatIfModel::Impl& m, const Replay& r, std::int32_t i)
{
    if (m.itemDep[i] == DepKind::Collective)
        return scaled(m.itemLag[i], mmaScale(m, r, i));
    return m.itemLag[i];
}

inline std::int64_t durationNow(const WhatIfModel::Impl& m, const Replay& r, std::int32_t i)
{
    const IntervalKind k = m.itemKind[i];
    const std::int64_t d = m.itemDur[i];
    if (isMmaLike(k))
        return scaled(d, mmaScale(m, r, i));
    if (k == IntervalKind::IssueLoad && r.producerWarp)
        return 0;
    if (isEpilogueKind(k))
        return scaled(d, r.fEpi);
    if (k == IntervalKind::Load)
        return scaled(d, r.fLoad);
    if (k == IntervalKind::Sync && r.dropSync)
        return 0;
    return d;
}

}  // namespace

std::int64_t itemLagNow(const WhatIfModel::Impl& m, const Replay& r, std::int32_t i) { return lagNow(m, r, i); }

std::int64_t itemDuration(const WhatIfModel::Impl& m, const Replay& r, std::int32_t i) { return durationNow(m, r, i); }

std::int32_t dataIssueItem(const WhatIfModel::Impl& m, const Replay& r, std::int32_t cta, std::int32_t k)
{
    const std::int32_t kmin = m.ctaKmin[cta];
    const std::int32_t own = m.kIssue[m.ctaKbase[cta] + k - kmin];
    if (r.issueShift <= 0)
        return own;
    const std::int32_t e = std::max(kmin, k - r.issueShift);
    const std::int32_t moved = m.kIssue[m.ctaKbase[cta] + e - kmin];
    return moved >= 0 ? moved : own;
}

namespace {

template <class Item>
void packInto(const WhatIfModel::Impl& m, std::vector<Item>& out)
{
    const std::size_t n = m.itemLane.size();
    out.clear();
    out.reserve(n);  // filled record by record: the first touch of fresh pages is slow, and a build can be cancelled
    using T = decltype(Item::gap);
    for (std::size_t i = 0; i < n; ++i) {
        if ((i & 0x3fff) == 0)
            checkBuildCancelled(m);  // the build's flag (null when predict() packs)
        const IntervalKind k = m.itemKind[i];
        Item& x = out.emplace_back();
        x.gap = T(m.itemGap[i]);
        x.dur = T(m.itemDur[i]);
        x.lag = T(m.itemLag[i]);
        x.minDur = T(m.itemMinDur[i]);
        x.depArg = m.itemDepArg[i];
        x.kstep = m.itemKstep[i];
        x.mmaGroup = m.itemMmaGroup.empty() ? -1 : m.itemMmaGroup[i];
        x.dep = m.itemDep[i];
        // the same precedence as durationNow()
        x.durClass = isMmaLike(k) ? kDurMma
            : k == IntervalKind::IssueLoad ? kDurIssueLoad
            : isEpilogueKind(k) ? kDurEpilogue
            : k == IntervalKind::Load ? kDurLoad
            : k == IntervalKind::Sync ? kDurSync : kDurPlain;
        x.flags = std::uint8_t((m.itemLaterMma[i] ? kFlagLaterMma : 0) | (isMmaLike(k) ? kFlagMmaLike : 0)
                               | (isEpilogueKind(k) ? kFlagEpilogue : 0));
    }
}

// Packs the per-phase constants the replay's inner loop reads into one record per phase (ReplayItemT).
void packReplayItems(const WhatIfModel::Impl& m)
{
    if (m.packedReady)
        return;
    const std::size_t n = m.itemLane.size();
    auto fits = [&m](const std::vector<std::int64_t>& v) {
        checkBuildCancelled(m);  // the build's flag (null when predict() packs)
        for (std::int64_t x : v)
            if (x < INT32_MIN || x > INT32_MAX)
                return false;
        return true;
    };
    if (fits(m.itemGap) && fits(m.itemDur) && fits(m.itemLag) && fits(m.itemMinDur))
        packInto(m, m.packed32);
    else
        packInto(m, m.packed);
    const int nCta = int(m.ctaLaneBegin.size());
    m.ctaItems.assign(std::size_t(nCta), 0);
    std::int64_t covered = 0;
    for (int c = 0; c < nCta; ++c) {
        for (int li = m.ctaLaneBegin[c]; li < m.ctaLaneEnd[c]; ++li) {
            const int l = m.ctaLanes[li];
            m.ctaItems[std::size_t(c)] += m.laneEnd[l] - m.laneBegin[l];
        }
        covered += m.ctaItems[std::size_t(c)];
    }
    m.packedCoversAll = covered == std::int64_t(n);
    m.packedReady = true;
}

// std::llround(double(v) * f) without the library call: exact for |v * f| < 2^52 (the subtraction of the truncated
// part is exact there), llround itself beyond.
inline std::int64_t fastScaled(std::int64_t v, double f)
{
    if (f == 1.0)
        return v;
    const double x = double(v) * f;
    if (!(std::fabs(x) < 4503599627370496.0))  // 2^52
        return std::int64_t(std::llround(x));
    const std::int64_t t = std::int64_t(x);   // towards zero
    const double frac = x - double(t);        // exact
    // without branches: the fraction is as good as random, and a mispredicted branch per phase cost ~10% of a replay
    // (s9-wiperf); the same value as frac >= 0.5 ? t + 1 : frac <= -0.5 ? t - 1 : t
    return t + std::int64_t(frac >= 0.5) - std::int64_t(frac <= -0.5);
}

// The replay's parameters for the inner loop, copied out of Replay into a local: the loop stores into ST / EN / FROM /
// BOUND (BOUND is bytes, which may alias anything), and fields read through the Replay were reloaded after each store.
struct ReplayScale {
    double fMma, fEpi, fLoad;
    const double* mmaFactor;    // null: no tensor-core stretch
    const double* loadStretch;  // null: no bandwidth stretch
    const std::int64_t* flagDep;
    int stages, issueShift;
    bool producerWarp, dropSync, overlapEpilogue;
    explicit ReplayScale(const Replay& r)
        : fMma(r.fMma), fEpi(r.fEpi), fLoad(r.fLoad), mmaFactor(r.mmaFactor.empty() ? nullptr : r.mmaFactor.data()),
          loadStretch(r.loadStretch.empty() ? nullptr : r.loadStretch.data()), flagDep(r.flagDep.data()),
          stages(r.stages), issueShift(r.issueShift), producerWarp(r.producerWarp), dropSync(r.dropSync),
          overlapEpilogue(r.overlapEpilogue)
    {
    }
    // flightFactor(), the same value
    double flight(std::int32_t x) const { return loadStretch ? fLoad * loadStretch[std::size_t(x)] : fLoad; }
};

template <class Item>
inline double packedMmaScale(const ReplayScale& r, const Item& x)
{
    if (r.mmaFactor && x.mmaGroup >= 0)
        return r.fMma * r.mmaFactor[std::size_t(x.mmaGroup)];
    return r.fMma;
}

template <class Item>
inline std::int64_t packedDuration(const ReplayScale& r, const Item& x)
{
    const std::int64_t d = x.dur;
    switch (x.durClass) {
    case kDurMma:
        return fastScaled(d, packedMmaScale(r, x));
    case kDurIssueLoad:
        return r.producerWarp ? 0 : d;
    case kDurEpilogue:
        return fastScaled(d, r.fEpi);
    case kDurLoad:
        return fastScaled(d, r.fLoad);
    case kDurSync:
        return r.dropSync ? 0 : d;
    default:
        return d;
    }
}

template <class Item>
inline std::int64_t packedLag(const ReplayScale& r, const Item& x)
{
    return x.dep == DepKind::Collective ? fastScaled(x.lag, packedMmaScale(r, x)) : std::int64_t(x.lag);
}

// One worker's lane cursors (reused across its CTAs).
struct CtaWork {
    std::vector<std::int32_t> cursor, clockItem;
    std::vector<std::int64_t> clock;
};

// Replays CTA c's items relative to its start (a CTA's own timeline depends on nothing outside it) and sets its
// length, main loop span and first flight. Returns false when its warps wait for each other in a cycle.
template <class Item>
bool replayCta(const WhatIfModel::Impl& m, const Item* const P, Replay& r, int c, CtaWork& w)
{
    std::int64_t* const ST = r.st.data();
    std::int64_t* const EN = r.en.data();
    std::uint8_t* const BOUND = r.bound.data();
    std::int32_t* const FROM = r.clockFrom.data();
    const int lb = m.ctaLaneBegin[c], le = m.ctaLaneEnd[c];
    const int nl = le - lb;
    for (int li = lb; li < le; ++li) {
        const int l = m.ctaLanes[li];
        std::fill(ST + m.laneBegin[l], ST + m.laneEnd[l], kUnset);
        std::fill(EN + m.laneBegin[l], EN + m.laneEnd[l], kUnset);
    }
    w.cursor.resize(std::size_t(nl));
    w.clock.assign(std::size_t(nl), 0);
    w.clockItem.assign(std::size_t(nl), -1);
    int left = 0;
    for (int li = lb; li < le; ++li) {
        const int l = m.ctaLanes[li];
        w.cursor[std::size_t(li - lb)] = m.laneBegin[l];
        left += m.laneBegin[l] < m.laneEnd[l];
    }
    const std::int32_t kmin = m.ctaKmin[c], kcount = m.ctaKcount[c], kbase = m.ctaKbase[c];
    const ReplayScale sc(r);
    const bool overlapEpi = sc.overlapEpilogue;
    const bool dropSync = sc.dropSync;
    const std::int32_t* const KISSUE = m.kIssue.data();
    const std::int64_t* const KFLIGHT = m.kFlight.data();
    const std::int32_t* const KRELB = m.kRelBegin.data();
    const std::int32_t* const KRELE = m.kRelEnd.data();
    const std::int32_t* const RELITEMS = m.relItems.data();
    const std::int32_t* const SYNCB = m.syncBegin.data();
    const std::int32_t* const SYNCE = m.syncEnd.data();
    const std::int32_t* const SYNCITEMS = m.syncItems.data();
    std::int64_t last = 0, mainS = kUnset, mainE = 0;
    while (left > 0) {
        bool progress = false;
        for (int li = lb; li < le; ++li) {
            const int l = m.ctaLanes[li];
            // the lane's cursor, clock and clock item in locals (written back when the lane blocks or ends): as
            // references into w they were reloaded after every store into ST / EN / FROM (which may alias them)
            std::int32_t i = w.cursor[std::size_t(li - lb)];
            std::int64_t cur = w.clock[std::size_t(li - lb)];
            std::int32_t clockItem = w.clockItem[std::size_t(li - lb)];
            const std::int32_t iEnd = m.laneEnd[l];
            while (i < iEnd) {
                const Item& x = P[i];
                if (ST[i] == kUnset) {
                    ST[i] = cur + x.gap;
                    FROM[i] = clockItem;
                }
                const std::int64_t st = ST[i];
                std::int64_t dep = kUnset;
                bool ready = true;
                switch (x.dep) {
                case DepKind::None:
                    break;
                case DepKind::Data: {
                    const std::int32_t k = x.kstep;
                    std::int32_t iss = KISSUE[kbase + k - kmin];  // dataIssueItem(), inline
                    if (sc.issueShift > 0) {
                        const std::int32_t moved = KISSUE[kbase + std::max(kmin, k - sc.issueShift) - kmin];
                        iss = moved >= 0 ? moved : iss;
                    }
                    if (iss < 0 || ST[iss] == kUnset) {
                        ready = iss < 0;
                        break;
                    }
                    dep = ST[iss] + fastScaled(KFLIGHT[kbase + k - kmin], sc.flight(kbase + k - kmin));
                    break;
                }
                case DepKind::Flag:  // another CTA's ready flag (whatif_flags.cpp): its time in this CTA's frame
                    dep = sc.flagDep[std::size_t(x.depArg)];
                    break;
                case DepKind::Slot: {
                    const std::int32_t k = x.kstep - sc.stages;
                    if (k < kmin || k >= kmin + kcount)
                        break;
                    const std::int32_t xi = kbase + k - kmin;
                    for (std::int32_t j = KRELB[xi]; j < KRELE[xi]; ++j) {
                        const std::int64_t e = ST[RELITEMS[j]];  // the arrive: Release's start
                        if (e == kUnset) {
                            ready = false;
                            break;
                        }
                        dep = std::max(dep, e);
                    }
                    break;
                }
                case DepKind::Sync:
                case DepKind::Collective: {
                    if (dropSync && x.dep == DepKind::Sync)
                        break;
                    const std::int32_t g = x.depArg;
                    for (std::int32_t j = SYNCB[g]; j < SYNCE[g]; ++j) {
                        const std::int64_t s2 = ST[SYNCITEMS[j]];
                        if (s2 == kUnset) {
                            ready = false;
                            break;
                        }
                        dep = std::max(dep, s2);
                    }
                    break;
                }
                case DepKind::Handoff: {  // whatif_epiwarp.cpp: the start of the consumers' Epilogue
                    const std::int64_t e = ST[x.depArg];
                    if (e == kUnset)
                        ready = false;
                    else
                        dep = e;
                    break;
                }
                case DepKind::Order: {
                    const std::int64_t e = EN[x.depArg];
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
                std::uint8_t bound = 0;
                if (x.dep == DepKind::None || (x.dep == DepKind::Sync && dropSync)) {
                    en = st + packedDuration(sc, x);
                } else if (dep == kUnset) {
                    en = st + x.minDur;  // the dependency does not exist in this replay (more stages)
                } else {
                    const std::int64_t byDep = dep + packedLag(sc, x);
                    const std::int64_t own = st + x.minDur;
                    en = std::max(own, byDep);
                    bound = byDep > own;
                }
                EN[i] = en;
                BOUND[i] = bound;
                last = std::max(last, en);
                if (x.flags & kFlagMmaLike) {
                    mainS = mainS == kUnset ? st : std::min(mainS, st);
                    mainE = std::max(mainE, en);
                }
                // The lane goes on after the latest end so far (phases may overlap in a recording); an
                // epilogue that overlaps the next main loop does not hold the lane.
                const bool aside = overlapEpi && (x.flags & kFlagEpilogue) && (x.flags & kFlagLaterMma);
                if (!aside && (clockItem < 0 || en >= cur)) {
                    cur = en;
                    clockItem = i;
                }
                ++i;
                progress = true;
                if (i == iEnd)
                    --left;
            }
            w.cursor[std::size_t(li - lb)] = i;
            w.clock[std::size_t(li - lb)] = cur;
            w.clockItem[std::size_t(li - lb)] = clockItem;
        }
        if (!progress)
            return false;
    }
    r.ctaDur[c] = last + m.ctaEndGap[c];
    r.ctaMainStart[c] = mainS == kUnset ? 0 : mainS;
    r.ctaMainEnd[c] = mainS == kUnset ? last : mainE;
    r.ctaFirstFlight[c] = m.ctaKcount[c] > 0 && m.kFlight[m.ctaKbase[c]] >= 0 ? scaled(m.kFlight[m.ctaKbase[c]], r.fLoad)
                                                                            : 0;
    return true;
}

}  // namespace

// Threads for the CTAs of one replay: the CTAs are independent, each thread takes a contiguous run of them
// (balanced by phases) and writes only their items, so the answer does not depend on the thread count.
int replayThreads(std::int64_t items)
{
    static const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
    const char* e = std::getenv("WARPSTAGE_WHATIF_THREADS");  // read per replay: the tests change it
    const int hw = e ? std::max(1, std::atoi(e)) : cores;
    constexpr std::int64_t kItemsPerThread = 100000;  // below this a thread costs more than it saves
    return int(std::clamp<std::int64_t>(items / kItemsPerThread, 1, std::min(hw, 16)));
}

namespace {

// Replays every CTA (redo: only those marked 1) on up to replayThreads() threads. Throws for a cycle (the lowest
// CTA that has one, as a single thread would) or WhatIfCancelled.
void replayAllCtas(const WhatIfModel::Impl& m, Replay& r, const std::vector<std::uint8_t>* redo)
{
    const int nCta = int(m.ctaLaneBegin.size());
    std::vector<int> todo;
    todo.reserve(std::size_t(nCta));
    // A 2-CTA cluster is one unit, listed under its lower CTA and replayed together (whatif_cluster.cpp).
    auto partner = [&](int c) { return m.ctaPartner.empty() ? -1 : int(m.ctaPartner[std::size_t(c)]); };
    auto unitItems = [&](int c) {
        const int b = partner(c);
        return m.ctaItems[std::size_t(c)] + (b >= 0 ? m.ctaItems[std::size_t(b)] : 0);
    };
    std::int64_t items = 0;
    for (int c = 0; c < nCta; ++c) {
        const int b = partner(c);
        if (b >= 0 && (c > b || (redo && !(*redo)[std::size_t(c)] && !(*redo)[std::size_t(b)])))
            continue;
        if (b < 0 && redo && !(*redo)[std::size_t(c)])
            continue;
        todo.push_back(c);
        items += unitItems(c);
    }
    const int nThreads = std::min<int>(replayThreads(items), std::max<int>(1, int(todo.size())));
    // chunk t: todo[bounds[t], bounds[t + 1])
    std::vector<std::size_t> bounds(std::size_t(nThreads) + 1, todo.size());
    bounds[0] = 0;
    {
        std::int64_t acc = 0;
        int t = 1;
        for (std::size_t x = 0; x < todo.size() && t < nThreads; ++x) {
            acc += unitItems(todo[x]);
            while (t < nThreads && acc * nThreads >= items * t)
                bounds[std::size_t(t++)] = x + 1;
        }
    }
    std::vector<int> failed(std::size_t(nThreads), -1);   // first CTA with a cycle per chunk
    std::vector<std::uint8_t> stopped(std::size_t(nThreads), 0);
    std::vector<std::exception_ptr> thrown(static_cast<std::size_t>(nThreads));  // e.g. bad_alloc: rethrown after the join
    auto workChunk = [&](int t) {
        CtaWork w;
        for (std::size_t x = bounds[std::size_t(t)]; x < bounds[std::size_t(t) + 1]; ++x) {
            if (r.cancel && r.cancel->load(std::memory_order_relaxed)) {
                stopped[std::size_t(t)] = 1;
                return;
            }
            if (partner(todo[x]) >= 0) {  // throws WhatIfError for a cycle
                replayClusterPair(m, r, todo[x], partner(todo[x]));
                continue;
            }
            const bool ok = m.packed32.empty() ? replayCta(m, m.packed.data(), r, todo[x], w)
                                               : replayCta(m, m.packed32.data(), r, todo[x], w);
            if (!ok) {
                failed[std::size_t(t)] = todo[x];
                return;
            }
        }
    };
    auto work = [&](int t) noexcept {
        try {
            workChunk(t);
        } catch (...) {
            thrown[std::size_t(t)] = std::current_exception();
        }
    };
    if (nThreads == 1) {
        work(0);
    } else {
        std::vector<std::thread> pool;
        pool.reserve(std::size_t(nThreads - 1));
        try {
            for (int t = 1; t < nThreads; ++t)
                pool.emplace_back(work, t);
        } catch (const std::system_error&) {
            // no more threads: the chunks without one run here
        }
        work(0);
        for (int t = 1 + int(pool.size()); t < nThreads; ++t)
            work(t);
        for (std::thread& th : pool)
            th.join();
    }
    for (int t = 0; t < nThreads; ++t) {
        if (thrown[std::size_t(t)])
            std::rethrow_exception(thrown[std::size_t(t)]);
        if (failed[std::size_t(t)] >= 0)
            throw WhatIfError("the replay cannot go on: the edited parameters make warps wait for each other "
                              "in a cycle (CTA " + std::to_string(m.trace.ctas[std::size_t(failed[std::size_t(t)])].blockLinear) + ")");
        if (stopped[std::size_t(t)])
            throw WhatIfCancelled();
    }
}

}  // namespace

void prepareReplay(const WhatIfModel::Impl& m)
{
    const std::lock_guard<std::mutex> lock(m.scratchLock);
    packReplayItems(m);
    const std::size_t n = m.itemLane.size();
    Replay& r = m.scratch;
    // in slices, so that a cancelled build stops within one (the first touch of fresh pages is slow)
    constexpr std::size_t kSlice = std::size_t(1) << 14;
    r.st.clear();
    r.en.clear();
    r.bound.clear();
    r.clockFrom.clear();
    r.st.reserve(n);
    r.en.reserve(n);
    r.bound.reserve(n);
    r.clockFrom.reserve(n);
    for (std::size_t a = 0; a < n; a += kSlice) {
        checkBuildCancelled(m);
        const std::size_t k = std::min(n - a, kSlice);
        r.st.insert(r.st.end(), k, kUnset);
        r.en.insert(r.en.end(), k, kUnset);
        r.bound.insert(r.bound.end(), k, std::uint8_t(0));
        r.clockFrom.insert(r.clockFrom.end(), k, -1);
    }
}

namespace {

void runReplayOnce(const WhatIfModel::Impl& m, const WhatIfParams& p, std::vector<std::string>* notes, Replay& r,
                   const std::vector<std::uint8_t>* redo)
{
    if (!goodFactor(p.loadLatency) || !goodFactor(p.mma) || !goodFactor(p.epilogue))
        throw WhatIfError("factors must be finite numbers > 0 and <= 1000");
    if (p.stages < 0 || p.stages > 64)
        throw WhatIfError("stages must be between 1 and 64");
    if (p.sms < 0 || p.sms > 4096)
        throw WhatIfError("sms must be between 1 and 4096");
    if (p.slotsPerSm < 0 || p.slotsPerSm > 64)
        throw WhatIfError("CTAs per SM must be between 1 and 64");
    checkCancelled(r);
    const GraphSummary& s = m.summary;
    r.stages = 0;
    r.issueShift = 0;
    r.kernelEnd = 0;
    r.fLoad = p.loadLatency;
    r.fMma = p.mma;
    r.fEpi = p.epilogue;
    r.overlapEpilogue = p.overlapEpilogue;
    r.dropSync = p.dropCtaSync;
    r.stages = s.stages;
    if (p.stages > 0) {
        if (s.stages <= 0) {
            notes->push_back("--stages: the kernel records no ring slots (no loads with a slot): ignored");
        } else if (s.hasProducer) {
            r.stages = p.stages;
        } else if (p.stages >= s.stages) {
            r.issueShift = p.stages - s.stages;  // worker kernels: loads issued earlier in program order
        } else {
            notes->push_back("--stages: fewer stages than recorded cannot be replayed on a worker kernel "
                             "(its issue order is in its program): ignored");
        }
    }
    r.producerWarp = p.producerWarp && !s.hasProducer;
    if (p.producerWarp && s.hasProducer)
        notes->push_back("--producer-warp: the kernel has a producer warp already: nothing to move");
    if (p.dropCtaSync && s.syncEdges == 0)
        notes->push_back("--no-sync: the kernel has no CTA barriers (Sync) between its warps: nothing to drop");

    const std::size_t n = m.itemLane.size();
    const int nCta = int(m.ctaLaneBegin.size());
    packReplayItems(m);
    // redo: re-simulate only these CTAs; the others keep the previous run's items (same parameters, same MMA
    // stretch: a CTA's own timeline depends on nothing outside it).
    if (!redo) {
        if (m.packedCoversAll) {
            // each CTA resets its own items (on the thread that replays it); the arrays keep their pages
            r.st.resize(n);
            r.en.resize(n);
            r.bound.resize(n);
            r.clockFrom.resize(n);
        } else {
            r.st.assign(n, kUnset);
            r.en.assign(n, kUnset);
            r.bound.assign(n, 0);
            r.clockFrom.assign(n, -1);
        }
        r.ctaMainStart.assign(nCta, 0);
        r.ctaMainEnd.assign(nCta, 0);
        r.ctaDur.assign(nCta, 0);
        r.ctaFirstFlight.assign(nCta, 0);
    }
    r.ctaStart.assign(nCta, 0);
    r.ctaEnd.assign(nCta, 0);
    replayAllCtas(m, r, redo);

    // CTAs on their SM slots.
    r.ctaPred.assign(nCta, -1);
    r.ctaPersistentChain.assign(nCta, 0);
    r.ctaStartBase.assign(nCta, m.launchStart);
    r.ctaSm.assign(nCta, 0);
    for (int c = 0; c < nCta; ++c)
        r.ctaSm[c] = m.trace.ctas[c].smId;
    const bool makePersistent = p.persistent && !s.persistent;
    const bool reslot = p.slotsPerSm > 0 && !s.persistent;
    const int slotsPerSm = reslot ? p.slotsPerSm : std::max(1, s.slotsPerSm);
    if (p.slotsPerSm > 0 && s.persistent)
        notes->push_back("--ctas-per-sm: a persistent kernel's grid is sized to the SMs (its CTAs walk the tiles): "
                         "ignored");
    if (p.persistent && s.persistent)
        notes->push_back("--persistent: the kernel is persistent already (its CTAs walk several tiles): no change");
    if (p.sms > 0 && s.persistent)
        notes->push_back("--sms: a persistent kernel's CTAs are placed on the new SMs as recorded (the grid, and the "
                         "tiles each CTA walks, are not re-sized)");
    auto absMain = [&](int c, bool end) { return r.ctaStart[c] + (end ? r.ctaMainEnd[c] : r.ctaMainStart[c]); };
    if (p.sms == 0 && !makePersistent && !reslot) {
        for (int c : m.ctaOrder) {
            const int pred = m.ctaPred[c];
            r.ctaPred[c] = pred;
            r.ctaStartBase[c] = pred >= 0 ? r.ctaEnd[pred] : m.launchStart;
            r.ctaStart[c] = r.ctaStartBase[c] + m.ctaLag[c];
            placeClusterPartner(m, r, c);
            r.ctaEnd[c] = r.ctaStart[c] + r.ctaDur[c];
        }
    } else {
        std::vector<std::int64_t> firstLags, nextLags;
        for (int c = 0; c < nCta; ++c)
            (m.ctaPred[c] < 0 ? firstLags : nextLags).push_back(m.ctaLag[c]);
        const std::int64_t lagFirst = median(firstLags), lagNext = median(nextLags);
        const int sms = p.sms > 0 ? p.sms : std::max(1, s.smsUsed);
        const int nSlots = sms * slotsPerSm;
        using Slot = std::pair<std::int64_t, int>;  // (free time, slot)
        std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> free;
        std::vector<int> lastOf(nSlots, -1);
        for (int j = 0; j < nSlots; ++j)
            free.push({m.launchStart, j});
        for (int c : m.ctaOrder) {
            const auto [t, j] = free.top();
            free.pop();
            const int prev = lastOf[j];
            r.ctaPred[c] = prev;
            if (prev < 0) {
                r.ctaStartBase[c] = m.launchStart;
                r.ctaStart[c] = m.launchStart + lagFirst;
            } else if (makePersistent) {
                const std::int64_t x = r.overlapEpilogue ? absMain(prev, true) : r.ctaEnd[prev];
                const std::int64_t mainAt = std::max(x, absMain(prev, true) + r.ctaFirstFlight[c]);
                r.ctaStart[c] = std::max(r.ctaStart[prev], mainAt - r.ctaMainStart[c]);
                r.ctaStartBase[c] = r.ctaStart[c];
                r.ctaPersistentChain[c] = 1;
            } else {
                r.ctaStartBase[c] = r.ctaEnd[prev];
                r.ctaStart[c] = r.ctaEnd[prev] + lagNext;
            }
            placeClusterPartner(m, r, c);
            r.ctaEnd[c] = r.ctaStart[c] + r.ctaDur[c];
            r.ctaSm[c] = j / slotsPerSm;
            lastOf[j] = c;
            const std::int64_t next = makePersistent
                ? (r.overlapEpilogue ? absMain(c, true) : r.ctaEnd[c]) : r.ctaEnd[c];
            (void)t;
            free.push({next, j});
        }
    }
    std::int64_t lastEnd = INT64_MIN;
    for (int c = 0; c < nCta; ++c)
        lastEnd = std::max(lastEnd, r.ctaEnd[c]);
    r.kernelEnd = lastEnd + m.kernelEndGap;
}

}  // namespace

// One replay, then rounds for what couples CTAs beyond their SM slots: ready flags that another CTA publishes
// (whatif_flags.cpp) and the SMs' load bandwidth (whatif_bandwidth.cpp); each round replays only the CTAs whose
// flag or flight stretch moved. The unchanged replay needs none (every flag comes out where it was recorded).
void runReplay(const WhatIfModel::Impl& m, const WhatIfParams& p, std::vector<std::string>* notes, Replay& r,
               const std::vector<std::uint8_t>* redo)
{
    if (!redo) {
        r.flagDep = m.flagRecDep;
        r.loadStretch.clear();
    }
    runReplayOnce(m, p, notes, r, redo);
    if (m.flagWaitItem.empty() && m.loadCap <= 0)
        return;
    // The load bandwidth's rounds run in the first replay of a prediction only; the tensor cores' rounds
    // (whatif_resources.cpp, redo) keep the stretches found here (a replay costs what it costs: at most 4 more).
    // They stop when the kernel's end moves by less than 0.2% (as the tensor cores' rounds do) or after kMaxRounds.
    constexpr int kMaxRounds = 4;
    bool bandwidth = redo == nullptr;
    std::int64_t prevEnd = r.kernelEnd;
    std::vector<std::uint8_t> mask(m.ctaLaneBegin.size(), 0);
    std::vector<std::string> quiet;
    for (int round = 0; round < kMaxRounds; ++round) {
        checkCancelled(r);
        std::fill(mask.begin(), mask.end(), std::uint8_t(0));
        const bool flags = updateFlagDeps(m, r, mask);
        const bool loads = bandwidth && updateLoadStretch(m, p, r, mask);
        if (!flags && !loads)
            return;
        if (!m.ctaPartner.empty())  // a cluster pair is replayed together: both halves
            for (std::size_t c = 0; c < mask.size(); ++c)
                if (mask[c] && m.ctaPartner[c] >= 0)
                    mask[std::size_t(m.ctaPartner[c])] = 1;
        quiet.clear();
        runReplayOnce(m, p, &quiet, r, &mask);
        if (loads) {
            const std::int64_t span = std::max<std::int64_t>(1, r.kernelEnd - m.launchStart);
            bandwidth = !(round > 0 && std::llabs(r.kernelEnd - prevEnd) * 500 < span);
            prevEnd = r.kernelEnd;
        }
    }
    if (notes && !m.flagWaitItem.empty()) {  // looked at, not applied: the replay stays the one above
        std::vector<std::int64_t> used = r.flagDep;
        if (updateFlagDeps(m, r, mask))
            notes->push_back("cross-CTA ready flags: the publishers' times still moved after "
                             + std::to_string(kMaxRounds) + " rounds of replay (the last ones are used)");
        r.flagDep.swap(used);
    }
}

WhatIfResult WhatIfModel::predict(const WhatIfParams& params, bool withTimeline, const std::atomic<bool>* cancel) const
{
    WhatIfResult out;
    const Impl& g = *m;
    const std::lock_guard<std::mutex> lock(g.scratchLock);
    Replay& r = g.scratch;
    r.cancel = cancel;
    using Clock = std::chrono::steady_clock;
    auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    const Clock::time_point t0 = Clock::now();
    replayWithResources(g, params, &out.notes, r);
    out.measuredNs = g.launchEnd - g.launchStart;
    out.predictedNs = (params.tileOrder == TileOrder::Recorded ? r.kernelEnd : tileOrderEnd(g, params, r, &out.notes))
        - g.launchStart;
    const Clock::time_point t1 = Clock::now();
    checkCancelled(r);
    out.path = walkCriticalPath(g, r);
    const Clock::time_point t2 = Clock::now();
    out.timing.replayMs = ms(t0, t1);
    out.timing.resourceRounds = r.resourceRounds;
    out.timing.pathMs = ms(t1, t2);
    if (!withTimeline) {
        for (PathStep& st : out.path.steps)
            if (st.lane >= 0 && st.interval >= 0)
                st.interval = g.itemInterval[std::size_t(st.interval)];
        return out;
    }

    checkCancelled(r);
    fillPredictedTimeline(g, r, out);
    out.timing.timelineMs = ms(t2, Clock::now());
    return out;
}

WhatIfResult whatIf(const KernelTrace& trace, const WhatIfParams& params)
{
    return WhatIfModel::build(trace).predict(params);
}

}  // namespace ws
