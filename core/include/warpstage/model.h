// Warpstage trace model: what one recording of a pipelined kernel holds.
//
// Qt-free and CUDA-free. Every timestamp is int64 nanoseconds on the run's one
// time base (CUPTI's, after the recorder aligned the in-kernel clocks to it).
//
// Two shapes of the same data live here:
//   * record types (RunInfo, KernelLaunch, Cta, Warp, Interval, ...): one struct
//     per row, used for writing a run and for small tables;
//   * KernelTrace: the loaded, columnar, per-lane form that the analysis and the
//     viewer work on (per-warp arrays sorted by start).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ws {

using TimeNs = std::int64_t;
using RowId = std::int64_t;  // SQLite rowid of a run, kernel, CTA or warp

// ---------------------------------------------------------------------------
// Interval kinds. The numeric values are stored in files and in the device
// event buffers: never renumber, only append.
enum class IntervalKind : std::uint8_t {
    Other = 0,      // anything the kernel did not name
    Setup = 1,      // prologue: barrier init, descriptor prefetch, ...
    WaitSlot = 2,   // producer waits for a free slot (back-pressure: empty barrier)
    IssueLoad = 3,  // producer issues the load(s) of one k-step (TMA or cp.async)
    WaitData = 4,   // consumer waits for a k-step's data (starvation: full barrier)
    MmaIssue = 5,   // consumer issues tensor-core MMAs (wgmma) for one k-step
    MmaWait = 6,    // consumer waits for its MMAs to complete
    Release = 7,    // consumer releases a slot (arrive on the empty barrier)
    Epilogue = 8,   // accumulators -> registers/shared (convert, stage)
    Store = 9,      // write C to global memory (plain stores or TMA store)
    Load = 10,      // synchronous load by the computing warps themselves (global -> shared)
    Sync = 11,      // CTA-wide barrier (__syncthreads / bar.sync)
    Compute = 12,   // CUDA-core math (FFMA) on a k-step
    WaitOrder = 13, // ping-pong: waits for its turn (math/epilogue ordering barrier)
    WaitPartial = 14, // stream-K: a tile's finisher waits for the earlier pieces' partial sums (their flags)
    Fixup = 15,       // stream-K: partial sums written to / read from the workspace and added
    Count_ = 16
};
inline constexpr int kIntervalKindCount = static_cast<int>(IntervalKind::Count_);

// Stable short name ("wait_slot", "issue_load", ...) and a human label ("Wait for free slot").
std::string_view intervalKindName(IntervalKind k);
std::string_view intervalKindLabel(IntervalKind k);
std::optional<IntervalKind> intervalKindFromName(std::string_view name);

// User-named phases (issue 10): a kernel instrumented with the public header <warpstage/trace.cuh> may
// enter phases it names itself. Their kinds are kUserPhaseBase + i (i < kMaxUserPhases); the name of
// kind kUserPhaseBase + i is KernelRecord/KernelTrace::phaseNames[i]. Kinds in [Count_, kUserPhaseBase)
// are reserved for future standard kinds. None of the analysis's standard categories includes them:
// they are neither compute nor wait (an engineer names what they are in the phase name).
inline constexpr std::uint8_t kUserPhaseBase = 64;
inline constexpr int kMaxUserPhases = 176;   // kinds 64..239 (0xF0.. are device-side markers)
inline bool isUserPhase(IntervalKind k)
{
    return static_cast<std::uint8_t>(k) >= kUserPhaseBase
        && static_cast<std::uint8_t>(k) < kUserPhaseBase + kMaxUserPhases;
}

// True for kinds that count as compute for overlap analysis (MmaIssue, MmaWait, Compute).
bool isComputeKind(IntervalKind k);
// True for kinds where a warp is stalled waiting on the pipeline (WaitSlot, WaitData, WaitOrder, Sync).
bool isWaitKind(IntervalKind k);

// ---------------------------------------------------------------------------
enum class WarpRole : std::uint8_t {
    Unknown = 0,
    Producer = 1,  // issues loads
    Consumer = 2,  // computes (MMA)
    Epilogue = 3,  // dedicated epilogue/store warps
    Worker = 4,    // loads and computes itself (synchronous / multistage rungs)
    Idle = 5,      // launched but does no pipeline work (e.g. the spare warps of a producer warpgroup)
};
std::string_view warpRoleName(WarpRole r);
std::optional<WarpRole> warpRoleFromName(std::string_view name);

// ---------------------------------------------------------------------------
// Record types

struct DeviceInfo {
    std::string name;            // "NVIDIA H200"
    int computeMajor = 0;
    int computeMinor = 0;
    int smCount = 0;
    int smClockKHz = 0;          // clock the recorder read (cudaDevAttrClockRate or measured)
    int memClockKHz = 0;
    std::int64_t l2Bytes = 0;
    std::int64_t globalMemBytes = 0;
};

// Complete: everything recorded. Failed: the recording itself failed (trace overflow, kernel fault).
// Incomplete (schema 3): a program recording that ended early (the program crashed, was killed, hung
// and was stopped by --timeout, or the recorder was interrupted); what was flushed before that is kept,
// failureReason says why, RunInfo::exitCode/exitSignal say how the program ended.
enum class RunStatus : std::uint8_t { Complete = 0, Failed = 1, Incomplete = 2 };

// What a run is (schema 3). Ladder: one rung of the bundled GEMM ladder run by warpstage-record --rungs
// (a small program: its memcpys, warm-up and traced launches). Program: one process of a user's program
// on one device, recorded by warpstage-record -- PROGRAM. Synthetic runs keep RunInfo::synthetic.
enum class RunKind : std::uint8_t { Ladder = 0, Program = 1 };
std::string_view runKindName(RunKind k);                          // "ladder", "program"
std::optional<RunKind> runKindFromName(std::string_view name);

struct RunInfo {
    RowId id = 0;                // assigned by the store
    std::string variant;         // kernel rung, e.g. "pingpong"
    int m = 0, n = 0, k = 0;     // problem shape (C = A * B^T, A MxK, B NxK)
    bool synthetic = false;      // generated, not recorded on a GPU
    RunStatus status = RunStatus::Complete;
    std::string failureReason;   // why a run failed (overflow, kernel fault, ...)
    DeviceInfo device;
    std::string driverVersion;   // "580.159.04" or CUDA driver API int as text
    std::string cudaVersion;     // runtime version
    std::string cuptiVersion;
    std::string host;
    std::string startedAt;       // ISO-8601 UTC
    std::string commandLine;
    std::string notes;           // free text (e.g. why stalls were skipped)
    bool hasTimeline = true;     // pass 1 present
    bool hasStalls = false;      // pass 2 present

    // --- schema 3: programs (defaults describe a ladder run)
    RunKind kind = RunKind::Ladder;
    std::int64_t pid = 0;            // process id of the recorded process (0: unknown / the recorder itself)
    std::int64_t parentPid = 0;      // its parent (a launcher's workers point at the launcher's run pid)
    std::string program;             // executable as started ("python3", "/abs/path/app")
    std::string workingDir;
    int deviceOrdinal = 0;           // CUDA device ordinal in that process
    std::string deviceUuid;          // "GPU-…" where CUPTI reports it, else ""
    TimeNs processStart = 0;         // first and last record of the process on this device (run time base)
    TimeNs processEnd = 0;
    int exitCode = -1;               // the program's exit status (-1: unknown / still running when stopped)
    int exitSignal = 0;              // signal that ended it (SIGKILL = 9, ...), 0 if none
};

// A CUDA stream of a run (schema 3): CUPTI's stream id within its context.
struct StreamInfo {
    RowId id = 0;
    RowId runId = 0;
    std::uint32_t contextId = 0;
    std::uint32_t streamId = 0;
    int priority = 0;
    bool isDefault = false;          // the legacy / per-thread default stream
    std::string name;                // from nvtxNameCudaStream, else ""
};

enum class NvtxKind : std::uint8_t { PushPop = 0, StartEnd = 1, Mark = 2 };
std::string_view nvtxKindName(NvtxKind k);                        // "push_pop", "start_end", "mark"
std::optional<NvtxKind> nvtxKindFromName(std::string_view name);

// An NVTX range or mark of a run (schema 3): torch's record_function / emit_nvtx, users' ranges.
struct NvtxRange {
    RowId id = 0;
    RowId runId = 0;
    NvtxKind kind = NvtxKind::PushPop;
    std::string domain;              // "" for the default domain
    std::string name;
    TimeNs start = 0;
    TimeNs end = 0;                  // == start for a mark; a range still open when recording ended ends there
    std::uint32_t threadId = 0;      // OS thread id that pushed / started it
    int depth = 0;                   // push/pop nesting depth on that thread (0 = outermost); 0 for start/end
    std::uint32_t color = 0;         // ARGB, 0 if none
    std::int64_t category = 0;
    bool closed = true;              // false: still open when the recording ended
};

// A CPU-side CUDA API call (schema 3): the runtime/driver call that launched a kernel or copy; its
// correlationId equals the KernelLaunch's / MemOp's, which draws the launch -> run arrow.
struct ApiSpan {
    RowId id = 0;
    RowId runId = 0;
    std::string name;                // "cudaLaunchKernel", "cuLaunchKernelEx", "cudaGraphLaunch", ...
    std::uint32_t cbid = 0;          // CUPTI callback id
    bool driver = false;             // driver API (cu*) rather than runtime (cuda*)
    TimeNs start = 0;
    TimeNs end = 0;
    std::uint32_t threadId = 0;
    std::uint32_t correlationId = 0;
    int result = 0;                  // the call's return code (0 = success)
};

struct KernelLaunch {
    RowId id = 0;
    RowId runId = 0;
    std::string name;            // demangled kernel name as CUPTI reports it
    std::string variant;         // rung that launched it ("" for library kernels such as cuBLAS)
    bool traced = false;         // built with per-warp tracing
    int grid[3] = {1, 1, 1};
    int block[3] = {1, 1, 1};
    int cluster[3] = {1, 1, 1};
    int dynamicSmemBytes = 0;
    int staticSmemBytes = 0;
    int registersPerThread = 0;
    TimeNs start = 0;            // CUPTI kernel start/end on the run time base
    TimeNs end = 0;
    std::uint32_t correlationId = 0;
    std::uint32_t streamId = 0;
    double alignResidualNs = 0;  // residual of the in-kernel -> CUPTI clock alignment
    std::int64_t droppedEvents = 0;  // events lost to buffer overflow (run is then Failed)
    // --- schema 3
    std::uint32_t contextId = 0;
    std::uint32_t graphId = 0;   // CUDA graph the launch belongs to (0: not from a graph)
    std::uint64_t graphNodeId = 0;
    int launchIndex = 0;         // 0-based index among the run's launches of the same name (--launch-range counts these)
};

enum class MemOpKind : std::uint8_t { Unknown = 0, HtoD = 1, DtoH = 2, DtoD = 3, Memset = 4, Other = 5 };

struct MemOp {
    RowId id = 0;
    RowId runId = 0;
    MemOpKind kind = MemOpKind::Unknown;
    std::int64_t bytes = 0;
    TimeNs start = 0;
    TimeNs end = 0;
    std::uint32_t correlationId = 0;
    std::uint32_t streamId = 0;
    // --- schema 3
    std::uint32_t contextId = 0;
    std::uint32_t graphId = 0;
    std::uint64_t graphNodeId = 0;
};

struct Cta {
    RowId id = 0;
    RowId kernelId = 0;
    int blockLinear = 0;         // blockIdx linearised (x + y*gx + z*gx*gy)
    int smId = -1;
    TimeNs start = 0;
    TimeNs end = 0;
    int tileM = -1, tileN = -1;  // first output tile the CTA computed (tile units); -1 if none
    double nsPerCycle = 0;       // calibration used for this CTA (globaltimer / clock64 slope)
};

struct Warp {
    RowId id = 0;
    RowId ctaId = 0;
    int warpIndex = 0;           // warp index within the CTA
    int warpgroup = 0;           // warpIndex / 4
    WarpRole role = WarpRole::Unknown;
    std::string roleName;        // display name: "producer", "consumer WG1", "epilogue", ...
};

struct Interval {
    RowId warpId = 0;
    IntervalKind kind = IntervalKind::Other;
    std::int16_t slot = -1;      // pipeline slot (ring stage), -1 if none
    std::int32_t kstep = -1;     // CTA-wide running k-step (fill) counter, -1 if none
    TimeNs start = 0;
    TimeNs duration = 0;         // >= 0
};

// One output tile processed by a warp (persistent kernels walk many tiles).
struct TileSpan {
    RowId ctaId = 0;
    RowId warpId = 0;            // consumer warp that computed it (0 if CTA-wide)
    int tileM = 0, tileN = 0;
    TimeNs start = 0;
    TimeNs end = 0;
};

// One load in flight: issued by the producer, observed ready by a consumer.
struct LoadTransfer {
    RowId ctaId = 0;
    std::int16_t slot = -1;
    std::int32_t kstep = -1;
    TimeNs issue = 0;
    TimeNs ready = 0;            // >= issue
    std::int64_t bytes = 0;      // bytes the load brought in (0 if unknown)
};

struct StallSample {
    RowId kernelId = 0;          // kernel (untraced launch of the rung) the samples came from
    std::uint64_t pcOffset = 0;  // offset in the function
    std::string functionName;
    std::string sourceFile;      // "" if unknown
    int line = 0;                // 0 if unknown
    std::string reason;          // CUPTI's name, e.g. "smsp__pcsamp_warps_issue_stalled_long_scoreboard"
    std::string reasonLabel;     // short human label, e.g. "long scoreboard (global/L2 data)"
    std::int64_t count = 0;
    WarpRole role = WarpRole::Unknown;  // pipeline role the PC belongs to, where known
    std::string stage;           // pipeline stage the PC belongs to, e.g. "wait_data", "mma_issue"
};

struct Metric {
    RowId runId = 0;
    RowId kernelId = 0;          // 0 for run-wide
    std::string scope;           // "kernel", "cta:<blockLinear>", "wg:<warpgroup>", ...
    std::string name;            // see docs/metrics.md
    double value = 0;
    std::string unit;            // "ratio", "ns", "TFLOP/s", ...
};

// An outer scope of a warp (schema 6, table scope_spans): a named span that contains other phases of the
// warp, drawn as a thin bracket lane above the warp (Proton's nested scopes, docs/interop.md).
struct ScopeSpan {
    RowId warpId = 0;            // KernelRecord: local warp index; KernelTrace: Lane::warpId
    int depth = 0;               // 0 = outermost
    std::string name;
    TimeNs start = 0;
    TimeNs end = 0;
};

// Everything of one kernel launch, as written by the recorder.
struct KernelRecord {
    KernelLaunch launch;
    std::vector<Cta> ctas;                // Cta::id is a local index here (0..n-1)
    std::vector<Warp> warps;              // Warp::ctaId = local CTA index; Warp::id = local warp index
    std::vector<Interval> intervals;      // Interval::warpId = local warp index
    std::vector<TileSpan> tiles;          // local indices, like intervals (warpId < 0: CTA-wide)
    std::vector<LoadTransfer> loads;      // LoadTransfer::ctaId = local CTA index
    std::vector<StallSample> stalls;
    std::vector<std::string> phaseNames;  // names of user phases: [i] names kind kUserPhaseBase + i
    std::vector<ScopeSpan> scopes;        // outer (bracket) scopes; ScopeSpan::warpId = local warp index
};

// Source text kept in the trace (issue 10: self-contained traces): every instrumented kernel's source
// file and every file its stall samples point into, as it was when recorded.
struct SourceFile {
    std::string path;            // as the line info / recorder names it
    std::string sha256;          // hex digest of text
    std::string text;
};

// Everything of one run, as written by the recorder in one transaction.
struct RunRecord {
    RunInfo info;
    std::vector<KernelRecord> kernels;
    std::vector<MemOp> memOps;
    std::vector<Metric> metrics;          // Metric::kernelId = index into kernels + 1, 0 = run-wide
    // schema 3: program-level records (ids and runId are assigned by the store)
    std::vector<StreamInfo> streams;
    std::vector<NvtxRange> nvtx;
    std::vector<ApiSpan> apiSpans;
    std::vector<SourceFile> sources;      // schema 4
};

// The program-level view of one run (TraceStore::loadProgram): every launch, copy, NVTX range and API
// call, each vector sorted by start. Launches carry no per-warp data (KernelLaunch::traced says whether
// loadKernel() can give one).
struct ProgramTrace {
    RunInfo run;
    std::vector<KernelLaunch> kernels;
    std::vector<MemOp> memOps;
    std::vector<StreamInfo> streams;      // every stream that appears in kernels or memOps
    std::vector<NvtxRange> nvtx;
    std::vector<ApiSpan> apiSpans;
    TimeNs firstStart() const;            // min over all records (0 if none)
    TimeNs lastEnd() const;
};

// ---------------------------------------------------------------------------
// Loaded, columnar form of one kernel launch. Lanes are warps, ordered
// SM, CTA, warp index. Each lane's arrays are sorted by start.
struct Lane {
    RowId warpId = 0;
    std::int32_t ctaIndex = 0;            // index into KernelTrace::ctas
    std::int32_t warpIndex = 0;
    std::int32_t warpgroup = 0;
    WarpRole role = WarpRole::Unknown;
    std::string roleName;

    std::vector<TimeNs> start;
    std::vector<std::int32_t> duration;   // ns; intervals longer than 2^31-1 ns are clamped by the loader
    std::vector<IntervalKind> kind;
    std::vector<std::int16_t> slot;
    std::vector<std::int32_t> kstep;

    std::size_t size() const { return start.size(); }
    TimeNs end(std::size_t i) const { return start[i] + duration[i]; }
};

struct KernelTrace {
    RunInfo run;
    KernelLaunch launch;
    std::vector<Cta> ctas;                // sorted by (smId, start)
    std::vector<Lane> lanes;
    std::vector<TileSpan> tiles;          // ctaId = index into ctas; warpId = Lane::warpId (0: CTA-wide)
    std::vector<LoadTransfer> loads;      // sorted by issue; ctaId = index into ctas
    std::vector<StallSample> stalls;      // of the run's untraced launch of the same rung, if any
    std::vector<std::string> phaseNames;  // user phase names, as KernelRecord::phaseNames
    std::vector<SourceFile> sources;      // the run's recorded source files (LoadOptions::sources)
    std::vector<ScopeSpan> scopes;        // outer scopes (bracket lanes), warpId = Lane::warpId; sorted by
                                          // (warpId, depth, start)

    std::size_t intervalCount() const;
    TimeNs firstStart() const;            // min over lanes (launch.start if empty)
    TimeNs lastEnd() const;
};

}  // namespace ws
