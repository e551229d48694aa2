// Program-level analysis of a recorded program (schema 3): the kernel summary table, kernel families for
// colouring, GPU idle gaps. Qt-free; docs/metrics.md ("Program metrics") defines every number.
#pragma once

#include "warpstage/model.h"

#include <cstdint>
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

}  // namespace ws
