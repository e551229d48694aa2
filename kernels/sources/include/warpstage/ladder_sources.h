// The kernel ladder's source texts, built into the recorder (issue 10, "self-contained traces"):
// kernels/src/*.cu, *.cuh and kernels/include/warpstage/*.h, *.cuh are embedded at build time
// (embed_sources.cmake writes a generated .cpp), so that warpstage-record maps stall samples to pipeline
// stages and stores the rungs' sources in the trace when it runs outside the source tree, installed, with
// no WARPSTAGE_SOURCE_DIR. The embedded text is what the ladder was compiled from, so it is preferred to
// whatever a checkout holds today. Qt-free, CUDA-free.
#pragma once

#include "warpstage/model.h"
#include "warpstage/stage_map.h"

#include <string>
#include <string_view>
#include <vector>

namespace ws::ladder {

struct EmbeddedSource {
    std::string_view path;  // repository-relative: "kernels/src/pingpong.cu"
    std::string_view text;
};

// Every embedded file, sorted by path (generated code).
const std::vector<EmbeddedSource>& embeddedSources();
// The embedded file of repository path `path`, or nullptr.
const EmbeddedSource* embeddedSource(std::string_view path);

// Where the recorder takes a ladder file's text from.
struct LadderSources {
    std::vector<SourceFile> files;  // the rung's file first, then its helper headers (with sha256)
    std::string origin;             // "built in" or the folder it was read from
    std::string problem;            // why nothing was found ("" when files is not empty)
};

// The rung's source `rungPath` ("kernels/src/pingpong.cu") and the helper headers (*.cuh) of its folder: from
// `sourceDir` (a checkout named on purpose) when it is not empty, else the texts built in. Never looks at the
// working directory or the environment.
LadderSources ladderSources(const std::string& rungPath, const std::string& sourceDir = {});

// The stage map of a rung from ladderSources(): the rung's file plus its helpers (StageMap::fromSource +
// addHelperSource). Empty when `src.files` is.
decode::StageMap ladderStageMap(const LadderSources& src);

}  // namespace ws::ladder
