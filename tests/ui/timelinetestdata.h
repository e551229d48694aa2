// A small hand-made kernel trace with known intervals, shared by the timeline tests.
#pragma once

#include <warpstage/model.h>

#include <algorithm>
#include <memory>

namespace tltest {

inline constexpr ws::TimeNs kStart = 1'000'000;  // kernel start (absolute ns)
inline constexpr ws::TimeNs kPeriod = 200;       // one k-step

// 2 CTAs on SMs 0 and 1; each: producer w0 (WaitSlot 100 + IssueLoad 50 per k-step after a 100 ns Setup),
// consumer w4 (WaitData 60, MmaIssue 40, MmaWait 80, Release 20 per k-step). Loads issue+25 .. +175.
inline std::shared_ptr<ws::KernelTrace> makeTrace(int ksteps = 40)
{
    auto tr = std::make_shared<ws::KernelTrace>();
    tr->run.synthetic = true;
    tr->run.variant = "handmade";
    tr->launch.name = "handmade_kernel";
    tr->launch.variant = "handmade";
    tr->launch.start = kStart;
    tr->launch.end = kStart + 100 + ksteps * kPeriod + 100;
    for (int c = 0; c < 2; ++c) {
        ws::Cta cta;
        cta.blockLinear = c;
        cta.smId = c;
        cta.start = kStart;
        cta.end = tr->launch.end;
        tr->ctas.push_back(cta);
        auto add = [](ws::Lane &l, ws::TimeNs s, std::int32_t d, ws::IntervalKind k, int slot, int kstep) {
            l.start.push_back(s);
            l.duration.push_back(d);
            l.kind.push_back(k);
            l.slot.push_back(std::int16_t(slot));
            l.kstep.push_back(kstep);
        };
        ws::Lane prod;
        prod.ctaIndex = c;
        prod.warpIndex = 0;
        prod.role = ws::WarpRole::Producer;
        prod.roleName = "producer";
        ws::Lane cons;
        cons.ctaIndex = c;
        cons.warpIndex = 4;
        cons.warpgroup = 1;
        cons.role = ws::WarpRole::Consumer;
        cons.roleName = "consumer WG1";
        add(prod, kStart, 100, ws::IntervalKind::Setup, -1, -1);
        add(cons, kStart, 100, ws::IntervalKind::Setup, -1, -1);
        for (int k = 0; k < ksteps; ++k) {
            const ws::TimeNs t = kStart + 100 + k * kPeriod;
            add(prod, t, 100, ws::IntervalKind::WaitSlot, k % 4, k);
            add(prod, t + 100, 50, ws::IntervalKind::IssueLoad, k % 4, k);
            add(cons, t, 60, ws::IntervalKind::WaitData, k % 4, k);
            add(cons, t + 60, 40, ws::IntervalKind::MmaIssue, k % 4, k);
            add(cons, t + 100, 80, ws::IntervalKind::MmaWait, k % 4, k);
            add(cons, t + 180, 20, ws::IntervalKind::Release, k % 4, k);
            tr->loads.push_back({c, std::int16_t(k % 4), k, t + 125, t + 275, 32768});
        }
        tr->lanes.push_back(std::move(prod));
        tr->lanes.push_back(std::move(cons));
    }
    std::stable_sort(tr->loads.begin(), tr->loads.end(), [](const auto &a, const auto &b) { return a.issue < b.issue; });
    return tr;
}

}  // namespace tltest
