// Helpers of the export/import suites (tst_export_chrome, tst_export_perfetto, tst_import_roundtrip):
// a small synthetic kernel loaded back from a real store, so the lanes are in the store's order.
#pragma once

#include "warpstage/store.h"
#include "warpstage/synthetic.h"

#include <QTemporaryDir>
#include <QtTest>

#include <string>

namespace wstest {

// pattern WarpSpecialized, 3 CTAs on 2 SMs, 1 producer warpgroup + 1 consumer warpgroup, 2 slots, 4 k-steps.
// With userPhases, every MmaWait interval becomes the user phase "softmax (user)" and every Epilogue
// interval the user phase "rescale".
inline ws::RunRecord exportRun(bool userPhases = false)
{
    ws::SyntheticParams p;
    p.pattern = ws::SyntheticPattern::WarpSpecialized;
    p.smCount = 2;
    p.ctas = 3;
    p.consumerWarpgroups = 1;
    p.stages = 2;
    p.kstepsPerTile = 4;
    p.stallSamples = false;
    ws::RunRecord r = ws::generateSynthetic(p);
    if (userPhases) {
        ws::KernelRecord& k = r.kernels.front();
        k.phaseNames = {"softmax (user)", "rescale"};
        for (ws::Interval& iv : k.intervals) {
            if (iv.kind == ws::IntervalKind::MmaWait)
                iv.kind = static_cast<ws::IntervalKind>(ws::kUserPhaseBase);
            else if (iv.kind == ws::IntervalKind::Epilogue)
                iv.kind = static_cast<ws::IntervalKind>(ws::kUserPhaseBase + 1);
        }
    }
    return r;
}

inline ws::KernelTrace loadFirstTraced(const std::string& path)
{
    const ws::TraceStore s = ws::TraceStore::openReadOnly(path);
    const auto runs = s.runs();
    for (const ws::KernelLaunch& k : s.kernels(runs.back().id))
        if (k.traced)
            return s.loadKernel(k.id);
    return {};
}

inline ws::KernelTrace exportTrace(const QTemporaryDir& dir, bool userPhases = false)
{
    const std::string path = dir.filePath(userPhases ? "user.wstrace" : "k.wstrace").toStdString();
    {
        ws::TraceStore s = ws::TraceStore::openForWriting(path);
        s.writeRun(exportRun(userPhases));
    }
    return loadFirstTraced(path);
}

}  // namespace wstest
