// `warpstage-record --rungs lce:all` (issue 11): the linear-compression family recorded like the GEMM ladder,
// one run per rung, but through the same path a user's program takes: the program recorder runs the `lce`
// driver (kernels/lce) once per rung with the rung's --kernels filter, --launch-range and --trace-events, and
// labels each run (variant "lce_<rung name>", a [ws-rung ...] tag in its notes with the useful FLOPs and the
// bytes model of lce_shape.cpp). docs/recording.md, "The linear-compression family".
#pragma once

#include "warpstage/program_record.h"

#include "lce_shape.h"

#include <atomic>
#include <string>
#include <vector>

namespace ws::rec {

// What --rungs selected: GEMM ladder rungs by name ("all" = every one) and lce rungs by index.
struct RungSelection {
    std::vector<std::string> gemm;  // empty and !gemmAll: none
    bool gemmAll = false;
    std::vector<int> lce;           // ascending, no duplicates
};
// "all" (the GEMM ladder), "sync,pingpong", "lce:all", "lce:0,lce:3", "lce:padded", mixed "sync,lce:4" or
// "all,lce:all" (both families; the GUI's Record dialog sends that).
// `isGemmRung` says whether a name is a GEMM ladder rung. Returns "" or the sentence for exit 2.
std::string parseRungList(const std::string& list, RungSelection* sel, bool (*isGemmRung)(const std::string&));

// The lines --list-rungs prints for the family ("lce:0             original: one batched GEMM ...").
std::vector<std::string> lceRungLines();

// "MxNxKUxKCxBxPER", each >= 1 (e.g. 433x256x1178x866x1024x70, the benchmark point). "" or why not.
std::string parseLceShape(const std::string& text, lce::Shape* shape);

struct LceOptions {
    std::string output;
    std::vector<int> rungs;           // 0..4
    lce::Shape shape;                 // default: the benchmark point
    int warmup = 2, iterations = 5;   // the driver's --warmup / --iters (each one program run: every launch)
    long long traceEvents = 8192;     // rungs 3-4: capacity per warp of the one traced launch
    bool stalls = true;               // rungs 3-4: the stall pass for that launch
    std::string program;              // the `lce` driver; "" = findLceProgram()
    std::string commandLine;          // warpstage-record's own
    std::string injectLibrary;        // "" = findInjectLibrary()
};

// $WARPSTAGE_LCE, else next to this executable (`lce`), else the build tree's kernels/lce/lce, else
// <libdir>/warpstage/lce of an install. "" if none.
std::string findLceProgram();
std::string findLceProgramFrom(const std::string& exeDir);

// The instrumented kernels of the rung as named in kernels/lce (rung 3 {"lceEpilogueWarp"}, rung 4
// {"lceUserFirst"}), none for the cuBLAS rungs 0-2; and the --kernels regex made of them ("" for rungs 0-2).
std::vector<std::string> lceKernelNames(int rung);
std::string lceKernelsRegex(int rung);
// The teaching/variant name of a rung: "lce_original", ..., "lce_fused_epilogue", "lce_persistent" (the rungs'
// ideas, stored in recorded files; not kernel names).
std::string lceVariant(int rung);
// The program options of one rung: the driver's command line, the filters, the label.
ProgramOptions lceProgramOptions(int rung, const LceOptions& o, const std::string& program);

// Records every rung of `o.rungs`, each its own program run. Checks first (nothing run, nothing written):
// at least one rung accepts the shape (2; one that does not is skipped with its sentence, exit 10 at the end:
// warpstage/rung_plan.h), the driver exists (exit 9), the output is usable (5), an sm_90 GPU (3) and CUPTI (4)
// are there. A rung that fails is stored as the program recorder stores it and the next rung runs; an interrupt
// stops after the current rung (runs written before stay).
Result recordLce(const LceOptions& o, const Callbacks& cb, const std::atomic<bool>& stop, const std::atomic<int>& stopSignal);

}  // namespace ws::rec
