// Columnar KernelTrace from records (a synthetic RunRecord, or any KernelRecord):
// CTAs sorted by (SM, start), lanes ordered (SM, CTA start, CTA, warp index),
// each lane sorted by start, loads sorted by issue. Used by the benchmarks,
// tests and demos that do not go through a file.
#pragma once

#include <warpstage/model.h>
#include <warpstage/synthetic.h>

#include <memory>

std::shared_ptr<ws::KernelTrace> kernelTraceFromRecord(const ws::RunInfo &run, const ws::KernelRecord &kernel);
// generateSynthetic(params), first traced kernel, as a KernelTrace (RunInfo::synthetic = true).
std::shared_ptr<ws::KernelTrace> syntheticKernelTrace(const ws::SyntheticParams &params);
