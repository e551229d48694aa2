// Stall-pass records -> samples on the timeline run's launches. See warpstage/stall_match.h.
#include "warpstage/stall_match.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <tuple>

namespace ws::sink {

namespace {

std::string argvKey(const SinkProcess& s)
{
    std::string k;
    for (const auto& a : s.argv) k += a + '\0';
    return k;
}

// Pairs the processes of the two runs: same argv, n-th with n-th (by the time their sinks were opened).
std::vector<std::pair<const SinkProcess*, const SinkProcess*>> pairProcesses(const std::vector<SinkProcess>& a,
                                                                              const std::vector<SinkProcess>& b,
                                                                              std::vector<const SinkProcess*>* unpairedB)
{
    auto group = [](const std::vector<SinkProcess>& v) {
        std::map<std::string, std::vector<const SinkProcess*>> g;
        for (const auto& s : v)
            if (s.hasProcess) g[argvKey(s)].push_back(&s);
        for (auto& [k, list] : g)
            std::stable_sort(list.begin(), list.end(),
                             [](const SinkProcess* x, const SinkProcess* y) { return x->openedRealtimeNs < y->openedRealtimeNs; });
        return g;
    };
    auto ga = group(a), gb = group(b);
    std::vector<std::pair<const SinkProcess*, const SinkProcess*>> out;
    for (auto& [key, listB] : gb) {
        auto it = ga.find(key);
        for (std::size_t i = 0; i < listB.size(); ++i) {
            if (it != ga.end() && i < it->second.size())
                out.emplace_back(it->second[i], listB[i]);
            else if (unpairedB)
                unpairedB->push_back(listB[i]);
        }
    }
    return out;
}

std::string processText(const SinkProcess& s)
{
    return "pid " + std::to_string(s.pid) + " (" + (s.argv.empty() ? s.exe : s.argv.front()) + ")";
}

bool inRange(const StallMatchOptions& o, long long i)
{
    return o.launchFirst < 0 || (i >= o.launchFirst && i <= o.launchLast);
}

}  // namespace

StallMatchResult attachStalls(std::vector<RunRecord>& runs, const std::vector<SinkProcess>& timelineSinks,
                              const std::vector<SinkProcess>& stallSinks, const StallMatchOptions& opt, const StallFinish& finish)
{
    StallMatchResult res;
    std::regex re;
    bool haveRe = false;
    try {
        re = std::regex(opt.kernelsRegex);
        haveRe = !opt.kernelsRegex.empty();
    } catch (const std::regex_error&) {
    }
    // Per timeline run (pid, device): its notes, collected here and appended at the end.
    std::map<std::pair<std::int64_t, int>, std::vector<std::string>> notes;
    std::map<std::pair<std::int64_t, int>, RunRecord*> runOf;
    for (auto& r : runs) runOf[{r.info.pid, r.info.deviceOrdinal}] = &r;
    auto warn = [&](std::int64_t pid, int dev, const std::string& w) {
        res.warnings.push_back(w);
        if (runOf.count({pid, dev})) notes[{pid, dev}].push_back(w);
    };
    std::set<std::pair<std::int64_t, int>> sampledRuns;
    bool anyMatchingName = false;

    std::vector<const SinkProcess*> unpaired;
    for (const auto& [tl, st] : pairProcesses(timelineSinks, stallSinks, &unpaired)) {
        // What the injection library could not do (PC sampling not permitted, ...): every run of the process says it.
        for (const auto& [code, text] : st->stallNotes) {
            const std::string w = "stall run " + processText(*st) + ": " + text;
            res.warnings.push_back(w);
            for (const auto& r : runs)
                if (r.info.pid == tl->pid) notes[{r.info.pid, r.info.deviceOrdinal}].push_back(w);
        }
        // The timeline's launches: (device, demangled name) -> correlation ids in call order (graph launches left out).
        std::map<std::pair<std::uint32_t, std::string>, std::vector<std::uint32_t>> tlLaunches;
        for (const auto& k : tl->kernels)
            if (k.graphId == 0) tlLaunches[{k.deviceId, demangle(tl->str(k.nameId))}].push_back(k.correlationId);
        for (auto& [key, corrs] : tlLaunches) std::sort(corrs.begin(), corrs.end());
        // The stall run's counts per (device, name); launches it sampled.
        std::map<std::pair<std::uint32_t, std::string>, std::pair<long long, long long>> stCounts;  // launches, sampled
        for (const auto& c : st->stallCounts) stCounts[{c.deviceId, demangle(st->str(c.nameId))}] = {c.launches, c.sampled};
        for (const auto& l : st->stallLaunches) {
            auto& c = stCounts[{l.deviceId, demangle(st->str(l.nameId))}];
            if (st->stallCounts.empty()) c.first = std::max<long long>(c.first, l.launchIndex + 1);  // no final counts: it crashed
        }
        for (const auto& [key, c] : stCounts) {
            anyMatchingName = true;
            const auto& [dev, name] = key;
            auto it = tlLaunches.find(key);
            const long long f = it == tlLaunches.end() ? 0 : static_cast<long long>(it->second.size());
            if (f == 0) {
                res.mismatch = true;
                warn(tl->pid, int(dev), "stall pass: kernel '" + name + "' ran " + std::to_string(c.first) + " time(s) on device "
                         + std::to_string(dev) + " in the stall run but never in the timeline run (the program is not deterministic?)");
            } else if (f != c.first) {
                res.mismatch = true;
                warn(tl->pid, int(dev), "stall pass: kernel '" + name + "' launched " + std::to_string(f) + " time(s) in the timeline run and "
                         + std::to_string(c.first) + (st->stallCounts.empty() ? "+" : "") + " in the stall run on device " + std::to_string(dev)
                         + " (the program is not deterministic?); samples kept by launch index where both runs have the launch");
            }
        }
        if (haveRe)
            for (const auto& [key, corrs] : tlLaunches) {
                if (!std::regex_search(key.second, re) || stCounts.count(key)) continue;
                anyMatchingName = true;
                res.mismatch = true;
                warn(tl->pid, int(key.first), "stall pass: kernel '" + key.second + "' launched " + std::to_string(corrs.size())
                         + " time(s) on device " + std::to_string(key.first) + " in the timeline run but never in the stall run");
            }
        // Samples -> the launch with the same (device, name, index).
        std::map<std::tuple<std::uint32_t, std::string, std::uint32_t>, KernelRecord*> target;
        auto targetOf = [&](std::uint32_t dev, const std::string& name, std::uint32_t index) -> KernelRecord* {
            const auto key = std::make_tuple(dev, name, index);
            if (auto t = target.find(key); t != target.end()) return t->second;
            KernelRecord* kr = nullptr;
            auto it = tlLaunches.find({dev, name});
            auto run = runOf.find({tl->pid, int(dev)});
            if (it != tlLaunches.end() && index < it->second.size() && run != runOf.end())
                for (auto& k : run->second->kernels)
                    if (k.launch.correlationId == it->second[index] && k.launch.name == name) kr = &k;
            target[key] = kr;
            return kr;
        };
        std::set<std::tuple<std::uint32_t, std::string, std::uint32_t>> counted;
        std::set<std::pair<std::uint32_t, std::string>> kernels;
        for (const auto& x : st->stallSamples) {
            const std::string name = demangle(st->str(x.nameId));
            if (!inRange(opt, x.launchIndex)) continue;
            KernelRecord* kr = targetOf(x.deviceId, name, x.launchIndex);
            if (!kr) {
                ++res.samplesUnmatched;
                continue;
            }
            StallSample smp;
            smp.pcOffset = x.pcOffset;
            smp.functionName = st->str(x.functionId);
            smp.reason = st->str(x.reasonId);
            smp.count = std::int64_t(x.count);
            if (finish && !finish(smp, x.cubinCrc, *st)) continue;
            if (smp.line <= 0) res.samplesWithoutSource += smp.count;
            res.samples += smp.count;
            kr->stalls.push_back(std::move(smp));
            if (counted.insert({x.deviceId, name, x.launchIndex}).second) ++res.launchesWithSamples;
            kernels.insert({x.deviceId, name});
            sampledRuns.insert({tl->pid, int(x.deviceId)});
        }
        res.kernelsSampled += int(kernels.size());
    }
    for (const SinkProcess* s : unpaired) {
        for (const auto& [code, text] : s->stallNotes) res.warnings.push_back("stall run " + processText(*s) + ": " + text);
        if (!s->stallLaunches.empty() || !s->stallSamples.empty()) {
            res.mismatch = true;
            res.warnings.push_back("stall pass: stall-run process " + processText(*s)
                                   + " has no counterpart with the same command line in the timeline run; its samples are dropped");
        }
    }
    if (res.samplesUnmatched > 0)
        res.warnings.push_back("stall pass: " + std::to_string(res.samplesUnmatched)
                               + " sample record(s) of launches the timeline run does not have (or kept outside its window) dropped");
    if (!anyMatchingName)
        res.warnings.push_back("stall pass: --kernels '" + opt.kernelsRegex + "' matched no kernel launch");

    for (auto& r : runs) {
        const auto key = std::make_pair(r.info.pid, r.info.deviceOrdinal);
        std::int64_t n = 0, noSrc = 0;
        int launches = 0;
        for (const auto& k : r.kernels) {
            launches += k.stalls.empty() ? 0 : 1;
            for (const auto& smp : k.stalls) {
                n += smp.count;
                if (smp.line <= 0) noSrc += smp.count;
            }
        }
        r.info.hasStalls = sampledRuns.count(key) > 0;
        // The sources the samples point into, stored with the run (self-contained traces).
        const SinkProcess* tlProc = nullptr;
        for (const auto& s : timelineSinks)
            if (s.hasProcess && s.pid == r.info.pid) tlProc = &s;
        std::set<std::string> files, stored;
        for (const auto& f : r.sources) stored.insert(f.path);
        for (const auto& k : r.kernels)
            for (const auto& smp : k.stalls)
                if (smp.line > 0 && !smp.sourceFile.empty()) files.insert(smp.sourceFile);
        std::vector<std::string> missingWhy;
        int added = 0;
        for (const auto& f : files) {
            if (stored.count(f)) continue;
            std::string text, why;
            if (tlProc && readSource(f, *tlProc, opt.sourceDirs, text, why)) {
                SourceFile sf;
                sf.path = f;
                sf.sha256 = sha256Hex(text);
                sf.text = std::move(text);
                r.sources.push_back(std::move(sf));
                ++added;
            } else {
                missingWhy.push_back(tlProc ? why : "source " + f + " not found (no process record)");
            }
        }
        std::string t = "; stall pass (--kernels '" + opt.kernelsRegex + "'"
            + (opt.launchFirst >= 0 ? " --launch-range " + std::to_string(opt.launchFirst) + ":" + std::to_string(opt.launchLast) : std::string())
            + "): a second run of the program with PC sampling; " + std::to_string(n) + " samples on " + std::to_string(launches) + " launch(es)";
        if (n > 0 && noSrc == n)
            t += "; source mapping missing: all " + std::to_string(n) + " samples are without a source line (the program was built "
                 "without line info: build it with nvcc -lineinfo; the stalls are kept with their function and pc)";
        else if (noSrc > 0)
            t += "; " + std::to_string(noSrc) + " samples without a source line (the binary has no line info for them: build with -lineinfo; "
                + "function and pc are kept)";
        if (added > 0) t += "; " + std::to_string(added) + " source file(s) of the samples stored in the trace";
        if (!missingWhy.empty()) {
            t += "; " + std::to_string(missingWhy.size()) + " source file(s) of the samples not found (--source-dir DIR to point at them):";
            for (const auto& w : missingWhy) t += " " + w + ";";
            t.pop_back();
        }
        for (const auto& w : notes[key]) t += "; " + w;
        if (!anyMatchingName) t += "; --kernels matched no kernel launch";
        r.info.notes += t;
    }
    return res;
}

}  // namespace ws::sink
