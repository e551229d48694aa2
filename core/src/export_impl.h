// Internal helpers shared by the trace exporters (export_*.cpp). Not installed.
#pragma once

#include "warpstage/traceexport.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ws::exportimpl {

// Buffers small writes for a sink and counts the bytes.
class Out {
public:
    explicit Out(ByteSink& sink) : m_sink(sink) { m_buf.reserve(kChunk + 4096); }
    ~Out() = default;
    void put(std::string_view s)
    {
        m_buf.append(s.data(), s.size());
        if (m_buf.size() >= kChunk)
            flush();
    }
    void put(char c)
    {
        m_buf.push_back(c);
        if (m_buf.size() >= kChunk)
            flush();
    }
    void flush()
    {
        if (!m_buf.empty()) {
            m_sink.write(m_buf.data(), m_buf.size());
            m_bytes += std::int64_t(m_buf.size());
            m_buf.clear();
        }
    }
    std::int64_t bytes() const { return m_bytes + std::int64_t(m_buf.size()); }

private:
    static constexpr std::size_t kChunk = 1 << 20;
    ByteSink& m_sink;
    std::string m_buf;
    std::int64_t m_bytes = 0;
};

// What of a kernel an export writes: lanes, per lane the first/last interval index in range, CTAs.
struct Selection {
    TimeNs origin = 0;
    std::vector<int> lanes;                 // selected lane indices, in trace order
    std::vector<std::size_t> first, last;   // per trace lane: [first, last) of the intervals written
    std::vector<bool> ctaSelected;          // per trace CTA: one of its lanes is selected
    TimeNs lo = 0, hi = 0;                  // absolute window (INT64 min/max when no range)
    bool inRange(TimeNs start, TimeNs end) const { return start < hi && (end > lo || (end == start && start >= lo)); }
};
// Throws ExportError for a bad mask or a selection without intervals.
Selection select(const KernelTrace& trace, const TraceExportOptions& options);

// "loads in flight" per CTA (index into trace.ctas; empty for CTAs not selected): (time, count after the
// changes at that time), time-sorted. One pass over the loads.
std::vector<std::vector<std::pair<TimeNs, int>>> loadsInFlight(const KernelTrace& trace, const Selection& sel);

// One flow: a load's issue (producer lane, time) to a consumer wait (lane, time inside the wait).
struct Flow {
    int fromLane = 0;
    std::size_t fromIndex = 0;   // interval of the issuing warp
    TimeNs fromTs = 0;
    int toLane = 0;
    std::size_t toIndex = 0;     // the consumer's WaitData interval
    TimeNs toTs = 0;
};
std::vector<Flow> loadFlows(const KernelTrace& trace, const Selection& sel);

// Per trace lane: its scope brackets (KernelTrace::scopes by Lane::warpId), outermost first, then by start.
std::vector<std::vector<const ScopeSpan*>> scopesByLane(const KernelTrace& trace);

// A destination file written through a temporary name; gzip-compressed when asked.
class FileSink : public ByteSink {
public:
    FileSink(std::string path, bool gzip);
    ~FileSink() override;   // without finish(): removes the temporary file
    void write(const char* data, std::size_t size) override;
    void finish() override; // flushes, closes, renames onto the destination
    std::int64_t fileBytes() const { return m_fileBytes; }

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
    std::string m_path, m_tmp;
    std::int64_t m_fileBytes = 0;
};

// Decimal "µs with three fractional digits" of a ns count: 1234567 -> "1234.567", -5 -> "-0.005".
void appendMicros(std::string& s, TimeNs ns);
// JSON string literal with escapes.
void appendJsonString(std::string& s, std::string_view v);

}  // namespace ws::exportimpl
