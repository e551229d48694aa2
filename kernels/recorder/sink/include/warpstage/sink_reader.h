// Reading the injection library's sink files (warpstage/sink_format.h) and turning them into runs
// (one RunRecord per process and device). Qt-free and CUDA-free: tested without a GPU
// (tests/recorder/tst_sink.cpp) on hand-built, truncated and multi-process sinks.
#pragma once

#include "warpstage/model.h"
#include "warpstage/sink_format.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ws::sink {

// A traced launch of a user's instrumented kernel (RecType::TraceLaunch + its TraceChunks).
struct SinkTrace {
    TraceLaunchRec rec{};
    std::string kernel;                   // mangled name
    std::vector<std::string> phaseNames, roleNames;
    std::string sourcePath;               // the kernel's .cu file as compiled (may be relative to cwd)
    std::string data;                     // the buffer as far as chunks arrived (rec.bufferBytes when complete)
    std::uint64_t received = 0;           // bytes that arrived in chunks
    bool complete() const { return received == rec.bufferBytes; }
};

struct SinkTraceNote {
    std::uint32_t correlationId = 0;      // 0: not about one launch
    std::uint32_t deviceId = 0;
    std::string text;
};

// Everything one sink file holds, decoded but not yet interpreted.
struct SinkProcess {
    std::string path;
    bool hasProcess = false;         // the ProcessRec was found (first record)
    std::int64_t pid = 0, ppid = 0;
    std::uint64_t openedRealtimeNs = 0, openedCuptiNs = 0;
    std::string exe, cwd;
    std::vector<std::string> argv;
    std::map<std::uint32_t, std::string> strings;
    std::vector<DeviceRec> devices;
    std::vector<ContextRec> contexts;
    std::vector<KernelRec> kernels;
    std::vector<MemRec> mem;
    std::vector<ApiRec> api;
    std::vector<NvtxRec> nvtx;
    std::vector<SinkTrace> traces;        // traced launches (issue 10), in launch order
    std::vector<SinkTraceNote> traceNotes;
    // the stall pass (RecType 50-59)
    std::vector<StallLaunchRec> stallLaunches;
    std::vector<StallSampleRec> stallSamples;
    std::vector<StallCountRec> stallCounts;
    std::map<std::uint64_t, std::string> cubins;       // CRC -> cubin bytes
    std::vector<std::pair<std::int32_t, std::string>> stallNotes;
    std::uint64_t dropped = 0;       // CUPTI's dropped-record count, summed over buffers
    std::uint64_t flushes = 0;
    bool ended = false;              // an EndRec was written (atexit, or a caught fatal signal)
    EndRec end{};
    bool truncated = false;          // the file ends inside a record
    std::string error;               // not a sink, bad version, corrupt record (what was read before is kept)
    std::uint64_t bytes = 0;

    const std::string& str(std::uint32_t id) const;  // "" for 0 / unknown ids
};

// Reads one file. Never throws: problems go to SinkProcess::error / truncated.
SinkProcess readSink(const std::string& path);
// Every *.wsink file of a folder, sorted by path.
std::vector<SinkProcess> readSinkDir(const std::string& dir);

// How the program the recorder started (the root process) ended.
struct ProgramOutcome {
    std::int64_t rootPid = 0;
    int exitCode = -1;               // -1: unknown
    int exitSignal = 0;
    bool timedOut = false;
    double timeoutSeconds = 0;
    bool interrupted = false;        // the recorder was asked to stop (SIGINT/SIGTERM) and stopped the program
};

struct ConvertOptions {
    ProgramOutcome outcome;
    double durationSeconds = 0;      // > 0: keep only records starting in the first S seconds of the process
    std::vector<std::string> sourceDirs;  // --source-dir: where else to look for kernels' source files
    std::string nvtxRange;           // non-empty: keep only records inside NVTX ranges of this name
    std::string commandLine;         // of warpstage-record, for RunInfo::commandLine
    std::string host;
    std::string startedAt;
    std::string driverVersion;
    std::string cuptiVersion;
};

struct ConvertResult {
    std::vector<RunRecord> runs;     // one per (process, device) that has any kernel, copy or API call
    std::vector<std::string> warnings;
    int processesWithoutCuda = 0;    // sinks with no CUDA record (e.g. NVTX only)
};

// One RunRecord per (pid, device): kind Program, status Complete or Incomplete (+ reason), launches as
// KernelRecords without per-warp data (names demangled, launchIndex per name), memops, streams, NVTX
// ranges (paired per thread and domain; open ones end at the process's last record, closed = false), the
// API spans that launched a kernel or copy plus graph launches and synchronisations. NVTX ranges and
// API calls not tied to a device go to the process's lowest-ordinal device run.
ConvertResult toRuns(const std::vector<SinkProcess>& sinks, const ConvertOptions& options);

// Why a run is incomplete, or "" if it is complete. `isRoot`: the process the recorder started.
std::string incompleteReason(const SinkProcess& s, const ProgramOutcome& o, bool isRoot);

std::string demangle(const std::string& mangled);

// SHA-256 of `text` as 64 lowercase hex digits (SourceFile::sha256).
std::string sha256Hex(const std::string& text);

// Decodes the sink's traced launches of device `deviceId` into the matching KernelRecords of `run`
// (by correlation id; sink_traces.cpp): warps, intervals, loads, tiles, phase names; adds the
// kernels' source files to run.sources (findSource(); files that cannot be read are named in the notes) and every problem (overflow per warp, no role, version mismatch,
// buffers cut short, trace notes of the injection library) to run.info.notes; a launch whose decode
// failed makes the run Failed with the reason. Returns the number of launches decoded.
int attachTraces(const SinkProcess& sink, std::uint32_t deviceId, RunRecord& run,
                 const std::vector<std::string>& sourceDirs = {});

// Where a kernel's source file is: `path` as the compiler saw it (__BASE_FILE__: absolute, or relative to the
// directory the compiler ran in, which is not recorded). Tried in order: an absolute path as it is; relative to
// the process's cwd; relative to the directories of its executable and of argv[0] and up to 4 of their parents (a
// build tree: the compiler ran in an ancestor of the binary's folder); then each of `sourceDirs` + path, with the
// leading "../" parts dropped, and + the file name alone. Returns the first regular file, or "" (then `tried`
// says how many places were looked at).
std::string findSource(const std::string& path, const SinkProcess& s, const std::vector<std::string>& sourceDirs,
                       int* tried = nullptr);

// The text of the file findSource() finds for `path` (at most 2 MiB); false with `why` ("source X not found
// (looked in N places: ...)", "... not stored (too large)", "... unreadable") otherwise.
bool readSource(const std::string& path, const SinkProcess& s, const std::vector<std::string>& sourceDirs, std::string& text,
                std::string& why);

}  // namespace ws::sink
