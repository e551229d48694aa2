// Role and stage of the stall samples of a recorded PROGRAM's kernels (warpstage-record -- PROGRAM, --rungs lce:...;
// issue 11): the program path's counterpart of the ladder's ladderStageMap + assignStages (recorder.cpp).
//
// A program's kernels are not built into the recorder: their stage map is made from the source texts the run stores
// (RunRecord::sources: the files the samples' line info names, read from disk or --source-dir by attachStalls),
// every file registered as a helper (StageMap::addHelperSource): files with stage events of their own (the kernel's
// .cu, a body such as kernels/lce/lce_body.cuh, ring.cuh, epilogue_warp.cuh) are mapped line by line, the others'
// functions by their names. There is no "rung's file". The roles are the warp roles of the run's traced launch of the
// same kernel (rolesByKind), as the ladder's. Where a sample's file has no stored text, its samples take the stage of
// the code around them (assignStages' context) and the note names the file; with no source at all, nothing is
// assigned (role unknown, stage ""): never a guess. CUDA-free, Qt-free.
#pragma once

#include "warpstage/model.h"
#include "warpstage/stage_map.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ws::decode {

// The stage map of a program's kernel from source texts (any order; files without text are skipped).
StageMap programStageMap(const std::vector<SourceFile>& sources);

// The files that samples point into (line > 0) and that `sources` does not hold (by StageMap's path matching), sorted.
std::vector<std::string> missingSources(const std::vector<StallSample>& samples, const std::vector<SourceFile>& sources);

struct ProgramStagesOutcome {
    std::int64_t samples = 0;            // sum of StallSample::count over the run's kernels
    std::int64_t mapped = 0;             // of them with a stage
    int kernels = 0;                     // launches with samples
    std::vector<std::string> missing;    // files samples point into without a stored text (sorted, once)
    std::vector<std::string> untraced;   // kernel names with samples but no traced launch in the run (roles unknown)
    std::string note;                    // "stage mapping: ..." for the run's notes ("" when the run has no samples)
};

// Assigns role and stage to every stall sample of `run` (the run's traced launches give the roles, run.sources the
// stage map) and returns what it did; the caller appends `note` to the run's notes.
ProgramStagesOutcome assignProgramStages(RunRecord& run);

}  // namespace ws::decode
