// The sink of libwarpstage-inject.so, for the parts of the library outside inject.cpp (which owns the file):
// inject/pc_sampling.cpp (the stall pass). Internal to the library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ws::inject {

// Holds the sink's lock while it lives; what was appended to out() is written with one write(2) when it
// goes (after any NVTX events still pending). string() interns a name (a new one is appended first).
class SinkWriter {
public:
    SinkWriter();
    ~SinkWriter();
    SinkWriter(const SinkWriter&) = delete;
    SinkWriter& operator=(const SinkWriter&) = delete;
    std::string& out() { return m_out; }
    std::uint32_t string(std::string_view s);

private:
    std::string m_out;
};

// inject/pc_sampling.cpp: the stall pass (WARPSTAGE_STALL_KERNELS set by warpstage-record for the second run).
bool stallPassRequested();
void startStallPass();  // at InitializeInjection, instead of the Activity API
void endStallPass();    // at the end of the process, before the End record: the per-name launch counts

}  // namespace ws::inject
