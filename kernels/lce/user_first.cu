// Rung 4 -- rung 3 + the user stage (since session 5's third pass): rung 3's epilogue-warp kernel (lce_body.cuh,
// the same body) with the user GEMM U = W_user . E_user folded in -- ONE persistent launch, no cuBLAS user GEMM.
// The user tiles are the first units of the walk and go through the staging like the candidate tiles: the epilogue
// warp TMA-stores a user tile's half into U, waits until the stores are complete and releases the half's ready flag
// (storeHalfPublish); the epilogue warp of a candidate tile acquires the flag (waitOrderFlag) before it TMA-loads U's
// tile into the staging half -- one tile ahead of its consumers, so the wait hides under their mainloop. Flags hold
// the launch's epoch (nextFlagEpoch: never reset).
// The user-first walk's kernel is lce_body.cuh's kRung4UserFirst: each staging half in two pieces, the 28 KB this
// frees as a 4th ring stage (rung 3 keeps whole halves and 3 stages: with the pieces in both rungs rung 3 led rung 4,
// docs/kernel-notes/lce.md, "s11-lce4"), a user tile's two halves published under one store completion wait.
// Per shape (s11-lceuser): with few candidates per user (lce_shape.h: rung4Broadcast) the rung takes the broadcast
// walk instead (kRung4Broadcast: a user tile and its candidates' tiles on one CTA pair, U in the consumers'
// registers, a 4th ring stage) -- the user-first walk's user stage ran 15 % slower than cuBLAS's user GEMM there
// (lce --user-stage), so with 2 candidates per user rung 4 lost to rung 3 (docs/kernel-notes/lce.md, s11-lceuser).
// Switches (lce_shape.h): LCE_TVAR / LCE_TVAR_B / LCE_R4UF pick the configuration; diagnostic (output wrong, timing
// only): LCE_RUNG4_EPILOGUE=tnone / tnone4 (s8-lcespeed: the main loop alone, transposed_probe.cu, 3 / 4 stages).
// History: session 5's ping-pong rung 4 (persistent.cu) was removed in session 6; sessions 5-8's tiles of 128 (M) x
// 256 (N) (epiwarp_kernel.cuh, with the diagnostics none / none4 / noload) were replaced by the transposed body in
// s9-lcet (docs/kernel-notes.md).
// Instrumented: warpstage-record --kernels lceUserFirst -- lce --rung 4 --time
#include <warpstage/trace.cuh>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "lce_body.cuh"

namespace ws::lce {
namespace body {

template <int S, int V>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads, 1)
    lceUserFirst(const __grid_constant__ CUtensorMap tmWu, const __grid_constant__ CUtensorMap tmEu,
                 const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                 const __grid_constant__ CUtensorMap tmU, const __grid_constant__ CUtensorMap tmOut,
                 const int32_t* __restrict__ userOf, int* __restrict__ flags, const Params p)
{
    body<S, true, V>(tmWu, tmEu, tmWc, tmEc, tmU, tmOut, userOf, flags, p);
}
// The same kernel compiled without its trace (s15-lceuntraced): what rung 4 launches unless traceLaunches().
template <int S, int V>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads, 1)
    lceUserFirstUntraced(const __grid_constant__ CUtensorMap tmWu, const __grid_constant__ CUtensorMap tmEu,
                         const __grid_constant__ CUtensorMap tmWc, const __grid_constant__ CUtensorMap tmEc,
                         const __grid_constant__ CUtensorMap tmU, const __grid_constant__ CUtensorMap tmOut,
                         const int32_t* __restrict__ userOf, int* __restrict__ flags, const Params p)
{
    body<S, true, V, false>(tmWu, tmEu, tmWc, tmEc, tmU, tmOut, userOf, flags, p);
}
namespace {
template <int S, int V, bool Traced>
constexpr auto kernel4()
{
    if constexpr (Traced) return lceUserFirst<S, V>;
    else return lceUserFirstUntraced<S, V>;
}
// CTA pairs of the kernel resident at once (0 and a sentence in err if the runtime cannot tell; asked once).
template <int S, int V, bool Traced = true>
int pairs4(std::string& err)
{
    static int n = 0;
    if (n == 0)
        n = residentPairs(reinterpret_cast<const void*>(kernel4<S, V, Traced>()),
                          int(PlanOf<S, V>::bytes(true, kWarps)), err);
    return n;
}

// What launch4 prepares for a problem: the tensor maps, the grid and the walk's parameters (all but the epoch).
struct Prepared {
    LaunchKey key;
    Maps m;
    unsigned grid = 0;
    Params q{};
};
template <int S, int V, bool Traced>
std::string prepare4(const Problem& p, Prepared& r)
{
    const Shape& s = p.s;
    std::string err = encodeMaps(p, true, variantOf(V), r.m);
    if (!err.empty()) return "rung 4 (user first): " + err;
    constexpr bool bcast = variantOf(V).broadcast;  // the broadcast walk (lce_shape.h)
    if (bcast && s.shuffled)
        return "rung 4 (user first): the broadcast walk needs each user's candidates contiguous (not shuffled)";
    const UserFirstWalk walk = userFirstWalk(s, 1, bcast);  // lce_shape.cpp: tiles, units, flags (clusters below)
    if (walk.flags > lceFlagCount(s))
        return "rung 4 (user first): the driver allocated too few ready flags for this shape";
    if (walk.units > 2147483647LL) return "rung 4 (user first): too many tiles for 32-bit unit numbers";
    const int maxClusters = pairs4<S, V, Traced>(err);
    if (maxClusters <= 0)  // the ready flags need every CTA pair resident
        return "rung 4 (user first): " + err + " (it needs all of them resident)";
    const UserFirstWalk w = userFirstWalk(s, maxClusters, bcast);
    r.q = paramsOf(p, true, w);
    r.grid = unsigned(w.clusters * 2);
    r.key = launchKeyOf(p);
    return {};
}

template <int S, int V, bool Traced>
std::string launch4(Problem& p)
{
    const auto kern = kernel4<S, V, Traced>();
    const int smem = int(PlanOf<S, V>::bytes(true, kWarps));
    static_assert(PlanOf<S, V>::bytes(true, kWarps) <= 227 * 1024, "the traced build must fit in shared memory");
    // Prepared once per problem (s15-lcebody: a call then costs the launch alone; it encoded six tensor maps and
    // recomputed the walk every call before: ~1 us of host time per call, capi_host_cost.py on the H200), again
    // whenever the problem's buffers or shape differ from the last call's (launchKeyOf). Per host thread (lce_capi.h:
    // one thread per problem, so threads with problems of their own must not share one cache).
    thread_local Prepared last;
    thread_local bool valid = false;
    if (!valid || !(launchKeyOf(p) == last.key)) {
        valid = false;
        const std::string err = prepare4<S, V, Traced>(p, last);
        if (!err.empty()) return err;
        valid = true;
    }
    constexpr bool bcast = variantOf(V).broadcast;
    Params q = last.q;
    q.epoch = nextFlagEpoch();
    if (!bcast && userStageOnly()) q.units = q.userUnits;  // lce --user-stage: the user units alone (diagnostic)
    const Maps& m = last.m;
    kern<<<last.grid, kThreads, smem, p.stream>>>(m.wUser, m.eUser, m.wCand, m.eCand, m.u, m.out, p.userOf, p.flags,
                                                  q);
    p.lastKernel = reinterpret_cast<const void*>(kern);
    p.lastGrid = last.grid;
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return std::string("rung 4 (user first) launch: ") + cudaGetErrorString(e);
    return {};
}
template <int S, int V>
std::string launch4(Problem& p)
{
    return traceLaunches() ? launch4<S, V, true>(p) : launch4<S, V, false>(p);
}
}  // namespace
}  // namespace body

bool& userStageOnly()
{
    static bool only = false;
    return only;
}

std::string runUserFirst(Problem& p)
{
    static const int diag = [] {  // 0: the rung; 1, 2: the main loop alone (transposed_probe.cu), 3 / 4 stages
        const char* e = std::getenv("LCE_RUNG4_EPILOGUE");
        const int v = !e                         ? 0
                      : std::strcmp(e, "tnone") == 0  ? 1
                      : std::strcmp(e, "tnone4") == 0 ? 2
                                                      : 0;
        if (v) std::fprintf(stderr, "lce: rung 4 variant %s: no epilogue (output wrong, timing only)\n", e);
        else if (e && *e)  // (as LCE_R4UF: said once, the rung runs as built)
            std::fprintf(stderr, "lce: LCE_RUNG4_EPILOGUE=%s is not a diagnostic (tnone, tnone4); rung 4 runs as built\n", e);
        return v;
    }();
    if (diag) return runTransposedProbe(p, diag == 2 ? 4 : 3);
    // The configuration asked for (LCE_TVAR, or LCE_TVAR_B's launches) if it is rung 4's, else the walk per shape: the
    // broadcast walk where rung4Broadcast says so, the user-first walk (LCE_R4UF's configuration if set) elsewhere.
    // The broadcast walk needs each user's candidates contiguous and is not what --user-stage measures (the
    // user-first walk's user units): there the user-first walk runs instead.
    constexpr int kBcast = kRung4BroadcastConfig;
    std::string err;  // (no pairs: no broadcast walk; the user-first walk's launch reports its own)
    const int pairs = body::pairs4<body::variantOf(kBcast).stages, kBcast>(err);
    static const int uf = [] {
        const char* e = std::getenv("LCE_R4UF");
        int c = kRung4UserFirstConfig;
        if (!e) return c;
        const std::string bad = parseConfigSwitch("LCE_R4UF", e, c);  // (the driver's option parser refuses it)
        if (!bad.empty()) std::fprintf(stderr, "lce: %s; rung 4 runs configuration %d\n", bad.c_str(), c);
        return c;
    }();
    const int asked = body::variantAsked();
    const ConfigKind k = configKind(asked);
    int v = k == ConfigKind::Rung4Broadcast || k == ConfigKind::Rung4UserFirst ? asked
            : rung4Broadcast(p.s, pairs)                                       ? kBcast
                                                                               : uf;
    if (v == kBcast && (p.s.shuffled || userStageOnly())) v = uf;
    switch (v) {
    case kBcast: return body::launch4<body::variantOf(kBcast).stages, kBcast>(p);
    default: return body::launch4<body::variantOf(kRung4UserFirstConfig).stages, kRung4UserFirstConfig>(p);
    }
}

}  // namespace ws::lce
