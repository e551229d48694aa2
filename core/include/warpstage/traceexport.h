// Export of a kernel's per-warp timeline (or a run's program view) to formats other tools open
// (docs/interop.md):
//   * Chrome Trace Event JSON (chrome://tracing, ui.perfetto.dev, Speedscope...), plain or gzip;
//   * Perfetto protobuf TrackEvent (.perfetto-trace; ui.perfetto.dev, trace_processor).
//
// Qt-free. Writers stream: each event is formatted into a small buffer and handed to a ByteSink, so
// memory does not grow with the output (the KernelTrace itself is the only large thing in memory).
// Files are written to a temporary name next to the destination and renamed when complete: a failed
// export leaves no file behind and never a half-written one.
#pragma once

#include "warpstage/model.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ws {

class ExportError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Where the bytes go. write() may throw ExportError (disk full, ...); finish() flushes and completes.
class ByteSink {
public:
    virtual ~ByteSink() = default;
    virtual void write(const char* data, std::size_t size) = 0;
    virtual void finish() {}
};

// Appends to a string (tests, small documents).
class StringSink : public ByteSink {
public:
    explicit StringSink(std::string* out) : m_out(out) {}
    void write(const char* data, std::size_t size) override { m_out->append(data, size); }

private:
    std::string* m_out;
};

enum class TraceFormat { ChromeJson, ChromeJsonGz, Perfetto };
// By the file name: ".json" -> ChromeJson, ".json.gz" -> ChromeJsonGz, ".perfetto-trace" or ".pftrace" ->
// Perfetto (case-insensitive); nullopt for anything else.
std::optional<TraceFormat> traceFormatForPath(std::string_view path);
std::string_view traceFormatName(TraceFormat f);   // "chrome-json", "chrome-json-gz", "perfetto"

struct TraceExportOptions {
    // Only intervals that overlap [first, second) ns, relative to the kernel's launch start (program view:
    // to the run's first record), are written, unclipped; nullopt: all.
    std::optional<std::pair<TimeNs, TimeNs>> range;
    // laneMask[i] selects KernelTrace::lanes[i]; empty: every lane. Its size must then be lanes.size().
    std::vector<bool> laneMask;
    bool counters = true;   // a "loads in flight" counter track per CTA
    bool flows = false;     // flow arrows from a load's issue to each consumer wait of its k-step
    // Perfetto: packets deflated in batches (TracePacket.compressed_packets, what Perfetto's own service writes
    // with compression on); false: plain packets (a build without zlib always writes them plain).
    bool perfettoCompressed = true;
};

struct ExportStats {
    std::int64_t lanes = 0;       // warps written
    std::int64_t intervals = 0;   // slices written
    std::int64_t counterSamples = 0;
    std::int64_t flows = 0;
    std::int64_t scopes = 0;      // scope brackets written (Proton's outer scopes)
    std::int64_t bytes = 0;       // bytes handed to the sink (before gzip)
};

// The time origin of an export: the kernel's launch start, or its first interval if that is earlier
// (so that every timestamp is >= 0). Timestamps in the output are ns (Perfetto) or µs with three
// decimals (JSON) after this origin; the JSON keeps the origin in otherData.warpstage.origin_ns.
TimeNs exportOrigin(const KernelTrace& trace);

// Track names shared by both formats: "SM 3 / CTA 17" and "w3 consumer WG1 (wg1)".
std::string ctaTrackName(const Cta& cta);
std::string warpTrackName(const Lane& lane);
// The slice name of an interval: the kind's label, or a user phase's recorded name.
std::string intervalName(const KernelTrace& trace, IntervalKind kind);

// Chrome Trace Event JSON of one kernel: {"displayTimeUnit":"ns","otherData":{...},"traceEvents":[...]}.
// Process per CTA ("SM 3 / CTA 17", sorted by SM then CTA start), thread per warp, one complete ("X")
// event per interval with args {kind, kstep, slot}, a counter ("C") of loads in flight per CTA, and with
// options.flows flow events ("s"/"f") from each load's issue to the consumer waits of its k-step.
// Throws ExportError for a bad laneMask or a range that selects nothing.
ExportStats writeChromeTrace(const KernelTrace& trace, const TraceExportOptions& options, ByteSink& sink);
// The program view of a run: a process per device with a thread per stream (kernels, copies), a
// process for NVTX ranges and one for CUDA API calls, a thread per OS thread.
ExportStats writeChromeProgram(const ProgramTrace& program, const TraceExportOptions& options, ByteSink& sink);
// Perfetto TrackEvent protobuf of one kernel: tracks SM > CTA > warp, slice begin/end per interval
// with interned names and kstep/slot annotations, a counter track per CTA. A sequence per warp (its track
// and an incremental ns clock as the sequence's defaults), packets deflated in batches (docs/interop.md).
ExportStats writePerfettoTrace(const KernelTrace& trace, const TraceExportOptions& options, ByteSink& sink);

// Writes a file in the format its name says (traceFormatForPath), through a temporary file and a rename.
// Throws ExportError naming the path and the problem.
ExportStats exportKernelTrace(const KernelTrace& trace, const TraceExportOptions& options, const std::string& path);
// Program view; Perfetto is not offered for it (ExportError).
ExportStats exportProgramTrace(const ProgramTrace& program, const TraceExportOptions& options, const std::string& path);

}  // namespace ws
