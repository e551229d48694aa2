// Critical path of a traced pipelined kernel and the attribution of its length to causes (issue 13).
//
// Qt-free and CUDA-free. The dependency graph (docs/whatif.md) is built from the standard phase kinds of a
// KernelTrace: load issue -> data ready -> consumer's WaitData ends; consumers' Release of fill k-S -> the
// producer's WaitSlot before fill k ends (back-pressure); program order within a warp; CTA barriers (Sync);
// ordering waits between consumer warpgroups (WaitOrder); CTA start/end; CTAs queued on an SM slot (a CTA
// starts when the one before it in that slot ended); the launch. The critical path is the chain of
// binding dependencies that ends at the last CTA's end; its length (= the kernel's CUPTI time) is split into
// causes. Definitions: docs/whatif.md.
#pragma once

#include "warpstage/model.h"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ws {

// A kernel the analysis cannot work on (no traced intervals, no CTAs); bad what-if parameters.
class WhatIfError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Causes the critical path's time is attributed to. Append only.
enum class Cause : std::uint8_t {
    LoadLatency = 0,   // load flight (issue -> ready) on the path, synchronous Load, IssueLoad, waits for data
    MmaThroughput = 1, // MmaIssue, MmaWait, Compute, Release on the path
    BackPressure = 2,  // producer's wait for a free slot on the path (ring too small)
    Epilogue = 3,      // Epilogue, Store
    Ordering = 4,      // WaitOrder, CTA barriers (Sync)
    Prologue = 5,      // Setup, CTA start -> first phase of a warp
    Tail = 6,          // path time after the first SM ran out of work (last wave / wave quantization)
    Launch = 7,        // kernel start -> first CTA, CTA -> next CTA on an SM slot, last CTA end -> kernel end
    Other = 8,         // gaps between phases, Other / user phases, end of the CTA after its last warp
    Count_ = 9
};
inline constexpr int kCauseCount = static_cast<int>(Cause::Count_);
std::string_view causeName(Cause c);   // "load_latency", "mma_throughput", ...
std::string_view causeLabel(Cause c);  // "load latency", "MMA throughput", ...

// One segment of the critical path. `lane`/`interval` index KernelTrace::lanes / the lane's arrays of the trace
// the path belongs to (criticalPath(): the input trace; WhatIfResult::path: WhatIfResult::predicted).
struct PathStep {
    enum class What : std::uint8_t {
        Interval = 0,    // (part of) an interval of `lane`
        Gap = 1,         // between two phases of `lane` (or CTA start -> its first phase)
        LoadFlight = 2,  // a load in flight: `lane`/`interval` name the producer's IssueLoad, kstep its fill
        CtaGap = 3,      // CTA `ctaIndex` waiting to start (launch or the previous CTA of its SM slot)
        KernelGap = 4,   // last CTA end -> kernel end
        CtaEnd = 5,      // last warp of CTA `ctaIndex` ended -> the CTA's recorded end
    };
    What what = What::Interval;
    int lane = -1;
    int interval = -1;
    int ctaIndex = -1;
    std::int32_t kstep = -1;
    TimeNs start = 0;
    TimeNs end = 0;
    Cause cause = Cause::Other;
};

// What the graph could be built from: counts of each dependency kind and what is missing for a full analysis.
struct GraphSummary {
    int ctas = 0;
    int lanes = 0;
    std::int64_t nodes = 0;            // phases (intervals) plus inserted zero-length slot waits
    std::int64_t dataEdges = 0;        // WaitData <- load ready
    std::int64_t slotEdges = 0;        // WaitSlot <- Release of fill k - stages
    std::int64_t syncEdges = 0;        // Sync <- the last warp arriving at the same CTA barrier
    std::int64_t orderEdges = 0;       // WaitOrder <- the other warpgroup's phase it waited for
    std::int64_t unexplainedWaits = 0; // waits whose dependency is not in the trace: replayed with their duration
    int stages = 0;                    // ring slots (max slot + 1 of the loads), 0 if none
    int slotsPerSm = 0;                // CTAs resident at once on an SM (max over SMs)
    int smsUsed = 0;
    bool persistent = false;           // some CTA walked more than one tile
    bool hasProducer = false;          // producer/consumer (warp-specialized) rather than worker warps
    bool reduced = false;              // something is missing: see `missing`
    std::vector<std::string> missing;  // sentences: "no loads recorded: ...", "no warp roles: ..."
    // Shared resources (docs/whatif.md, "Shared resources"): the tensor-core throughput of one SM and the work
    // of one fill's MMA phases, both 0 when the model is off; `resources` says which, or why it is off.
    double mmaFlopPerNsPerSm = 0;      // dense bf16/fp16 flop per cycle per SM x the recorded SM clock
    double mmaFlopPerFill = 0;         // 2 M N K / the (CTA, warpgroup, fill) MMA groups of the kernel
    std::int64_t mmaGroups = 0;        // (CTA, warpgroup, fill) groups of MmaIssue/MmaWait phases
    std::string resources;             // one sentence
    std::int64_t collectiveEdges = 0;  // MmaIssue <- the last warp of its warpgroup to arrive at the fill's wgmma
    std::int64_t censoredFlights = 0;  // loads whose recorded ready is a consumer that found the data there: their
                                       // flight is the median of the observed ones (at most the recorded one)
    int clusterPairs = 0;              // 2-CTA clusters replayed together (docs/whatif.md, "Clusters")
    std::int64_t clusterEdges = 0;     // slot waits on the partner's release and fills on the partner's load
    int tiles = 0;                     // tiles of the kernel the tile-order deal can move (persistent kernels)
    std::int64_t handoffEdges = 0;     // an epilogue warp's WaitData <- the consumer warpgroup's Epilogue (hand-off)
    std::int64_t flagEdges = 0;        // an epilogue warp's WaitOrder <- another CTA's Store that releases the flag
    double loadBytesPerNsPerSm = 0;    // the load bandwidth of one SM the replay shares (0: not modelled)
    std::string bandwidth;             // one sentence: the load-bandwidth model, or why it is off
    std::int64_t uncoupledSlotWaits = 0; // 2-CTA clusters: slot waits that ended before the partner's recorded
                                       // release (the SMs' clocks disagree): edge to their own CTA's release only
    std::int64_t clockSkewNs = 0;      // the largest such disagreement (partner release - wait end), ns
};

struct CriticalPath {
    TimeNs kernelStart = 0;            // the launch's CUPTI start / end (predicted end for a what-if)
    TimeNs kernelEnd = 0;
    TimeNs tailStart = 0;              // the first SM's last CTA end: path time after it is Tail
    std::vector<PathStep> steps;       // in time order, contiguous, zero-length steps left out
    std::array<double, kCauseCount> attributionNs{};  // sums to kernelEnd - kernelStart
    GraphSummary graph;
};

// The critical path of the recorded kernel. Throws WhatIfError when the trace has no CTAs or no intervals.
CriticalPath criticalPath(const KernelTrace& trace);

}  // namespace ws
