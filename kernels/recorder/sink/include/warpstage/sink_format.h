// The sink format: what libwarpstage-inject.so (the CUPTI + NVTX injection library that
// `warpstage-record -- PROGRAM` puts into the program) streams to $WARPSTAGE_SINK/<pid>-<ns>.wsink,
// and what the recorder reads back after (or while) the program runs. Qt-free and CUDA-free: the
// injection library and the CUDA-free reader (warpstage/sink_reader.h) both include only this.
//
// A file is the 16-byte FileHeader, then records: a RecHeader (type, payload size) and the payload.
// Records are appended with one write(2) per completed CUPTI buffer (plus the NVTX events and the
// strings they need, written before their first use in the same chunk), so what reached the file
// survives a crash or SIGKILL of the program; a record cut off by the end of the file marks the sink
// truncated. All integers little-endian (x86-64 / aarch64 hosts), structs are packed by hand (no
// padding the compiler could add: static_asserts below).
#pragma once

#include <cstdint>

namespace ws::sink {

inline constexpr char kMagic[8] = {'W', 'S', 'S', 'I', 'N', 'K', '0', '1'};
inline constexpr std::uint32_t kFormatVersion = 1;

struct FileHeader {
    char magic[8];
    std::uint32_t version;
    std::uint32_t reserved;
};
static_assert(sizeof(FileHeader) == 16);

enum class RecType : std::uint16_t {
    Process = 1,  // ProcessRec + exe, cwd, argv (NUL-separated) as Str
    String = 2,   // std::uint32_t id + bytes (the rest of the payload); ids start at 1, 0 = none
    Device = 3,   // DeviceRec
    Context = 4,  // ContextRec
    Kernel = 5,   // KernelRec
    Mem = 6,      // MemRec (memcpy and memset)
    Api = 7,      // ApiRec (runtime and driver API calls)
    Nvtx = 8,     // NvtxRec (one NVTX event; the reader pairs push/pop and start/end)
    Flush = 9,    // FlushRec: a CUPTI buffer was written (dropped-record count)
    End = 10,     // EndRec: the process ended cleanly (atexit) or by a caught signal, after a forced flush
    // 40-49: per-warp trace buffers of users' instrumented kernels (<warpstage/trace.cuh>, issue 10)
    TraceLaunch = 40,  // TraceLaunchRec + kernel name, phase names, role names, source path (each Str;
                       //   names NUL-separated): a traced launch whose buffer follows in TraceChunks
    TraceChunk = 41,   // TraceChunkRec + raw buffer bytes at `offset` (<= kTraceChunkBytes per record)
    TraceNote = 42,    // TraceNoteRec + message text: why a launch was not traced, or not completely
    // 50-59: the stall pass (a second run of the program with PC sampling, WARPSTAGE_STALL_KERNELS set;
    // kernels/recorder/inject/pc_sampling.cpp). 40-49 are the trace buffers'.
    StallLaunch = 50,  // StallLaunchRec: one sampled launch (after its samples)
    StallSample = 51,  // StallSampleRec: samples of one (launch, function, pc, reason)
    StallCubin = 52,   // std::uint64_t cubin CRC + the cubin's bytes (once per module that samples point into)
    StallCount = 53,   // StallCountRec: launches of one matching kernel name on one device (at exit)
    StallNote = 54,    // std::int32_t code + text: why sampling did not run or lost something (a CUPTI error)
};

struct RecHeader {
    std::uint16_t type;
    std::uint16_t reserved;
    std::uint32_t size;  // payload bytes after this header
};
static_assert(sizeof(RecHeader) == 8);
inline constexpr std::uint32_t kMaxRecordSize = 1u << 24;  // anything larger is corruption

struct ProcessRec {
    std::int64_t pid;
    std::int64_t ppid;
    std::uint64_t realtimeNs;  // CLOCK_REALTIME when the sink was opened
    std::uint64_t cuptiNs;     // cuptiGetTimestamp() at the same moment (0 if CUPTI was not up)
    // then three strings, each std::uint32_t length + bytes: exe, cwd, argv (NUL-separated)
};
static_assert(sizeof(ProcessRec) == 32);

struct DeviceRec {
    std::uint32_t id;            // CUPTI device id = CUDA device ordinal in the process
    std::uint32_t nameId;        // String id
    std::int32_t ccMajor, ccMinor;
    std::int32_t smCount;
    std::int32_t coreClockKHz;
    std::int64_t globalMemBytes;
    std::int64_t l2Bytes;
    std::uint8_t uuid[16];
};
static_assert(sizeof(DeviceRec) == 56);

struct ContextRec {
    std::uint32_t contextId;
    std::uint32_t deviceId;
    std::uint32_t nullStreamId;
    std::uint32_t reserved;
};
static_assert(sizeof(ContextRec) == 16);

struct KernelRec {
    std::uint64_t start, end;    // CUPTI time base (ns)
    std::uint64_t graphNodeId;
    std::uint32_t deviceId, contextId, streamId, correlationId, graphId;
    std::uint32_t nameId;        // mangled name as CUPTI reports it (String id)
    std::int32_t grid[3], block[3], cluster[3];
    std::int32_t registers, staticSmem, dynamicSmem;
};
static_assert(sizeof(KernelRec) == 96);

struct MemRec {
    std::uint64_t start, end, bytes, graphNodeId;
    std::uint32_t deviceId, contextId, streamId, correlationId, graphId;
    std::uint8_t kind;           // ws::MemOpKind value (1 HtoD, 2 DtoH, 3 DtoD, 4 memset, 5 other)
    std::uint8_t reserved[3];
};
static_assert(sizeof(MemRec) == 56);

struct ApiRec {
    std::uint64_t start, end;
    std::uint32_t cbid, correlationId, threadId, nameId;
    std::int32_t result;
    std::uint8_t driver;         // 1: driver API (cu*), 0: runtime (cuda*)
    std::uint8_t reserved[3];
};
static_assert(sizeof(ApiRec) == 40);

enum class NvtxOp : std::uint8_t { Push = 1, Pop = 2, Start = 3, End = 4, Mark = 5 };

struct NvtxRec {
    std::uint64_t timestamp;     // cuptiGetTimestamp()
    std::uint64_t rangeId;       // Start/End: the nvtxRangeId_t; else 0
    std::int64_t category;
    std::uint32_t threadId;      // OS thread id
    std::uint32_t domainId;      // String id of the domain name, 0 = default domain
    std::uint32_t nameId;        // String id, 0 = none (Pop/End)
    std::uint32_t color;         // ARGB, 0 = none
    std::uint8_t op;             // NvtxOp
    std::uint8_t reserved[7];
};
static_assert(sizeof(NvtxRec) == 48);

struct FlushRec {
    std::uint64_t realtimeNs;
    std::uint64_t dropped;       // records CUPTI dropped for this buffer
    std::uint32_t records;       // records in the buffer
    std::uint32_t reserved;
};
static_assert(sizeof(FlushRec) == 24);

enum class EndReason : std::uint32_t { Exit = 0, Signal = 1 };

struct EndRec {
    std::uint64_t realtimeNs;
    std::uint64_t cuptiNs;
    std::uint32_t reason;        // EndReason
    std::int32_t signal;         // for EndReason::Signal
};
static_assert(sizeof(EndRec) == 24);

// A traced launch (RecType::TraceLaunch). Its buffer (trace_format.h) follows in TraceChunk records.
struct TraceLaunchRec {
    std::uint32_t correlationId;   // CUPTI's: the KernelRec of the same launch carries it
    std::uint32_t deviceId;
    std::uint32_t contextId;
    std::uint32_t streamId;
    std::uint64_t bufferBytes;     // size of the whole buffer
    std::uint32_t numCtas, warpsPerCta, eventsPerWarp;
    std::uint32_t formatVersion;   // the kernel's trace header version (warpstage_trace_control)
    // then four strings, each std::uint32_t length + bytes: kernel name (mangled), phase names
    // (NUL-separated), role names (NUL-separated), source path (the kernel's warpstage_trace_source)
};
static_assert(sizeof(TraceLaunchRec) == 40);

struct TraceChunkRec {
    std::uint32_t correlationId;
    std::uint32_t deviceId;
    std::uint64_t offset;          // byte offset of this chunk in the buffer
    // then the bytes (the rest of the payload)
};
static_assert(sizeof(TraceChunkRec) == 16);
inline constexpr std::uint32_t kTraceChunkBytes = 8u << 20;

// The words of the TraceNote the injection library writes for a kernel built with a trace-format version of
// <warpstage/trace.cuh> that the recorder cannot read ("kernel K was built with the trace header of format version N;
// this recorder reads versions 1 to M: not traced (...)"). The reader makes such a run FAILED (sink_traces.cpp).
inline constexpr const char* kTraceNoteVersionMismatch = "was built with the trace header of format version";

struct TraceNoteRec {
    std::uint32_t correlationId;   // 0: not about one launch
    std::uint32_t deviceId;
    // then the message text (the rest of the payload)
};
static_assert(sizeof(TraceNoteRec) == 8);

// The stall pass. Launch indices count the launches of one kernel name (mangled, as the driver names it)
// on one device in the order the program made them (driver launch calls; graph launches are not counted).
struct StallLaunchRec {
    std::uint64_t totalSamples;  // CUPTI's totals for the launch (all functions, dropped included)
    std::uint64_t droppedSamples;
    std::uint32_t nameId;        // kernel name (String id)
    std::uint32_t launchIndex;
    std::uint32_t deviceId;
    std::uint32_t contextId;     // CUPTI context uid
    std::int32_t status;         // 0, or the CUptiResult that stopped this launch's sampling
    std::uint32_t hardwareBufferFull;
};
static_assert(sizeof(StallLaunchRec) == 40);

struct StallSampleRec {
    std::uint64_t pcOffset;      // offset in the function
    std::uint64_t cubinCrc;      // the module's CRC (cuptiGetCubinCrc), matches a StallCubin record
    std::uint64_t count;         // samples with this reason at this pc
    std::uint32_t nameId;        // kernel name of the launch (String id)
    std::uint32_t launchIndex;
    std::uint32_t deviceId;
    std::uint32_t functionId;    // function the pc is in (String id; the kernel or a function it calls)
    std::uint32_t reasonId;      // CUPTI's stall-reason name (String id)
    std::uint32_t reserved;
};
static_assert(sizeof(StallSampleRec) == 48);

struct StallCountRec {
    std::uint32_t nameId;
    std::uint32_t deviceId;
    std::uint32_t launches;      // all launches of this name, sampled or not
    std::uint32_t sampled;
};
static_assert(sizeof(StallCountRec) == 16);

}  // namespace ws::sink
