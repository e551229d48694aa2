// Mapping of PC-sampling results to the pipeline: which role and stage a sampled
// PC belongs to, and short human labels for CUPTI's stall-reason names.
//
// CUDA-free. The stall pass samples the UNTRACED build, which holds no trace code,
// but it is compiled from the same source lines as the traced build. So the stage
// of a PC comes from its source line: in a rung's .cu file each trace call
// `wt.event(tk::WaitData, ...)` opens the stage "wait_data" for the lines after it,
// until the next such call (markers such as kEventTileBegin do not change it); a loop header
// takes the stage of the first such call in its body.
// PCs whose line is in a helper file (code inlined from hopper.cuh, ...) are classified
// by the name of the helper function holding the line (wgmmaWait -> mma_wait, tmaLoad2d
// -> issue_load, mbarWait -> wait_data or wait_slot by context, storeAccBf16 -> store,
// ...); helpers with no pipeline meaning (address maths, conversions) and unknown files
// take the stage of the nearest preceding sampled PC of the same function that lies in the
// rung's file (the "context"). The role of a stage is the role of the warps that emit that
// kind in the rung's traced recording.
// A helper file that itself records stages (a kernel body shared by rungs, e.g. pingpong_body.cuh) is mapped line
// by line like the rung's file; there, and in the rung's file, calls of the shared Ring's methods
// (`ring.waitSlot(`, `.issueLoad(`, `.waitData(`, `.release(`: kernels/src/common/ring.cuh, which records the
// phase of its name) open their stage as an event call would.
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
    // The same from the file `file` on disk (repository path `path`), plus every helper header (*.cuh)
    // next to it, registered under path's directory. A missing file gives an empty map.
    static StageMap fromFile(std::string path, const std::string& file);

    const std::string& file() const { return m_file; }
    bool empty() const { return m_starts.empty() && m_bodies.empty(); }
    std::size_t stageCount() const { return m_starts.size(); }
    // Stage of a 1-based source line: the last event call at or above it; Setup before the first.
    // Exception: a loop header (`for (`, `while (`) and the lines after it up to the first event
    // call of its body take that call's stage (the loop control runs at every iteration).
    std::optional<IntervalKind> stageAt(int line) const;
    // True if a file name from CUPTI (absolute path, relative path or basename) is this file.
    bool matchesFile(std::string_view cuptiFile) const;
    // The line stage of (file, line) when the file is the rung's or a body helper (one with stage events of its
    // own); false for any other file. In a body helper, a line of one of its functions that opens no stage itself
    // (no event or stage-opening call in its lines: `acquireFlag`, ws::trace's own `event`) is not mapped line by
    // line but by the function's name (helperStageFromName: ring.cuh's `waitSlot`, whose event the later
    // `issueLoad` records), else false (the sample then takes its context); so is a line above the function's first
    // such call when the name has a stage (`release`, which arrives before it records its event).
    bool lineStage(std::string_view cuptiFile, int line, std::optional<IntervalKind>& stage) const;
    std::size_t bodyCount() const { return m_bodies.size(); }
    // A program's map (warpstage/program_stages.h) has no rung file whose prologue it knows: there a line that maps to
    // Setup does not end the stage its function's samples are in (assignStages keeps the context: index maths the
    // compiler placed inside a loop, a declaration's register read in the epilogue), and the lines of a lambda's body
    // (`[&](...) {`) take the stage of the code that calls it. Off for the ladder's maps.
    void setProgramRules(bool on) { m_programRules = on; }
    bool programRules() const { return m_programRules; }

    // Registers a helper file (repository-relative path): its __device__ functions and their line spans.
    void addHelperSource(std::string path, std::string_view text);
    std::size_t helperFunctionCount() const { return m_helpers.size(); }
    // Name of the helper function holding (file, line), or "" if none.
    std::string helperFunctionAt(std::string_view cuptiFile, int line) const;
    // Stage of a helper line from the function's name; `context` is the stage of the surrounding rung
    // code (tells a producer's slot wait from a consumer's data wait); `hasWaitOrder`: the rung has an
    // ordering barrier (named barriers are then WaitOrder, else Sync). nullopt: no opinion.
    std::optional<IntervalKind> helperStageAt(std::string_view cuptiFile, int line, std::optional<IntervalKind> context,
                                              bool hasWaitOrder) const;

private:
    struct HelperFn {
        std::string file;
        int first = 0, last = 0;
        std::string name;
    };
    std::string m_file;
    std::vector<std::pair<int, IntervalKind>> m_starts;  // (line, kind), ascending by line
    std::vector<int> m_eventLines;                       // lines with a stage-opening call (ascending)
    std::vector<std::pair<int, int>> m_lambdas;          // (first, last) lines of lambda bodies (ascending)
    bool m_programRules = false;
    std::vector<HelperFn> m_helpers;
    std::vector<StageMap> m_bodies;  // helper files mapped line by line (they record stages themselves)
};

// Stage of a helper function by its name (see above); nullopt for helpers with no pipeline meaning.
std::optional<IntervalKind> helperStageFromName(std::string_view function, std::optional<IntervalKind> context,
                                                bool hasWaitOrder);

// IntervalKind from the identifier used in the kernels' trace calls ("WaitData" -> WaitData).
std::optional<IntervalKind> intervalKindFromIdentifier(std::string_view identifier);

// For each IntervalKind (index), the role of the warps that recorded most intervals of it
// in a traced record. A kind that never occurs gets the rung's only working role if it has
// just one (Worker in the synchronous rungs; Idle/Unknown warps aside), else Unknown.
std::vector<WarpRole> rolesByKind(const KernelRecord& traced);
// The same from a stored launch (TraceStore::loadKernel), e.g. to re-assign stored samples.
std::vector<WarpRole> rolesByKind(const KernelTrace& traced);

// Fills StallSample::stage (interval kind name, "" if unknown) and ::role for samples of
// one kernel. sourceFile/line must already hold CUPTI's source correlation.
// rungHasWaitOrder: whether the rung's traced launch recorded WaitOrder phases (named
// barriers are then classified WaitOrder, else Sync); default: derived from `roles`.
void assignStages(std::vector<StallSample>& samples, const StageMap& map, const std::vector<WarpRole>& roles,
                  std::optional<bool> rungHasWaitOrder = std::nullopt);

// Whether CUPTI's source file names the file at `path`: the same path suffix ("/abs/work/main/kernels/src/x.cu"
// names "kernels/src/x.cu"), or a bare basename equal to path's.
bool sourcePathMatches(std::string_view cuptiFile, std::string_view path);

// "smsp__pcsamp_warps_issue_stalled_long_scoreboard" -> "long scoreboard: waiting on global/local memory data".
std::string stallReasonLabel(std::string_view cuptiName);
// False for the "*_not_issued" variants (a subset of the plain reason's samples; keeping both
// would count those samples twice) and for the totals smsp__pcsamp_sample_count /
// smsp__pcsamp_samples_data_dropped.
bool keepStallReason(std::string_view cuptiName);

}  // namespace ws::decode
