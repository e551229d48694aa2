#include "tracefacts.h"

#include <algorithm>

namespace ws::ui {

TraceFacts traceFacts(const ws::KernelTrace& trace)
{
    TraceFacts f;
    f.firstStart = trace.firstStart();  // one element per lane (lanes are sorted by start)
    bool any = false;
    int ring = 0;
    for (const ws::Lane& l : trace.lanes) {
        const std::size_t n = l.size();
        for (std::size_t i = 0; i < n; ++i) {
            const ws::TimeNs e = l.start[i] + l.duration[i];
            f.lastEnd = any ? std::max(f.lastEnd, e) : e;
            any = true;
            f.kinds[std::size_t(l.kind[i])] = true;
        }
        for (auto s : l.slot)
            ring = std::max(ring, int(s) + 1);
    }
    if (!any)
        f.lastEnd = trace.launch.end;  // as KernelTrace::lastEnd()
    f.ringDepth = std::max(1, ring);
    return f;
}

std::shared_ptr<const TraceFacts> makeTraceFacts(const ws::KernelTrace& trace)
{
    return std::make_shared<const TraceFacts>(traceFacts(trace));
}

}  // namespace ws::ui
