// whatif_answers: a fingerprint of the what-if replay's answers, to show that a change to the replay's speed keeps
// every prediction bit-identical (issue 13, docs/benchmarks.md).
//   whatif_answers [--quick] TRACE.wstrace...
// For every traced kernel of each TRACE (and two synthetic kernels) and a fixed list of parameter sets, prints one
// line: the predicted time and an FNV-1a hash of the predicted timeline (lanes, CTAs, loads), the critical path
// (steps, attribution) and the notes. Diff the output of two builds: any changed line is a changed answer.
#include "warpstage/store.h"
#include "warpstage/synthetic.h"
#include "warpstage/whatif.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <string>
#include <vector>

using namespace ws;

namespace {

struct Fnv {
    std::uint64_t h = 1469598103934665603ull;
    void bytes(const void* p, std::size_t n)
    {
        const auto* b = static_cast<const unsigned char*>(p);
        for (std::size_t i = 0; i < n; ++i) {
            h ^= b[i];
            h *= 1099511628211ull;
        }
    }
    template <class T> void add(const T& v) { bytes(&v, sizeof v); }
    template <class T> void vec(const std::vector<T>& v)
    {
        add(v.size());
        if (!v.empty())
            bytes(v.data(), v.size() * sizeof(T));
    }
};

struct Named {
    const char* name;
    WhatIfParams p;
};

std::vector<Named> paramSets()
{
    std::vector<Named> v;
    auto add = [&](const char* n, auto f) {
        WhatIfParams p;
        f(p);
        v.push_back({n, p});
    };
    add("default", [](WhatIfParams&) {});
    add("stages6_mma0.8_load0.5", [](WhatIfParams& p) { p.stages = 6; p.mma = 0.8; p.loadLatency = 0.5; });
    add("stages6_mma0.8_load1.3", [](WhatIfParams& p) { p.stages = 6; p.mma = 0.8; p.loadLatency = 1.3; });
    add("stages2", [](WhatIfParams& p) { p.stages = 2; });
    add("mma1.5", [](WhatIfParams& p) { p.mma = 1.5; });
    add("mma0.5_noshared", [](WhatIfParams& p) { p.mma = 0.5; p.sharedResources = false; });
    add("epi0.5_overlap", [](WhatIfParams& p) { p.epilogue = 0.5; p.overlapEpilogue = true; });
    add("persistent_overlap", [](WhatIfParams& p) { p.persistent = true; p.overlapEpilogue = true; });
    add("sms66", [](WhatIfParams& p) { p.sms = 66; });
    add("ctas_per_sm2_stages4", [](WhatIfParams& p) { p.slotsPerSm = 2; p.stages = 4; });
    add("producer_nosync", [](WhatIfParams& p) { p.producerWarp = true; p.dropCtaSync = true; });
    add("load2_epi1.7", [](WhatIfParams& p) { p.loadLatency = 2.0; p.epilogue = 1.7; });
    return v;
}

void answer(const std::string& name, const KernelTrace& t, bool quick)
{
    const WhatIfModel m = WhatIfModel::build(t);
    const auto sets = paramSets();
    for (std::size_t s = 0; s < sets.size(); ++s) {
        if (quick && s > 2)
            break;
        WhatIfResult r;
        try {
            r = m.predict(sets[s].p, true);
        } catch (const WhatIfError& e) {
            std::printf("%-28s %-24s error: %s\n", name.c_str(), sets[s].name, e.what());
            continue;
        }
        Fnv h;
        h.add(r.predictedNs);
        h.add(r.measuredNs);
        for (const Lane& l : r.predicted.lanes) {
            h.vec(l.start);
            h.vec(l.duration);
            h.vec(l.kind);
            h.vec(l.slot);
            h.vec(l.kstep);
        }
        for (const Cta& c : r.predicted.ctas) {
            h.add(c.start);
            h.add(c.end);
            h.add(c.smId);
        }
        for (const LoadTransfer& l : r.predicted.loads) {
            h.add(l.ctaId);
            h.add(l.kstep);
            h.add(l.slot);
            h.add(l.issue);
            h.add(l.ready);
        }
        Fnv hp;
        hp.add(r.path.kernelStart);
        hp.add(r.path.kernelEnd);
        hp.add(r.path.tailStart);
        for (const PathStep& st : r.path.steps) {
            hp.add(st.what);
            hp.add(st.lane);
            hp.add(st.interval);
            hp.add(st.ctaIndex);
            hp.add(st.kstep);
            hp.add(st.start);
            hp.add(st.end);
            hp.add(st.cause);
        }
        for (double a : r.path.attributionNs)
            hp.add(a);
        for (const std::string& n : r.notes)
            hp.bytes(n.data(), n.size());
        // The same prediction without the timeline must give the same time and path length.
        const WhatIfResult bare = m.predict(sets[s].p, false);
        std::printf("%-28s %-24s predicted %12lld  timeline %016llx  path %016llx  steps %zu%s\n", name.c_str(),
                    sets[s].name, (long long)r.predictedNs, (unsigned long long)h.h, (unsigned long long)hp.h,
                    r.path.steps.size(), bare.predictedNs == r.predictedNs ? "" : "  BARE-DIFFERS");
    }
}

}  // namespace

int main(int argc, char** argv)
{
    bool quick = false;
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0)
            quick = true;
        else
            files.emplace_back(argv[i]);
    }
    const std::string tmp = (std::filesystem::temp_directory_path()
                             / ("whatif_answers_" + std::to_string(::getpid()) + ".wstrace")).string();
    std::filesystem::remove(tmp);
    {
        auto st = TraceStore::openForWriting(tmp);
        for (SyntheticPattern pat : {SyntheticPattern::WarpSpecialized, SyntheticPattern::Pingpong, SyntheticPattern::Multistage}) {
            SyntheticParams sp;
            sp.pattern = pat;
            sp.targetIntervals = 200000;
            sp.stallSamples = false;
            st.writeRun(generateSynthetic(sp));
        }
    }
    {
        const TraceStore st = TraceStore::openReadOnly(tmp);
        for (const RunInfo& r : st.runs())
            for (const KernelLaunch& k : st.kernels(r.id))
                if (k.traced)
                    answer("synthetic " + r.variant, st.loadKernel(k.id), quick);
    }
    std::filesystem::remove(tmp);
    for (const std::string& f : files) {
        const TraceStore st = TraceStore::openReadOnly(f);
        for (const RunInfo& r : st.runs())
            for (const KernelLaunch& k : st.kernels(r.id))
                if (k.traced)
                    answer(std::filesystem::path(f).stem().string() + ":" + r.variant + ":" + std::to_string(k.id),
                           st.loadKernel(k.id), quick);
    }
    return 0;
}
