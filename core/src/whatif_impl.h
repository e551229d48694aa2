// Internal: the dependency graph of a traced kernel (whatif_graph.cpp), its replay (whatif_replay.cpp) and the
// critical path walk (critpath.cpp). Not installed.
#pragma once

#include "warpstage/critpath.h"
#include "warpstage/whatif.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace ws {

// Collective: a warp's MmaIssue of fill k ends after the last warp of its warpgroup arrived (wgmma is
// warpgroup-collective); its groups share the Sync group arrays.
// Handoff: a dedicated epilogue warp's wait for a consumer warpgroup's hand-off ends after the start of the last
// warp's Epilogue of that tile (whatif_epiwarp.cpp).
// Flag: a wait on a ready flag that ANOTHER CTA publishes (lce rung 4's user tiles, whatif_flags.cpp); depArg = the
// flag edge, its dependency the publisher's replayed time, relative to the waiting CTA's start (Replay::flagDep).
enum class DepKind : std::uint8_t { None = 0, Data = 1, Slot = 2, Sync = 3, Order = 4, Collective = 5, Handoff = 6,
                                    Flag = 7 };

// Replay state of one predict() call.
struct Replay {
    std::vector<std::int64_t> st, en;       // item start / end, relative to its CTA's start
    std::vector<std::uint8_t> bound;        // 1: the item's end was set by its dependency
    std::vector<std::int32_t> clockFrom;    // the item of the lane whose end the item's start follows, -1: CTA start
    std::vector<std::int64_t> ctaStart, ctaEnd, ctaMainStart, ctaMainEnd;
    std::vector<std::int64_t> ctaDur, ctaFirstFlight;  // the CTA's replayed length; its first load's flight
    std::vector<std::int32_t> ctaPred;      // the CTA whose end (or main loop end) started this one, -1
    std::vector<std::uint8_t> ctaPersistentChain; // started by the persistent rule
    std::vector<std::int64_t> ctaStartBase; // the time the CTA's start was derived from (pred or launch)
    std::vector<std::int32_t> ctaSm;        // SM the CTA runs on in this replay
    TimeNs kernelEnd = 0;
    int stages = 0;
    int issueShift = 0;                     // worker kernels: fills issued this many earlier
    double fLoad = 1, fMma = 1, fEpi = 1;
    bool overlapEpilogue = false;
    bool dropSync = false;
    bool producerWarp = false;              // worker kernels: IssueLoad no longer holds its warp
    std::vector<double> mmaFactor;          // per MMA group: stretch by the SM's tensor-core demand; empty: none
    const std::atomic<bool>* cancel = nullptr;  // predict()'s cancel flag, null: none
    // Cross-CTA rounds (whatif_flags.cpp, whatif_bandwidth.cpp): per flag edge the publisher's time relative to the
    // waiting CTA's start; per fill (kstep table) the flight's stretch by the SM's load bandwidth (empty: none).
    std::vector<std::int64_t> flagDep;
    std::vector<double> loadStretch;

    // Working arrays of the resource rounds (whatif_resources.cpp), kept between calls like st / en.
    struct Rounds {
        std::vector<std::int64_t> gs, ge;         // MMA group spans (absolute)
        std::vector<std::int64_t> ga, gb;         // ... relative to the group's CTA start
        std::vector<std::int32_t> gsm;
        std::vector<double> demand, next;
        std::vector<std::uint8_t> redo;
        std::vector<double> lastF, lastT;         // per group: the previous round's stretch and its target (secant)
    } rounds;
    int resourceRounds = 0;                 // replays of the tensor cores' rounds in this prediction
    // The predicted timeline's working arrays (whatif_timeline.cpp), kept between calls: fresh pages cost faults.
    std::vector<std::int32_t> timelineIndex;               // per item its index in the predicted lane, -1: dropped
    std::vector<std::vector<LoadTransfer>> timelineLoads;  // per thread its CTAs' loads
};

// The replay's per-phase constants packed into one record (whatif_replay.cpp, packReplayItems): the inner loop
// reads one record per phase instead of eleven arrays (docs/benchmarks.md, s8-wispeed). Times are 32-bit (a 32-byte
// record) when every phase's fit, 64-bit (48 bytes) otherwise. Derived from the Impl's item arrays, which stay the
// source of truth (the graph build and the critical path walk use those).
template <class Time>
struct ReplayItemT {
    Time gap;              // itemGap
    Time dur;              // itemDur
    Time lag;              // itemLag
    Time minDur;           // itemMinDur
    std::int32_t depArg;   // itemDepArg
    std::int32_t kstep;    // itemKstep
    std::int32_t mmaGroup; // itemMmaGroup
    DepKind dep;           // itemDep
    std::uint8_t durClass; // how the duration scales: ReplayDur
    std::uint8_t flags;    // ReplayFlag bits
    std::uint8_t pad = 0;
};
using ReplayItem = ReplayItemT<std::int64_t>;
using ReplayItem32 = ReplayItemT<std::int32_t>;
enum ReplayDur : std::uint8_t { kDurPlain = 0, kDurMma, kDurIssueLoad, kDurEpilogue, kDurLoad, kDurSync };
enum ReplayFlag : std::uint8_t { kFlagLaterMma = 1, kFlagMmaLike = 2, kFlagEpilogue = 4 };

struct WhatIfModel::Impl {
    KernelTrace trace;                      // the recorded kernel (a copy: the model outlives the caller's)

    // Nodes ("items"): one per interval, plus a zero-length WaitSlot before a producer's IssueLoad that has
    // none. Items of a lane are contiguous and in program order; lanes of a CTA are contiguous.
    std::vector<std::int32_t> itemLane;
    std::vector<std::int32_t> itemInterval; // index in the lane's arrays, -1 for an inserted wait
    std::vector<IntervalKind> itemKind;
    std::vector<std::int32_t> itemKstep;
    std::vector<std::int64_t> itemGap;      // recorded start - previous item's end (first: - CTA start)
    std::vector<std::int64_t> itemDur;      // recorded duration
    std::vector<DepKind> itemDep;
    std::vector<std::int32_t> itemDepArg;   // Data: load index (per CTA table); Sync: group; Order: item
    std::vector<std::int64_t> itemLag;      // wake-up: wait end - dependency time (>= 0)
    std::vector<std::int64_t> itemMinDur;   // a wait's own cost when its dependency was met before it began
    std::vector<std::uint8_t> itemLaterMma; // an MMA/Compute follows on the lane (epilogue may overlap)

    // Lanes (same indices as trace.lanes)
    std::vector<std::int32_t> laneBegin, laneEnd;

    // CTAs (same indices as trace.ctas)
    std::vector<std::int32_t> ctaLanes;     // lane indices, grouped per CTA
    std::vector<std::int32_t> ctaLaneBegin, ctaLaneEnd;
    std::vector<std::int32_t> ctaKmin, ctaKcount, ctaKbase;  // per-CTA kstep table [kmin, kmin+count)
    std::vector<std::int64_t> ctaEndGap;    // recorded CTA end - last warp end
    std::vector<std::int32_t> ctaPred;      // previous CTA in its SM slot, -1: first (started by the launch)
    std::vector<std::int64_t> ctaLag;       // recorded start - (pred end or launch start)
    std::vector<std::int32_t> ctaOrder;     // CTAs by recorded start
    std::vector<std::int32_t> ctaTiles;     // tiles walked (1 when not recorded)
    // 2-CTA clusters (whatif_cluster.cpp): the partner's release frees a slot, its load completes a fill.
    std::vector<std::int32_t> ctaPartner;   // the other CTA of the cluster, -1
    std::vector<std::int64_t> ctaPartnerOff;// recorded partner start - own start
    std::vector<std::uint8_t> ctaClusterLead; // 1: the pair's first CTA (recorded start order); the other one
                                            // starts at its recorded offset from it
    std::vector<std::uint8_t> kPartnerData; // per fill (kstep table): the fill waits for the partner's load too
    std::vector<std::uint8_t> kPartnerSlot; // per fill k (kstep table): the slot wait it frees (k + S) waits for the
                                            // partner's release too (whatif_graph.cpp clears it where the recorded
                                            // partner release is after that wait's end: the SMs' clocks disagree)
    // Tiles (whatif_tileorder.cpp): per CTA [tileBegin[c], tileBegin[c + 1]) into tileItem/tileM/tileN: the first
    // item of each tile on the CTA's tile lane, in walk order.
    std::vector<std::int32_t> tileBegin, tileItem, tileM, tileN;
    std::vector<std::int32_t> tileLastItem; // per CTA: the last item of its last tile (-1: no tiles)

    // per CTA kstep tables (index ctaKbase[c] + k - ctaKmin[c])
    std::vector<std::int32_t> kIssue;       // IssueLoad item of fill k, -1
    std::vector<std::int64_t> kFlight;      // load flight ready - issue, -1 unknown
    std::vector<std::int32_t> kRelBegin, kRelEnd;  // into relItems
    std::vector<std::int32_t> relItems;

    // Sync groups: the n-th CTA barrier of every worker lane of a CTA; also the Collective groups (the MmaIssue
    // of one fill of every warp of a warpgroup)
    std::vector<std::int32_t> syncBegin, syncEnd, syncItems;

    // Shared tensor cores (whatif_resources.cpp): the MmaIssue/MmaWait items of one (CTA, fill) form a group.
    std::vector<std::int32_t> itemMmaGroup;  // per item: its group, -1
    std::vector<std::int32_t> mmaGroupCta;
    std::vector<std::int32_t> mmaGroupBegin, mmaGroupItems;  // items of group g: [begin[g], begin[g + 1])
    std::vector<double> mmaGroupRate;       // flop per ns the group asks for: work per fill / recorded span
    std::vector<double> mmaGroupDemand0;    // recorded: the SM's summed rate, averaged over the group's span
    double mmaCap = 0;                      // flop per ns per SM; 0: not modelled

    // Cross-CTA ready flags (whatif_flags.cpp): per flag edge the waiting item, the publishing item (another CTA's)
    // and the publisher's recorded time relative to the waiting CTA's start.
    std::vector<std::int32_t> flagWaitItem, flagPubItem;
    std::vector<std::int64_t> flagRecDep;
    // Load bandwidth per SM (whatif_bandwidth.cpp): per fill (kstep table) the bytes landing in the CTA and the SM's
    // recorded load demand averaged over the fill's flight; loadCap bytes per ns per SM, 0: not modelled.
    std::vector<double> kBytes, kDemand0;
    double loadCap = 0;

    TimeNs launchStart = 0, launchEnd = 0;
    std::int64_t kernelEndGap = 0;          // launch end - last CTA end
    GraphSummary summary;

    // predict()'s working arrays, kept between calls: allocating ~20 bytes per phase anew on every call cost
    // more in page faults than the replay itself (docs/benchmarks.md).
    mutable std::mutex scratchLock;
    mutable Replay scratch;
    mutable std::vector<ReplayItem> packed; // packReplayItems(): built by the first predict(), under scratchLock;
    mutable std::vector<ReplayItem32> packed32;  // one of the two: packed32 when every time fits in 32 bits
    mutable std::vector<std::int64_t> ctaItems;  // phases per CTA (the replay's threads split CTAs by it)
    mutable bool packedCoversAll = false;   // every item belongs to a CTA's lanes
    mutable bool packedReady = false;
    const std::atomic<bool>* buildCancel = nullptr;  // build()'s cancel flag while it builds; null after
};

// Throws WhatIfCancelled when build()'s cancel flag is set (the build's passes call it between CTAs).
inline void checkBuildCancelled(const WhatIfModel::Impl& g)
{
    if (g.buildCancel && g.buildCancel->load(std::memory_order_relaxed))
        throw WhatIfCancelled();
}


// critpath.cpp
CriticalPath walkCriticalPath(const WhatIfModel::Impl& m, const Replay& r);
// Inline: the replay asks them once per phase and round (docs/benchmarks.md, s7-whatifspeed).
inline bool isMmaLike(IntervalKind k)
{
    return k == IntervalKind::MmaIssue || k == IntervalKind::MmaWait || k == IntervalKind::Compute;
}
inline bool isEpilogueKind(IntervalKind k) { return k == IntervalKind::Epilogue || k == IntervalKind::Store; }
// whatif_resources.cpp
void buildResources(WhatIfModel::Impl& m, const std::vector<std::int64_t>& recordedStart);
// The average, over each group's span [gs, ge], of the summed rates of the groups on the same SM (gsm) that are
// active at each instant. The same inputs give bit-identical results (the unchanged replay relies on it).
void smDemand(const WhatIfModel::Impl& m, const std::vector<std::int64_t>& gs, const std::vector<std::int64_t>& ge,
              const std::vector<std::int32_t>& gsm, std::vector<double>& out);
// runReplay with the shared tensor cores: re-runs the replay with per-group stretch factors until they settle.
void replayWithResources(const WhatIfModel::Impl& m, const WhatIfParams& p, std::vector<std::string>* notes,
                         Replay& r);
// whatif_cluster.cpp: pairs of a 2-CTA cluster (after the flights, before the dependencies).
void buildClusters(WhatIfModel::Impl& m, const std::vector<std::int64_t>& recordedStart);
// The recorded-time dependencies of a fill's WaitData / a producer's WaitSlot, the partner included.
std::int64_t recordedDataDep(const WhatIfModel::Impl& m, const std::vector<std::int64_t>& mst, int cta,
                             std::int32_t x);
std::int64_t recordedSlotDep(const WhatIfModel::Impl& m, const std::vector<std::int64_t>& mst, int cta,
                             std::int32_t k);
// Replays the two CTAs of a pair together (their items relative to their own starts, the partner's offset
// recorded); fills in r.ctaDur etc. as runReplay does for a single CTA.
void replayClusterPair(const WhatIfModel::Impl& m, Replay& r, int a, int b);
// The partner item that set a binding cross-CTA dependency, -1: the CTA's own one did (critical path walk).
std::int32_t partnerDataIssue(const WhatIfModel::Impl& m, const Replay& r, int cta, std::int32_t k);
std::int32_t partnerSlotRelease(const WhatIfModel::Impl& m, const Replay& r, int cta, std::int32_t k);
// Whether the slot wait that fill x's release frees waits for the partner's release too (kPartnerSlot; x < 0 or no
// table: yes, as before session 10).
inline bool partnerSlotCoupled(const WhatIfModel::Impl& m, std::int32_t x)
{
    return x < 0 || m.kPartnerSlot.empty() || m.kPartnerSlot[std::size_t(x)];
}
// The placement: the second CTA of a pair starts at its recorded offset from the first.
inline void placeClusterPartner(const WhatIfModel::Impl& m, Replay& r, int c)
{
    if (!m.ctaPartner.empty() && m.ctaPartner[std::size_t(c)] >= 0 && !m.ctaClusterLead[std::size_t(c)])
        r.ctaStart[std::size_t(c)] = r.ctaStart[std::size_t(m.ctaPartner[std::size_t(c)])]
            - m.ctaPartnerOff[std::size_t(c)];
}
// whatif_epiwarp.cpp: the consumer Epilogue item whose start an epilogue warp's hand-off wait (WaitData on an
// Epilogue-role lane) depends on; -1: not such a wait, or none found.
std::int32_t handoffItem(const WhatIfModel::Impl& m, const std::vector<std::int64_t>& recordedStart, int cta,
                         std::int32_t item);
// whatif_flags.cpp: pairs the waits on another CTA's ready flag with their publisher (before the dependencies);
// flagEdgeOf: the edge of a waiting item, -1.
void buildFlags(WhatIfModel::Impl& m, const std::vector<std::int64_t>& recordedStart);
std::int32_t flagEdgeOf(const WhatIfModel::Impl& m, std::int32_t item);
// After a replay: the publishers' new times in the waiters' frames; marks the CTAs whose flag waits moved (redo)
// and returns whether any did.
bool updateFlagDeps(const WhatIfModel::Impl& m, Replay& r, std::vector<std::uint8_t>& redo);
// whatif_bandwidth.cpp
void buildBandwidth(WhatIfModel::Impl& m, const std::vector<std::int64_t>& recordedStart);
// After a replay: the flights' stretch by the SMs' load demand (damped); marks the CTAs whose stretch changed.
bool updateLoadStretch(const WhatIfModel::Impl& m, const WhatIfParams& p, Replay& r, std::vector<std::uint8_t>& redo);
// The flight of fill x (kstep table) as replayed: recorded (or censored) x --load-latency x the bandwidth stretch.
inline double flightFactor(const Replay& r, std::int32_t x)
{
    return r.loadStretch.empty() ? r.fLoad : r.fLoad * r.loadStretch[std::size_t(x)];
}
// whatif_tileorder.cpp
void buildTiles(WhatIfModel::Impl& m, const std::vector<std::int64_t>& recordedStart);
// Deals the tiles in p.tileOrder after the replay; returns the predicted kernel end (r.kernelEnd when the order
// is the recorded one or does not apply, with a note).
std::int64_t tileOrderEnd(const WhatIfModel::Impl& m, const WhatIfParams& p, const Replay& r,
                          std::vector<std::string>* notes);
// whatif_replay.cpp
// redo (the resource rounds): re-simulate only the CTAs marked 1, keeping the others' items from the previous
// runReplay on r with the same parameters; nullptr: all.
void runReplay(const WhatIfModel::Impl& m, const WhatIfParams& p, std::vector<std::string>* notes, Replay& r,
               const std::vector<std::uint8_t>* redo = nullptr);
// The end of the build: packs the replay's per-phase records and sizes predict()'s working arrays, so that the first
// re-predict costs what the others do (whatif_replay.cpp).
void prepareReplay(const WhatIfModel::Impl& m);
// Throws WhatIfCancelled when r.cancel is set.
inline void checkCancelled(const Replay& r)
{
    if (r.cancel && r.cancel->load(std::memory_order_relaxed))
        throw WhatIfCancelled();
}
std::int64_t itemDuration(const WhatIfModel::Impl& m, const Replay& r, std::int32_t i);
std::int32_t dataIssueItem(const WhatIfModel::Impl& m, const Replay& r, std::int32_t cta, std::int32_t k);
// The wake-up lag of a wait as replayed (a Collective MmaIssue's lag is issue work: scaled like the MMA).
std::int64_t itemLagNow(const WhatIfModel::Impl& m, const Replay& r, std::int32_t i);

// The upper median (element size/2 in order) of v, 0 for none; shared by the graph build and the replay.
inline std::int64_t median(std::vector<std::int64_t> v)
{
    if (v.empty())
        return 0;
    std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(v.size() / 2), v.end());
    return v[v.size() / 2];
}

// Threads for work over `items` replay items (WARPSTAGE_WHATIF_THREADS, at most 16; whatif_replay.cpp).
int replayThreads(std::int64_t items);
// whatif_timeline.cpp
// After predict()'s replay and path walk: out.predicted (the ghost lanes) and the path's interval indexes into it.
void fillPredictedTimeline(const WhatIfModel::Impl& m, Replay& r, WhatIfResult& out);

}  // namespace ws
