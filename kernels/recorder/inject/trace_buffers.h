// Trace buffers for users' instrumented kernels (<warpstage/trace.cuh>, issue 10), inside
// libwarpstage-inject.so. See trace_buffers.cpp and docs/your-kernels.md.
#pragma once

#include <string>

namespace ws::inject::tracebuf {

// Appends a chunk of sink records to the sink file (thread-safe; the injection library's writer).
using SinkWriter = void (*)(const std::string& records);

// Reads WARPSTAGE_TRACE_KERNELS / _LAUNCHES / _EVENTS / _MAX_MB and subscribes to CUPTI's launch
// callbacks. Call once, after the sink is open and before the first launch. Problems (a bad
// regular expression, a CUPTI subscriber already taken) are written as TraceNote records.
void init(SinkWriter write);

}  // namespace ws::inject::tracebuf
