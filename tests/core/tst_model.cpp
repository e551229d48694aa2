// The trace model: names, roles, classification, KernelTrace helpers.
#include "warpstage/model.h"

#include <QtTest>

#include <set>

using namespace ws;

class TestModel : public QObject {
    Q_OBJECT
private slots:
    void kindNamesRoundTrip()
    {
        std::set<std::string> names;
        for (int i = 0; i < kIntervalKindCount; ++i) {
            const auto k = static_cast<IntervalKind>(i);
            const auto name = std::string(intervalKindName(k));
            QVERIFY(!name.empty());
            QVERIFY(!intervalKindLabel(k).empty());
            QVERIFY2(names.insert(name).second, name.c_str());
            QCOMPARE(intervalKindFromName(name), std::optional<IntervalKind>(k));
        }
        QCOMPARE(intervalKindName(IntervalKind::WaitSlot), std::string_view("wait_slot"));
        QCOMPARE(intervalKindName(IntervalKind::WaitData), std::string_view("wait_data"));
        QVERIFY(!intervalKindFromName("no_such_kind").has_value());
        // Out-of-range values (from a future file) never index out of bounds.
        QCOMPARE(intervalKindName(static_cast<IntervalKind>(200)), std::string_view("other"));
    }
    void stableNumbering()
    {
        // Stored in files and device buffers: must never change.
        QCOMPARE(int(IntervalKind::WaitSlot), 2);
        QCOMPARE(int(IntervalKind::MmaIssue), 5);
        QCOMPARE(int(IntervalKind::WaitOrder), 13);
        QCOMPARE(int(IntervalKind::WaitPartial), 14);  // stream-K (session 7): appended
        QCOMPARE(int(IntervalKind::Fixup), 15);
        QCOMPARE(kIntervalKindCount, 16);
        QCOMPARE(intervalKindName(IntervalKind::WaitPartial), std::string_view("wait_partial"));
        QCOMPARE(intervalKindName(IntervalKind::Fixup), std::string_view("fixup"));
    }
    void classification()
    {
        QVERIFY(isComputeKind(IntervalKind::MmaIssue));
        QVERIFY(isComputeKind(IntervalKind::MmaWait));
        QVERIFY(isComputeKind(IntervalKind::Compute));
        QVERIFY(!isComputeKind(IntervalKind::WaitData));
        QVERIFY(!isComputeKind(IntervalKind::Load));
        QVERIFY(isWaitKind(IntervalKind::WaitSlot));
        QVERIFY(isWaitKind(IntervalKind::WaitPartial));
        QVERIFY(!isWaitKind(IntervalKind::Fixup));
        QVERIFY(isWaitKind(IntervalKind::WaitData));
        QVERIFY(isWaitKind(IntervalKind::WaitOrder));
        QVERIFY(isWaitKind(IntervalKind::Sync));
        QVERIFY(!isWaitKind(IntervalKind::MmaWait));
        for (int i = 0; i < kIntervalKindCount; ++i)
            QVERIFY(!(isComputeKind(IntervalKind(i)) && isWaitKind(IntervalKind(i))));
    }
    void roles()
    {
        for (int i = 0; i <= 5; ++i) {
            const auto r = static_cast<WarpRole>(i);
            QCOMPARE(warpRoleFromName(warpRoleName(r)), std::optional<WarpRole>(r));
        }
        QCOMPARE(warpRoleName(WarpRole::Producer), std::string_view("producer"));
        QVERIFY(!warpRoleFromName("boss").has_value());
    }
    void kernelTraceHelpers()
    {
        KernelTrace t;
        t.launch.start = 100;
        t.launch.end = 900;
        QCOMPARE(t.intervalCount(), std::size_t(0));
        QCOMPARE(t.firstStart(), TimeNs(100));  // empty -> launch times
        QCOMPARE(t.lastEnd(), TimeNs(900));
        Lane a;
        a.start = {200, 300};
        a.duration = {500, 10};  // the first interval ends last
        a.kind = {IntervalKind::MmaWait, IntervalKind::Release};
        a.slot = {0, 0};
        a.kstep = {0, 0};
        Lane b;
        b.start = {150};
        b.duration = {0};
        b.kind = {IntervalKind::WaitData};
        b.slot = {-1};
        b.kstep = {-1};
        t.lanes = {a, b};
        QCOMPARE(t.intervalCount(), std::size_t(3));
        QCOMPARE(t.firstStart(), TimeNs(150));
        QCOMPARE(t.lastEnd(), TimeNs(700));
        QCOMPARE(t.lanes[0].end(0), TimeNs(700));
    }
};

QTEST_GUILESS_MAIN(TestModel)
#include "tst_model.moc"
