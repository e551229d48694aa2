// warpstage-trace-subset: copies a Warpstage file keeping, in every traced kernel, only the
// CTAs that ran on the chosen SMs (or the chosen CTAs). Runs, device info, untraced launches,
// stall samples and memory operations are copied unchanged; metrics are recomputed; each
// run's notes say what was dropped. CUDA-free: used to make a recording small enough to
// bundle (resources/samples) without re-recording on the GPU.
//
//   warpstage-trace-subset IN OUT --sms 0-31
//   warpstage-trace-subset IN OUT --ctas 0-99
#include "warpstage/analysis.h"
#include "warpstage/decode.h"
#include "warpstage/store.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <sys/stat.h>

using namespace ws;

namespace {

KernelRecord subsetKernel(const TraceStore& in, const KernelLaunch& k, const std::set<int>& sms, const std::set<int>& ctas,
                          int& keptCtas, int& allCtas)
{
    KernelRecord r;
    r.launch = k;
    r.launch.id = 0;
    r.launch.runId = 0;
    if (!k.traced) {
        r.stalls = in.stallSamples(k.id);
        return r;
    }
    const KernelTrace t = in.loadKernel(k.id);
    r.stalls = in.stallSamples(k.id);
    std::map<int, RowId> ctaMap;  // old index -> new local id
    for (std::size_t i = 0; i < t.ctas.size(); ++i) {
        const Cta& c = t.ctas[i];
        ++allCtas;
        if (!sms.empty() && !sms.count(c.smId)) continue;
        if (!ctas.empty() && !ctas.count(c.blockLinear)) continue;
        Cta n = c;
        n.id = RowId(r.ctas.size());
        n.kernelId = 0;
        ctaMap[int(i)] = n.id;
        r.ctas.push_back(n);
        ++keptCtas;
    }
    std::map<RowId, RowId> warpMap;  // old warp row id -> new local id
    for (const Lane& lane : t.lanes) {
        auto it = ctaMap.find(lane.ctaIndex);
        if (it == ctaMap.end()) continue;
        Warp w;
        w.id = RowId(r.warps.size());
        w.ctaId = it->second;
        w.warpIndex = lane.warpIndex;
        w.warpgroup = lane.warpgroup;
        w.role = lane.role;
        w.roleName = lane.roleName;
        warpMap[lane.warpId] = w.id;
        r.warps.push_back(w);
        for (std::size_t i = 0; i < lane.size(); ++i) {
            Interval iv;
            iv.warpId = w.id;
            iv.kind = lane.kind[i];
            iv.slot = lane.slot[i];
            iv.kstep = lane.kstep[i];
            iv.start = lane.start[i];
            iv.duration = lane.duration[i];
            r.intervals.push_back(iv);
        }
    }
    for (const TileSpan& x : t.tiles) {
        auto it = ctaMap.find(int(x.ctaId));
        if (it == ctaMap.end()) continue;
        TileSpan n = x;
        n.ctaId = it->second;
        auto w = warpMap.find(x.warpId);
        n.warpId = w == warpMap.end() ? 0 : w->second;
        r.tiles.push_back(n);
    }
    for (const LoadTransfer& l : t.loads) {
        auto it = ctaMap.find(int(l.ctaId));
        if (it == ctaMap.end()) continue;
        LoadTransfer n = l;
        n.ctaId = it->second;
        r.loads.push_back(n);
    }
    return r;
}

int usage(const char* why)
{
    std::fprintf(stderr, "warpstage-trace-subset: %s\nUsage: warpstage-trace-subset IN OUT (--sms LIST | --ctas LIST)\n", why);
    return 2;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 5) return usage("missing arguments");
    const std::string inPath = argv[1], outPath = argv[2];
    std::set<int> sms, ctas;
    std::string what;
    try {
        for (int i = 3; i + 1 < argc; i += 2) {
            const std::string k = argv[i];
            const auto list = decode::parseIndexList(argv[i + 1]);
            if (k == "--sms") sms.insert(list.begin(), list.end());
            else if (k == "--ctas") ctas.insert(list.begin(), list.end());
            else return usage(("unknown option " + k).c_str());
            what += (what.empty() ? "" : " ") + k + " " + argv[i + 1];
        }
    } catch (const std::exception& e) {
        return usage(e.what());
    }
    struct stat st{};
    if (::stat(outPath.c_str(), &st) == 0) return usage((outPath + " exists; choose a new file").c_str());
    try {
        const TraceStore in = TraceStore::openReadOnly(inPath);
        TraceStore out = TraceStore::openForWriting(outPath);
        for (const RunInfo& info : in.runs()) {
            RunRecord run;
            run.info = info;
            run.info.id = 0;
            run.memOps = in.memOps(info.id);
            int kept = 0, all = 0;
            for (const KernelLaunch& k : in.kernels(info.id)) run.kernels.push_back(subsetKernel(in, k, sms, ctas, kept, all));
            run.info.notes += (run.info.notes.empty() ? "" : "\n") + std::string("subset: kept ") + std::to_string(kept) + " of "
                + std::to_string(all) + " CTAs of the traced launch(es) (warpstage-trace-subset " + what + ")";
            const RowId id = out.writeRun(run);
            out.writeMetrics(id, computeRunMetrics(out, id));
            std::printf("run %lld %s: kept %d of %d CTAs\n", static_cast<long long>(id), info.variant.c_str(), kept, all);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "warpstage-trace-subset: %s\n", e.what());
        return 1;
    }
    return 0;
}
