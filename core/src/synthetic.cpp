// Deterministic synthetic traces: a small discrete-event model of a GEMM
// pipeline per CTA (producer ring with slots, consumers waiting for data,
// MMA, release, epilogue), so that analysis and viewer see realistic shapes.
#include "warpstage/synthetic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>

namespace ws {

std::string_view syntheticPatternName(SyntheticPattern p)
{
    switch (p) {
    case SyntheticPattern::Sync: return "sync";
    case SyntheticPattern::Multistage: return "multistage";
    case SyntheticPattern::WarpSpecialized: return "warp_specialized";
    case SyntheticPattern::Pingpong: return "pingpong";
    }
    return "unknown";
}

namespace {

// splitmix64: tiny, portable, deterministic (std distributions are not portable).
struct Rng {
    std::uint64_t s;
    std::uint64_t next()
    {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    double uni() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
    // base * (1 + frac * u), u uniform in [-1, 1), at least 0
    TimeNs jit(double base, double frac) { return std::max<TimeNs>(0, std::llround(base * (1.0 + frac * (2.0 * uni() - 1.0)))); }
};

// Timing model (ns), roughly an H100-class SM on a 128x128x64 bf16 tile.
struct Timing {
    double setup = 250;
    double loadLatency = 650;   // TMA / cp.async latency (mostly L2 hits)
    double loadGap = 180;       // bandwidth: min spacing of load completions per CTA
    double issue = 25;          // issuing one k-step's loads
    double mmaIssue = 40;       // issuing the wgmmas of one k-step
    double mmaTile = 290;       // tensor-core time of one k-step (whole tile)
    double release = 8;
    double observe = 12;        // consumer sees the full barrier flip
    double syncBar = 20;
    double epilogue = 700;
    double store = 520;
};

struct CtaBuilder {
    KernelRecord& k;
    Rng& rng;
    int ctaLocal;
    RowId warpBase = 0;
    TimeNs end = 0;

    void emit(int localWarp, IntervalKind kind, TimeNs start, TimeNs dur, int slot = -1, int kstep = -1)
    {
        Interval iv;
        iv.warpId = warpBase + localWarp;
        iv.kind = kind;
        iv.slot = static_cast<std::int16_t>(slot);
        iv.kstep = kstep;
        iv.start = start;
        iv.duration = dur;
        k.intervals.push_back(iv);
        end = std::max(end, start + dur);
    }
    void load(int slot, int kstep, TimeNs issue, TimeNs ready)
    {
        LoadTransfer l;
        l.ctaId = ctaLocal;
        l.slot = static_cast<std::int16_t>(slot);
        l.kstep = kstep;
        l.issue = issue;
        l.ready = ready;
        l.bytes = (128 + 128) * 64 * 2;
        k.loads.push_back(l);
    }
    // Epilogue then store C on warps [from, to), each from its own clock in t; returns when the last one ends.
    TimeNs epilogueAndStore(std::vector<TimeNs>& t, int from, int to, double epilogueNs, double storeNs)
    {
        TimeNs tileEnd = 0;
        for (int w = from; w < to; ++w) {
            auto& tw = t[static_cast<std::size_t>(w)];
            const TimeNs de = rng.jit(epilogueNs, 0.1);
            emit(w, IntervalKind::Epilogue, tw, de);
            const TimeNs ds = rng.jit(storeNs, 0.15);
            emit(w, IntervalKind::Store, tw + de, ds);
            tw += de + ds;
            tileEnd = std::max(tileEnd, tw);
        }
        return tileEnd;
    }
};

std::int64_t intervalsPerTile(const SyntheticParams& p)
{
    const std::int64_t K = p.kstepsPerTile, C = p.consumerWarpgroups, W = 4 * C;
    switch (p.pattern) {
    case SyntheticPattern::Sync:
    case SyntheticPattern::Multistage: return W * (5 * K + 2);
    case SyntheticPattern::WarpSpecialized: return 2 * K + W * (4 * K + 2);
    case SyntheticPattern::Pingpong: return 2 * K + 4 * (4 * K + 3);
    }
    return 1;
}

struct StallRule {
    const char* reason;
    const char* label;
    double share;
};

std::vector<StallRule> stallRules(IntervalKind k)
{
    static const char* LS = "smsp__pcsamp_warps_issue_stalled_long_scoreboard";
    static const char* BAR = "smsp__pcsamp_warps_issue_stalled_barrier";
    static const char* MATH = "smsp__pcsamp_warps_issue_stalled_math_pipe_throttle";
    static const char* WAIT = "smsp__pcsamp_warps_issue_stalled_wait";
    static const char* SEL = "smsp__pcsamp_warps_issue_stalled_selected";
    static const char* LG = "smsp__pcsamp_warps_issue_stalled_lg_throttle";
    static const char* SLEEP = "smsp__pcsamp_warps_issue_stalled_sleeping";
    static const char* MEMBAR = "smsp__pcsamp_warps_issue_stalled_membar";
    switch (k) {
    case IntervalKind::WaitData:
    case IntervalKind::WaitSlot:
        return {{LS, "long scoreboard (mbarrier / global data)", 0.7}, {SLEEP, "sleeping (mbarrier try_wait)", 0.3}};
    case IntervalKind::Load: return {{LS, "long scoreboard (mbarrier / global data)", 0.85}, {LG, "LSU queue throttle", 0.15}};
    case IntervalKind::Sync:
    case IntervalKind::WaitOrder: return {{BAR, "CTA / named barrier", 1.0}};
    case IntervalKind::MmaIssue: return {{MATH, "math pipe throttle (tensor core busy)", 0.6}, {SEL, "selected (issuing)", 0.4}};
    case IntervalKind::MmaWait: return {{WAIT, "wait (wgmma.wait_group)", 0.8}, {MATH, "math pipe throttle (tensor core busy)", 0.2}};
    case IntervalKind::Release: return {{MEMBAR, "memory barrier (mbarrier arrive)", 1.0}};
    case IntervalKind::IssueLoad: return {{SEL, "selected (issuing)", 0.5}, {LG, "LSU queue throttle", 0.5}};
    case IntervalKind::Epilogue: return {{SEL, "selected (issuing)", 0.5}, {WAIT, "wait (fixed latency)", 0.5}};
    case IntervalKind::Store: return {{LG, "LSU queue throttle", 0.7}, {LS, "long scoreboard (mbarrier / global data)", 0.3}};
    default: return {{SEL, "selected (issuing)", 1.0}};
    }
}

}  // namespace

RunRecord generateSynthetic(const SyntheticParams& pin)
{
    SyntheticParams p = pin;
    p.smCount = std::max(1, p.smCount);
    p.ctas = std::max(1, p.ctas);
    p.consumerWarpgroups = std::clamp(p.consumerWarpgroups, 1, 3);
    p.stages = std::clamp(p.stages, 1, 16);
    p.kstepsPerTile = std::max(1, p.kstepsPerTile);
    if (p.targetIntervals > 0) {
        const double perTile = static_cast<double>(intervalsPerTile(p)) * p.ctas;
        p.tilesPerCta = std::max<int>(1, static_cast<int>(std::llround(static_cast<double>(p.targetIntervals) / perTile)));
    }
    p.tilesPerCta = std::max(1, p.tilesPerCta);

    // The problem shape follows the simulated work (so TFLOP/s is meaningful):
    // ctas * tilesPerCta output tiles of 128x128, K = 64 * kstepsPerTile.
    int shapeM = 0, shapeN = 0, shapeK = 0;
    {
        const std::int64_t tiles = static_cast<std::int64_t>(p.ctas) * p.tilesPerCta;
        std::int64_t tn = 1;
        for (std::int64_t d = 1; d * d <= tiles; ++d)
            if (tiles % d == 0)
                tn = d;
        shapeN = static_cast<int>(128 * tn);
        shapeM = static_cast<int>(128 * (tiles / tn));
        shapeK = 64 * p.kstepsPerTile;
    }
    Rng rng{p.seed * 0x2545F4914F6CDD1DULL + 17};
    const Timing T;
    const bool specialized = p.pattern == SyntheticPattern::WarpSpecialized || p.pattern == SyntheticPattern::Pingpong;
    const int C = p.consumerWarpgroups;
    const int warpsPerCta = specialized ? 4 * (1 + C) : 4 * C;
    const int K = p.kstepsPerTile;
    const int S = p.stages;
    const std::string variant(syntheticPatternName(p.pattern));

    RunRecord rec;
    RunInfo& info = rec.info;
    info.variant = variant;
    info.m = shapeM;
    info.n = shapeN;
    info.k = shapeK;
    info.synthetic = true;
    info.device.name = "Synthetic H100-like device";
    info.device.computeMajor = 9;
    info.device.computeMinor = 0;
    info.device.smCount = p.smCount;
    info.device.smClockKHz = 1755000;
    info.device.memClockKHz = 2619000;
    info.device.l2Bytes = 50LL << 20;
    info.device.globalMemBytes = 80LL << 30;
    info.driverVersion = "synthetic";
    info.cudaVersion = "synthetic";
    info.cuptiVersion = "synthetic";
    info.host = "synthetic";
    info.startedAt = "1970-01-01T00:00:00Z";
    info.commandLine = "ws::generateSynthetic(pattern=" + variant + ", ctas=" + std::to_string(p.ctas)
        + ", sms=" + std::to_string(p.smCount) + ", tilesPerCta=" + std::to_string(p.tilesPerCta)
        + ", ksteps=" + std::to_string(K) + ", stages=" + std::to_string(S) + ", seed=" + std::to_string(p.seed) + ")";
    info.notes = "SYNTHETIC trace generated by Warpstage's model, not recorded on a GPU.";
    info.hasTimeline = true;
    info.hasStalls = p.stallSamples;

    const TimeNs memcpyBytes = static_cast<TimeNs>(shapeM) * shapeK * 2;
    MemOp a;
    a.kind = MemOpKind::HtoD;
    a.bytes = memcpyBytes;
    a.start = p.kernelStart - 400'000;
    a.end = a.start + 150'000;
    rec.memOps.push_back(a);
    MemOp b = a;
    b.bytes = static_cast<TimeNs>(shapeN) * shapeK * 2;
    b.start = a.end + 10'000;
    b.end = b.start + 150'000;
    rec.memOps.push_back(b);

    KernelRecord kr;
    KernelLaunch& L = kr.launch;
    L.name = "ws_gemm_" + variant + "_bf16(synthetic)";
    L.variant = variant;
    L.traced = true;
    L.grid[0] = p.ctas;
    L.block[0] = 32 * warpsPerCta;
    L.dynamicSmemBytes = S * (128 + 128) * 64 * 2;
    L.registersPerThread = specialized ? 168 : 128;
    L.start = p.kernelStart;
    L.correlationId = 1;
    L.streamId = 7;
    kr.intervals.reserve(static_cast<std::size_t>(intervalsPerTile(p) * p.tilesPerCta * p.ctas
                                                  + static_cast<std::int64_t>(warpsPerCta) * p.ctas));

    const int tilesN = std::max(1, shapeN / 128), tilesM = std::max(1, shapeM / 128);
    std::vector<TimeNs> smFree(static_cast<std::size_t>(p.smCount), p.kernelStart);
    const int F = p.tilesPerCta * K;
    std::vector<TimeNs> ready(static_cast<std::size_t>(F)), released(static_cast<std::size_t>(F));

    for (int c = 0; c < p.ctas; ++c) {
        const int sm = c % p.smCount;
        const bool firstWave = c < p.smCount;
        const TimeNs ctaStart = smFree[static_cast<std::size_t>(sm)] + (firstWave ? rng.jit(600, 0.6) : rng.jit(250, 0.3));
        const double speed = 1.0 + 0.06 * (rng.uni() - 0.5);  // per-CTA (SM) speed

        Cta cta;
        cta.blockLinear = c;
        cta.smId = sm;
        cta.start = ctaStart;
        cta.nsPerCycle = 1e6 / info.device.smClockKHz;
        const int firstTile = c;
        cta.tileM = (firstTile / tilesN) % tilesM;
        cta.tileN = firstTile % tilesN;
        kr.ctas.push_back(cta);

        CtaBuilder cb{kr, rng, c, static_cast<RowId>(kr.warps.size())};
        for (int w = 0; w < warpsPerCta; ++w) {
            Warp wp;
            wp.ctaId = c;
            wp.warpIndex = w;
            wp.warpgroup = w / 4;
            if (specialized) {
                if (w == 0) {
                    wp.role = WarpRole::Producer;
                    wp.roleName = "producer";
                } else if (w < 4) {
                    wp.role = WarpRole::Idle;
                    wp.roleName = "idle";
                } else {
                    wp.role = WarpRole::Consumer;
                    wp.roleName = "consumer WG" + std::to_string(w / 4);
                }
            } else {
                wp.role = WarpRole::Worker;
                wp.roleName = "worker WG" + std::to_string(w / 4);
            }
            kr.warps.push_back(wp);
        }
        std::vector<TimeNs> t(static_cast<std::size_t>(warpsPerCta));
        for (int w = 0; w < warpsPerCta; ++w) {
            const TimeNs s = ctaStart + rng.jit(15, 1.0);
            const TimeNs d = rng.jit(T.setup, 0.2);
            cb.emit(w, IntervalKind::Setup, s, d);
            t[static_cast<std::size_t>(w)] = s + d;
        }
        auto tileCoord = [&](int i, int& tm, int& tn) {
            const int tile = firstTile + i * p.ctas;
            tm = (tile / tilesN) % tilesM;
            tn = tile % tilesN;
        };
        auto addTile = [&](int i, RowId warp, TimeNs s, TimeNs e) {
            TileSpan ts;
            ts.ctaId = c;
            ts.warpId = warp;
            tileCoord(i, ts.tileM, ts.tileN);
            ts.start = s;
            ts.end = e;
            kr.tiles.push_back(ts);
        };
        TimeNs lastReady = 0;
        // cp.async (multistage) goes through the LSU and registers: longer latency, less bandwidth than TMA.
        const double latF = p.pattern == SyntheticPattern::Multistage ? 1.7 : 1.0;
        const double gapF = p.pattern == SyntheticPattern::Multistage ? 1.6 : 1.0;
        auto loadReady = [&](TimeNs issueAt) {
            const TimeNs r = std::max(issueAt + rng.jit(T.loadLatency * latF * speed, 0.25), lastReady + rng.jit(T.loadGap * gapF, 0.2));
            lastReady = r;
            return r;
        };

        if (specialized) {
            TimeNs& pt = t[0];
            const bool pingpong = p.pattern == SyntheticPattern::Pingpong;
            TimeNs mathFree = 0;
            std::vector<TimeNs> tileStart(static_cast<std::size_t>(C), 0);
            for (int f = 0; f < F; ++f) {
                const int slot = f % S;
                // producer
                const TimeNs freeAt = f >= S ? released[static_cast<std::size_t>(f - S)] : 0;
                const TimeNs we = std::max(pt, freeAt);
                cb.emit(0, IntervalKind::WaitSlot, pt, we - pt, slot, f);
                const TimeNs di = rng.jit(T.issue, 0.2);
                cb.emit(0, IntervalKind::IssueLoad, we, di, slot, f);
                const TimeNs r = loadReady(we + di / 2);
                cb.load(slot, f, we + di / 2, r);
                ready[static_cast<std::size_t>(f)] = r;
                pt = we + di;

                // consumers
                const int tile = f / K;
                const bool tileBegin = f % K == 0, tileEnd = f % K == K - 1;
                const int g0 = pingpong ? tile % C : 0, g1 = pingpong ? g0 + 1 : C;
                TimeNs relMax = 0;
                for (int g = g0; g < g1; ++g) {
                    const int wb = 4 * (g + 1);
                    if (pingpong && tileBegin) {  // wait for the other warpgroup's mainloop to finish
                        TimeNs grpStart = 0;
                        for (int w = wb; w < wb + 4; ++w)
                            grpStart = std::max(grpStart, t[static_cast<std::size_t>(w)]);
                        const TimeNs go = std::max(grpStart, mathFree);
                        for (int w = wb; w < wb + 4; ++w) {
                            auto& tw = t[static_cast<std::size_t>(w)];
                            cb.emit(w, IntervalKind::WaitOrder, tw, go - tw);
                            tw = go;
                        }
                    }
                    if (tileBegin)
                        tileStart[static_cast<std::size_t>(g)] = t[static_cast<std::size_t>(wb)];
                    // warpgroup-wide wgmma: starts when all 4 warps saw the data
                    TimeNs mmaStart = 0;
                    for (int w = wb; w < wb + 4; ++w)
                        mmaStart = std::max({mmaStart, t[static_cast<std::size_t>(w)], r + rng.jit(T.observe, 0.5)});
                    const double mmaNs = T.mmaTile * speed;  // cooperative: each WG half a tile; ping-pong: one WG, whole tile, alone
                    for (int w = wb; w < wb + 4; ++w) {
                        auto& tw = t[static_cast<std::size_t>(w)];
                        cb.emit(w, IntervalKind::WaitData, tw, mmaStart - tw, slot, f);
                        const TimeNs di2 = rng.jit(T.mmaIssue, 0.2);
                        cb.emit(w, IntervalKind::MmaIssue, mmaStart, di2, slot, f);
                        const TimeNs dw = std::max<TimeNs>(0, rng.jit(mmaNs, 0.05) - di2);
                        cb.emit(w, IntervalKind::MmaWait, mmaStart + di2, dw, slot, f);
                        const TimeNs rs = mmaStart + di2 + dw;
                        const TimeNs dr = rng.jit(T.release, 0.3);
                        cb.emit(w, IntervalKind::Release, rs, dr, slot, f);
                        tw = rs + dr;
                        relMax = std::max(relMax, tw);
                    }
                    if (tileEnd) {
                        TimeNs mathEnd = 0;
                        for (int w = wb; w < wb + 4; ++w)
                            mathEnd = std::max(mathEnd, t[static_cast<std::size_t>(w)]);
                        mathFree = mathEnd;
                        const TimeNs tileEndT = cb.epilogueAndStore(t, wb, wb + 4, T.epilogue, T.store);
                        if (pingpong)
                            addTile(tile, cb.warpBase + wb, tileStart[static_cast<std::size_t>(g)], tileEndT);
                        else if (g == C - 1)
                            addTile(tile, -1, tileStart[0], tileEndT);
                    }
                }
                released[static_cast<std::size_t>(f)] = relMax;
            }
        } else {
            const int W = warpsPerCta;
            const bool multistage = p.pattern == SyntheticPattern::Multistage;
            TimeNs tileT0 = 0;
            auto barrier = [&](int f, int slot) {
                TimeNs arrive = 0;
                for (int w = 0; w < W; ++w)
                    arrive = std::max(arrive, t[static_cast<std::size_t>(w)]);
                const TimeNs go = arrive + rng.jit(T.syncBar, 0.3);
                for (int w = 0; w < W; ++w) {
                    auto& tw = t[static_cast<std::size_t>(w)];
                    cb.emit(w, IntervalKind::Sync, tw, go - tw, slot, f);
                    tw = go;
                }
            };
            auto issueAll = [&](int fl) {  // every worker issues its part of k-step fl's cp.async
                TimeNs issueAt = 0;
                for (int w = 0; w < W; ++w) {
                    auto& tw = t[static_cast<std::size_t>(w)];
                    const TimeNs d = rng.jit(T.issue, 0.3);
                    cb.emit(w, IntervalKind::IssueLoad, tw, d, fl % S, fl);
                    tw += d;
                    issueAt = std::max(issueAt, tw);
                }
                const TimeNs r = loadReady(issueAt);
                cb.load(fl % S, fl, issueAt, r);
                ready[static_cast<std::size_t>(fl)] = r;
            };
            if (multistage)
                for (int fl = 0; fl < std::min(S - 1, F); ++fl)
                    issueAll(fl);
            for (int f = 0; f < F; ++f) {
                const int slot = multistage ? f % S : 0;
                if (f % K == 0)
                    tileT0 = t[0];
                if (multistage) {
                    for (int w = 0; w < W; ++w) {
                        auto& tw = t[static_cast<std::size_t>(w)];
                        const TimeNs s = std::max(tw, ready[static_cast<std::size_t>(f)] + rng.jit(T.observe, 0.5));
                        cb.emit(w, IntervalKind::WaitData, tw, s - tw, slot, f);
                        tw = s;
                    }
                    barrier(f, slot);
                    if (f + S - 1 < F)
                        issueAll(f + S - 1);
                } else {
                    TimeNs issueAt = 0, readyAt = 0;
                    for (int w = 0; w < W; ++w) {
                        auto& tw = t[static_cast<std::size_t>(w)];
                        const TimeNs d = rng.jit(T.loadLatency * speed + T.loadGap, 0.2);
                        cb.emit(w, IntervalKind::Load, tw, d, slot, f);
                        issueAt = std::max(issueAt, tw);
                        tw += d;
                        readyAt = std::max(readyAt, tw);
                    }
                    cb.load(slot, f, issueAt, readyAt);
                    barrier(f, slot);
                }
                const double mmaNs = T.mmaTile * speed * (multistage ? 1.15 : 1.25);  // mma.sync is slower than wgmma
                for (int w = 0; w < W; ++w) {
                    auto& tw = t[static_cast<std::size_t>(w)];
                    const TimeNs di = rng.jit(T.mmaIssue, 0.2);
                    cb.emit(w, IntervalKind::MmaIssue, tw, di, slot, f);
                    const TimeNs dw = std::max<TimeNs>(0, rng.jit(mmaNs, 0.05) - di);
                    cb.emit(w, IntervalKind::MmaWait, tw + di, dw, slot, f);
                    tw += di + dw;
                }
                if (!multistage)
                    barrier(f, slot);
                if (f % K == K - 1) {
                    const TimeNs tileEndT = cb.epilogueAndStore(t, 0, W, T.epilogue, T.store);
                    addTile(f / K, -1, tileT0, tileEndT);
                }
            }
        }
        Cta& back = kr.ctas.back();
        back.end = cb.end + rng.jit(40, 0.5);
        smFree[static_cast<std::size_t>(sm)] = back.end;
    }
    TimeNs kEnd = L.start;
    for (const Cta& c : kr.ctas)
        kEnd = std::max(kEnd, c.end);
    L.end = kEnd + 1200;

    MemOp cOut;
    cOut.kind = MemOpKind::DtoH;
    cOut.bytes = static_cast<TimeNs>(shapeM) * shapeN * 2;
    cOut.start = L.end + 20'000;
    cOut.end = cOut.start + 200'000;
    cOut.correlationId = 3;
    rec.memOps.push_back(cOut);
    rec.memOps[0].correlationId = 0;

    rec.kernels.push_back(std::move(kr));

    if (p.stallSamples) {
        // An untraced launch of the same rung with PC-sampling results whose
        // mix follows the traced timeline (warp-time per role and kind).
        const KernelRecord& traced = rec.kernels.front();
        std::map<std::pair<int, int>, double> timeByRoleKind;
        double totalTime = 0;
        for (const Interval& iv : traced.intervals) {
            const WarpRole role = traced.warps[static_cast<std::size_t>(iv.warpId)].role;
            timeByRoleKind[{static_cast<int>(role), static_cast<int>(iv.kind)}] += static_cast<double>(iv.duration);
            totalTime += static_cast<double>(iv.duration);
        }
        KernelRecord un;
        un.launch = traced.launch;
        un.launch.traced = false;
        un.launch.name = "ws_gemm_" + variant + "_bf16";
        un.launch.start = L.end + 500'000;
        un.launch.end = un.launch.start + (L.end - L.start) * 97 / 100;  // no tracing overhead
        un.launch.correlationId = 2;
        const double totalSamples = 200'000;
        std::uint64_t pc = 0x400;
        int line = 100;
        for (const auto& [key, ns] : timeByRoleKind) {
            const auto role = static_cast<WarpRole>(key.first);
            const auto kind = static_cast<IntervalKind>(key.second);
            for (const StallRule& r : stallRules(kind)) {
                const auto n = static_cast<std::int64_t>(std::llround(totalSamples * ns / std::max(1.0, totalTime) * r.share));
                if (n <= 0)
                    continue;
                StallSample s;
                s.pcOffset = pc;
                s.functionName = un.launch.name;
                s.sourceFile = "synthetic/" + variant + ".cu";
                s.line = line;
                s.reason = r.reason;
                s.reasonLabel = r.label;
                s.count = n;
                s.role = role;
                s.stage = std::string(intervalKindName(kind));
                un.stalls.push_back(s);
                pc += 0x10 + 0x10 * (rng.next() % 4);
            }
            line += 3;
        }
        rec.kernels.push_back(std::move(un));
    }
    return rec;
}

}  // namespace ws
