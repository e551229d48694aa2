// The level-of-detail index against a brute-force reference (bruteForce below, independent of
// lod.cpp's helpers and of ws::lod::queryReference): the pixels a lane
// paints (bucket coverage per kind, starts per bucket) must match the intervals
// it covers at every zoom level, including sub-nanosecond buckets and partial views.
#include <warpstage/lod.h>

#include <QtTest>

#include <set>

#include <random>

using namespace ws;
using namespace ws::lod;

namespace {

struct Series {
    std::vector<TimeNs> start;
    std::vector<std::int32_t> duration;
    std::vector<std::uint8_t> cat;
    SeriesRef ref() const { return {start.data(), duration.data(), cat.data(), start.size()}; }
};

// Non-overlapping spans, sorted; a mix of dense bursts (many spans per bucket) and long spans.
Series randomSeries(std::size_t n, std::uint32_t seed, TimeNs origin)
{
    std::mt19937 rng(seed);
    Series s;
    TimeNs t = origin + 1000;
    const std::uint8_t kinds[] = {2, 3, 4, 5, 6, 7, 13};
    for (std::size_t i = 0; i < n; ++i) {
        const bool burst = (i / 500) % 2 == 0;
        t += burst ? rng() % 3 : rng() % 200;
        const std::int32_t d = burst ? std::int32_t(rng() % 6) : std::int32_t(rng() % 5000);
        s.start.push_back(t);
        s.duration.push_back(d);
        s.cat.push_back(kinds[rng() % 7]);
        t += d;
    }
    return s;
}

// Independent reference, written from lod.h's contract and sharing nothing with lod.cpp:
// bucket j of [t0, t1) in n buckets is [t0 + (t1-t0)*j/n, t0 + (t1-t0)*(j+1)/n) (the last one
// ends at t1); a category's coverage is the time its spans cover inside the bucket divided by
// the bucket's width (by the covered total instead if overlapping spans cover more than the
// width); every code (0..255; user-named phases are 64+) counts apart, except in a series with more than
// kMaxCategories distinct codes, where all but code 0 and the kMaxCategories-1 smallest others count as 0;
// starts counts the spans starting in it.
struct RefMix {
    std::vector<std::array<double, 256>> cover;
    std::vector<int> starts;
};

RefMix bruteForce(const Series& s, TimeNs origin, double t0, double t1, int n)
{
    RefMix r;
    r.cover.assign(std::size_t(std::max(n, 0)), {});
    r.starts.assign(std::size_t(std::max(n, 0)), 0);
    if (!(t1 > t0))
        return r;
    std::set<int> codes(s.cat.begin(), s.cat.end());
    std::set<int> kept;
    if (int(codes.size()) > kMaxCategories) {
        kept.insert(0);
        for (int c : codes)
            if (c != 0 && int(kept.size()) < kMaxCategories)
                kept.insert(c);
    } else {
        kept = codes;
    }
    for (int j = 0; j < n; ++j) {
        const double lo = t0 + (t1 - t0) * j / n;
        const double hi = j + 1 == n ? t1 : t0 + (t1 - t0) * (j + 1) / n;
        auto& cov = r.cover[std::size_t(j)];
        double covered = 0;
        for (std::size_t i = 0; i < s.start.size(); ++i) {
            const double a = double(s.start[i] - origin);
            const double b = a + double(s.duration[i]);
            const double part = std::min(b, hi) - std::max(a, lo);
            if (part > 0) {
                cov[kept.count(s.cat[i]) ? s.cat[i] : 0] += part;
                covered += part;
            }
            if (a >= lo && a < hi)
                ++r.starts[std::size_t(j)];
        }
        const double den = std::max(covered, hi - lo);
        for (double& c : cov)
            c /= den;
    }
    return r;
}

void compare(const BucketMix& got, const RefMix& ref, const char* what)
{
    QCOMPARE(std::size_t(got.buckets), ref.cover.size());
    for (int b = 0; b < got.buckets; ++b) {
        std::array<float, 256> g{};
        for (int c = 0; c < got.categories; ++c)
            g[got.category[c]] += got.coverAt(b, c);
        for (int c = 0; c < 256; ++c) {
            const double r = ref.cover[std::size_t(b)][std::size_t(c)];
            if (std::abs(g[c] - r) > 2e-4)
                QFAIL(qPrintable(QStringLiteral("%1: bucket %2 kind %3: index %4, reference %5")
                                     .arg(what).arg(b).arg(c).arg(g[c]).arg(r)));
        }
        if (got.starts[b] != std::min(ref.starts[std::size_t(b)], 65535))
            QFAIL(qPrintable(QStringLiteral("%1: bucket %2: %3 starts, reference %4")
                                 .arg(what).arg(b).arg(got.starts[b]).arg(ref.starts[std::size_t(b)])));
    }
}

}  // namespace

class TestLod : public QObject {
    Q_OBJECT
private slots:
    void matchesReference_data();
    void matchesReference();
    void unbuiltMatchesBuilt();
    void emptyAndDegenerate();
    void findAt();
    void outOfRangeCategories();
    void ctaSeries();
    void traceIndexMemoryAndProgress();
};

void TestLod::matchesReference_data()
{
    QTest::addColumn<double>("from");  // fraction of the series' span
    QTest::addColumn<double>("to");
    QTest::addColumn<int>("buckets");
    QTest::newRow("whole, 2 buckets/px at 1600 px") << -0.01 << 1.01 << 3200;
    QTest::newRow("whole, few buckets (thousands of spans each)") << 0.0 << 1.0 << 37;
    QTest::newRow("tenth") << 0.45 << 0.55 << 2000;
    QTest::newRow("hundredth") << 0.301 << 0.311 << 1500;
    QTest::newRow("deep: about one span per bucket") << 0.5 << 0.5003 << 999;
    QTest::newRow("sub-ns buckets") << 0.7 << 0.700002 << 800;
    QTest::newRow("partly before the data") << -0.2 << 0.1 << 640;
    QTest::newRow("after the data") << 1.1 << 1.3 << 100;
}

void TestLod::matchesReference()
{
    QFETCH(double, from);
    QFETCH(double, to);
    QFETCH(int, buckets);
    const TimeNs origin = 1'700'000'000'000'000'000LL;  // CUPTI-like absolute times
    const Series s = randomSeries(40000, 7, origin);
    SeriesIndex idx;
    idx.build(s.ref());
    QVERIFY(idx.built());
    const double span = double(s.start.back() + s.duration.back() - origin);
    const double t0 = from * span, t1 = to * span;
    BucketMix got;
    idx.query(s.ref(), origin, t0, t1, buckets, got);
    compare(got, bruteForce(s, origin, t0, t1, buckets), "built");
    // at whole-trace zoom the coverage must be neither empty nor saturated everywhere
    if (from <= 0 && to >= 1) {
        double sum = 0;
        for (int b = 0; b < got.buckets; ++b)
            sum += got.totalCover(b);
        QVERIFY(sum > 0.05 * buckets);
    }
}

void TestLod::unbuiltMatchesBuilt()
{
    const Series s = randomSeries(5000, 11, 0);
    SeriesIndex built, raw;
    built.build(s.ref());
    const double span = double(s.start.back() + s.duration.back());
    for (double f : {1.0, 0.1, 0.001}) {
        BucketMix a, b;
        built.query(s.ref(), 0, 0.2 * span, 0.2 * span + f * span, 700, a);
        raw.query(s.ref(), 0, 0.2 * span, 0.2 * span + f * span, 700, b);
        const RefMix ref = bruteForce(s, 0, 0.2 * span, 0.2 * span + f * span, 700);
        compare(a, ref, "built");
        compare(b, ref, "unbuilt");
    }
}

void TestLod::emptyAndDegenerate()
{
    Series s;
    SeriesIndex idx;
    idx.build(s.ref());
    BucketMix out;
    idx.query(s.ref(), 0, 0, 100, 10, out);
    QCOMPARE(out.buckets, 10);
    for (int b = 0; b < 10; ++b) {
        QCOMPARE(out.totalCover(b), 0.0f);
        QCOMPARE(out.dominant(b), -1);
    }
    // one span covering everything, known kind
    s.start = {10};
    s.duration = {1000};
    s.cat = {std::uint8_t(IntervalKind::WaitData)};
    idx.build(s.ref());
    idx.query(s.ref(), 0, 0, 110, 11, out);
    QCOMPARE(out.totalCover(0), 0.0f);                 // [0,10)
    QVERIFY(std::abs(out.totalCover(1) - 1.0f) < 1e-6);  // [10,20)
    QCOMPARE(out.starts[1], std::uint16_t(1));
    QCOMPARE(int(out.category[out.dominant(5)]), int(IntervalKind::WaitData));
    // inverted range: nothing, no crash
    idx.query(s.ref(), 0, 50, 10, 5, out);
    QCOMPARE(out.totalCover(0), 0.0f);
}

// Every code keeps its own category, user-named phases (kinds 64+) too: zoomed out, a user phase is
// not drawn as "other". Only a series with more than kMaxCategories distinct codes folds the highest
// ones into code 0 ("other"), also when it has no span of code 0 itself.
void TestLod::outOfRangeCategories()
{
    Series s;
    s.start = {0, 10, 30, 35, 60};
    s.duration = {10, 20, 5, 20, 40};
    s.cat = {3, 64, 3, 200, 65};
    for (bool build : {true, false}) {
        SeriesIndex idx;
        if (build)
            idx.build(s.ref());
        BucketMix got;
        idx.query(s.ref(), 0, 0, 100, 7, got);
        compare(got, bruteForce(s, 0, 0, 100, 7), build ? "built" : "unbuilt");
        QCOMPARE(got.categories, 4);
        QCOMPARE(int(got.category[std::size_t(got.dominant(6))]), 65);  // [86,100): the user phase 65
        idx.query(s.ref(), 0, 5, 45, 3, got);
        compare(got, bruteForce(s, 0, 5, 45, 3), build ? "built" : "unbuilt");
        QCOMPARE(int(got.category[std::size_t(got.dominant(0))]), 64);  // [5,18.3): mostly the user phase 64
    }
    Series many;  // kMaxCategories + 8 distinct codes, none of them 0
    for (int i = 0; i < kMaxCategories + 8; ++i) {
        many.start.push_back(i * 10);
        many.duration.push_back(10);
        many.cat.push_back(std::uint8_t(64 + i));
    }
    for (bool build : {true, false}) {
        SeriesIndex idx;
        if (build)
            idx.build(many.ref());
        BucketMix got;
        idx.query(many.ref(), 0, 0, double(many.start.size() * 10), int(many.start.size()), got);
        compare(got, bruteForce(many, 0, 0, double(many.start.size() * 10), int(many.start.size())), build ? "built" : "unbuilt");
        QCOMPARE(got.categories, kMaxCategories);
        QCOMPARE(int(got.category[std::size_t(got.dominant(kMaxCategories - 2))]), 64 + kMaxCategories - 2);
        QCOMPARE(int(got.category[std::size_t(got.dominant(kMaxCategories))]), 0);  // folded
    }
}

void TestLod::findAt()
{
    Series s;
    s.start = {100, 200, 300};
    s.duration = {50, 50, 0};
    s.cat = {1, 2, 3};
    QCOMPARE(lod::findAt(s.ref(), 0, 120, 0), std::ptrdiff_t(0));
    QCOMPARE(lod::findAt(s.ref(), 0, 149.9, 0), std::ptrdiff_t(0));
    QCOMPARE(lod::findAt(s.ref(), 0, 170, 0), std::ptrdiff_t(-1));
    QCOMPARE(lod::findAt(s.ref(), 0, 160, 15), std::ptrdiff_t(0));
    QCOMPARE(lod::findAt(s.ref(), 0, 195, 10), std::ptrdiff_t(1));
    QCOMPARE(lod::findAt(s.ref(), 0, 301, 2), std::ptrdiff_t(2));  // zero-length span, within slack
    QCOMPARE(lod::findAt(s.ref(), 0, 50, 10), std::ptrdiff_t(-1));
    QCOMPARE(lod::findAt(s.ref(), 50, 70, 0), std::ptrdiff_t(0));  // relative to an origin
}

void TestLod::ctaSeries()
{
    // One CTA: a consumer lane computing [100,200) and [300,400); loads in flight [50,150), [120,320), [500,600)
    KernelTrace tr;
    tr.ctas.resize(1);
    Lane lane;
    lane.ctaIndex = 0;
    auto add = [&](TimeNs a, std::int32_t d, IntervalKind k) {
        lane.start.push_back(a);
        lane.duration.push_back(d);
        lane.kind.push_back(k);
        lane.slot.push_back(0);
        lane.kstep.push_back(0);
    };
    add(80, 20, IntervalKind::WaitData);
    add(100, 50, IntervalKind::MmaIssue);
    add(150, 50, IntervalKind::MmaWait);  // merges with the MmaIssue: compute [100,200)
    add(300, 100, IntervalKind::Compute);
    tr.lanes.push_back(lane);
    tr.loads = {{0, 0, 0, 50, 150, 0}, {0, 1, 1, 120, 320, 0}, {0, 2, 2, 500, 600, 0}};
    OwnedSeries loads, overlap;
    int maxInFlight = 0;
    TraceIndex::buildCtaSeries(tr, 0, {0}, {0, 1, 2}, loads, overlap, maxInFlight);
    QCOMPARE(maxInFlight, 2);
    // loads: [50,120) 1, [120,150) 2, [150,320) 1, [500,600) 1
    QCOMPARE(loads.start, (std::vector<TimeNs>{50, 120, 150, 500}));
    QCOMPARE(loads.duration, (std::vector<std::int32_t>{70, 30, 170, 100}));
    QCOMPARE(loads.cat, (std::vector<std::uint8_t>{1, 2, 1, 1}));
    // overlap: [50,100) load only, [100,200) both, [200,300) load only, [300,320) both, [320,400) compute only,
    // [500,600) load only
    using O = OverlapState;
    QCOMPARE(overlap.start, (std::vector<TimeNs>{50, 100, 200, 300, 320, 500}));
    QCOMPARE(overlap.duration, (std::vector<std::int32_t>{50, 100, 100, 20, 80, 100}));
    QCOMPARE(overlap.cat, (std::vector<std::uint8_t>{std::uint8_t(O::LoadOnly), std::uint8_t(O::Both),
                                                     std::uint8_t(O::LoadOnly), std::uint8_t(O::Both),
                                                     std::uint8_t(O::ComputeOnly), std::uint8_t(O::LoadOnly)}));
    QVERIFY(overlap.index.built());
}

void TestLod::traceIndexMemoryAndProgress()
{
    KernelTrace tr;
    tr.ctas.resize(4);
    for (int l = 0; l < 32; ++l) {
        const Series s = randomSeries(3000, 100 + l, 0);
        Lane lane;
        lane.ctaIndex = l / 8;
        lane.start = s.start;
        lane.duration = s.duration;
        for (auto c : s.cat)
            lane.kind.push_back(IntervalKind(c));
        lane.slot.assign(s.start.size(), 0);
        lane.kstep.assign(s.start.size(), 0);
        tr.lanes.push_back(std::move(lane));
    }
    std::vector<int> seen;
    BuildOptions opt;
    opt.progress = [&](int p) {
        seen.push_back(p);
        return true;
    };
    auto idx = TraceIndex::build(tr, opt);
    QVERIFY(idx);
    QCOMPARE(idx->laneCount(), std::size_t(32));
    QVERIFY(!seen.empty());
    QCOMPARE(seen.back(), 100);
    QVERIFY(std::is_sorted(seen.begin(), seen.end()));
    const double perInterval = double(idx->memoryBytes()) / double(tr.intervalCount());
    qInfo("index: %.2f bytes per interval", perInterval);
    QVERIFY(perInterval < 8.0);
    // cancel
    opt.progress = [](int p) { return p < 30; };
    QVERIFY(!TraceIndex::build(tr, opt));
}

QTEST_GUILESS_MAIN(TestLod)
#include "tst_lod.moc"
