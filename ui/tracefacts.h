// TraceFacts: what the viewer needs to know about a whole kernel trace before its first paint, found in one
// pass over every interval (the time extent, the interval kinds present, the ring depth). A 3M-interval
// kernel takes about a second for that pass in the sanitizer build, so the kernel loaders compute it on their
// worker (loadKernelNow) and hand it to TimelineWidget::setTrace with the trace: the GUI thread never walks the
// intervals (docs/architecture.md, "Threads").
#pragma once

#include <warpstage/model.h>

#include <array>
#include <memory>

namespace ws::ui {

struct TraceFacts {
    ws::TimeNs firstStart = 0;         // KernelTrace::firstStart()
    ws::TimeNs lastEnd = 0;            // KernelTrace::lastEnd()
    std::array<bool, 256> kinds{};     // kinds[k]: an interval of kind k exists (the legend's entries)
    int ringDepth = 1;                 // max slot + 1, at least 1 (the what-if panel's recorded stages)
};

// One pass over the trace (call it off the GUI thread for big traces).
TraceFacts traceFacts(const ws::KernelTrace& trace);
std::shared_ptr<const TraceFacts> makeTraceFacts(const ws::KernelTrace& trace);

}  // namespace ws::ui
