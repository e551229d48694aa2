// ProgramLinks: what the program view knows between rows of one run (issue #9, "Viewer"):
//  * launch -> run links: each CUDA API call span (ws::ApiSpan) and the kernels / memory operations it
//    launched, matched by correlation id (one call may launch several: a graph launch); a launch whose
//    API span was not recorded has none (apiOf() == -1), and so has a correlation id of 0.
//  * the launch latency (kernel start - API call start) and the part of it spent queued behind earlier
//    work on the same stream (docs/viewer.md, "Launch arrows").
//  * GPU idle gaps (ws::idleGaps) with the records that ran right before and after each.
// Widget-free; built once per program (O(records)).
#pragma once

#include "programlayout.h"

#include <warpstage/model.h>
#include <warpstage/program.h>

#include <vector>

struct LaunchRef {
    ProgramItem::Kind kind = ProgramItem::Kernel;  // Kernel or MemOp
    int index = -1;                                // into kernels / memOps; -1: none
    bool valid() const { return index >= 0; }
    bool operator==(const LaunchRef &o) const { return kind == o.kind && index == o.index; }
};

struct LaunchTiming {
    bool hasApi = false;
    ws::TimeNs latencyNs = 0;  // launch start - API call start
    ws::TimeNs queuedNs = 0;   // of it, waiting for earlier work on the same stream after the call returned
};

struct GapInfo {
    ws::IdleGap gap;
    LaunchRef before;  // the record whose end opened the gap (a kernel or memory operation)
    LaunchRef after;   // the record whose start closed it
    ws::TimeNs length() const { return gap.end - gap.start; }
};

class ProgramLinks {
public:
    void build(const ws::ProgramTrace *program);
    // The API span that launched a kernel / memory operation: index into apiSpans, -1 if none recorded.
    int apiOf(LaunchRef launch) const;
    // What API span `api` launched (empty for calls that launch nothing: cudaStreamSynchronize, ...).
    const std::vector<LaunchRef> &launchesOf(int api) const;
    LaunchTiming timing(LaunchRef launch) const;

    // The run's idle gaps of at least minGapNs, in time order, with their neighbours.
    std::vector<GapInfo> gaps(ws::TimeNs minGapNs) const;

private:
    const ws::ProgramTrace *m_program = nullptr;
    std::vector<int> m_apiOfKernel, m_apiOfMemOp;
    std::vector<std::vector<LaunchRef>> m_launchesOfApi;
    std::vector<ws::TimeNs> m_prevEndKernel, m_prevEndMemOp;  // end of the previous record on the same stream
};

namespace programtext {
QString launchName(const ws::ProgramTrace &p, LaunchRef r);  // kernel family or "Copy host → device", ...
}
