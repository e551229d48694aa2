// Hand-made KernelTraces for tst_critpath and tst_whatif (test code only).
#pragma once

#include "warpstage/model.h"
#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <QString>

#include <initializer_list>
#include <string>

namespace wstest {

struct Iv {
    ws::IntervalKind kind;
    ws::TimeNs start;
    ws::TimeNs end;
    int kstep = -1;
    int slot = -1;
};

inline ws::Lane makeLane(int cta, int warp, int wg, ws::WarpRole role, std::initializer_list<Iv> ivs)
{
    ws::Lane l;
    l.warpId = 100 * (cta + 1) + warp;
    l.ctaIndex = cta;
    l.warpIndex = warp;
    l.warpgroup = wg;
    l.role = role;
    l.roleName = std::string(ws::warpRoleName(role));
    for (const Iv& v : ivs) {
        l.start.push_back(v.start);
        l.duration.push_back(std::int32_t(v.end - v.start));
        l.kind.push_back(v.kind);
        l.slot.push_back(std::int16_t(v.slot));
        l.kstep.push_back(v.kstep);
    }
    return l;
}

inline ws::Cta makeCta(int block, int sm, ws::TimeNs start, ws::TimeNs end)
{
    ws::Cta c;
    c.id = block + 1;
    c.blockLinear = block;
    c.smId = sm;
    c.start = start;
    c.end = end;
    return c;
}

// One CTA, a producer and a consumer warp, a 2-slot ring, 4 fills, load flight 100 ns. Times are chosen so that
// the critical path is known (tst_critpath::handMadePipeline spells it out).
inline ws::KernelTrace pipelineTrace()
{
    using K = ws::IntervalKind;
    ws::KernelTrace t;
    t.run.id = 1;
    t.run.variant = "hand_made";
    t.launch.id = 1;
    t.launch.traced = true;
    t.launch.start = -5;
    t.launch.end = 410;
    t.ctas.push_back(makeCta(0, 0, 0, 400));
    t.lanes.push_back(makeLane(0, 0, 0, ws::WarpRole::Producer,
                               {{K::Setup, 0, 10},
                                {K::IssueLoad, 10, 20, 0, 0},
                                {K::IssueLoad, 20, 30, 1, 1},
                                {K::WaitSlot, 30, 150, 2, 0},
                                {K::IssueLoad, 150, 160, 2, 0},
                                {K::WaitSlot, 160, 195, 3, 1},
                                {K::IssueLoad, 195, 205, 3, 1}}));
    t.lanes.push_back(makeLane(0, 4, 1, ws::WarpRole::Consumer,
                               {{K::Setup, 0, 10},
                                {K::WaitData, 10, 110, 0, 0},
                                {K::MmaIssue, 110, 140, 0, 0},
                                {K::Release, 140, 150, 0, 0},
                                {K::WaitData, 150, 155, 1, 1},
                                {K::MmaIssue, 155, 185, 1, 1},
                                {K::Release, 185, 195, 1, 1},
                                {K::WaitData, 195, 250, 2, 0},
                                {K::MmaIssue, 250, 280, 2, 0},
                                {K::Release, 280, 290, 2, 0},
                                {K::WaitData, 290, 305, 3, 1},
                                {K::MmaIssue, 305, 335, 3, 1},
                                {K::Release, 335, 345, 3, 1},
                                {K::Store, 345, 400}}));
    auto load = [&](int k, ws::TimeNs issue) {
        ws::LoadTransfer ld;
        ld.ctaId = 0;
        ld.kstep = k;
        ld.slot = std::int16_t(k % 2);
        ld.issue = issue;
        ld.ready = issue + 100;
        t.loads.push_back(ld);
    };
    load(0, 10);
    load(1, 20);
    load(2, 150);
    load(3, 195);
    return t;
}

// Writes a synthetic run into `path` and loads its traced kernel back.
inline ws::KernelTrace syntheticTrace(const ws::SyntheticParams& p, const QString& path)
{
    {
        auto st = ws::TraceStore::openForWriting(path.toStdString());
        st.writeRun(ws::generateSynthetic(p));
    }
    auto st = ws::TraceStore::openReadOnly(path.toStdString());
    for (const ws::KernelLaunch& k : st.kernels(st.runs()[0].id))
        if (k.traced)
            return st.loadKernel(k.id);
    return {};
}

}  // namespace wstest
