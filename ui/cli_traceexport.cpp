#include "cli_traceexport.h"

#include "cli.h"
#include "timelinelayout.h"

#include "warpstage/store.h"
#include "warpstage/traceexport.h"
#include "warpstage/traceimport.h"

#include <QFileInfo>
#include <QLocale>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

namespace ws::ui {

namespace {

int usage(const QString& s)
{
    cliError(s);
    std::fprintf(stderr, "Try 'warpstage --help'.\n");
    return ExitUsage;
}

}  // namespace

bool isTraceExportCommand(const QStringList& args)
{
    for (int i = 0; i + 1 < args.size(); ++i)
        if (args[i] == QLatin1String("--out") || args[i] == QLatin1String("-o"))
            return ws::traceFormatForPath(args[i + 1].toStdString()).has_value();
    return false;
}

int runTraceExport(const QStringList& args)
{
    QString file, out, lanes;
    bool program = false;
    qint64 runId = 0, kernelId = 0;
    ws::TraceExportOptions opt;
    for (int i = 0; i < args.size(); ++i) {
        const QString a = args[i];
        QString v;
        auto value = [&] {
            if (i + 1 >= args.size())
                return false;
            v = args[++i];
            return true;
        };
        if (a == QLatin1String("--view")) {
            if (!value())
                return usage(QStringLiteral("export: --view needs a value (warp or program)"));
            if (v != QLatin1String("warp") && v != QLatin1String("program"))
                return usage(QStringLiteral("export: --view expects warp or program, got '%1'").arg(v));
            program = v == QLatin1String("program");
        } else if (a == QLatin1String("--run") || a == QLatin1String("--kernel")) {
            qint64 id = 0;
            if (!value() || !parseId(v, &id))
                return usage(QStringLiteral("export: %1 expects a positive id, got '%2'").arg(a, v));
            (a == QLatin1String("--run") ? runId : kernelId) = id;
        } else if (a == QLatin1String("--range")) {
            if (!value())
                return usage(QStringLiteral("export: --range needs a value"));
            QStringList p = v.split(QLatin1Char(':'));
            if (p.size() != 2)
                p = v.split(QStringLiteral(".."));
            qint64 t0 = 0, t1 = 0;
            if (p.size() != 2 || !parseTimeNs(p[0], &t0) || !parseTimeNs(p[1], &t1) || t1 <= t0)
                return usage(QStringLiteral("export: --range expects T0:T1 with T0 < T1 (e.g. 0:250us), got '%1'").arg(v));
            opt.range = std::pair(ws::TimeNs(t0), ws::TimeNs(t1));
        } else if (a == QLatin1String("--lanes")) {
            if (!value())
                return usage(QStringLiteral("export: --lanes needs a value"));
            QString ferr;
            if (!LaneFilter::parse(v, &ferr))
                return usage(QStringLiteral("export: --lanes: %1").arg(ferr));
            lanes = v;
        } else if (a == QLatin1String("--out") || a == QLatin1String("-o")) {
            if (!value())
                return usage(QStringLiteral("export: --out needs a value"));
            out = v;
        } else if (a == QLatin1String("--flows")) {
            opt.flows = true;
        } else if (a == QLatin1String("--no-counters")) {
            opt.counters = false;
        } else if (a == QLatin1String("--size") || a == QLatin1String("--dpi") || a == QLatin1String("--title")) {
            return usage(QStringLiteral("export: %1 applies to images, not to a trace export (%2)").arg(a, out));
        } else if (a.startsWith(QLatin1String("-"))) {
            return usage(QStringLiteral("export: unknown option '%1'").arg(a));
        } else if (file.isEmpty()) {
            file = a;
        } else {
            return usage(QStringLiteral("export: more than one FILE given ('%1', '%2')").arg(file, a));
        }
    }
    if (file.isEmpty())
        return usage(QStringLiteral("export: missing FILE"));
    if (program && (kernelId != 0 || !lanes.isEmpty() || opt.flows))
        return usage(QStringLiteral("export: --kernel, --lanes and --flows belong to the warp view, not to --view program"));
    if (program && ws::traceFormatForPath(out.toStdString()) == ws::TraceFormat::Perfetto)
        return usage(QStringLiteral("export: the program view is exported as Chrome JSON (.json or .json.gz), not '%1'").arg(out));

    std::optional<ws::TraceStore> store;
    try {
        store.emplace(ws::TraceStore::openReadOnly(file.toStdString()));
    } catch (const ws::NeedsMigrationError& e) {
        cliError(QString::fromStdString(e.what()));
        cliError(migrateHint(file));
        return ExitNeedsMigration;
    } catch (const std::exception& e) {
        cliError(QString::fromStdString(e.what()));
        return ExitBadFile;
    }
    const auto t0 = std::chrono::steady_clock::now();
    try {
        if (runId == 0) {
            const auto runs = store->runs();
            if (runs.empty()) {
                cliError(QStringLiteral("%1: the file holds no run").arg(file));
                return ExitFailure;
            }
            runId = std::max_element(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.id < b.id; })->id;
        }
        ws::ExportStats st;
        if (program) {
            const auto runs = store->runs();
            if (std::none_of(runs.begin(), runs.end(), [&](const auto& r) { return r.id == runId; })) {
                cliError(QStringLiteral("%1: there is no run %2").arg(file).arg(runId));
                return ExitFailure;
            }
            st = ws::exportProgramTrace(store->loadProgram(runId), opt, out.toStdString());
        } else {
            const auto kernels = store->kernels(runId);
            if (kernels.empty()) {
                cliError(QStringLiteral("%1: run %2 does not exist or holds no kernel").arg(file).arg(runId));
                return ExitFailure;
            }
            if (kernelId == 0) {
                const auto it = std::find_if(kernels.begin(), kernels.end(), [](const auto& k) { return k.traced; });
                if (it == kernels.end()) {
                    cliError(QStringLiteral("%1: run %2 has no traced kernel (no timeline to export)").arg(file).arg(runId));
                    return ExitFailure;
                }
                kernelId = it->id;
            } else if (std::none_of(kernels.begin(), kernels.end(), [&](const auto& k) { return k.id == kernelId; })) {
                cliError(QStringLiteral("%1: kernel %2 is not in run %3").arg(file).arg(kernelId).arg(runId));
                return ExitFailure;
            }
            ws::LoadOptions lo;
            lo.stalls = false;
            lo.sources = false;
            lo.tiles = false;
            const ws::KernelTrace trace = store->loadKernel(kernelId, lo);
            if (!lanes.isEmpty()) {
                const LaneFilter f = *LaneFilter::parse(lanes, nullptr);
                opt.laneMask.resize(trace.lanes.size());
                for (std::size_t i = 0; i < trace.lanes.size(); ++i)
                    opt.laneMask[i] = f.acceptsLane(trace, trace.lanes[i]);
            }
            st = ws::exportKernelTrace(trace, opt, out.toStdString());
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const std::string scopes = st.scopes ? ", " + std::to_string(st.scopes) + " scope brackets" : std::string();
        std::printf("%s: %lld warps, %lld slices%s, %lld counter samples, %lld flows, %s (%.2f s)\n",
                    out.toLocal8Bit().constData(), static_cast<long long>(st.lanes), static_cast<long long>(st.intervals),
                    scopes.c_str(), static_cast<long long>(st.counterSamples), static_cast<long long>(st.flows),
                    QLocale::c().formattedDataSize(QFileInfo(out).size()).toLocal8Bit().constData(), s);
        return ExitOk;
    } catch (const std::exception& e) {
        cliError(QString::fromStdString(e.what()));
        return ExitFailure;
    }
}

int runImport(const QStringList& args)
{
    QStringList inputs;
    QString out;
    ws::ImportOptions options;   // Proton traces (docs/interop.md, "Importing from Proton")
    for (int i = 0; i < args.size(); ++i) {
        const QString a = args[i];
        if (a == QLatin1String("-o") || a == QLatin1String("--out")) {
            if (i + 1 >= args.size())
                return usage(QStringLiteral("import: %1 needs a value").arg(a));
            out = args[++i];
        } else if (a == QLatin1String("--sm-clock-mhz")) {
            bool ok = false;
            const double mhz = i + 1 < args.size() ? args[i + 1].toDouble(&ok) : 0;
            if (!ok || !(mhz > 0) || mhz > 1e5)
                return usage(QStringLiteral("import: --sm-clock-mhz needs a clock rate in MHz (e.g. 1755)"));
            options.smClockMhz = mhz;
            ++i;
        } else if (a == QLatin1String("--mapping")) {
            if (i + 1 >= args.size())
                return usage(QStringLiteral("import: --mapping needs a file"));
            options.mappingFile = args[++i].toStdString();
        } else if (a == QLatin1String("--launch")) {
            bool ok = false;
            const int n = i + 1 < args.size() ? args[i + 1].toInt(&ok) : -1;
            if (!ok || n < 0)
                return usage(QStringLiteral("import: --launch needs a launch number (0 for the first)"));
            options.protonLaunch = n;
            ++i;
        } else if (a.startsWith(QLatin1String("-")) && a != QLatin1String("-")) {
            return usage(QStringLiteral("import: unknown option '%1'").arg(a));
        } else {
            inputs << a;
        }
    }
    if (inputs.isEmpty())
        return usage(QStringLiteral("import: missing FILE (a trace to import)"));
    if (out.isEmpty())
        return usage(QStringLiteral("import: missing -o OUT.wstrace"));
    if (QFileInfo::exists(out)) {
        cliError(QStringLiteral("%1: already exists (import writes a new file; remove it or choose another name)").arg(out));
        return ExitFailure;
    }
    std::vector<std::string> in;
    for (const QString& f : inputs)
        in.push_back(f.toStdString());
    try {
        for (const ws::ImportedRun& r : ws::importTraces(in, out.toStdString(), options))
            std::printf("%s: %s, %lld intervals -> run %lld of %s\n", r.input.c_str(),
                        std::string(ws::importFormatName(r.format)).c_str(), static_cast<long long>(r.intervals),
                        static_cast<long long>(r.runId), out.toLocal8Bit().constData());
        return ExitOk;
    } catch (const ws::ImportError& e) {
        cliError(QString::fromStdString(e.what()));
        return ExitBadFile;
    } catch (const std::exception& e) {
        cliError(QString::fromStdString(e.what()));
        return ExitFailure;
    }
}

}  // namespace ws::ui
