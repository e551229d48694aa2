// The stall pass of `warpstage-record --kernels REGEX -- PROGRAM`: attaching the PC-sampling records of the
// second run of the program (RecType 50-59 of its sinks) to the matching launches of the first, timeline run.
// Qt-free and CUDA-free: tested on plain data without a GPU (tests/recorder/tst_stall_match.cpp).
//
// Matching: a process of the stall run answers the process of the timeline run with the same argv (the n-th
// such process of one run answers the n-th of the other, by start time). Within it, a launch is named by
// (device, kernel name, launch index), the launch index counting that name's launches on that device in the
// order the program made them (correlation ids; launches from CUDA graphs are neither counted nor sampled).
// Where the two runs disagree (other counts, names only one run has: a non-deterministic program), what
// matches is kept and the run's notes and the warnings say what did not.
#pragma once

#include "warpstage/model.h"
#include "warpstage/sink_reader.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ws::sink {

struct StallMatchOptions {
    std::string kernelsRegex;                     // --kernels (ECMAScript, searched in the demangled name)
    long long launchFirst = -1, launchLast = -1;  // --launch-range A:B (inclusive); -1: all
    std::vector<std::string> sourceDirs;          // --source-dir (and WARPSTAGE_SOURCE_DIR): where else sources are looked for
};

// Called once per sample before it is stored: fill sourceFile/line (from the cubin of that CRC in `from`)
// and reasonLabel; return false to drop the sample (e.g. a "_not_issued" duplicate reason).
using StallFinish = std::function<bool(StallSample& sample, std::uint64_t cubinCrc, const SinkProcess& from)>;

struct StallMatchResult {
    int launchesWithSamples = 0;      // timeline launches that received samples
    int kernelsSampled = 0;           // distinct (process, device, name) with a sampled launch
    std::int64_t samples = 0;         // samples stored (sum of StallSample::count)
    std::int64_t samplesWithoutSource = 0;
    int samplesUnmatched = 0;         // sample records left over: their launch has no counterpart
    bool mismatch = false;            // the runs disagree somewhere (see warnings)
    std::vector<std::string> warnings;
};

// Adds StallSample rows to `runs` (the timeline runs that toRuns() made from `timelineSinks`), sets
// RunInfo::hasStalls and appends a "stall pass: ..." note to every run. The text of every source file the
// samples point into (their sourceFile, as the line info names it) is added to run.sources with its sha256
// (readSource(): the path, the process's folders, options.sourceDirs), once per run; the note names the files
// that could not be found, and says when samples have no source line at all (a binary built without line
// info: the samples are kept with their function and pc). Never throws.
StallMatchResult attachStalls(std::vector<RunRecord>& runs, const std::vector<SinkProcess>& timelineSinks,
                              const std::vector<SinkProcess>& stallSinks, const StallMatchOptions& options,
                              const StallFinish& finish);

}  // namespace ws::sink
