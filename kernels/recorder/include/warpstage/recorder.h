// The CUPTI recorder (issue 4): runs rungs of the kernel ladder on the GPU and
// writes one run per rung into a Warpstage SQLite file (core/include/warpstage/store.h).
//
//   pass 1 (timeline): CUPTI Activity API (concurrent kernels, memcpy, memset, runtime
//     and driver API for correlation) around the traced build of the rung; the event
//     buffer is read back and decoded (warpstage/decode.h) onto CUPTI's time base. The
//     untraced build is launched too, for its CUPTI time.
//   pass 2 (stalls): CUPTI PC sampling (KERNEL_SERIALIZED, start/stop, all stall
//     reasons) of the untraced build in a CHILD process (the same executable with
//     --stall-pass: CUPTI PC sampling after the Activity API in one process crashed once
//     on the H200, and the child subscribes to module loads before any CUDA call, which
//     source correlation needs). PCs -> source lines (cuptiGetSassToSourceCorrelation)
//     -> pipeline role/stage (warpstage/stage_map.h).
//
// Qt-free. docs/recording.md is the user-level description.
#pragma once

#include "warpstage/ladder.h"
#include "warpstage/model.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ws::rec {

// Exit codes of warpstage-record (documented in docs/recording.md and --help).
enum ExitCode : int {
    kExitOk = 0,
    kExitInternal = 1,     // unexpected error (a bug): message says what
    kExitUsage = 2,        // bad command line (unknown rung, bad shape, ...)
    kExitNoGpu = 3,        // no CUDA driver or no CUDA device: nothing written
    kExitNoCupti = 4,      // libcupti missing or unusable: nothing written
    kExitOutput = 5,       // output file cannot be created / is not a Warpstage file / write failed
    kExitRunFailed = 6,    // finished, but at least one run is stored with status Failed
    // (7-9: program mode, warpstage/program_record.h)
    kExitRungsSkipped = 10,// finished, every run stored complete, but selected rungs that cannot take the shape
                           // were skipped, each named with its sentence (warpstage/rung_plan.h); 6 and 7 win over it
    kExitInterrupted = 130 // SIGINT / SIGTERM: stopped cleanly; runs committed before are intact
};

struct Options {
    std::vector<std::string> rungs;          // rung names, bottom to top (empty: all)
    ladder::Shape shape{4096, 4096, 4096};
    int repetitions = 1;                     // traced (and untraced) launches recorded per rung
    std::string output;                      // .wstrace file: created, or a run appended
    std::vector<int> keepCtas;               // linear block indices to keep (empty: all)
    std::vector<int> keepSms;                // SM ids to keep (empty: all)
    bool stalls = true;                      // take pass 2
    std::int64_t stallTargetSamples = 300000;// sampling period chosen to give about this many samples per rung
    std::string commandLine;                 // exactly as typed (quoted)
    std::string selfExe;                     // executable that understands --stall-pass (default /proc/self/exe)
    std::string sourceDir;                   // a checkout to map PCs to stages from (default: the sources built into the recorder)
    int device = 0;
    bool checkResults = true;                // spot-check C against a host fp64 dot product
    int testEventsPerWarp = 0;               // tests only: > 0 overrides the event capacity (forces overflow)
};

struct ProgressEvent {
    std::string rung;
    int rungIndex = 0;                       // 1-based
    int rungCount = 0;
    std::string pass;                        // "setup", "timeline", "stalls", "write"
    std::string step;                        // human text: "traced launch 1/1", "decode", ...
    double percent = 0;                      // whole recording, 0..100
};

struct Callbacks {
    std::function<void(const ProgressEvent&)> progress;
    std::function<void(const std::string& level, const std::string& text)> message;  // "info", "warning", "error"
    std::function<void(const RunInfo& run, RowId runId)> runWritten;
};

struct Result {
    int exitCode = kExitOk;
    int runsWritten = 0;
    int runsFailed = 0;
    int rungsSkipped = 0;                    // selected rungs that cannot take the shape (not run)
    std::string error;                       // for exit codes 1..5, 130
};

// Checks the CUDA driver, the device and CUPTI without touching any file.
// Returns kExitOk, kExitNoGpu or kExitNoCupti with `message` saying why.
int checkEnvironment(int device, std::string& message);

// Records. `stop` is polled between steps (set it from a signal handler).
Result record(const Options& options, const Callbacks& callbacks, const std::atomic<bool>& stop);

// --- pass 2, child side --------------------------------------------------------
// If argv holds --stall-pass, runs the stall pass and returns its exit code; else -1.
// Call it first thing in main() of any executable used as Options::selfExe.
int maybeRunStallPass(int argc, char** argv);

// Child exit codes (besides 0): the parent turns them into RunInfo::notes. Private to the --stall-pass child
// (warpstage-record's own exit 10 is kExitRungsSkipped).
enum StallPassExit : int {
    kStallNoPermission = 10,  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
    kStallNotSupported = 11,  // CUPTI_ERROR_NOT_SUPPORTED / NOT_COMPATIBLE
    kStallError = 12,         // anything else (message in the output file)
};

// The build's repository root (for PC -> source mapping).
std::string defaultSourceDir();

}  // namespace ws::rec
