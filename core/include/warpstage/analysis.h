// Warpstage analysis: overlap, waits, bubbles, occupancy, tail, TFLOP/s and
// stall breakdowns of one loaded kernel (KernelTrace). The exact definition of
// every number is in docs/metrics.md; the names in comments are the metric
// names used in the store (Metric::name).
//
// Undefined values (a share whose denominator is 0, TFLOP/s without a shape or
// a duration) are NaN: test with std::isnan and show "—". toMetrics() skips them.
#pragma once

#include "warpstage/model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ws {

// What to analyse. Empty optionals mean "all".
struct Selection {
    std::optional<int> ctaIndex;      // index into KernelTrace::ctas
    std::optional<int> warpgroup;     // Lane::warpgroup
    std::optional<TimeNs> t0;         // time range [t0, t1) on the run time base
    std::optional<TimeNs> t1;
};

// One step of a step series: `value` holds from `t` until the next point's t.
// The last point of a series has value 0 (or is the window end).
struct StepPoint {
    TimeNs t = 0;
    double value = 0;
};

// Time-based metrics of a set of lanes (whole selection, one CTA, or one warpgroup).
struct GroupMetrics {
    std::int64_t computeLanes = 0;    // lanes with role Consumer or Worker
    std::int64_t producerLanes = 0;   // lanes with role Producer
    double computeLaneNs = 0;         // "compute_lane_ns": Σ compute lanes' live time in the window
    double producerLaneNs = 0;        // "producer_lane_ns"
    double computeNs = 0;             // "compute_ns": Σ per-lane union of compute intervals
    double computeWithLoadNs = 0;     // "compute_with_load_ns": compute while ≥1 load of the CTA in flight
    double computeOverlapShare = 0;   // "compute_overlap_share" = computeWithLoadNs / computeNs
    double loadInFlightNs = 0;        // "load_in_flight_ns": Σ per-CTA union of [issue, ready)
    double loadHiddenNs = 0;          // "load_hidden_ns": load-in-flight while the CTA computes
    double loadHiddenShare = 0;       // "load_hidden_share" = loadHiddenNs / loadInFlightNs
    double exposedLoadWaitNs = 0;     // "exposed_load_wait_ns": WaitData (+ Load on Worker lanes)
    double exposedLoadWaitShare = 0;  // "exposed_load_wait_share" = / computeLaneNs
    double backPressureNs = 0;        // "back_pressure_ns": WaitSlot on Producer lanes
    double backPressureShare = 0;     // "back_pressure_share" = / producerLaneNs
    double consumerBusyShare = 0;     // "consumer_busy_share" = computeNs / computeLaneNs
    std::int64_t bubbleCount = 0;     // "bubble_count": gaps between a CTA's first and last compute with no compute lane computing
    double bubbleNs = 0;              // "bubble_ns"
    double longestBubbleNs = 0;       // "longest_bubble_ns"
    double bubbleShare = 0;           // "bubble_share" = bubbleNs / Σ CTA compute span
    double rampNs = 0;                // "ramp_ns": CTA live time before its first / after its last compute
    double meanLoadsInFlight = 0;     // "mean_loads_in_flight": time-weighted over the window
    double meanSlotsOccupied = 0;     // "mean_slots_occupied"
    std::int64_t loadCount = 0;       // loads overlapping the window
};

struct CtaMetrics {
    int ctaIndex = 0;
    int blockLinear = 0;
    int smId = -1;
    GroupMetrics m;
};

struct WarpgroupMetrics {
    int warpgroup = 0;                // across all selected CTAs
    GroupMetrics m;
};

struct StallBucket {
    std::string key;                  // reason name, or "<role>/<stage>"
    std::string label;                // reason label, or the same as key
    std::int64_t samples = 0;
    double share = 0;                 // samples / total samples
};

struct KernelMetrics {
    TimeNs windowStart = 0;           // analysed window [windowStart, windowEnd)
    TimeNs windowEnd = 0;
    GroupMetrics total;
    std::vector<CtaMetrics> perCta;             // selected CTAs, in KernelTrace::ctas order
    std::vector<WarpgroupMetrics> perWarpgroup; // ascending warpgroup

    // Step series over the window (selected CTAs summed).
    std::vector<StepPoint> loadsInFlight;       // loads issued, not yet ready
    std::vector<StepPoint> slotsOccupied;       // loads issued, slot not yet released
    std::int64_t maxLoadsInFlight = 0;
    std::int64_t maxSlotsOccupied = 0;

    // Tail effect (all CTAs of the kernel, clipped to the window; ignores the CTA/warpgroup selection).
    int smsUsed = 0;
    double tailNs = 0;                // "tail_ns": window end - earliest "last CTA end" of an SM
    double tailIdleSmNs = 0;          // "tail_idle_sm_ns": Σ over used SMs of (end - SM's last CTA end), plus the
                                      // device's SMs that ran no CTA, each idle the whole span (run.device.smCount)
    double tailIdleShare = 0;         // "tail_idle_share" = tailIdleSmNs / (max(smsUsed, smCount) * span)

    // Throughput from the shape and the CUPTI duration (ignores the selection).
    double flop = 0;                  // 2*M*N*K
    double kernelNs = 0;              // launch.end - launch.start
    double achievedTflops = 0;        // "achieved_tflops"

    // Stall samples (no time, so they ignore the selection).
    std::int64_t stallSamples = 0;
    std::vector<StallBucket> stallsByReason;     // descending samples
    std::vector<StallBucket> stallsByRoleStage;  // descending samples
};

// Analyses one loaded kernel. Never throws on valid KernelTrace data; an empty
// selection gives zeros / NaN shares.
KernelMetrics analyze(const KernelTrace& trace, const Selection& selection = {});

// Flattens results into store rows: scope "kernel", "cta:<blockLinear>",
// "wg:<warpgroup>", "stall_reason:<name>", "stall_stage:<role>/<stage>". NaN values are skipped.
std::vector<Metric> toMetrics(const KernelMetrics& metrics, RowId runId, RowId kernelId);

// Convenience: analyse every traced kernel of a run and return the rows to store.
class TraceStore;
std::vector<Metric> computeRunMetrics(const TraceStore& store, RowId runId);

}  // namespace ws
