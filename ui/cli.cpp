#include "cli.h"
#include "cli_traceexport.h"

#include "figureexport.h"
#include "timelinelayout.h"

#include "warpstage/report.h"
#include "warpstage/store.h"

#include <QApplication>
#include <QCoreApplication>
#include <QHashFunctions>
#include <QRegularExpression>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#ifndef WARPSTAGE_VERSION
#define WARPSTAGE_VERSION "0.0.0"
#endif

namespace ws::ui {

QString helpText()
{
    return QStringLiteral(
        "Usage:\n"
        "  warpstage [FILE]              open the viewer (no FILE: the bundled sample trace)\n"
        "  warpstage info FILE [--json]  describe the runs, kernels and metrics of a trace file\n"
        "  warpstage export FILE --out IMAGE [options]\n"
        "                                draw a kernel's timeline into IMAGE (.png, .svg or .pdf)\n"
        "                                without a display; the same input gives the same bytes\n"
        "  warpstage export FILE --out TRACE [--flows] [--no-counters] [options]\n"
        "                                write the timeline for other tools: TRACE .json or .json.gz\n"
        "                                (Chrome Trace Event JSON) or .perfetto-trace (Perfetto)\n"
        "  warpstage import FILE... -o OUT.wstrace [--sm-clock-mhz MHZ] [--mapping FILE]\n"
        "                                read traces of other tools into a new Warpstage file:\n"
        "                                Warpstage's own .json / .json.gz export, Triton Proton\n"
        "                                intra-kernel traces (.chrome_trace; --sm-clock-mhz: the SM\n"
        "                                clock, else 1980 assumed; --mapping: scope name rules,\n"
        "                                'glob = kind [role]' per line; docs/interop.md;\n"
        "                                --launch N: only launch N (0-based) of a kernel that the\n"
        "                                file holds several launches of; default: each launch a kernel)\n"
        "  warpstage migrate FILE --out COPY.wstrace\n"
        "                                a copy of an older-schema trace migrated to the current\n"
        "                                schema (FILE is never changed; other commands exit 4 on it)\n"
        "  warpstage query FILE \"SQL\" [--csv|--json]\n"
        "                                run one read-only SQL statement on a trace (tables of\n"
        "                                docs/schema.md plus the virtual tables intervals, loads,\n"
        "                                chunk_metrics); default output: an aligned text table\n"
        "  warpstage analyze FILE [--run ID] [--kernel ID] [--json]\n"
        "                                critical path of a traced kernel and its time by cause\n"
        "                                (load latency, MMA, back-pressure, epilogue, tail, ...)\n"
        "  warpstage whatif FILE [--run ID] [--kernel ID] [--stages N] [--load-latency F] [--mma F]\n"
        "                   [--epilogue F] [--overlap-epilogue] [--persistent] [--sms N] [--no-sync] [--json]\n"
        "                   [--ctas-per-sm N] [--producer-warp] [--no-shared-resources]\n"
        "                   [--load-bandwidth]\n"
        "                   [--tile-order recorded|row|column|reverse|longest-first]\n"
        "                                replay the kernel with edited parameters: measured and\n"
        "                                predicted time, the new attribution (docs/whatif.md)\n"
        "  warpstage --screenshot IMAGE [FILE]\n"
        "                                open FILE (or the sample), save a picture of the window once\n"
        "                                its first kernel is drawn, and quit (needs a display or Xvfb)\n"
        "  warpstage --screenshot IMAGE [FILE] [--rung NAME] [--what-if]\n"
        "                                the same, on the first kernel of a ladder rung, with that rung's\n"
        "                                what-if tour step shown (What-if panel, ghost lanes, critical path)\n"
        "  warpstage --help | --version\n"
        "\n"
        "Export options:\n"
        "  --view VIEW       warp (default: one kernel's per-warp timeline) or program (the run's\n"
        "                    streams, kernels, copies and NVTX ranges; --range is then relative to the\n"
        "                    run's first record)\n"
        "  --run ID          run id (default: the newest run)\n"
        "  --kernel ID       kernel id (default: the run's first traced kernel)\n"
        "  --range T0:T1     time range relative to the kernel start; units ns (default), us, ms, s\n"
        "                    e.g. --range 0:250us\n"
        "  --lanes FILTER    lane filter: sm:0-3, cta:0-7,12, role:producer, warp:0-3; ';' ANDs terms\n"
        "  --size WxH        image size in pixels (default 1600x900)\n"
        "  --dpi N           resolution, 24..1200 (default 96): written into the PNG, and scales text\n"
        "  --title TEXT      figure title (default: rung, shape and kernel)\n"
        "  --critical-path   images: outline the kernel's critical path on the warp lanes (docs/whatif.md)\n"
        "  --what-if         images: a ghost row under each warp with the replay's predicted timeline;\n"
        "                    with the replay parameters of `warpstage whatif` (--stages N, --load-latency F,\n"
        "                    --mma F, --epilogue F, --overlap-epilogue, --persistent, --sms N, --no-sync,\n"
        "                    --ctas-per-sm N, --producer-warp, --no-shared-resources,\n"
        "                    --load-bandwidth);\n"
        "                    --ghost over: frames over the measured lanes instead of rows beside them\n"
        "  --flows           trace formats: flow arrows from each load's issue to the waits it satisfied\n"
        "  --no-counters     trace formats: leave out the loads-in-flight counter of each CTA\n"
        "\n"
        "Exit codes:\n"
        "  0  success\n"
        "  1  the command failed (export: unknown run or kernel, empty range, cannot write the image;\n"
        "     query: bad SQL, a statement that writes; analyze/whatif: unknown run or kernel, an\n"
        "     untraced kernel, parameters the replay cannot run)\n"
        "  2  bad command line (unknown subcommand or option, missing or malformed value)\n"
        "  3  the trace file cannot be read (missing, not SQLite, not a Warpstage trace, corrupt,\n"
        "     or made by a newer Warpstage); import: an input that is no trace it reads, or is cut short\n"
        "  4  the trace file is an older Warpstage schema: open it in the viewer to migrate a copy,\n"
        "     or warpstage migrate FILE --out COPY.wstrace\n");
}

bool isHeadlessCommand(int argc, char** argv)
{
    if (argc < 2)
        return false;
    const char* a = argv[1];
    return !std::strcmp(a, "info") || !std::strcmp(a, "export") || !std::strcmp(a, "import") || !std::strcmp(a, "query") ||
           !std::strcmp(a, "analyze") || !std::strcmp(a, "whatif") ||
           !std::strcmp(a, "migrate") ||
           !std::strcmp(a, "--help") ||
           !std::strcmp(a, "-h") || !std::strcmp(a, "--version") || !std::strcmp(a, "-v") ||
           !std::strcmp(a, "help");
}

bool parseSize(const QString& s, int* w, int* h)
{
    static const QRegularExpression re(QStringLiteral("^(\\d{2,5})[xX×](\\d{2,5})$"));
    const auto m = re.match(s.trimmed());
    if (!m.hasMatch())
        return false;
    *w = m.captured(1).toInt();
    *h = m.captured(2).toInt();
    return *w >= 16 && *h >= 16 && *w <= 16384 && *h <= 16384;
}

bool parseId(const QString& s, qint64* id)
{
    // Digits only: no sign, no blanks, no "0x", no trailing junk ("12abc").
    static const QRegularExpression re(QStringLiteral("^[0-9]{1,18}$"));
    if (!re.match(s).hasMatch())
        return false;
    bool ok = false;
    const qint64 v = s.toLongLong(&ok);
    if (!ok || v <= 0)
        return false;
    *id = v;
    return true;
}

bool parseDpi(const QString& s, double* dpi)
{
    // A plain decimal number: "nan", "inf", "1e2" and blanks are refused.
    static const QRegularExpression re(QStringLiteral("^[0-9]{1,5}(\\.[0-9]{1,6})?$"));
    if (!re.match(s).hasMatch())
        return false;
    bool ok = false;
    const double v = s.toDouble(&ok);
    if (!ok || !(v >= kMinDpi && v <= kMaxDpi))
        return false;
    *dpi = v;
    return true;
}

bool parseTimeNs(const QString& s, qint64* ns)
{
    static const QRegularExpression re(QStringLiteral("^\\s*(-?\\d+(?:\\.\\d+)?)\\s*(ns|us|µs|ms|s)?\\s*$"));
    const auto m = re.match(s);
    if (!m.hasMatch())
        return false;
    double v = m.captured(1).toDouble();
    const QString u = m.captured(2);
    if (u == QLatin1String("us") || u == QStringLiteral("µs"))
        v *= 1e3;
    else if (u == QLatin1String("ms"))
        v *= 1e6;
    else if (u == QLatin1String("s"))
        v *= 1e9;
    *ns = qint64(std::llround(v));
    return true;
}

void cliError(const QString& message)
{
    std::fprintf(stderr, "warpstage: %s\n", message.toLocal8Bit().constData());
}

void cliError(const std::string& message)
{
    std::fprintf(stderr, "warpstage: %s\n", message.c_str());
}

void cliError(const char* message)
{
    std::fprintf(stderr, "warpstage: %s\n", message);
}

static int usage(const QString& s)
{
    cliError(s);
    std::fprintf(stderr, "Try 'warpstage --help'.\n");
    return ExitUsage;
}

static int runInfo(const QStringList& args)
{
    QString file;
    bool json = false;
    for (const QString& a : args) {
        if (a == QLatin1String("--json"))
            json = true;
        else if (a.startsWith(QLatin1String("--")))
            return usage(QStringLiteral("info: unknown option '%1'").arg(a));
        else if (file.isEmpty())
            file = a;
        else
            return usage(QStringLiteral("info: more than one FILE given ('%1', '%2')").arg(file, a));
    }
    if (file.isEmpty())
        return usage(QStringLiteral("info: missing FILE"));
    try {
        const std::string out = ws::describeFile(file.toStdString(), json);
        std::fwrite(out.data(), 1, out.size(), stdout);
        if (!out.empty() && out.back() != '\n')
            std::fputc('\n', stdout);
        return ExitOk;
    } catch (const ws::NeedsMigrationError& e) {
        cliError(QString::fromStdString(e.what()));
        cliError(migrateHint(QString::fromStdString(e.path())));
        return ExitNeedsMigration;
    } catch (const ws::StoreError& e) {
        cliError(QString::fromStdString(e.what()));
        return ExitBadFile;
    } catch (const std::exception& e) {
        cliError(QStringLiteral("%1: %2").arg(file, QString::fromStdString(e.what())));
        return ExitBadFile;
    }
}

static int runExport(int argc, char** argv, const QStringList& args)
{
    if (isTraceExportCommand(args))
        return runTraceExport(args);
    FigureOptions opt;
    bool haveOut = false;
    bool ghostOrParams = false;  // a replay parameter or --ghost: only with --what-if
    for (int i = 0; i < args.size(); ++i) {
        const QString a = args[i];
        auto value = [&](QString* v) {
            if (i + 1 >= args.size())
                return false;
            *v = args[++i];
            return true;
        };
        QString v;
        if (a == QLatin1String("--view")) {
            if (!value(&v))
                return usage(QStringLiteral("export: --view needs a value (warp or program)"));
            if (v == QLatin1String("program"))
                opt.view = FigureOptions::View::Program;
            else if (v == QLatin1String("warp"))
                opt.view = FigureOptions::View::Warp;
            else
                return usage(QStringLiteral("export: --view expects warp or program, got '%1'").arg(v));
        } else if (a == QLatin1String("--run") || a == QLatin1String("--kernel")) {
            if (!value(&v))
                return usage(QStringLiteral("export: %1 needs a value").arg(a));
            qint64 id = 0;
            if (!parseId(v, &id))
                return usage(QStringLiteral("export: %1 expects a positive id, got '%2'").arg(a, v));
            (a == QLatin1String("--run") ? opt.runId : opt.kernelId) = id;
        } else if (a == QLatin1String("--range")) {
            if (!value(&v))
                return usage(QStringLiteral("export: --range needs a value"));
            QStringList p = v.split(QLatin1Char(':'));
            if (p.size() != 2)
                p = v.split(QStringLiteral(".."));
            qint64 t0 = 0, t1 = 0;
            if (p.size() != 2 || !parseTimeNs(p[0], &t0) || !parseTimeNs(p[1], &t1) || t1 <= t0)
                return usage(QStringLiteral("export: --range expects T0:T1 with T0 < T1 (e.g. 0:250us), got '%1'").arg(v));
            opt.range = qMakePair(ws::TimeNs(t0), ws::TimeNs(t1));
        } else if (a == QLatin1String("--lanes")) {
            if (!value(&v))
                return usage(QStringLiteral("export: --lanes needs a value"));
            QString ferr;
            if (!LaneFilter::parse(v, &ferr))
                return usage(QStringLiteral("export: --lanes: %1").arg(ferr));
            opt.lanes = v;
        } else if (a == QLatin1String("--out") || a == QLatin1String("-o")) {
            if (!value(&v))
                return usage(QStringLiteral("export: --out needs a value"));
            const QString ext = v.section(QLatin1Char('.'), -1).toLower();
            if (ext != QLatin1String("png") && ext != QLatin1String("svg") && ext != QLatin1String("pdf"))
                return usage(QStringLiteral("export: --out must end in .png, .svg, .pdf, .json, .json.gz or .perfetto-trace, got '%1'").arg(v));
            opt.out = v;
            haveOut = true;
        } else if (a == QLatin1String("--size")) {
            int w = 0, h = 0;
            if (!value(&v))
                return usage(QStringLiteral("export: --size needs a value"));
            if (!parseSize(v, &w, &h))
                return usage(QStringLiteral("export: --size expects WxH in pixels (16..16384), e.g. 1600x900"));
            opt.size = QSize(w, h);
        } else if (a == QLatin1String("--dpi")) {
            if (!value(&v))
                return usage(QStringLiteral("export: --dpi needs a value"));
            if (!parseDpi(v, &opt.dpi))
                return usage(QStringLiteral("export: --dpi expects a number in %1..%2, got '%3'")
                                 .arg(kMinDpi).arg(kMaxDpi).arg(v));
        } else if (a == QLatin1String("--title")) {
            if (!value(&v))
                return usage(QStringLiteral("export: --title needs a value"));
            opt.title = v;
        } else if (a == QLatin1String("--critical-path")) {
            opt.criticalPath = true;
        } else if (a == QLatin1String("--what-if")) {
            opt.whatIf = true;
        } else if (a == QLatin1String("--ghost")) {
            if (!value(&v) || (v != QLatin1String("beside") && v != QLatin1String("over")))
                return usage(QStringLiteral("export: --ghost expects beside or over"));
            opt.ghostOver = v == QLatin1String("over");
            ghostOrParams = true;
        } else if (const int w = parseWhatIfOption(args, i, &opt.whatIfParams, "export"); w != -2) {
            if (w >= 0)
                return w;
            ghostOrParams = true;
        } else if (a.startsWith(QLatin1String("-"))) {
            return usage(QStringLiteral("export: unknown option '%1'").arg(a));
        } else if (opt.file.isEmpty()) {
            opt.file = a;
        } else {
            return usage(QStringLiteral("export: more than one FILE given ('%1', '%2')").arg(opt.file, a));
        }
    }
    if (opt.file.isEmpty())
        return usage(QStringLiteral("export: missing FILE"));
    if (!haveOut)
        return usage(QStringLiteral("export: missing --out IMAGE"));
    if (opt.view == FigureOptions::View::Program && (opt.kernelId != 0 || !opt.lanes.isEmpty()))
        return usage(QStringLiteral("export: --kernel and --lanes belong to the warp view, not to --view program"));
    if (opt.view == FigureOptions::View::Program && (opt.criticalPath || opt.whatIf))
        return usage(QStringLiteral("export: --critical-path and --what-if belong to the warp view, not to --view program"));
    if (ghostOrParams && !opt.whatIf)
        return usage(QStringLiteral("export: replay parameters (--stages, --load-latency, ...) and --ghost need --what-if"));

    // Check the file first, with the store's own message and exit code.
    try {
        ws::TraceStore::openReadOnly(opt.file.toStdString());
    } catch (const ws::NeedsMigrationError& e) {
        cliError(QString::fromStdString(e.what()));
        cliError(migrateHint(QString::fromStdString(e.path())));
        return ExitNeedsMigration;
    } catch (const std::exception& e) {
        cliError(QString::fromStdString(e.what()));
        return ExitBadFile;
    }

    // The same bytes every time: Qt's hash seed is random per process, and the PDF writer's font
    // subsetting iterates a QHash (two runs gave differently ordered embedded fonts).
    QHashSeed::setDeterministicGlobalSeed();
    // No display needed, and the same pixels everywhere: always draw offscreen.
    qputenv("QT_QPA_PLATFORM", "offscreen");
    // Keep stderr for our own messages: drop Qt's note about XDG_RUNTIME_DIR (irrelevant offscreen).
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& msg) {
        if (msg.startsWith(QLatin1String("QStandardPaths:")))
            return;
        std::fprintf(stderr, "%s\n", qPrintable(msg));
        if (type == QtFatalMsg)
            std::abort();
    });
    QApplication app(argc, argv);
    QString error;
    if (!exportFigure(opt, &error)) {
        cliError(error.isEmpty() ? QStringLiteral("export failed") : error);
        return ExitFailure;
    }
    return ExitOk;
}

int runHeadless(int argc, char** argv)
{
    QStringList args;
    for (int i = 2; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    const QString cmd = QString::fromLocal8Bit(argv[1]);
    if (cmd == QLatin1String("--help") || cmd == QLatin1String("-h") || cmd == QLatin1String("help")) {
        std::fputs(helpText().toLocal8Bit().constData(), stdout);
        return ExitOk;
    }
    if (cmd == QLatin1String("--version") || cmd == QLatin1String("-v")) {
        std::printf("warpstage %s (trace schema %d)\n", WARPSTAGE_VERSION, ws::kSchemaVersion);
        return ExitOk;
    }
    if (cmd == QLatin1String("info"))
        return runInfo(args);
    if (cmd == QLatin1String("export"))
        return runExport(argc, argv, args);
    if (cmd == QLatin1String("import"))
        return runImport(args);
    if (cmd == QLatin1String("query"))
        return runQueryCommand(args);
    if (cmd == QLatin1String("analyze"))
        return runAnalyzeCommand(args);
    if (cmd == QLatin1String("whatif"))
        return runWhatIfCommand(args);
    if (cmd == QLatin1String("migrate"))
        return runMigrateCommand(args);
    return usage(QStringLiteral("unknown subcommand '%1'").arg(cmd));
}

}  // namespace ws::ui
