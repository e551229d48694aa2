// Loading the program-level view of a run (ws::ProgramTrace) for the program view and `warpstage export
// --view program`. A ladder run is a small program too: its launches and copies.
#pragma once

#include "tracedocument.h"

#include <QString>

#include <memory>

namespace ws::ui {

struct LoadedProgram {
    std::shared_ptr<const ws::ProgramTrace> program;
    QString error;  // set when program is null
};
// Blocking (call on a worker thread); never throws.
LoadedProgram loadProgramNow(SharedStore& store, qint64 runId);
// Same, straight from a TraceStore (CLI).
LoadedProgram loadProgramNow(const ws::TraceStore& store, qint64 runId);

}  // namespace ws::ui
