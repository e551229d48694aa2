// Mapping of PC-sampling results to the pipeline: which role and stage a sampled
// PC belongs to, and short human labels for CUPTI's stall-reason names.
//
// CUDA-free. The stall pass samples the UNTRACED build, which holds no trace code,
// but it is compiled from the same source lines as the traced build. So the stage
// of a PC comes from its source line: in a rung's .cu file each trace call
// `wt.event(tk::WaitData, ...)` opens the stage "wait_data" for the lines after it,
// until the next such call (markers such as kEventTileBegin do not change it).
// PCs whose line is in another file (code inlined from hopper.cuh, ...) take the
// stage of the nearest preceding sampled PC of the same function that lies in the
// rung's file: inlined code sits right after its call site. The role of a stage is
// the role of the warps that emit that kind in the rung's traced recording.
#pragma once

#include "warpstage/model.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ws::decode {

class StageMap {
public:
    // `path` is how the file should be stored (repository-relative, e.g. "kernels/src/pingpong.cu").
    static StageMap fromSource(std::string path, std::string_view text);

    const std::string& file() const { return m_file; }
    bool empty() const { return m_starts.empty(); }
    std::size_t stageCount() const { return m_starts.size(); }
    // Stage of a 1-based source line: the last event call at or above it; Setup before the first.
    std::optional<IntervalKind> stageAt(int line) const;
    // True if a file name from CUPTI (absolute path, relative path or basename) is this file.
    bool matchesFile(std::string_view cuptiFile) const;

private:
    std::string m_file;
    std::vector<std::pair<int, IntervalKind>> m_starts;  // (line, kind), ascending by line
};

// IntervalKind from the identifier used in the kernels' trace calls ("WaitData" -> WaitData).
std::optional<IntervalKind> intervalKindFromIdentifier(std::string_view identifier);

// For each IntervalKind (index), the role of the warps that recorded most intervals of it
// in a traced record; Unknown where the kind never occurs.
std::vector<WarpRole> rolesByKind(const KernelRecord& traced);

// Fills StallSample::stage (interval kind name, "" if unknown) and ::role for samples of
// one kernel. sourceFile/line must already hold CUPTI's source correlation.
void assignStages(std::vector<StallSample>& samples, const StageMap& map, const std::vector<WarpRole>& roles);

// "smsp__pcsamp_warps_issue_stalled_long_scoreboard" -> "long scoreboard: waiting on global/local memory data".
std::string stallReasonLabel(std::string_view cuptiName);
// False for the "*_not_issued" variants (a subset of the plain reason's samples; keeping both
// would count those samples twice) and for the totals smsp__pcsamp_sample_count /
// smsp__pcsamp_samples_data_dropped.
bool keepStallReason(std::string_view cuptiName);

}  // namespace ws::decode
