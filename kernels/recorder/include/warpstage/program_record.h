// `warpstage-record [options] -o FILE -- PROGRAM [ARGS...]`: records an unmodified CUDA program through
// the driver's injection hook (libwarpstage-inject.so, kernels/recorder/inject) and stores one run per
// process and device (docs/recording.md, "Record your program"). Qt-free; needs no CUDA runtime itself
// (libcuda is only asked, through dlopen, whether a GPU exists when the program recorded nothing).
#pragma once

#include "warpstage/recorder.h"

#include <atomic>
#include <string>
#include <vector>

namespace ws::rec {

// Exit codes of program mode besides those of recorder.h (documented in docs/recording.md).
enum ProgramExitCode : int {
    kExitProgramIncomplete = 7,  // recorded, but the program did not end normally (exit code != 0, a signal,
                                 // --timeout) or a process's records are cut short: runs stored INCOMPLETE
    kExitNoCudaCall = 8,         // the program ran but made no CUDA call: nothing recorded, file untouched
    kExitProgramNotRunnable = 9, // the program does not exist or is not executable: nothing run or written
};

struct ProgramOptions {
    std::string output;
    std::vector<std::string> program;   // PROGRAM ARGS...
    std::string commandLine;            // warpstage-record's own, quoted
    std::string kernelsRegex;           // --kernels: instrumented kernels traced per warp; the stall pass's kernels
    long long launchFirst = -1, launchLast = -1;  // --launch-range A:B: which of their launches (per-name index)
    long long traceEvents = 2048;       // --trace-events N: capacity of each warp's trace region
    std::vector<std::string> sourceDirs; // --source-dir DIR (repeatable): where else kernels' sources are looked for
    double durationSeconds = 0;         // --duration
    std::string nvtxRange;              // --nvtx-range
    double timeoutSeconds = 0;          // --timeout: SIGTERM to the program's process group, SIGKILL 5 s later
    bool stalls = true;                 // --no-stalls: no second run with PC sampling for --kernels
    bool keepSinks = false;             // --keep-sinks: leave the raw sink files next to the output
    std::string injectLibrary;          // default: findInjectLibrary()
    double killGraceSeconds = 5;
    std::string runVariant;             // if set: every run's variant (e.g. "lce_padded"; default: the program's name)
    std::string runNotes;               // if set: put in front of every run's notes (e.g. a [ws-rung ...] tag)
};

// The injection library: $WARPSTAGE_INJECT_LIB, else findInjectLibraryFrom(this executable's folder). "" if none.
std::string findInjectLibrary();
// Next to the executable (the build tree), else where `cmake --install` puts it relative to bin/
// (<libdir>/warpstage/, e.g. ../lib/warpstage). "" if neither exists.
std::string findInjectLibraryFrom(const std::string& exeDir);

// Resolves PROGRAM like execvp (PATH search when it has no '/'). Returns the path, or "" and `why`.
std::string resolveProgram(const std::string& program, std::string& why);

// Runs and records the program. `stop` is polled (set it from SIGINT/SIGTERM handlers): the signal is
// forwarded to the program's process group, what was recorded is stored as INCOMPLETE, exit 130.
Result recordProgram(const ProgramOptions& options, const Callbacks& callbacks, const std::atomic<bool>& stop,
                     const std::atomic<int>& stopSignal);

}  // namespace ws::rec
