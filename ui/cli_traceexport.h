// `warpstage export FILE --out trace.json[.gz]|trace.perfetto-trace` (trace formats other tools open)
// and `warpstage import FILE... -o OUT.wstrace` (docs/interop.md). Kept out of cli.cpp so that the
// image export and other subcommands stay where they are; cli.cpp only dispatches here.
#pragma once

#include <QStringList>

namespace ws::ui {

// True when an `export` command line asks for a trace format (its --out / -o names .json, .json.gz,
// .perfetto-trace or .pftrace) rather than an image.
bool isTraceExportCommand(const QStringList& args);
// Runs `export` for a trace format; returns the process exit code (cli.h ExitCode).
int runTraceExport(const QStringList& args);
// Runs `import`; returns the process exit code.
int runImport(const QStringList& args);

}  // namespace ws::ui
