// What-if replay of a traced pipelined kernel (issue 13): a discrete-event replay of the dependency graph of
// critpath.h with edited parameters. Phases that are work (IssueLoad, MmaIssue, MmaWait, Compute, Epilogue,
// Store, Setup, ...) keep their recorded duration (times a factor); waits (WaitData, WaitSlot, Sync, WaitOrder)
// end when their dependency is met, plus the lag recorded between the dependency and the wait's end. With
// no parameter changed the replay reproduces the recorded kernel. Model and limits: docs/whatif.md.
//
// Qt-free and CUDA-free. Build a WhatIfModel once per kernel (O(intervals)); predict() is cheap enough to
// call on every slider move (docs/benchmarks.md).
#pragma once

#include "warpstage/critpath.h"
#include "warpstage/model.h"

#include <atomic>
#include <memory>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ws {

// --tile-order (docs/whatif.md, "Tile order"): the order in which a persistent kernel deals its tiles to its CTAs.
enum class TileOrder : std::uint8_t { Recorded = 0, Row, Column, Reverse, LongestFirst };
std::string_view tileOrderName(TileOrder o);                    // "recorded", "row", "column", "reverse", "longest-first"
bool tileOrderFromName(std::string_view name, TileOrder* out);  // false for an unknown name
// predict() stopped because its cancel flag was set (the caller no longer wants the answer).
class WhatIfCancelled : public WhatIfError {
public:
    WhatIfCancelled() : WhatIfError("the what-if replay was cancelled") {}
};

struct WhatIfParams {
    int stages = 0;                // ring slots; 0 = as recorded. Producer/consumer kernels: the producer's
                                   // fill k waits for the release of fill k - stages. Worker kernels: loads are
                                   // issued (stages - recorded) fills earlier (only more stages)
    double loadLatency = 1.0;      // x load flight (issue -> ready) and synchronous Load phases
    double mma = 1.0;              // x MmaIssue, MmaWait, Compute
    double epilogue = 1.0;         // x Epilogue, Store
    bool overlapEpilogue = false;  // a warp's epilogue runs beside its next tile's main loop (the last one stays)
    bool persistent = false;       // CTAs of one SM slot run as one persistent CTA: the next tile's prologue
                                   // overlaps the previous tile's epilogue (no-op for a persistent kernel)
    int sms = 0;                   // SMs to place the CTAs on; 0 = as recorded
    bool dropCtaSync = false;      // warp specialization for worker kernels: no CTA barrier (Sync) per k-step
    int slotsPerSm = 0;            // CTAs resident at once per SM (what the shared-memory budget allows);
                                   // 0 = as recorded. Not for persistent kernels (their grid is the SMs)
    bool sharedResources = true;   // the tensor cores of an SM are shared by its resident CTAs: MMA phases
                                   // stretch when the SM's MMA demand exceeds its throughput (docs/whatif.md,
                                   // "Shared resources"); false: every phase keeps its own recorded speed
    bool producerWarp = false;     // worker kernels: the loads are issued by a producer warp outside the warpgroups
                                   // (IssueLoad no longer holds its warp; issued at the same point of the program)
    bool loadBandwidth = false;    // opt-in (`--load-bandwidth`): the loads of an SM share its load bandwidth (~35 B
                                   // per cycle, measured on the H200): flights stretch when more bytes are in flight
                                   // than it takes (docs/whatif.md, "Load bandwidth"); costs 2-3x the re-predict
                                   // time. false (the default): every flight keeps its recorded length
    TileOrder tileOrder = TileOrder::Recorded;  // persistent kernels: tiles dealt to the CTAs in this order, each
                                   // keeping its replayed cost (not modelled: what an order does to L2 hits)
    bool isDefault() const;
};

struct WhatIfResult {
    TimeNs measuredNs = 0;         // launch.end - launch.start
    TimeNs predictedNs = 0;        // predicted kernel time
    KernelTrace predicted;         // same lanes and CTAs with predicted times (ghost lanes); empty if not asked
    CriticalPath path;             // critical path and attribution of the prediction (indices into `predicted`)
    std::vector<std::string> notes;// what a parameter could not do on this kernel, and why
    struct Timing {                // where predict() spent its time (wall ms; the viewer's re-predict split)
        double replayMs = 0, pathMs = 0, timelineMs = 0;
        int resourceRounds = 0;    // replays of the shared tensor cores' rounds after the first replay
    } timing;
};

class WhatIfModel {
public:
    // Builds the dependency graph. Throws WhatIfError for a kernel without CTAs or intervals. cancel: when not
    // null, the build looks at it between its passes and CTAs (every few ms on a 1 M-interval kernel) and throws
    // WhatIfCancelled once it is set; nothing of the half-built graph is kept (a viewer switching kernels or
    // closing its panel does not wait for a build nobody wants).
    static WhatIfModel build(const KernelTrace& trace, const std::atomic<bool>* cancel = nullptr);
    WhatIfModel(WhatIfModel&&) noexcept;
    WhatIfModel& operator=(WhatIfModel&&) noexcept;
    ~WhatIfModel();

    // Replays with `params`; calls on one model are serialized (it reuses its working arrays), models of
    // different kernels run in parallel. withTimeline=false skips filling WhatIfResult::predicted (and the path's steps
    // keep their indices into the model's trace lanes). Throws WhatIfError for bad parameters (factors not
    // finite or <= 0, stages < 0 or > 64, sms < 0). cancel: when not null, predict() looks at it between CTAs and
    // rounds and throws WhatIfCancelled once it is set (a viewer closing its panel does not wait for the answer).
    WhatIfResult predict(const WhatIfParams& params, bool withTimeline = true,
                         const std::atomic<bool>* cancel = nullptr) const;
    const GraphSummary& summary() const;

    struct Impl;
private:
    explicit WhatIfModel(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m;
};

// Convenience: build + predict.
WhatIfResult whatIf(const KernelTrace& trace, const WhatIfParams& params);

}  // namespace ws
