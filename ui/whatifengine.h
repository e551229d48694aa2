// The viewer's bridge to core's critical-path analysis and what-if replay (warpstage/whatif.h): turns core's
// results into the GUI's types (whatifdata.h). Everything here may run on a worker thread.
#pragma once

#include "whatifdata.h"

#include <atomic>
#include <functional>
#include <memory>

namespace ws {
struct WhatIfParams;
}

namespace ws::ui {

// One kernel's what-if work: its dependency graph is built once (by the first call that needs it, on the
// calling worker thread) and shared by the critical path and every replay, so opening a kernel builds it once,
// not once for the path and once more for the panel. Calls are serialized (one at a time, any thread).
class WhatIfKernel {
public:
    explicit WhatIfKernel(std::shared_ptr<const KernelTrace> trace);
    ~WhatIfKernel();
    WhatIfKernel(const WhatIfKernel&) = delete;
    WhatIfKernel& operator=(const WhatIfKernel&) = delete;

    // The measured kernel's critical path and its attribution; null when the kernel has no timeline to analyse.
    std::shared_ptr<const CriticalPathView> criticalPath();
    // A replay with `params`; withTimeline: the predicted timeline (ghost lanes) too. cancel (may be null): set by
    // another thread, the replay stops soon and the Prediction carries an error (nobody wants it any more); so
    // does the model's first build, which keeps nothing then (the next call builds it again).
    Prediction predict(const WhatIfParams& params, bool withTimeline, const std::atomic<bool>* cancel = nullptr);
    // The same with core's parameters (every option of `warpstage whatif`; `export --what-if`).
    Prediction predict(const ws::WhatIfParams& params, bool withTimeline, const std::atomic<bool>* cancel = nullptr);
    const std::shared_ptr<const KernelTrace>& trace() const { return m_trace; }
    // Where the time of the last predict() went (worker thread, wall ms): core's replay, the critical path walk,
    // core's predicted timeline, and its conversion into ghost lanes (the lanes moved, their index reset).
    struct Timing {
        double buildMs = 0, replayMs = 0, pathMs = 0, timelineMs = 0, ghostMs = 0;
    };
    Timing lastTiming() const;

private:
    struct State;
    std::shared_ptr<const KernelTrace> m_trace;
    std::unique_ptr<State> m;
};

// The kernel's critical path and its attribution; null when the kernel has no timeline to analyse.
std::shared_ptr<const CriticalPathView> analyzeCriticalPath(const KernelTrace& trace);

// A what-if predictor bound to one kernel (WhatIfKernel::predict). Thread-safe for one caller at a time
// (the what-if panel never runs two replays at once).
WhatIfPredictor makePredictor(std::shared_ptr<WhatIfKernel> kernel);
WhatIfPredictor makePredictor(std::shared_ptr<const KernelTrace> trace);

// What the kernel was recorded with (the panel's starting values): ring stages (the most slots seen,
// 1 for kernels without a ring) and SMs (distinct SM ids of its CTAs, at least 1).
int recordedStages(const KernelTrace& trace);
int recordedSms(const KernelTrace& trace);

}  // namespace ws::ui
