// warpstage-restage: re-assigns the pipeline role and stage of every stall sample in a
// Warpstage file with this build's stage map (warpstage/stage_map.h), reading the rung sources
// under a source directory. The samples themselves (PC, function, source line, reason, count) are not
// touched, and nothing else in the file changes except each updated run's notes, which say so.
// Use it when the mapping rules improve: a recording keeps the stages assigned when it was made.
// CUDA-free, no GPU needed.
//
//   warpstage-restage FILE [--source-dir DIR] [--dry-run]
//
// Runs of a recorded program (warpstage-record -- PROGRAM, --rungs lce:...) are re-assigned from the source texts
// stored with the run (what their samples' lines refer to; warpstage/program_stages.h), not from DIR.
//
// The source directory (a checkout: DIR/kernels/src/<rung>.cu) is --source-dir, else the environment variable
// WARPSTAGE_SOURCE_DIR (as warpstage-record's program mode reads it), else the tree this tool was built from.
// Exit: 0 done (or nothing to change), 1 the file could not be read or written, 2 usage (also: a source
// directory named by --source-dir or WARPSTAGE_SOURCE_DIR that is not a directory).
#include "warpstage/program_stages.h"
#include "warpstage/stage_map.h"
#include "warpstage/store.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#ifndef WARPSTAGE_SOURCE_DIR
#define WARPSTAGE_SOURCE_DIR ""
#endif

using namespace ws;

namespace {

int usage(const char* why)
{
    if (why) std::fprintf(stderr, "warpstage-restage: %s\n", why);
    std::fprintf(stderr, "usage: warpstage-restage FILE [--source-dir DIR] [--dry-run]\n"
                         "Re-assigns the pipeline role/stage of every stall sample with this build's stage map.\n"
                         "The rung sources are read under DIR, else $WARPSTAGE_SOURCE_DIR, else this build's tree.\n");
    return 2;
}

struct RunUpdate {
    RunInfo run;
    std::map<RowId, std::vector<StallSample>> byKernel;  // re-assigned samples, stallSamples() order
    std::int64_t all = 0, changed = 0;
};

using ByStage = std::map<std::string, std::pair<std::int64_t, std::int64_t>>;  // role/stage -> (before, after)

void printChanges(const RunUpdate& u, const ByStage& byStage)
{
    std::vector<std::pair<std::string, std::pair<std::int64_t, std::int64_t>>> v(byStage.begin(), byStage.end());
    std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.second.second > y.second.second; });
    for (const auto& [key, ba] : v)
        if (ba.first != ba.second && u.all > 0)
            std::printf("    %-28s %5.1f%% -> %5.1f%%\n", key.c_str(), 100.0 * double(ba.first) / double(u.all),
                        100.0 * double(ba.second) / double(u.all));
}

// A program run (warpstage-record -- PROGRAM, --rungs lce:...): the stage map from the source texts stored with the
// run (they are what the samples' lines refer to), the roles from the run's traced launch of each kernel
// (warpstage/program_stages.h, as warpstage-record does it).
RunUpdate restageProgramRun(const TraceStore& in, const RunInfo& run)
{
    RunUpdate u;
    u.run = run;
    std::vector<std::pair<KernelLaunch, std::vector<StallSample>>> withStalls;
    const std::vector<KernelLaunch> launches = in.kernels(run.id);
    for (const KernelLaunch& k : launches)
        if (auto samples = in.stallSamples(k.id); !samples.empty()) withStalls.emplace_back(k, std::move(samples));
    if (withStalls.empty()) return u;
    const std::vector<SourceFile> sources = in.loadSources(run.id);
    const decode::StageMap map = decode::programStageMap(sources);
    std::map<std::string, std::pair<std::vector<WarpRole>, bool>> rolesOf;  // kernel name -> roles, has WaitOrder
    ByStage byStage;
    std::set<std::string> missing;
    for (const auto& [k, before] : withStalls) {
        auto it = rolesOf.find(k.name);
        if (it == rolesOf.end()) {
            std::pair<std::vector<WarpRole>, bool> r{std::vector<WarpRole>(kIntervalKindCount, WarpRole::Unknown), false};
            for (const KernelLaunch& t : launches)
                if (t.traced && t.name == k.name) {
                    const KernelTrace trace = in.loadKernel(t.id);
                    r.first = decode::rolesByKind(trace);
                    for (const auto& lane : trace.lanes)
                        r.second = r.second
                            || std::find(lane.kind.begin(), lane.kind.end(), IntervalKind::WaitOrder) != lane.kind.end();
                    break;
                }
            it = rolesOf.emplace(k.name, std::move(r)).first;
        }
        std::vector<StallSample> after = before;
        decode::assignStages(after, map, it->second.first, it->second.second);
        for (const auto& m : decode::missingSources(after, sources)) missing.insert(m);
        for (std::size_t i = 0; i < before.size(); ++i) {
            const std::int64_t n = before[i].count;
            u.all += n;
            byStage[std::string(warpRoleName(before[i].role)) + "/" + before[i].stage].first += n;
            byStage[std::string(warpRoleName(after[i].role)) + "/" + after[i].stage].second += n;
            if (after[i].stage != before[i].stage || after[i].role != before[i].role) u.changed += n;
        }
        u.byKernel[k.id] = std::move(after);
    }
    std::printf("run %lld (%s, program): %lld of %lld stall samples change role/stage (%zu source file(s) stored with the run)\n",
                (long long)run.id, run.variant.c_str(), (long long)u.changed, (long long)u.all, sources.size());
    if (sources.empty()) std::printf("    no source text stored with the run: nothing to map\n");
    for (const auto& m : missing) std::printf("    no source stored for %s\n", m.c_str());
    printChanges(u, byStage);
    return u;
}

}  // namespace

int main(int argc, char** argv)
{
    std::string file, sourceDir;  // --source-dir, else $WARPSTAGE_SOURCE_DIR, else the build's tree
    std::string sourceFrom = "--source-dir";
    bool dryRun = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--source-dir") {
            if (++i >= argc) return usage("--source-dir needs a directory");
            sourceDir = argv[i];
        } else if (a == "--dry-run") {
            dryRun = true;
        } else if (a == "-h" || a == "--help") {
            usage(nullptr);
            return 0;
        } else if (!a.empty() && a[0] == '-') {
            return usage(("unknown option " + a).c_str());
        } else if (file.empty()) {
            file = a;
        } else {
            return usage("one file at a time");
        }
    }
    if (file.empty()) return usage("no file given");
    if (sourceDir.empty()) {
        if (const char* env = std::getenv("WARPSTAGE_SOURCE_DIR"); env && *env) {
            sourceDir = env;
            sourceFrom = "WARPSTAGE_SOURCE_DIR";
        } else {
            sourceDir = WARPSTAGE_SOURCE_DIR;
            sourceFrom = "this build's source tree";
        }
    }
    if (sourceDir.empty())
        return usage("no --source-dir, no WARPSTAGE_SOURCE_DIR, and this build does not know its source tree");
    if (sourceFrom != "this build's source tree" && !std::filesystem::is_directory(sourceDir)) {
        std::fprintf(stderr, "warpstage-restage: source directory %s (from %s) is not a directory\n", sourceDir.c_str(),
                     sourceFrom.c_str());
        return 2;
    }

    try {
        // Read and re-assign everything read-only first: a bad file is reported, and a dry run leaves it
        // byte-identical.
        std::vector<RunUpdate> updates;
        {
            const TraceStore in = TraceStore::openReadOnly(file);
            for (const RunInfo& run : in.runs()) {
                if (run.kind == RunKind::Program) {  // a recorded program's kernels: the texts stored with the run
                    if (auto u = restageProgramRun(in, run); u.changed > 0) updates.push_back(std::move(u));
                    continue;
                }
                std::vector<WarpRole> roles;
                bool haveTraced = false, hasWaitOrder = false;
                std::vector<std::pair<RowId, std::vector<StallSample>>> withStalls;  // kernel, its samples
                for (const KernelLaunch& k : in.kernels(run.id)) {
                    if (k.traced && !haveTraced) {
                        const KernelTrace t = in.loadKernel(k.id);
                        roles = decode::rolesByKind(t);
                        for (const auto& lane : t.lanes)
                            hasWaitOrder = hasWaitOrder
                                || std::find(lane.kind.begin(), lane.kind.end(), IntervalKind::WaitOrder) != lane.kind.end();
                        haveTraced = true;
                    }
                    if (auto samples = in.stallSamples(k.id); !samples.empty()) withStalls.emplace_back(k.id, std::move(samples));
                }
                if (withStalls.empty()) continue;
                if (!haveTraced) {
                    std::printf("run %lld (%s): stall samples but no traced launch to tell the roles; skipped\n",
                                (long long)run.id, run.variant.c_str());
                    continue;
                }
                const std::string source = "kernels/src/" + run.variant + ".cu";
                const std::filesystem::path rungSource = std::filesystem::path(sourceDir) / source;
                if (!std::filesystem::is_regular_file(rungSource)) {
                    std::printf("run %lld (%s): %s not found under %s (from %s); skipped\n", (long long)run.id,
                                run.variant.c_str(), source.c_str(), sourceDir.c_str(), sourceFrom.c_str());
                    continue;
                }
                const auto map = decode::StageMap::fromFile(source, rungSource.string());
                RunUpdate u;
                u.run = run;
                std::map<std::string, std::pair<std::int64_t, std::int64_t>> byStage;  // role/stage -> (before, after)
                for (const auto& [kernelId, before] : withStalls) {
                    std::vector<StallSample> after = before;
                    decode::assignStages(after, map, roles, hasWaitOrder);
                    for (std::size_t i = 0; i < before.size(); ++i) {
                        const std::int64_t n = before[i].count;
                        u.all += n;
                        byStage[std::string(warpRoleName(before[i].role)) + "/" + before[i].stage].first += n;
                        byStage[std::string(warpRoleName(after[i].role)) + "/" + after[i].stage].second += n;
                        if (after[i].stage != before[i].stage || after[i].role != before[i].role) u.changed += n;
                    }
                    u.byKernel[kernelId] = std::move(after);
                }
                std::printf("run %lld (%s): %lld of %lld stall samples change role/stage\n", (long long)run.id,
                            run.variant.c_str(), (long long)u.changed, (long long)u.all);
                printChanges(u, byStage);
                if (u.changed > 0) updates.push_back(std::move(u));
            }
        }
        std::int64_t changedAll = 0;
        for (const RunUpdate& u : updates) changedAll += u.changed;
        if (!dryRun && !updates.empty()) {
            TraceStore out = TraceStore::openForWriting(file);
            for (const RunUpdate& u : updates)
                out.updateStallStages(u.run.id, u.byKernel,
                                      "\nstall stages re-assigned by warpstage-restage (the samples are unchanged): "
                                          + std::to_string(u.changed) + " of " + std::to_string(u.all)
                                          + " samples changed role/stage");
        }
        std::printf("%s: %lld samples re-assigned%s\n", file.c_str(), (long long)changedAll,
                    dryRun ? " (dry run: file unchanged)" : "");
        return 0;
    } catch (const StoreError& e) {
        std::fprintf(stderr, "warpstage-restage: %s: %s\n", e.path().c_str(), e.problem().c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "warpstage-restage: %s: %s\n", file.c_str(), e.what());
        return 1;
    }
}
