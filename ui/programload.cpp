#include "programload.h"

#include <algorithm>

namespace ws::ui {

LoadedProgram loadProgramNow(const ws::TraceStore& store, qint64 runId)
{
    LoadedProgram r;
    try {
        auto p = std::make_shared<ws::ProgramTrace>();
        p->run = store.run(runId);
        // The schema-3 loader (TraceStore::loadProgram) replaces this once it lands; until then launches and
        // copies of every run kind.
        p->kernels = store.kernels(runId);
        p->memOps = store.memOps(runId);
        auto byStart = [](const auto& a, const auto& b) { return a.start < b.start; };
        std::stable_sort(p->kernels.begin(), p->kernels.end(), byStart);
        std::stable_sort(p->memOps.begin(), p->memOps.end(), byStart);
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
