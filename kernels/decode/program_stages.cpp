// Stall samples of a recorded program's kernels -> role and stage: see warpstage/program_stages.h.
#include "warpstage/program_stages.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace ws::decode {

StageMap programStageMap(const std::vector<SourceFile>& sources)
{
    StageMap map = StageMap::fromSource({}, {});
    map.setProgramRules(true);
    for (const auto& f : sources)
        if (!f.path.empty() && !f.text.empty()) map.addHelperSource(f.path, f.text);
    return map;
}

std::vector<std::string> missingSources(const std::vector<StallSample>& samples, const std::vector<SourceFile>& sources)
{
    std::set<std::string> files, missing;
    for (const auto& s : samples)
        if (s.line > 0 && !s.sourceFile.empty()) files.insert(s.sourceFile);
    for (const auto& f : files) {
        bool have = false;
        for (const auto& src : sources) have = have || (!src.text.empty() && sourcePathMatches(f, src.path));
        if (!have) missing.insert(f);
    }
    return {missing.begin(), missing.end()};
}

ProgramStagesOutcome assignProgramStages(RunRecord& run)
{
    ProgramStagesOutcome out;
    const StageMap map = programStageMap(run.sources);
    std::set<std::string> missing, untraced;
    for (auto& k : run.kernels) {
        if (k.stalls.empty()) continue;
        ++out.kernels;
        // the roles: the run's traced launch of this kernel (this one when it was traced itself)
        const KernelRecord* traced = !k.intervals.empty() ? &k : nullptr;
        for (const auto& t : run.kernels)
            if (!traced && !t.intervals.empty() && t.launch.name == k.launch.name) traced = &t;
        std::vector<WarpRole> roles(kIntervalKindCount, WarpRole::Unknown);
        bool hasWaitOrder = false;
        if (traced) {
            roles = rolesByKind(*traced);
            for (const auto& iv : traced->intervals) hasWaitOrder = hasWaitOrder || iv.kind == IntervalKind::WaitOrder;
        } else {
            untraced.insert(k.launch.name);
        }
        assignStages(k.stalls, map, roles, hasWaitOrder);
        for (const auto& m : missingSources(k.stalls, run.sources)) missing.insert(m);
        for (const auto& s : k.stalls) {
            out.samples += s.count;
            if (!s.stage.empty()) out.mapped += s.count;
        }
    }
    out.missing.assign(missing.begin(), missing.end());
    out.untraced.assign(untraced.begin(), untraced.end());
    if (out.samples == 0) return out;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f", 100.0 * double(out.mapped) / double(out.samples));
    std::size_t withText = 0;
    for (const auto& f : run.sources) withText += f.text.empty() ? 0 : 1;
    if (withText == 0)
        out.note = "stage mapping: no source text of the sampled kernel(s) found (build with nvcc -lineinfo; --source-dir DIR), "
                   "stall samples keep role and stage unknown";
    else
        out.note = "stage mapping: " + std::string(pct) + "% of " + std::to_string(out.samples)
                   + " stall samples mapped to a pipeline stage from the " + std::to_string(withText)
                   + " source file(s) stored with the run";
    if (!out.missing.empty() && withText > 0) {
        out.note += "; no source for";
        for (std::size_t i = 0; i < out.missing.size() && i < 6; ++i) out.note += (i ? ", " : " ") + out.missing[i];
        if (out.missing.size() > 6) out.note += " and " + std::to_string(out.missing.size() - 6) + " more";
        out.note += " (their samples take the stage of the code around them)";
    }
    if (!out.untraced.empty()) {
        out.note += "; roles unknown (no traced launch) for";
        for (std::size_t i = 0; i < out.untraced.size(); ++i) out.note += (i ? ", " : " ") + out.untraced[i];
    }
    return out;
}

}  // namespace ws::decode
