// Headless subcommands of the `warpstage` executable: `info`, `export`, `query`,
// `--help`, `--version`. They run without a display (no QApplication is made
// for `info`; `export` forces the offscreen platform).
#pragma once

#include <QString>
#include <QStringList>

#include <string>

namespace ws {
struct WhatIfParams;
}

namespace ws::ui {

enum ExitCode : int {
    ExitOk = 0,
    ExitFailure = 1,        // the command failed (export: no such run/kernel, cannot write the image, ...)
    ExitUsage = 2,          // bad command line
    ExitBadFile = 3,        // the trace file cannot be read (missing, not SQLite, not Warpstage, corrupt, newer schema)
    ExitNeedsMigration = 4, // the trace file is an older Warpstage schema (open it in the GUI to migrate a copy)
};

// "warpstage: MESSAGE" on stderr: the one error line of every subcommand (cli.cpp).
void cliError(const QString& message);
void cliError(const std::string& message);
void cliError(const char* message);

// True if argv asks for a headless subcommand (info, export, query, --help, --version).
bool isHeadlessCommand(int argc, char** argv);
// Runs it and returns the process exit code.
int runHeadless(int argc, char** argv);
// `warpstage query FILE SQL [--csv|--json]` (cli_query.cpp); args start after "query".
int runQueryCommand(const QStringList& args);
// `warpstage analyze FILE ...` and `warpstage whatif FILE ...` (cli_whatif.cpp, docs/whatif.md).
int runAnalyzeCommand(const QStringList& args);
int runWhatIfCommand(const QStringList& args);
// One replay parameter of `warpstage whatif` (--stages, --load-latency, --mma, --epilogue, --overlap-epilogue,
// --persistent, --sms, --no-sync) at args[i] into *p (cli_whatif.cpp; `export --what-if` takes them too):
// -1: it was one (i is on its value), -2: it is not one, else the exit code of a bad value (message printed).
int parseWhatIfOption(const QStringList& args, int& i, ws::WhatIfParams* p, const char* cmd);
// `warpstage migrate FILE --out COPY` (cli_migrate.cpp); args start after "migrate".
int runMigrateCommand(const QStringList& args);
// The line that follows an older-schema refusal: "(a migrated copy: warpstage migrate FILE --out COPY.wstrace)".
inline QString migrateHint(const QString& file)
{
    return QStringLiteral("(a migrated copy: warpstage migrate %1 --out COPY.wstrace)").arg(file);
}
QString helpText();

// --dpi range of `export` (the same as TimelineWidget::exportImage accepts).
inline constexpr int kMinDpi = 24;
inline constexpr int kMaxDpi = 1200;

// Parses a positive id ("12"; not "+12", " 12", "12abc", "0").
bool parseId(const QString& s, qint64* id);
// Parses a dpi value in kMinDpi..kMaxDpi ("96", "144.5"; not "nan", "1e2").
bool parseDpi(const QString& s, double* dpi);
// Parses "1600x900".
bool parseSize(const QString& s, int* w, int* h);
// Parses a time with an optional unit (ns default; us, µs, ms, s): "250us" -> 250000.
bool parseTimeNs(const QString& s, qint64* ns);

}  // namespace ws::ui
