#include "programload.h"

namespace ws::ui {

LoadedProgram loadProgramNow(const ws::TraceStore& store, qint64 runId)
{
    LoadedProgram r;
    try {
        // every record of the run at program level (schema 3); a ladder run gives its launches and copies
        auto p = std::make_shared<ws::ProgramTrace>(store.loadProgram(runId));
        r.program = std::move(p);
    } catch (const std::exception& e) {
        r.error = QString::fromStdString(e.what());
    }
    return r;
}

LoadedProgram loadProgramNow(SharedStore& store, qint64 runId)
{
    std::lock_guard lock(store.mutex);
    return loadProgramNow(store.store, runId);
}

}  // namespace ws::ui
