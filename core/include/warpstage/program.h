// Program-level analysis of a recorded program (schema 3): the kernel summary table, kernel families for
// colouring, GPU idle gaps. Qt-free; docs/metrics.md ("Program metrics") defines every number.
#pragma once

#include "warpstage/model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ws {

// The family of a kernel for colouring and grouping: the demangled name without its parameter list,
// template arguments and namespaces' anonymous parts, e.g.
//   "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, ...>(int, ...)"
//     -> "at::native::vectorized_elementwise_kernel"
//   "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
//     -> unchanged (no parameter list)
std::string kernelFamily(std::string_view demangledName);

// One row of the kernel summary table: all launches of one kernel name in a run.
struct KernelStats {
    std::string name;                 // demangled name
    std::string family;               // kernelFamily(name)
    std::int64_t launches = 0;
    std::int64_t totalNs = 0;         // Σ (end - start)
    double meanNs = 0;
    std::int64_t minNs = 0;
    std::int64_t maxNs = 0;
    double share = 0;                 // totalNs / Σ over every kernel of the run (0 if none)
    std::int64_t tracedLaunches = 0;  // launches with a per-warp timeline
};
// Sorted by totalNs, descending (ties: name).
std::vector<KernelStats> kernelStats(const ProgramTrace& program);

// A stretch of time in which a device ran no kernel and no memory operation, between the first and the
// last record of that device in the run.
struct IdleGap {
    int deviceOrdinal = 0;
    TimeNs start = 0;
    TimeNs end = 0;
};
// Gaps of at least minGapNs, in time order.
std::vector<IdleGap> idleGaps(const ProgramTrace& program, TimeNs minGapNs);

// GPU busy time of the run: the union of all kernel and memory-operation intervals.
TimeNs gpuBusyNs(const ProgramTrace& program);

// Where a program view should open. The run's GPU work split at idle gaps of at least `minGapFraction` of the run's
// span (first to last record, CPU records included); the stretch between two such gaps that holds the most GPU busy
// time. Returned only when that stretch holds at least `minBusyFraction` of the run's GPU busy time (the bundled lce
// runs of rungs 3-4: 77-78 %, the rest their inputs' fill and padding) and covers less
// than `maxSpanFraction` of its span -- a run whose GPU work is one burst inside idle host time (start-up,
// allocation, a compile); otherwise the whole run is the view and the result is empty.
struct Burst {
    TimeNs start = 0, end = 0;
    TimeNs busyNs = 0;
};
std::optional<Burst> busiestBurst(const ProgramTrace& program, double minGapFraction = 0.1, double maxSpanFraction = 0.5,
                                  double minBusyFraction = 2.0 / 3.0);

}  // namespace ws
