// Decoding of buffers written by users' kernels through <warpstage/trace.cuh> (issue 10), built on the
// host (no GPU): user-named phases and roles, unnamed ones, a kernel that declares no role, overflow
// reported per warp, and a buffer of another format version.
#include "fixture.h"

#include "warpstage/decode.h"

#include <QtTest>

using namespace ws;
using wsfix::BufferBuilder;

namespace {

constexpr std::uint64_t kGt0 = 2'000'000'000;
constexpr std::uint64_t kClk0 = 1'000;
constexpr TimeNs kCuptiStart = 900'000'000;

std::uint8_t k(IntervalKind kind) { return static_cast<std::uint8_t>(kind); }
constexpr std::uint8_t user(int i) { return std::uint8_t(kUserPhaseBase + i); }

KernelLaunch launch()
{
    KernelLaunch l;
    l.name = "wsRowSum(float const*, float*, int)";
    l.start = kCuptiStart;
    l.end = kCuptiStart + 10'000;  // CTA span 10'000 ns: slack 0
    return l;
}

// The row-sum kernel's shape: a loader warp and two reducer warps, 1 ns per cycle.
BufferBuilder rowSum()
{
    BufferBuilder b(1, 3, 16, 2, 8192);
    b.cta(0, kGt0, kClk0, kGt0 + 10'000, kClk0 + 10'000, 5);
    b.warp(0, 0, 1, 0, 0,
           {{kClk0, k(IntervalKind::IssueLoad), 0, 0},
            {kClk0 + 100, k(IntervalKind::IssueLoad), 1, 1},
            {kClk0 + 200, k(IntervalKind::WaitSlot), 2, 0},
            {kClk0 + 900, k(IntervalKind::IssueLoad), 2, 0},
            {kClk0 + 1000, trace::kEventEnd}},
           -1, /*userRole=*/0);
    for (std::uint32_t c = 0; c < 2; ++c)
        b.warp(0, 1 + c, 2, 0, std::uint8_t(c),
               {{kClk0, k(IntervalKind::WaitData), 0, 0},
                {kClk0 + 500, trace::kEventLoadReady, 0, 0},
                {kClk0 + 500, user(0), 0, 0},
                {kClk0 + 800, k(IntervalKind::Release), 0, 0},
                {kClk0 + 850, user(1)},
                {kClk0 + 2000 + 100 * c, trace::kEventEnd}},
               -1, /*userRole=*/1);
    return b;
}

decode::DecodeOptions names()
{
    decode::DecodeOptions o;
    o.phaseNames = {"reduce", "combine"};
    o.roleNames = {"loader", "reducer"};
    return o;
}

}  // namespace

class TestDecodeUser : public QObject {
    Q_OBJECT
private slots:
    void userPhasesKeepTheirKindAndNames()
    {
        auto b = rowSum();
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), launch(), names(), rep);
        QVERIFY2(rep.ok, rep.failureReason.c_str());
        QCOMPARE(r.phaseNames, (std::vector<std::string>{"reduce", "combine"}));
        int reduce = 0, combine = 0;
        for (const auto& iv : r.intervals) {
            if (iv.kind == IntervalKind(kUserPhaseBase)) {
                ++reduce;
                QCOMPARE(iv.duration, TimeNs(300));  // reduce 500 -> release 800
                QCOMPARE(iv.kstep, 0);
            }
            if (iv.kind == IntervalKind(kUserPhaseBase + 1)) ++combine;
            QVERIFY(iv.kind != IntervalKind::Other);  // no user phase folded into Other
        }
        QCOMPARE(reduce, 2);
        QCOMPARE(combine, 2);
        QCOMPARE(rep.unnamedUserPhases, 0);
        // The loads-in-flight lane works as for the ladder: issue -> ready of the same k-step.
        QCOMPARE(int(r.loads.size()), 1);
        QCOMPARE(r.loads[0].kstep, 0);
        QCOMPARE(r.loads[0].ready - r.loads[0].issue, TimeNs(500));
        QCOMPARE(r.loads[0].bytes, std::int64_t(8192));
    }

    void userRoleNamesNumberedByRoleIndex()
    {
        auto b = rowSum();
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), launch(), names(), rep);
        QCOMPARE(int(r.warps.size()), 3);
        QCOMPARE(r.warps[0].roleName, std::string("loader"));  // one loader: no number
        QCOMPARE(r.warps[0].role, WarpRole::Producer);        // the standard role stays for the metrics
        QCOMPARE(r.warps[1].roleName, std::string("reducer 0"));
        QCOMPARE(r.warps[2].roleName, std::string("reducer 1"));
        QCOMPARE(r.warps[2].role, WarpRole::Consumer);
    }

    void unnamedPhasesAndRolesAreShownAndWarned()
    {
        auto b = rowSum();
        decode::DecodeOptions o;
        o.phaseNames = {"reduce"};  // "combine" missing
        decode::DecodeReport rep;
        const KernelRecord r = decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), launch(), o, rep);
        QVERIFY2(rep.ok, rep.failureReason.c_str());  // a missing name is a warning, not a failure
        QCOMPARE(r.phaseNames, (std::vector<std::string>{"reduce", "phase 1"}));
        QCOMPARE(rep.unnamedUserPhases, 1);
        QCOMPARE(rep.unnamedUserRoles, 3);
        QCOMPARE(r.warps[0].roleName, std::string("role 0"));
        bool warned = false;
        for (const auto& w : rep.warnings) warned = warned || w.find("WARPSTAGE_PHASE_NAMES") != std::string::npos;
        QVERIFY(warned);
    }

    void kernelWithoutRolesFails()
    {
        BufferBuilder b(2, 2, 8);
        b.cta(0, kGt0, kClk0, kGt0 + 10'000, kClk0 + 10'000, 0);
        b.cta(1, kGt0, kClk0, kGt0 + 10'000, kClk0 + 10'000, 1);
        decode::DecodeReport rep;
        decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), launch(), names(), rep);
        QVERIFY(!rep.ok);
        QVERIFY(rep.noRoleDeclared);
        QCOMPARE(rep.undeclaredWarps, 4);
        QVERIFY2(rep.failureReason.find("declares no role") != std::string::npos, rep.failureReason.c_str());
        // One declared warp is enough (idle warps may stay undeclared).
        b.warp(1, 0, 4, 0, 0, {{kClk0, k(IntervalKind::Compute)}, {kClk0 + 10, trace::kEventEnd}});
        decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), launch(), names(), rep);
        QVERIFY2(rep.ok, rep.failureReason.c_str());
        QVERIFY(!rep.noRoleDeclared);
    }

    void overflowReportedPerWarp()
    {
        auto b = rowSum();
        // reducer 1 (CTA 0 warp 2) attempted 40 events into 16 slots; its end was never stored.
        b.warp(0, 2, 2, 0, 1, {{kClk0, k(IntervalKind::WaitData), 0, 0}, {kClk0 + 500, user(0), 0, 0}}, 40, 1);
        decode::DecodeReport rep;
        decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), launch(), names(), rep);
        QVERIFY(!rep.ok);
        QCOMPARE(rep.overflowWarps, 1);
        QCOMPARE(int(rep.overflows.size()), 1);
        QCOMPARE(rep.overflows[0].cta, 0);
        QCOMPARE(rep.overflows[0].warp, 2);
        QCOMPARE(rep.overflows[0].attempted, 40u);
        QCOMPARE(rep.overflows[0].capacity, 16u);
        QCOMPARE(rep.droppedEvents, std::int64_t(24));
        QVERIFY2(rep.failureReason.find("CTA 0 warp 2 (40 events)") != std::string::npos, rep.failureReason.c_str());
    }

    void otherFormatVersionIsRefusedWithBothVersions()
    {
        auto b = rowSum();
        trace::TraceBufferHeader h{};
        std::memcpy(&h, b.bytes().data(), sizeof h);
        h.version = trace::kFormatVersion + 1;
        std::memcpy(b.bytes().data(), &h, sizeof h);
        decode::DecodeReport rep;
        try {
            decode::decodeTrace(b.bytes().data(), b.bytes().size(), b.geometry(), launch(), names(), rep);
            QFAIL("a buffer of another format version was decoded");
        } catch (const decode::DecodeError& e) {
            const std::string m = e.what();
            QVERIFY2(m.find("version " + std::to_string(trace::kFormatVersion + 1)) != std::string::npos, e.what());
            QVERIFY2(m.find("reads versions " + std::to_string(trace::kOldestFormatVersion) + " to "
                            + std::to_string(trace::kFormatVersion)) != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestDecodeUser)
#include "tst_decode_user.moc"
