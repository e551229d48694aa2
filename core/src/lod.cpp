// Level-of-detail index for the timeline. See lod.h.
#include "warpstage/lod.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ws::lod {

SeriesRef laneRef(const Lane& lane)
{
    static_assert(sizeof(IntervalKind) == 1);
    return {lane.start.data(), lane.duration.data(), reinterpret_cast<const std::uint8_t*>(lane.kind.data()),
            lane.start.size()};
}

float BucketMix::totalCover(int bucket) const
{
    float t = 0;
    for (int c = 0; c < categories; ++c)
        t += coverAt(bucket, c);
    return t;
}

int BucketMix::dominant(int bucket) const
{
    int best = -1;
    float bestV = 0;
    for (int c = 0; c < categories; ++c) {
        const float v = coverAt(bucket, c);
        if (v > bestV) {
            bestV = v;
            best = c;
        }
    }
    return best;
}

namespace {

struct Buckets {
    double t0, t1, w;
    int n;
    double begin(int j) const { return t0 + j * w; }
    double end(int j) const { return j + 1 >= n ? t1 : t0 + (j + 1) * w; }
};

inline double relStart(const SeriesRef& s, TimeNs origin, std::size_t i) { return double(s.start[i] - origin); }
inline double relEnd(const SeriesRef& s, TimeNs origin, std::size_t i)
{
    return double(s.start[i] + s.duration[i] - origin);
}

// first i in [lo, n) with relStart(i) >= t, galloping from lo. Integer compare:
// start - origin >= t  <=>  start >= origin + ceil(t)
std::size_t gallop(const SeriesRef& s, TimeNs origin, std::size_t lo, double t)
{
    const double c = std::ceil(t);
    if (c > 9.0e18)
        return s.n;
    if (c < -9.0e18)
        return lo;
    const TimeNs thr = origin + TimeNs(c);
    const TimeNs* st = s.start;
    if (lo >= s.n || st[lo] >= thr)
        return lo;
    std::size_t known = lo;  // st[known] < thr
    std::size_t step = 1;
    std::size_t hi = lo + 1;
    while (hi < s.n && st[hi] < thr) {
        known = hi;
        step *= 2;
        hi = lo + step;
    }
    hi = std::min(hi, s.n);
    return std::size_t(std::lower_bound(st + known + 1, st + hi, thr) - st);
}

void finishBucket(BucketMix& out, int j, const double* acc, double w)
{
    double total = 0;
    for (int c = 0; c < out.categories; ++c)
        total += acc[c];
    const double scale = total > w ? 1.0 / total : 1.0 / w;  // overlapping spans: clamp to the bucket
    float* dst = out.cover.data() + std::size_t(j) * out.categories;
    for (int c = 0; c < out.categories; ++c)
        dst[c] = float(acc[c] * scale);
}

void resetOut(BucketMix& out, int nBuckets, int ncat)
{
    out.buckets = std::max(0, nBuckets);
    out.categories = ncat;
    out.cover.assign(std::size_t(out.buckets) * ncat, 0.0f);
    out.starts.assign(std::size_t(out.buckets), 0);
}

}  // namespace

// The categories of a series: every code present gets its own compact slot (ascending), up to
// kMaxCategories; returns how many.
static int categoriesOf(const SeriesRef& s, std::array<std::uint8_t, kMaxCategories>& cats, std::array<std::int8_t, 256>& slot)
{
    std::array<bool, 256> present{};
    for (std::size_t i = 0; i < s.n; ++i)
        present[s.cat[i]] = true;
    int distinct = 0;
    for (bool p : present)
        distinct += p ? 1 : 0;
    // more codes than slots: the highest ones are folded into code 0 ("other"), which then needs a
    // slot even if no span has code 0 itself (it comes first, so it always gets one)
    if (distinct > kMaxCategories)
        present[0] = true;
    slot.fill(-1);
    int n = 0;
    for (int c = 0; c < 256; ++c) {
        if (!present[c] || n >= kMaxCategories)
            continue;
        cats[std::size_t(n)] = std::uint8_t(c);
        slot[std::size_t(c)] = std::int8_t(n++);
    }
    for (int c = 0; c < 256; ++c)
        if (present[c] && slot[std::size_t(c)] < 0)
            slot[std::size_t(c)] = slot[0];
    return n;
}

void SeriesIndex::build(const SeriesRef& s)
{
    m_ncat = categoriesOf(s, m_cats, m_slot);

    const std::size_t blocks = (s.n + kBlock - 1) / kBlock;
    m_prefix.assign((blocks + 1) * std::size_t(m_ncat), 0);
    m_maxEnd.assign(blocks, std::numeric_limits<TimeNs>::min());
    std::array<TimeNs, kMaxCategories> run{};
    TimeNs maxEnd = std::numeric_limits<TimeNs>::min();
    for (std::size_t i = 0; i < s.n; ++i) {
        run[m_slot[s.cat[i]]] += s.duration[i];
        maxEnd = std::max(maxEnd, s.end(i));
        if ((i + 1) % kBlock == 0 || i + 1 == s.n) {
            const std::size_t b = i / kBlock;
            m_maxEnd[b] = maxEnd;
            if ((i + 1) % kBlock == 0)
                std::copy_n(run.begin(), m_ncat, m_prefix.begin() + (b + 1) * m_ncat);
        }
    }
    m_prefix.shrink_to_fit();
    m_maxEnd.shrink_to_fit();
    m_built = true;
}

std::size_t SeriesIndex::memoryBytes() const
{
    return sizeof(*this) + m_prefix.capacity() * sizeof(TimeNs) + m_maxEnd.capacity() * sizeof(TimeNs);
}

void SeriesIndex::prepareCategories(const SeriesRef& s, BucketMix& out, std::array<std::int8_t, 256>& slot) const
{
    if (m_built) {
        slot = m_slot;
        out.category = m_cats;
        resetOut(out, out.buckets, m_ncat);
        return;
    }
    // not built: the same categories, from a walk over the spans
    const int n = categoriesOf(s, out.category, slot);
    resetOut(out, out.buckets, n);
}

void SeriesIndex::query(const SeriesRef& s, TimeNs origin, double t0, double t1, int nBuckets, BucketMix& out) const
{
    out.buckets = std::max(0, nBuckets);
    std::array<std::int8_t, 256> slot;
    prepareCategories(s, out, slot);
    if (s.n == 0 || nBuckets <= 0 || !(t1 > t0))
        return;
    const Buckets B{t0, t1, (t1 - t0) / nBuckets, nBuckets};
    const int ncat = out.categories;

    // first span that may reach t0
    std::size_t p = 0;
    if (m_built) {
        const TimeNs limit = TimeNs(std::floor(t0)) + origin;  // maxEnd > t0  <=>  maxEnd > floor(t0) for integers... approx
        auto it = std::upper_bound(m_maxEnd.begin(), m_maxEnd.end(), limit);
        p = std::size_t(it - m_maxEnd.begin()) * kBlock;
    } else {
        p = gallop(s, origin, 0, t0);
        while (p > 0 && relEnd(s, origin, p - 1) > t0)
            --p;
    }
    while (p < s.n && relEnd(s, origin, p) <= t0 && relStart(s, origin, p) < t0)
        ++p;

    double acc[kMaxCategories];
    int j = 0;
    while (p < s.n && j < nBuckets) {
        const double sp = relStart(s, origin, p);
        if (sp >= t1)
            break;
        if (sp >= B.end(j)) {  // skip empty buckets
            j = std::max(j, int((sp - t0) / B.w));
            j = std::min(j, nBuckets - 1);
            while (j > 0 && B.begin(j) > sp)
                --j;
            while (j + 1 < nBuckets && B.end(j) <= sp)
                ++j;
        }
        const double bs = B.begin(j), be = B.end(j);
        // fast path: span p covers whole buckets (the common case when zoomed in)
        if (sp <= bs) {
            const double ep = relEnd(s, origin, p);
            if (ep >= be && (p + 1 >= s.n || relStart(s, origin, p + 1) >= be)) {
                const int c = slot[s.cat[p]];
                float* cov = out.cover.data();
                int jj = j;
                while (jj < nBuckets && B.end(jj) <= ep) {
                    cov[std::size_t(jj) * ncat + c] = 1.0f;
                    ++jj;
                }
                if (sp == bs)
                    out.starts[j] = 1;
                // next span may start inside bucket jj (or later); p keeps covering bucket jj partially
                j = jj;
                if (p + 1 < s.n && relStart(s, origin, p + 1) < (jj < nBuckets ? B.end(jj) : t1))
                    continue;  // bucket jj holds more than p: the general path below handles it
                if (jj < nBuckets && ep > B.begin(jj))
                    continue;  // p ends inside bucket jj: general path
                ++p;
                continue;
            }
        }
        const std::size_t k = gallop(s, origin, p + 1, be);  // spans [p, k) start before be
        std::fill_n(acc, ncat, 0.0);
        auto addClip = [&](std::size_t i) {
            const double a = std::max(relStart(s, origin, i), bs);
            const double b = std::min(relEnd(s, origin, i), be);
            if (b > a)
                acc[slot[s.cat[i]]] += b - a;
        };
        addClip(p);
        if (k - 1 > p) {
            const std::size_t lo = p + 1, hi = k - 1;  // fully inside the bucket (non-overlapping spans)
            if (m_built && hi - lo >= std::size_t(2 * kBlock)) {
                const std::size_t a = (lo + kBlock - 1) / kBlock * kBlock;
                const std::size_t c = hi / kBlock * kBlock;
                for (std::size_t i = lo; i < a; ++i)
                    acc[slot[s.cat[i]]] += s.duration[i];
                const TimeNs* pa = m_prefix.data() + (a / kBlock) * ncat;
                const TimeNs* pc = m_prefix.data() + (c / kBlock) * ncat;
                for (int q = 0; q < ncat; ++q)
                    acc[q] += double(pc[q] - pa[q]);
                for (std::size_t i = c; i < hi; ++i)
                    acc[slot[s.cat[i]]] += s.duration[i];
            } else {
                for (std::size_t i = lo; i < hi; ++i)
                    addClip(i);
            }
            addClip(k - 1);
        }
        finishBucket(out, j, acc, be - bs);
        const std::size_t firstStart = sp >= bs ? p : p + 1;
        out.starts[j] = std::uint16_t(std::min<std::size_t>(k > firstStart ? k - firstStart : 0, 65535));
        // next bucket
        if (k - 1 >= p && relEnd(s, origin, k - 1) > be)
            p = k - 1;
        else
            p = k;
        ++j;
    }
}

void queryReference(const SeriesRef& s, TimeNs origin, double t0, double t1, int nBuckets, BucketMix& out)
{
    std::array<std::int8_t, 256> slot;
    resetOut(out, nBuckets, categoriesOf(s, out.category, slot));
    if (s.n == 0 || nBuckets <= 0 || !(t1 > t0))
        return;
    const Buckets B{t0, t1, (t1 - t0) / nBuckets, nBuckets};
    double acc[kMaxCategories];
    for (int j = 0; j < nBuckets; ++j) {
        const double bs = B.begin(j), be = B.end(j);
        std::fill_n(acc, kMaxCategories, 0.0);
        int starts = 0;
        for (std::size_t i = 0; i < s.n; ++i) {
            const double a = std::max(relStart(s, origin, i), bs);
            const double b = std::min(relEnd(s, origin, i), be);
            const int c = slot[s.cat[i]];
            if (b > a)
                acc[c] += b - a;
            const double st = relStart(s, origin, i);
            if (st >= bs && st < be)
                ++starts;
        }
        finishBucket(out, j, acc, be - bs);
        out.starts[j] = std::uint16_t(std::min(starts, 65535));
    }
}

std::ptrdiff_t findAt(const SeriesRef& s, TimeNs origin, double t, double slack)
{
    if (s.n == 0)
        return -1;
    // last span with start <= t
    std::size_t a = 0, b = s.n;
    while (a < b) {
        const std::size_t mid = a + (b - a) / 2;
        if (relStart(s, origin, mid) <= t)
            a = mid + 1;
        else
            b = mid;
    }
    const std::ptrdiff_t i = std::ptrdiff_t(a) - 1;
    if (i >= 0 && relEnd(s, origin, std::size_t(i)) > t)
        return i;
    double best = slack;
    std::ptrdiff_t bestI = -1;
    if (i >= 0) {
        const double d = t - relEnd(s, origin, std::size_t(i));
        if (d <= best) {
            best = d;
            bestI = i;
        }
    }
    if (std::size_t(i + 1) < s.n) {
        const double d = relStart(s, origin, std::size_t(i + 1)) - t;
        if (d <= best)
            bestI = i + 1;
    }
    return bestI;
}

std::size_t OwnedSeries::memoryBytes() const
{
    return start.capacity() * sizeof(TimeNs) + duration.capacity() * sizeof(std::int32_t) + cat.capacity() +
           index.memoryBytes();
}

namespace {
void appendSegment(OwnedSeries& s, TimeNs a, TimeNs b, std::uint8_t cat)
{
    if (b <= a)
        return;
    if (!s.start.empty() && s.cat.back() == cat && s.start.back() + s.duration.back() == a &&
        TimeNs(s.duration.back()) + (b - a) <= std::numeric_limits<std::int32_t>::max()) {
        s.duration.back() += std::int32_t(b - a);
        return;
    }
    while (b - a > std::numeric_limits<std::int32_t>::max()) {  // split very long segments
        s.start.push_back(a);
        s.duration.push_back(std::numeric_limits<std::int32_t>::max());
        s.cat.push_back(cat);
        a += std::numeric_limits<std::int32_t>::max();
    }
    s.start.push_back(a);
    s.duration.push_back(std::int32_t(b - a));
    s.cat.push_back(cat);
}
}  // namespace

void TraceIndex::buildCtaSeries(const KernelTrace& trace, std::size_t, const std::vector<std::size_t>& lanes,
                                const std::vector<std::size_t>& loads, OwnedSeries& loadsOut,
                                OwnedSeries& overlapOut, int& maxInFlight)
{
    struct Ev {
        TimeNs t;
        std::int8_t dLoad, dCompute;
    };
    std::vector<Ev> ev;
    for (std::size_t li : lanes) {
        const Lane& lane = trace.lanes[li];
        TimeNs runStart = 0, runEnd = std::numeric_limits<TimeNs>::min();
        for (std::size_t i = 0; i < lane.size(); ++i) {
            if (!isComputeKind(lane.kind[i]) || lane.duration[i] <= 0)
                continue;
            const TimeNs a = lane.start[i], b = lane.end(i);
            if (a <= runEnd) {
                runEnd = std::max(runEnd, b);
            } else {
                if (runEnd > runStart) {
                    ev.push_back({runStart, 0, 1});
                    ev.push_back({runEnd, 0, -1});
                }
                runStart = a;
                runEnd = b;
            }
        }
        if (runEnd > runStart) {
            ev.push_back({runStart, 0, 1});
            ev.push_back({runEnd, 0, -1});
        }
    }
    for (std::size_t i : loads) {
        const LoadTransfer& l = trace.loads[i];
        if (l.ready <= l.issue)
            continue;
        ev.push_back({l.issue, 1, 0});
        ev.push_back({l.ready, -1, 0});
    }
    std::sort(ev.begin(), ev.end(), [](const Ev& a, const Ev& b) { return a.t < b.t; });
    int nLoad = 0, nCompute = 0;
    maxInFlight = 0;
    TimeNs prev = ev.empty() ? 0 : ev.front().t;
    for (std::size_t i = 0; i < ev.size();) {
        const TimeNs t = ev[i].t;
        if (t > prev) {
            if (nLoad > 0)
                appendSegment(loadsOut, prev, t, std::uint8_t(std::min(nLoad, kMaxLoadsCategory)));
            const int st = (nLoad > 0 ? 1 : 0) | (nCompute > 0 ? 2 : 0);
            if (st != 0)
                appendSegment(overlapOut, prev, t, std::uint8_t(st));
        }
        while (i < ev.size() && ev[i].t == t) {
            nLoad += ev[i].dLoad;
            nCompute += ev[i].dCompute;
            ++i;
        }
        maxInFlight = std::max(maxInFlight, nLoad);
        prev = t;
    }
    for (OwnedSeries* s : {&loadsOut, &overlapOut}) {
        s->start.shrink_to_fit();
        s->duration.shrink_to_fit();
        s->cat.shrink_to_fit();
        s->index.build(s->ref());
    }
}

std::unique_ptr<TraceIndex> TraceIndex::build(const KernelTrace& trace, const BuildOptions& options)
{
    auto idx = std::make_unique<TraceIndex>();
    const std::size_t nl = trace.lanes.size(), nc = trace.ctas.size();
    idx->m_lanes.resize(nl);
    idx->m_loads.resize(nc);
    idx->m_overlap.resize(nc);
    idx->m_maxInFlight.assign(nc, 0);
    const std::size_t total = std::max<std::size_t>(1, trace.intervalCount() * 2);
    std::size_t done = 0;
    int lastPct = -1;
    auto report = [&]() {
        const int pct = int(std::min<std::size_t>(100, done * 100 / total));
        if (pct != lastPct && options.progress) {
            lastPct = pct;
            return options.progress(pct);
        }
        return true;
    };
    for (std::size_t i = 0; i < nl; ++i) {
        idx->m_lanes[i].build(laneRef(trace.lanes[i]));
        done += trace.lanes[i].size();
        if (!report())
            return nullptr;
    }
    std::vector<std::vector<std::size_t>> lanesOf(nc), loadsOf(nc);
    for (std::size_t i = 0; i < nl; ++i) {
        const auto c = std::size_t(trace.lanes[i].ctaIndex);
        if (c < nc)
            lanesOf[c].push_back(i);
    }
    for (std::size_t i = 0; i < trace.loads.size(); ++i) {
        const auto c = std::size_t(trace.loads[i].ctaId);
        if (c < nc)
            loadsOf[c].push_back(i);
    }
    for (std::size_t c = 0; c < nc; ++c) {
        buildCtaSeries(trace, c, lanesOf[c], loadsOf[c], idx->m_loads[c], idx->m_overlap[c], idx->m_maxInFlight[c]);
        for (std::size_t li : lanesOf[c])
            done += trace.lanes[li].size();
        if (!report())
            return nullptr;
    }
    if (options.progress)
        options.progress(100);
    return idx;
}

std::size_t TraceIndex::memoryBytes() const
{
    std::size_t b = sizeof(*this) + m_lanes.capacity() * sizeof(SeriesIndex) + m_maxInFlight.capacity() * sizeof(int);
    for (const auto& l : m_lanes)
        b += l.memoryBytes() - sizeof(SeriesIndex);
    for (const auto& s : m_loads)
        b += s.memoryBytes() + sizeof(OwnedSeries) - sizeof(SeriesIndex);
    for (const auto& s : m_overlap)
        b += s.memoryBytes() + sizeof(OwnedSeries) - sizeof(SeriesIndex);
    return b;
}

}  // namespace ws::lod
