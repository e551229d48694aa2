// The viewer's bridge to core's critical-path analysis and what-if replay (warpstage/whatif.h): turns core's
// results into the GUI's types (whatifdata.h). Everything here may run on a worker thread.
#pragma once

#include "whatifdata.h"

#include <functional>
#include <memory>

namespace ws::ui {

// The kernel's critical path and its attribution; null when the kernel has no timeline to analyse.
std::shared_ptr<const CriticalPathView> analyzeCriticalPath(const KernelTrace& trace);

// A what-if predictor bound to one kernel: builds the dependency graph once (on the first call, on the
// calling worker thread) and replays it for each parameter set. Thread-safe for one caller at a time
// (the what-if panel never runs two replays at once).
std::function<Prediction(const WhatIfParams&, bool withTimeline)> makePredictor(std::shared_ptr<const KernelTrace> trace);

// What the kernel was recorded with (the panel's starting values): ring stages (the most slots seen,
// 1 for kernels without a ring) and SMs (distinct SM ids of its CTAs, at least 1).
int recordedStages(const KernelTrace& trace);
int recordedSms(const KernelTrace& trace);

}  // namespace ws::ui
