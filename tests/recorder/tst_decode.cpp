// Decoding of hand-built event buffers (no GPU): intervals, loads, tiles, roles,
// calibration, alignment onto CUPTI's time base, overflow and fault detection,
// CTA/SM subsets, and the store round trip of a decoded record.
#include "fixture.h"

#include "warpstage/decode.h"
#include "warpstage/store.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace ws;
using wsfix::BufferBuilder;
using Ev = BufferBuilder::Ev;

namespace {

constexpr std::uint64_t kGt0 = 1'000'000'000;  // CTA 0 start on the %globaltimer base
constexpr std::uint64_t kClk0 = 10'000;        // CTA 0 clock64 at start
constexpr TimeNs kCuptiStart = 500'000'000;
constexpr TimeNs kCuptiEnd = kCuptiStart + 101'000;  // CTA span is 100'000 ns: slack 1000 ns
constexpr TimeNs kAligned0 = kCuptiStart + 500;      // CTA 0 start after centring

std::uint8_t k(IntervalKind kind) { return static_cast<std::uint8_t>(kind); }

// One warp-specialized CTA (producer warp 0, consumer warp 4; warps 1-3, 5-7 not traced)
// at 0.5 ns/cycle on SM 3, plus a short CTA 1 on SM 7 (1000 ns: borrows the median slope).
BufferBuilder wsFixture()
{
    BufferBuilder b(2, 8, 16, 4, 32768);
    b.cta(0, kGt0, kClk0, kGt0 + 100'000, kClk0 + 200'000, 3);
    b.cta(1, kGt0 + 10'000, 50'000, kGt0 + 11'000, 53'000, 7);
    b.warp(0, 0, 1, 0, 0,
           {{kClk0 + 0, k(IntervalKind::Setup)},
            {kClk0 + 100, k(IntervalKind::WaitSlot), 0, 0},
            {kClk0 + 200, k(IntervalKind::IssueLoad), 0, 0},
            {kClk0 + 400, k(IntervalKind::WaitSlot), 1, 1},
            {kClk0 + 600, k(IntervalKind::IssueLoad), 1, 1},
            {kClk0 + 1000, trace::kEventEnd}});
    b.warp(0, 4, 2, 1, 0,
           {{kClk0 + 0, k(IntervalKind::Setup)},
            {kClk0 + 50, trace::kEventTileBegin, 3, wsfix::kNoSlot, 5},
            {kClk0 + 100, k(IntervalKind::WaitData), 0, 0},
            {kClk0 + 800, k(IntervalKind::MmaIssue), 0, 0},
            {kClk0 + 900, k(IntervalKind::MmaWait), 0, 0},
            {kClk0 + 1000, k(IntervalKind::Release), 0, 0},
            {kClk0 + 1100, k(IntervalKind::WaitData), 1, 1},
            {kClk0 + 1300, trace::kEventLoadReady, 1, 1},
            {kClk0 + 1400, k(IntervalKind::MmaIssue), 1, 1},
            {kClk0 + 1800, trace::kEventTileEnd},
            {kClk0 + 1800, k(IntervalKind::Store)},
            {kClk0 + 2000, trace::kEventEnd}});
    b.warp(1, 0, 1, 0, 0,
           {{50'000, k(IntervalKind::Setup)}, {50'300, k(IntervalKind::IssueLoad), 7, 2}, {53'000, trace::kEventEnd}});
    return b;
}

KernelLaunch cuptiLaunch()
{
    KernelLaunch l;
    l.name = "ws_fixture_kernel";
    l.variant = "warp_specialized";
    l.start = kCuptiStart;
    l.end = kCuptiEnd;
    return l;
}

std::vector<Interval> intervalsOf(const KernelRecord& r, RowId warp)
{
    std::vector<Interval> out;
    for (const auto& iv : r.intervals)
        if (iv.warpId == warp) out.push_back(iv);
    return out;
}

}  // namespace

class TestDecode : public QObject {
    Q_OBJECT

private slots:
    void calibrationFromTwoPairs()
    {
        trace::CtaRecord r{};
        r.globaltimerStart = 1'000'000;
        r.clockStart = 5'000;
        r.globaltimerEnd = 1'000'000 + 850'336;
        r.clockEnd = 5'000 + 1'682'627;  // ~1978.7 MHz, as the H200 probe saw
        r.flags = 3;
        const auto c = decode::calibrateCta(r, 0.7, 4000);
        QVERIFY(c.ownSlope);
        QVERIFY(std::abs(c.nsPerCycle - 850'336.0 / 1'682'627.0) < 1e-12);
        QVERIFY(std::abs(c.slopeRelError - 32.0 / 850'336.0) < 1e-12);
        // The line passes through both pairs.
        QCOMPARE(std::llround(decode::clockToNs(c, r.clockStart)), 1'000'000LL);
        QCOMPARE(std::llround(decode::clockToNs(c, r.clockEnd)), 1'850'336LL);
    }

    void calibrationFallsBack()
    {
        trace::CtaRecord r{};
        r.globaltimerStart = 1'000;
        r.clockStart = 100;
        r.globaltimerEnd = 2'000;  // 1 us: shorter than the 4 us minimum
        r.clockEnd = 2'100;
        r.flags = 3;
        auto c = decode::calibrateCta(r, 0.505, 4000);
        QVERIFY(!c.ownSlope);
        QCOMPARE(c.nsPerCycle, 0.505);
        r.flags = 1;  // end pair missing
        r.globaltimerEnd = 900'000;
        c = decode::calibrateCta(r, 0.6, 0);
        QVERIFY(!c.ownSlope);
        QCOMPARE(c.nsPerCycle, 0.6);
        r.flags = 3;  // implausible slope (100 ns per cycle)
        r.clockEnd = r.clockStart + 9;
        c = decode::calibrateCta(r, 0.6, 0);
        QVERIFY(!c.ownSlope);
    }

    void alignmentCentresSpan()
    {
        // The probe's numbers: CUPTI 851193 ns, CTAs 850336 ns, CTA clock 176806 ns later.
        const TimeNs cs = 1795968744742513466, ce = 1795968744743364659;
        const std::int64_t ms = 1795968744742690272, me = 1795968744743540608;
        const auto a = decode::alignToCupti(cs, ce, ms, me);
        QVERIFY(a.fits);
        QCOMPARE(a.slackNs, std::int64_t(857));
        QCOMPARE(a.residualNs, 428.5);
        QCOMPARE(a.offsetNs, cs - ms + 428);
        QVERIFY(ms + a.offsetNs >= cs);
        QVERIFY(me + a.offsetNs <= ce);
        // Both margins equal within a nanosecond.
        QVERIFY(std::llabs((ms + a.offsetNs - cs) - (ce - (me + a.offsetNs))) <= 1);
    }

    void alignmentReportsOverlongSpan()
    {
        const auto a = decode::alignToCupti(1000, 2000, 0, 1100);  // CTAs 100 ns longer than CUPTI
        QVERIFY(!a.fits);
        QCOMPARE(a.slackNs, std::int64_t(-100));
        QCOMPARE(a.residualNs, 50.0);
        QCOMPARE(0 + a.offsetNs, TimeNs(950));  // overhangs 50 ns at each end
    }

    void decodesWarpSpecializedCta()
    {
        auto b = wsFixture();
        decode::DecodeReport rep;
        decode::DecodeOptions opt;
        opt.deviceNsPerCycle = 0.505;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), opt, rep);
        QVERIFY2(rep.ok, rep.failureReason.c_str());
        QCOMPARE(rep.undeclaredWarps, 6 + 7);
        QCOMPARE(rep.ctasTotal, 2);
        QCOMPARE(rep.ctasKept, 2);
        QCOMPARE(rep.fallbackCalibrations, 1);
        QCOMPARE(rep.medianNsPerCycle, 0.5);
        QVERIFY(rep.alignment.fits);
        QCOMPARE(r.launch.alignResidualNs, 500.0);
        QCOMPARE(r.launch.droppedEvents, std::int64_t(0));
        QVERIFY(r.launch.traced);
        QCOMPARE(r.launch.variant, std::string("warp_specialized"));

        QCOMPARE(int(r.ctas.size()), 2);
        QCOMPARE(r.ctas[0].blockLinear, 0);
        QCOMPARE(r.ctas[0].smId, 3);
        QCOMPARE(r.ctas[0].start, kAligned0);
        QCOMPARE(r.ctas[0].end, kAligned0 + 100'000);
        QCOMPARE(r.ctas[0].nsPerCycle, 0.5);
        QCOMPARE(r.ctas[0].tileM, 3);
        QCOMPARE(r.ctas[0].tileN, 5);
        QCOMPARE(r.ctas[1].nsPerCycle, 0.5);  // borrowed: its own 1000/3000 would be 0.333
        QCOMPARE(r.ctas[1].tileM, -1);
        for (const auto& c : r.ctas) {
            QVERIFY(c.start >= kCuptiStart);
            QVERIFY(c.end <= kCuptiEnd);
        }

        QCOMPARE(int(r.warps.size()), 3);
        QCOMPARE(r.warps[0].role, WarpRole::Producer);
        QCOMPARE(r.warps[0].roleName, std::string("producer"));
        QCOMPARE(r.warps[1].role, WarpRole::Consumer);
        QCOMPARE(r.warps[1].roleName, std::string("consumer WG0"));
        QCOMPARE(r.warps[1].warpIndex, 4);
        QCOMPARE(r.warps[1].warpgroup, 1);
        QCOMPARE(r.warps[2].ctaId, RowId(1));

        const auto prod = intervalsOf(r, 0);
        QCOMPARE(int(prod.size()), 5);
        QCOMPARE(prod[0].kind, IntervalKind::Setup);
        QCOMPARE(prod[0].start, kAligned0);
        QCOMPARE(prod[0].duration, TimeNs(50));
        QCOMPARE(prod[2].kind, IntervalKind::IssueLoad);
        QCOMPARE(prod[2].kstep, 0);
        QCOMPARE(prod[2].slot, std::int16_t(0));
        QCOMPARE(prod[2].start, kAligned0 + 100);
        QCOMPARE(prod[2].duration, TimeNs(100));
        QCOMPARE(prod[4].start, kAligned0 + 300);
        QCOMPARE(prod[4].duration, TimeNs(200));  // closed by End at +1000 cycles

        const auto cons = intervalsOf(r, 1);
        QCOMPARE(int(cons.size()), 8);
        QCOMPARE(cons[0].kind, IntervalKind::Setup);
        QCOMPARE(cons[0].duration, TimeNs(50));  // the TileBegin marker does not end the phase
        QCOMPARE(cons[0].slot, std::int16_t(-1));
        QCOMPARE(cons[1].kind, IntervalKind::WaitData);
        QCOMPARE(cons[1].duration, TimeNs(350));
        QCOMPARE(cons[5].kind, IntervalKind::WaitData);
        QCOMPARE(cons[5].duration, TimeNs(150));  // LoadReady marker does not end it either
        QCOMPARE(cons[7].kind, IntervalKind::Store);
        QCOMPARE(cons[7].start + cons[7].duration, kAligned0 + 1000);
        for (std::size_t i = 1; i < cons.size(); ++i) QCOMPARE(cons[i].start, cons[i - 1].start + cons[i - 1].duration);

        // Loads: k0 issued at +100 ns, ready at the end of the consumer's WaitData (+400);
        // k1 issued at +300, ready at the LoadReady marker (+650), earlier than WaitData's end (+700).
        QCOMPARE(int(r.loads.size()), 2);
        QCOMPARE(r.loads[0].kstep, 0);
        QCOMPARE(r.loads[0].issue, kAligned0 + 100);
        QCOMPARE(r.loads[0].ready, kAligned0 + 400);
        QCOMPARE(r.loads[0].bytes, std::int64_t(32768));
        QCOMPARE(r.loads[0].ctaId, RowId(0));
        QCOMPARE(r.loads[1].kstep, 1);
        QCOMPARE(r.loads[1].slot, std::int16_t(1));
        QCOMPARE(r.loads[1].ready, kAligned0 + 650);
        // CTA 1's load of k-step 7 has no consumer: reported, not invented.
        QCOMPARE(rep.unmatchedLoads, 1);
    }

    // Session 14: the packed records of the ping-pong body (trace_format.h: kEventKStep4, a consumer k-step's four
    // events; kEventLoad2, the producer's WaitSlot + IssueLoad) decode to exactly the intervals and loads of the plain
    // events they stand for -- here across a 2^32 wrap of the clock's low word, with a lag of 2, S = 6, and a k-step
    // kept plain between packed ones (as the engine writes one whose gaps do not fit 16 bits).
    void packedRecordsDecodeAsTheirEvents()
    {
        constexpr std::uint64_t c0 = 0xFFFFF000ull + (3ull << 32);  // the low word wraps during the CTA
        const std::uint8_t WD = k(IntervalKind::WaitData), MI = k(IntervalKind::MmaIssue), MW = k(IntervalKind::MmaWait),
                           RL = k(IntervalKind::Release), WS = k(IntervalKind::WaitSlot), IL = k(IntervalKind::IssueLoad);
        // the consumer's k-steps f = 0..5: WaitData, MmaIssue at t(f) + 0 / 40; MmaWait, Release of f at t(f + 1) + 60 / 70
        auto t = [&](int f) { return c0 + 100 + std::uint64_t(f) * 1500u + (f >= 4 ? 90000u : 0u); };
        std::vector<Ev> plainC = {{c0, k(IntervalKind::Setup)}}, packedC = plainC;
        for (int f = 0; f < 6; ++f) {
            const std::uint8_t s = std::uint8_t(f % 6), sp = std::uint8_t((f + 4) % 6);
            std::vector<Ev> four;
            if (f >= 2) four = {{t(f - 1) + 60, MW, f - 2, sp}, {t(f - 1) + 70, RL, f - 2, sp}};
            four.push_back({t(f), WD, f, s});
            four.push_back({t(f) + 40, MI, f, s});
            plainC.insert(plainC.end(), four.begin(), four.end());
            if (f >= 2 && f != 4) {  // f = 4: WaitData 90000 cycles after Release, past 16 bits: plain
                const std::uint64_t a = four[0].clock, d1 = four[1].clock - a, d2 = four[2].clock - four[1].clock,
                                    d3 = four[3].clock - four[2].clock;
                packedC.push_back({(a & 0xFFFFFFFFull) | d1 << 32 | d2 << 48, trace::kEventKStep4, f,
                                   std::uint8_t(6 | 2 << 4), std::int16_t(std::uint16_t(d3))});
            } else {
                packedC.insert(packedC.end(), four.begin(), four.end());
            }
        }
        plainC.push_back({t(6), trace::kEventEnd});
        packedC.push_back({t(6), trace::kEventEnd});
        std::vector<Ev> plainP = {{c0, k(IntervalKind::Setup)}}, packedP = plainP;
        for (int f = 0; f < 6; ++f) {
            const std::uint64_t ws = c0 + 20 + std::uint64_t(f) * 1400u, il = ws + (f == 0 ? 0u : 700u + f);
            if (f > 0) plainP.push_back({ws, WS, f, std::uint8_t(f % 6)});
            plainP.push_back({il, IL, f, std::uint8_t(f % 6)});
            if (f > 0) packedP.push_back({(ws & 0xFFFFFFFFull) | (il - ws) << 32, trace::kEventLoad2, f, 6});
            else packedP.push_back({il, IL, f, std::uint8_t(f % 6)});
        }
        plainP.push_back({t(6), trace::kEventEnd});
        packedP.push_back({t(6), trace::kEventEnd});
        auto build = [&](const std::vector<Ev>& p, const std::vector<Ev>& c) {
            BufferBuilder b(1, 8, 64, 6, 32768);
            b.cta(0, kGt0, c0, kGt0 + 100'000, c0 + 200'000, 3);
            b.warp(0, 0, 1, 0, 0, p);
            b.warp(0, 4, 2, 1, 0, c);
            return b;
        };
        auto plain = build(plainP, plainC), packed = build(packedP, packedC);
        QVERIFY(packedC.size() + 6 < plainC.size());
        decode::DecodeReport rp, rq;
        const KernelRecord a = decode::decodeTrace(plain.bytes().data(), plain.bytes().size(), plain.geometry(), cuptiLaunch(), {}, rp);
        const KernelRecord b = decode::decodeTrace(packed.bytes().data(), packed.bytes().size(), packed.geometry(), cuptiLaunch(), {}, rq);
        QVERIFY2(rp.ok, rp.failureReason.c_str());
        QVERIFY2(rq.ok, rq.failureReason.c_str());
        QCOMPARE(int(a.intervals.size()), 1 + 11 + 1 + 4 * 6 - 2 * 2 + 0);  // producer Setup + 11, consumer Setup + 20
        QCOMPARE(b.intervals.size(), a.intervals.size());
        for (std::size_t i = 0; i < a.intervals.size(); ++i) {
            const auto &x = a.intervals[i], &y = b.intervals[i];
            QVERIFY2(x.warpId == y.warpId && x.kind == y.kind && x.kstep == y.kstep && x.slot == y.slot && x.start == y.start
                         && x.duration == y.duration,
                     ("interval " + std::to_string(i) + " differs").c_str());
        }
        QCOMPARE(b.loads.size(), a.loads.size());
        QCOMPARE(int(a.loads.size()), 6);
        for (std::size_t i = 0; i < a.loads.size(); ++i) {
            QCOMPARE(b.loads[i].kstep, a.loads[i].kstep);
            QCOMPARE(b.loads[i].slot, a.loads[i].slot);
            QCOMPARE(b.loads[i].issue, a.loads[i].issue);
            QCOMPARE(b.loads[i].ready, a.loads[i].ready);
        }
        // the Release of k-step 0 (a packed record's second event): its own kstep and slot
        const auto cons = intervalsOf(b, 1);
        QCOMPARE(cons[6].kind, IntervalKind::Release);
        QCOMPARE(cons[6].kstep, 0);
        QCOMPARE(cons[6].slot, std::int16_t(0));
    }

    // Format versions (trace_format.h's rule): every version from kOldestFormatVersion on decodes by its own rules, a
    // newer one is refused with a sentence, and a marker kind the buffer's version does not define fails the launch
    // by name instead of being skipped in silence -- a version-1 buffer never holds a packed record.
    void formatVersions()
    {
        QCOMPARE(trace::kOldestFormatVersion, 1u);
        auto withVersion = [](BufferBuilder b, std::uint32_t v) {
            std::memcpy(b.bytes().data() + offsetof(trace::TraceBufferHeader, version), &v, sizeof v);
            return b;
        };
        auto decodeOf = [](BufferBuilder& b, decode::DecodeReport& rep) {
            return decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), {}, rep);
        };
        // version 1 and the current version: the same plain fixture, the same record
        auto v1 = withVersion(wsFixture(), 1), cur = wsFixture();
        decode::DecodeReport r1, rc;
        const KernelRecord a = decodeOf(v1, r1), b = decodeOf(cur, rc);
        QVERIFY2(r1.ok, r1.failureReason.c_str());
        QVERIFY2(rc.ok, rc.failureReason.c_str());
        QCOMPARE(a.intervals.size(), b.intervals.size());
        QVERIFY(!a.intervals.empty());
        for (std::size_t i = 0; i < a.intervals.size(); ++i)
            QVERIFY(a.intervals[i].start == b.intervals[i].start && a.intervals[i].kind == b.intervals[i].kind);
        // newer than this decoder, and 0: refused with the range it reads
        for (std::uint32_t v : {trace::kFormatVersion + 1, 0u}) {
            auto x = withVersion(wsFixture(), v);
            decode::DecodeReport r;
            try {
                decodeOf(x, r);
                QFAIL(("version " + std::to_string(v) + " accepted").c_str());
            } catch (const decode::DecodeError& e) {
                const std::string m = e.what();
                QVERIFY2(m.find("reads versions 1 to " + std::to_string(trace::kFormatVersion)) != std::string::npos, m.c_str());
                QCOMPARE(m.find("newer") != std::string::npos, v > trace::kFormatVersion);
            }
        }
        // a packed record (version 2) in a version-1 buffer, a pair record (version 3) in a version-2 one, and an undefined
        // kind 0xF7 in a current one
        const std::uint8_t WD = k(IntervalKind::WaitData), MI = k(IntervalKind::MmaIssue);
        auto consumer = [&](Ev odd) {
            BufferBuilder x(1, 8, 16, 4, 32768);
            x.cta(0, kGt0, kClk0, kGt0 + 100'000, kClk0 + 200'000, 3);
            x.warp(0, 4, 2, 1, 0,
                   {{kClk0, k(IntervalKind::Setup)}, {kClk0 + 100, WD, 0, 0}, {kClk0 + 200, MI, 0, 0}, odd,
                    {kClk0 + 900, k(IntervalKind::Store)}, {kClk0 + 1000, trace::kEventEnd}});
            return x;
        };
        const Ev packed{(kClk0 + 300) | (10ull << 32) | (10ull << 48), trace::kEventKStep4, 1, std::uint8_t(4 | 1 << 4), 10};
        struct Case { BufferBuilder buf; const char* kind; std::uint32_t version; };
        const Ev pair{(kClk0 + 300) | (10ull << 32), trace::kEventPair, 1, 4,
                      std::int16_t(std::uint16_t(k(IntervalKind::MmaWait) | k(IntervalKind::Release) << 8))};
        Case cases[] = {{withVersion(consumer(packed), 1), "0xF4 (CTA 0, warp 4)", 1},
                        {withVersion(consumer(pair), 2), "0xF6 (CTA 0, warp 4)", 2},
                        {consumer({kClk0 + 300, 0xF7, 1, 0}), "0xF7 (CTA 0, warp 4)", trace::kFormatVersion}};
        auto ref = consumer({kClk0 + 300, trace::kEventTileEnd});  // a defined marker at the same moment: no phase either
        decode::DecodeReport rr;
        const auto want = intervalsOf(decodeOf(ref, rr), 0);
        QVERIFY2(rr.ok, rr.failureReason.c_str());
        QCOMPARE(int(want.size()), 4);  // Setup, WaitData, MmaIssue (to Store), Store
        for (Case& c : cases) {
            decode::DecodeReport r;
            const KernelRecord rec = decodeOf(c.buf, r);
            QVERIFY2(!r.ok, c.kind);
            QVERIFY2(r.failureReason.find(std::string("1 records of kinds that trace format version ") + std::to_string(c.version)
                                          + " does not define, first " + c.kind) != std::string::npos,
                     r.failureReason.c_str());
            // the record is dropped, not expanded
            const auto iv = intervalsOf(rec, 0);
            QCOMPARE(iv.size(), want.size());
            for (std::size_t i = 0; i < iv.size(); ++i)
                QVERIFY2(iv[i].kind == want[i].kind && iv[i].start == want[i].start && iv[i].duration == want[i].duration, c.kind);
        }
    }

    // Session 16 (format version 3): a pair record (kEventPair: two phase events of one k-step, both kinds in aux, slots
    // kstep % S) decodes to exactly the two events it stands for -- here a consumer's WaitData + MmaIssue, its MmaWait +
    // Release (S = 4) and a WaitOrder + Epilogue without a slot (S = 0), the low clock word wrapping in between.
    void pairRecordsDecodeAsTheirEvents()
    {
        constexpr std::uint64_t c0 = 0xFFFFFF00ull + (5ull << 32);
        const std::uint8_t WD = k(IntervalKind::WaitData), MI = k(IntervalKind::MmaIssue), MW = k(IntervalKind::MmaWait),
                           RL = k(IntervalKind::Release), WO = k(IntervalKind::WaitOrder), EP = k(IntervalKind::Epilogue);
        struct Two { Ev a, b; std::uint8_t stages; };
        const Two twos[] = {{{c0 + 100, WD, 6, 2}, {c0 + 180, MI, 6, 2}, 4},
                            {{c0 + 700, MW, 6, 2}, {c0 + 760, RL, 6, 2}, 4},
                            {{c0 + 900, WO, 3}, {c0 + 1500, EP, 3}, 0}};
        std::vector<Ev> plain = {{c0, k(IntervalKind::Setup)}}, packed = plain;
        for (const Two& t : twos) {
            plain.push_back(t.a);
            plain.push_back(t.b);
            packed.push_back({(t.a.clock & 0xFFFFFFFFull) | (t.b.clock - t.a.clock) << 32, trace::kEventPair, t.a.kstep,
                              t.stages, std::int16_t(std::uint16_t(t.a.kind | t.b.kind << 8))});
        }
        plain.push_back({c0 + 2000, trace::kEventEnd});
        packed.push_back({c0 + 2000, trace::kEventEnd});
        auto build = [&](const std::vector<Ev>& c) {
            BufferBuilder b(1, 8, 16, 4, 32768);
            b.cta(0, kGt0, c0, kGt0 + 100'000, c0 + 200'000, 3);
            b.warp(0, 4, 2, 1, 0, c);
            return b;
        };
        auto a = build(plain), b = build(packed);
        decode::DecodeReport ra, rb;
        const KernelRecord x = decode::decodeTrace(a.bytes().data(), a.bytes().size(), a.geometry(), cuptiLaunch(), {}, ra);
        const KernelRecord y = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), {}, rb);
        QVERIFY2(ra.ok, ra.failureReason.c_str());
        QVERIFY2(rb.ok, rb.failureReason.c_str());
        QCOMPARE(int(x.intervals.size()), 7);  // Setup + 6
        QCOMPARE(y.intervals.size(), x.intervals.size());
        for (std::size_t i = 0; i < x.intervals.size(); ++i) {
            const auto &p = x.intervals[i], &q = y.intervals[i];
            QVERIFY2(p.kind == q.kind && p.kstep == q.kstep && p.slot == q.slot && p.start == q.start && p.duration == q.duration,
                     ("interval " + std::to_string(i) + " differs").c_str());
        }
        QCOMPARE(y.intervals[5].kind, IntervalKind::WaitOrder);
        QCOMPARE(y.intervals[5].slot, std::int16_t(-1));  // S = 0: no slot
        QCOMPARE(y.intervals[2].slot, std::int16_t(2));   // 6 % 4
    }

    void tileSpans()
    {
        auto b = wsFixture();
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), {}, rep);
        QCOMPARE(int(r.tiles.size()), 1);
        QCOMPARE(r.tiles[0].tileM, 3);
        QCOMPARE(r.tiles[0].tileN, 5);
        QCOMPARE(r.tiles[0].warpId, RowId(1));
        QCOMPARE(r.tiles[0].start, kAligned0 + 25);
        QCOMPARE(r.tiles[0].end, kAligned0 + 900);
    }

    void overflowFailsTheRun()
    {
        BufferBuilder b(1, 1, 4);
        b.cta(0, kGt0, kClk0, kGt0 + 10'000, kClk0 + 20'000, 0);
        b.warp(0, 0, 4, 0, 0,
               {{kClk0, k(IntervalKind::Load), 0}, {kClk0 + 10, k(IntervalKind::Sync), 0},
                {kClk0 + 20, k(IntervalKind::Compute), 0}, {kClk0 + 30, k(IntervalKind::Load), 1}},
               /*count=*/11);
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), {}, rep);
        QVERIFY(!rep.ok);
        QCOMPARE(rep.droppedEvents, std::int64_t(7));
        QCOMPARE(rep.overflowWarps, 1);
        QCOMPARE(r.launch.droppedEvents, std::int64_t(7));
        QVERIFY2(rep.failureReason.find("overflow") != std::string::npos, rep.failureReason.c_str());
        QVERIFY(rep.failureReason.find("7 events lost") != std::string::npos);
        // What was written is still decoded; the last open phase (no end) is dropped.
        QCOMPARE(int(r.intervals.size()), 3);
    }

    void unfinishedWarpFailsTheRun()
    {
        BufferBuilder b(1, 2, 8);
        b.cta(0, kGt0, kClk0, kGt0 + 10'000, kClk0 + 20'000, 0);
        b.warp(0, 0, 2, 0, 0, {{kClk0, k(IntervalKind::WaitData), 0}, {kClk0 + 100, k(IntervalKind::MmaIssue), 0}},
               /*count=*/0);  // never reached end(): count not written
        b.warp(0, 1, 2, 0, 1, {{kClk0, k(IntervalKind::Setup)}, {kClk0 + 100, trace::kEventEnd}});
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), {}, rep);
        QVERIFY(!rep.ok);
        QCOMPARE(rep.unfinishedWarps, 1);
        QVERIFY(rep.failureReason.find("never wrote their end") != std::string::npos);
        QCOMPARE(int(r.intervals.size()), 2);  // WaitData (closed by MmaIssue) + Setup
    }

    void missingCtaEndFailsTheRun()
    {
        BufferBuilder b(2, 1, 4);
        b.cta(0, kGt0, kClk0, kGt0 + 10'000, kClk0 + 20'000, 0);
        b.cta(1, kGt0, kClk0, 0, 0, 1, /*endWritten=*/false);
        b.warp(0, 0, 4, 0, 0, {{kClk0, k(IntervalKind::Setup)}, {kClk0 + 10, trace::kEventEnd}});
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), {}, rep);
        QVERIFY(!rep.ok);
        QCOMPARE(rep.missingCtas, 1);
        QVERIFY(rep.failureReason.find("1 of 2 CTAs") != std::string::npos);
        QCOMPARE(int(r.ctas.size()), 1);
    }

    void noCtaRecordsAtAll()
    {
        BufferBuilder b(2, 1, 4);
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), {}, rep);
        QVERIFY(!rep.ok);
        QCOMPARE(rep.missingCtas, 2);
        QVERIFY(r.ctas.empty());
    }

    void rejectsBadBuffers()
    {
        auto b = wsFixture();
        decode::DecodeReport rep;
        const auto geom = b.geometry();
        QVERIFY_THROWS_EXCEPTION(decode::DecodeError, decode::decodeTrace(b.bytes().data(), 10, geom, cuptiLaunch(), {}, rep));
        QVERIFY_THROWS_EXCEPTION(decode::DecodeError,
                                 decode::decodeTrace(b.bytes().data(), b.bytes().size() - 16, geom, cuptiLaunch(), {}, rep));
        auto wrongGeom = geom;
        wrongGeom.warpsPerCta = 12;
        QVERIFY_THROWS_EXCEPTION(decode::DecodeError,
                                 decode::decodeTrace(b.bytes().data(), b.bytes().size(), wrongGeom, cuptiLaunch(), {}, rep));
        auto bad = b.bytes();
        bad[0] ^= 0xFF;
        try {
            decode::decodeTrace(bad.data(), bad.size(), geom, cuptiLaunch(), {}, rep);
            QFAIL("bad magic accepted");
        } catch (const decode::DecodeError& e) {
            QVERIFY(std::string(e.what()).find("magic") != std::string::npos);
        }
        bad = b.bytes();
        bad[4] = 9;  // version
        QVERIFY_THROWS_EXCEPTION(decode::DecodeError, decode::decodeTrace(bad.data(), bad.size(), geom, cuptiLaunch(), {}, rep));
    }

    void keepsSubsetOfCtasAndSms()
    {
        auto b = wsFixture();
        decode::DecodeReport rep;
        decode::DecodeOptions opt;
        opt.keepSms = {7};
        KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), opt, rep);
        QVERIFY(rep.ok);
        QCOMPARE(rep.ctasKept, 1);
        QCOMPARE(int(r.ctas.size()), 1);
        QCOMPARE(r.ctas[0].blockLinear, 1);
        QCOMPARE(r.ctas[0].id, RowId(0));
        QCOMPARE(int(r.warps.size()), 1);
        QCOMPARE(r.warps[0].ctaId, RowId(0));
        QVERIFY(r.loads.empty());  // its only load is unmatched
        // Alignment still uses every CTA: CTA 1 starts 10 us after CTA 0.
        QCOMPARE(r.ctas[0].start, kAligned0 + 10'000);

        opt = {};
        opt.keepCtas = {0};
        r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), opt, rep);
        QCOMPARE(int(r.ctas.size()), 1);
        QCOMPARE(int(r.warps.size()), 2);
        QCOMPARE(int(r.loads.size()), 2);
        opt.keepSms = {7};  // both filters: CTA 0 is on SM 3
        r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), opt, rep);
        QVERIFY(r.ctas.empty());
    }

    void synchronousLoadsBecomeTransfers()
    {
        BufferBuilder b(1, 2, 16, 0, 16384);
        b.cta(0, kGt0, kClk0, kGt0 + 10'000, kClk0 + 20'000, 0);
        for (std::uint32_t w = 0; w < 2; ++w)
            b.warp(0, w, 4, 0, 0,
                   {{kClk0 + w * 10, k(IntervalKind::Load), 0},
                    {kClk0 + 100 + w * 20, k(IntervalKind::Sync), 0},
                    {kClk0 + 200, k(IntervalKind::Compute), 0},
                    {kClk0 + 400, k(IntervalKind::Sync), 0},
                    {kClk0 + 500, k(IntervalKind::Load), 1},
                    {kClk0 + 600, k(IntervalKind::Sync), 1},
                    {kClk0 + 700, trace::kEventEnd}});
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), KernelLaunch{}, {}, rep);
        QVERIFY(rep.ok);
        QCOMPARE(r.warps[0].roleName, std::string("worker WG0"));
        QCOMPARE(int(r.loads.size()), 2);
        // No CUPTI record: globaltimer base, and a warning says so.
        QCOMPARE(r.loads[0].issue, TimeNs(kGt0));
        QCOMPARE(r.loads[0].ready, TimeNs(kGt0 + 60));  // latest Load end of k0 (warp 1: +120 cycles)
        QCOMPARE(r.loads[0].bytes, std::int64_t(16384));
        QCOMPARE(r.loads[1].issue, TimeNs(kGt0 + 250));
        QCOMPARE(r.loads[1].ready, TimeNs(kGt0 + 300));
        bool warned = false;
        for (const auto& w : rep.warnings) warned |= w.find("no CUPTI kernel record") != std::string::npos;
        QVERIFY(warned);
    }

    void shortCtasBorrowTheMedianSlope()
    {
        // Three CTAs long enough for their own calibration (0.5, 0.6 and 0.7 ns per cycle) and one too short:
        // the short one uses the median of the others, 0.6, not the first or the smallest.
        BufferBuilder b(4, 1, 8);
        b.cta(0, kGt0, kClk0, kGt0 + 70'000, kClk0 + 100'000, 0);  // 0.7
        b.cta(1, kGt0, kClk0, kGt0 + 50'000, kClk0 + 100'000, 1);  // 0.5
        b.cta(2, kGt0, kClk0, kGt0 + 60'000, kClk0 + 100'000, 2);  // 0.6
        b.cta(3, kGt0, kClk0, kGt0 + 1'000, kClk0 + 5'000, 3);     // too short
        for (std::uint32_t c = 0; c < 4; ++c)
            b.warp(c, 0, 4, 0, 0, {{kClk0, k(IntervalKind::Compute), 0}, {kClk0 + 1000, trace::kEventEnd}});
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), {}, rep);
        QVERIFY2(rep.ok, rep.failureReason.c_str());
        QCOMPARE(rep.fallbackCalibrations, 1);
        QCOMPARE(rep.medianNsPerCycle, 0.6);
        QCOMPARE(int(r.ctas.size()), 4);
        QCOMPARE(r.ctas[3].nsPerCycle, 0.6);
        // 1000 cycles at 0.6 ns: the short CTA's compute lasts 600 ns.
        QCOMPARE(intervalsOf(r, 3).at(0).duration, TimeNs(600));
    }

    void loadReadyBeforeIssueIsClampedToTheIssue()
    {
        // The consumer saw the data of k-step 0 (its wait ended) before the producer's issue event was
        // stamped (the two warps' clocks are only ns apart): the load lasts 0 ns, never a negative time.
        BufferBuilder b(1, 2, 8);
        b.cta(0, kGt0, kClk0, kGt0 + 100'000, kClk0 + 200'000, 0);
        b.warp(0, 0, 1, 0, 0, {{kClk0 + 500, k(IntervalKind::IssueLoad), 0, 0}, {kClk0 + 600, trace::kEventEnd}});
        b.warp(0, 1, 2, 0, 0,
               {{kClk0 + 100, k(IntervalKind::WaitData), 0, 0}, {kClk0 + 300, k(IntervalKind::MmaIssue), 0, 0},
                {kClk0 + 600, trace::kEventEnd}});
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), {}, rep);
        QVERIFY2(rep.ok, rep.failureReason.c_str());
        QCOMPARE(int(r.loads.size()), 1);
        QCOMPARE(r.loads[0].ready, r.loads[0].issue);
    }

    void aTmaLoadIsNotCountedTwice()
    {
        // A k-step issued by TMA (IssueLoad) for which a worker also recorded a synchronous Load: one transfer,
        // the TMA one, not two (loads in flight would double).
        BufferBuilder b(1, 2, 8);
        b.cta(0, kGt0, kClk0, kGt0 + 100'000, kClk0 + 200'000, 0);
        b.warp(0, 0, 1, 0, 0, {{kClk0 + 100, k(IntervalKind::IssueLoad), 0, 0}, {kClk0 + 200, trace::kEventEnd}});
        b.warp(0, 1, 2, 0, 0,
               {{kClk0 + 100, k(IntervalKind::Load), 0}, {kClk0 + 300, k(IntervalKind::WaitData), 0, 0},
                {kClk0 + 700, k(IntervalKind::MmaIssue), 0, 0}, {kClk0 + 800, trace::kEventEnd}});
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), {}, rep);
        QVERIFY2(rep.ok, rep.failureReason.c_str());
        QCOMPARE(int(r.loads.size()), 1);
        QCOMPARE(r.loads[0].slot, std::int16_t(0));  // the TMA transfer (a synchronous one has no slot)
    }

    void negativeDurationIsClamped()
    {
        BufferBuilder b(1, 1, 8);
        b.cta(0, kGt0, kClk0, kGt0 + 10'000, kClk0 + 20'000, 0);
        b.warp(0, 0, 4, 0, 0, {{kClk0 + 100, k(IntervalKind::Setup)}, {kClk0 + 50, k(IntervalKind::Load), 0}, {kClk0 + 200, trace::kEventEnd}});
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), {}, rep);
        QCOMPARE(rep.clampedIntervals, 1);
        for (const auto& iv : r.intervals) QVERIFY(iv.duration >= 0);
    }

    void keepsNanosecondResolutionAtRealEpochs()
    {
        // On the device %globaltimer and CUPTI share an epoch near 1.8e18 ns, where a double holds only
        // multiples of 256 ns. Recordings made before the decoder worked relative to the earliest CTA
        // start came out on a 256 ns grid; intervals of 1 and 50 ns must survive.
        constexpr std::uint64_t gt = 1'795'980'838'919'540'551ull;  // not a multiple of 256
        BufferBuilder b(1, 1, 8);
        b.cta(0, gt, kClk0, gt + 100'000, kClk0 + 200'000, 0);  // 0.5 ns/cycle
        b.warp(0, 0, 2, 0, 0,
               {{kClk0 + 0, k(IntervalKind::Setup)},
                {kClk0 + 100, k(IntervalKind::WaitData), 0, 0},
                {kClk0 + 102, k(IntervalKind::MmaIssue), 0, 0},
                {kClk0 + 333, k(IntervalKind::MmaWait), 0, 0},
                {kClk0 + 1000, trace::kEventEnd}});
        KernelLaunch l = cuptiLaunch();
        l.start = TimeNs(gt) - 176'806;  // CUPTI's clock sat ~177 us from the CTAs' on the H200
        l.end = l.start + 101'000;
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), l, {}, rep);
        QVERIFY2(rep.ok, rep.failureReason.c_str());
        const auto iv = intervalsOf(r, r.warps.at(0).id);
        QCOMPARE(int(iv.size()), 4);
        QCOMPARE(iv[0].start, l.start + 500);  // centred: (101'000 - 100'000) / 2
        // relative times 0, 50, 51, 166.5, 500 ns -> 0, 50, 51, 167, 500
        QCOMPARE(iv[0].duration, TimeNs(50));
        QCOMPARE(iv[1].duration, TimeNs(1));
        QCOMPARE(iv[2].duration, TimeNs(116));
        QCOMPARE(iv[3].duration, TimeNs(333));
        QCOMPARE(r.ctas.at(0).start, l.start + 500);
        QCOMPARE(r.ctas.at(0).end, l.start + 500 + 100'000);
        trace::CtaRecord rec{};
        rec.globaltimerStart = gt;
        rec.clockStart = kClk0;
        rec.globaltimerEnd = gt + 100'000;
        rec.clockEnd = kClk0 + 200'000;
        rec.flags = 3u;
        QCOMPARE(decode::clockToNs(decode::calibrateCta(rec, 0.0, 1000), kClk0 + 333), TimeNs(gt) + 167);
    }

    void parsesIndexLists()
    {
        QCOMPARE(decode::parseIndexList("0-3,7,5"), (std::vector<int>{0, 1, 2, 3, 5, 7}));
        QCOMPARE(decode::parseIndexList("4,4,4"), (std::vector<int>{4}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, decode::parseIndexList("3-1"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, decode::parseIndexList("a"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, decode::parseIndexList(""));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, decode::parseIndexList("1,-2"));
    }

    void decodedRecordRoundTripsThroughStore()
    {
        auto b = wsFixture();
        decode::DecodeReport rep;
        const KernelRecord rec = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), cuptiLaunch(), {}, rep);
        QVERIFY(rep.ok);
        QTemporaryDir dir;
        const std::string path = dir.filePath("decoded.wstrace").toStdString();
        RunRecord run;
        run.info.variant = "warp_specialized";
        run.info.m = run.info.n = run.info.k = 256;
        run.info.device.name = "fixture (no GPU)";
        run.info.synthetic = true;  // hand-built buffer, not a recording
        run.info.notes = "SYNTHETIC: decoder fixture";
        run.kernels.push_back(rec);
        RunRecord failed = run;
        failed.info.status = RunStatus::Failed;
        failed.info.failureReason = "trace buffer overflow: 7 events lost in 1 warps (capacity 4 events per warp)";
        {
            auto store = TraceStore::openForWriting(path);
            store.writeRun(run);
            store.writeRun(failed);
        }
        const auto store = TraceStore::openReadOnly(path);
        const auto runs = store.runs();
        QCOMPARE(int(runs.size()), 2);
        QCOMPARE(runs[0].status, RunStatus::Complete);
        QCOMPARE(runs[1].status, RunStatus::Failed);
        QCOMPARE(runs[1].failureReason, failed.info.failureReason);
        const auto kernels = store.kernels(runs[0].id);
        QCOMPARE(int(kernels.size()), 1);
        QCOMPARE(kernels[0].alignResidualNs, 500.0);
        QCOMPARE(kernels[0].start, kCuptiStart);
        const KernelTrace t = store.loadKernel(kernels[0].id);
        QCOMPARE(int(t.ctas.size()), 2);
        QCOMPARE(int(t.lanes.size()), 3);
        QCOMPARE(int(t.intervalCount()), int(rec.intervals.size()));
        QCOMPARE(int(t.loads.size()), 2);
        QCOMPARE(int(t.tiles.size()), 1);
        QVERIFY(t.firstStart() >= kCuptiStart);
        QVERIFY(t.lastEnd() <= kCuptiEnd);
        bool sawProducer = false, sawConsumer = false;
        for (const auto& lane : t.lanes) {
            sawProducer |= lane.roleName == "producer";
            sawConsumer |= lane.roleName == "consumer WG0";
        }
        QVERIFY(sawProducer && sawConsumer);
    }
};

QTEST_GUILESS_MAIN(TestDecode)
#include "tst_decode.moc"
