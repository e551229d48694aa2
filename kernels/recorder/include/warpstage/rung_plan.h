// Which of the selected rungs warpstage-record records on the given shape (issue 14: every rung on every
// shape). A rung that cannot take the shape -- the GEMM ladder's CUDA-core `sync` needs whole 128x128x32 tiles,
// the tensor-core rungs K a multiple of 8, lce rungs 3-4 N a multiple of 8 -- is skipped with its sentence
// (ladder::checkShape(), lce::refusal()) and the others are recorded: exit 10 at the end (docs/recording.md).
// Only when no selected rung can take the shape does the recording stop before anything runs (exit 2).
// Host logic only (no GPU, no CUDA call): tested by tst_record_cli and tst_lce_record.
#pragma once

#include "warpstage/ladder.h"

#include "lce_shape.h"

#include <string>
#include <vector>

namespace ws::rec {

struct SkippedRung {
    std::string rung;  // "sync", "lce:3"
    std::string why;   // the rung's own sentence
};

struct GemmRungPlan {
    std::vector<std::string> record;   // in the order given
    std::vector<SkippedRung> skipped;  // rungs that refuse the shape
    std::string error;                 // an unknown rung (exit 2), else ""
};
// `rungs` empty: every rung of ladder::rungs().
GemmRungPlan planGemmRungs(const std::vector<std::string>& rungs, const ladder::Shape& shape);

struct LceRungPlan {
    std::vector<int> record;           // ascending, as given
    std::vector<SkippedRung> skipped;
};
LceRungPlan planLceRungs(const std::vector<int>& rungs, const lce::Shape& shape);

// The warning printed for a skipped rung: "sync skipped: sync needs K a multiple of 8: ...".
std::string skippedText(const SkippedRung& s);
// The error when every selected rung refuses (exit 2): each rung's sentence, joined.
std::string noRungTakesText(const std::vector<SkippedRung>& skipped, const std::string& shapeText);

}  // namespace ws::rec
