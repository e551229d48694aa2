// `warpstage analyze` (critical path and its attribution) and `warpstage whatif` (replay with edited
// parameters) (issue 13, docs/whatif.md). The work is core's WhatIfModel (Qt-free); this file parses the
// command line, picks the kernel and maps failures to exit codes.
#include "cli.h"

#include "warpstage/report.h"  // jsonEscape
#include "warpstage/store.h"
#include "warpstage/whatif.h"

#include <QRegularExpression>

#include <cmath>
#include <cstdio>
#include <string>

namespace ws::ui {

namespace {


int wiUsage(const std::string& s)
{
    cliError(s);
    std::fprintf(stderr, "Try 'warpstage --help'.\n");
    return ExitUsage;
}

bool parseFactor(const QString& s, double* v)
{
    static const QRegularExpression re(QStringLiteral("^[0-9]{1,6}(\\.[0-9]{1,9})?$"));
    if (!re.match(s).hasMatch())
        return false;
    bool ok = false;
    const double d = s.toDouble(&ok);
    if (!ok || !(d > 0) || d > 1000)
        return false;
    *v = d;
    return true;
}

bool parseCount(const QString& s, int lo, int hi, int* v)
{
    static const QRegularExpression re(QStringLiteral("^[0-9]{1,5}$"));
    if (!re.match(s).hasMatch())
        return false;
    const int n = s.toInt();
    if (n < lo || n > hi)
        return false;
    *v = n;
    return true;
}

std::string jsonString(const std::string& s)
{
    return "\"" + jsonEscape(s) + "\"";
}

std::string fmtUs(double ns)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%10.1f us", ns / 1e3);
    return buf;
}

std::string attributionText(const CriticalPath& p)
{
    std::string o;
    const double total = double(p.kernelEnd - p.kernelStart);
    for (int c = 0; c < kCauseCount; ++c) {
        const double v = p.attributionNs[c];
        char buf[160];
        std::snprintf(buf, sizeof buf, "  %-30s %s  %5.1f%%\n", std::string(causeLabel(Cause(c))).c_str(),
                      fmtUs(v).c_str(), total > 0 ? 100.0 * v / total : 0.0);
        o += buf;
    }
    return o;
}

std::string attributionJson(const CriticalPath& p)
{
    std::string o = "{";
    for (int c = 0; c < kCauseCount; ++c) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s\"%s\": %.0f", c ? ", " : "", std::string(causeName(Cause(c))).c_str(),
                      p.attributionNs[c]);
        o += buf;
    }
    return o + "}";
}

std::string graphJson(const GraphSummary& g)
{
    std::string o = "{\"ctas\": " + std::to_string(g.ctas) + ", \"lanes\": " + std::to_string(g.lanes)
        + ", \"nodes\": " + std::to_string(g.nodes) + ", \"data_edges\": " + std::to_string(g.dataEdges)
        + ", \"slot_edges\": " + std::to_string(g.slotEdges) + ", \"sync_edges\": " + std::to_string(g.syncEdges)
        + ", \"order_edges\": " + std::to_string(g.orderEdges) + ", \"collective_edges\": " + std::to_string(g.collectiveEdges)
        + ", \"unexplained_waits\": " + std::to_string(g.unexplainedWaits) + ", \"stages\": "
        + std::to_string(g.stages) + ", \"slots_per_sm\": " + std::to_string(g.slotsPerSm)
        + ", \"cluster_pairs\": " + std::to_string(g.clusterPairs) + ", \"cluster_edges\": "
        + std::to_string(g.clusterEdges) + ", \"handoff_edges\": " + std::to_string(g.handoffEdges)
        + ", \"flag_edges\": " + std::to_string(g.flagEdges)
        + ", \"uncoupled_slot_waits\": " + std::to_string(g.uncoupledSlotWaits)
        + ", \"clock_skew_ns\": " + std::to_string(g.clockSkewNs)
        + ", \"tiles\": " + std::to_string(g.tiles)
        + ", \"persistent\": " + (g.persistent ? "true" : "false") + ", \"reduced\": "
        + (g.reduced ? "true" : "false") + ", \"missing\": [";
    for (std::size_t i = 0; i < g.missing.size(); ++i)
        o += (i ? ", " : "") + jsonString(g.missing[i]);
    char res[160];
    std::snprintf(res, sizeof res, "], \"mma_flop_per_ns_per_sm\": %.1f, \"mma_flop_per_fill\": %.0f, \"resources\": ",
                  g.mmaFlopPerNsPerSm, g.mmaFlopPerFill);
    char bw[96];
    std::snprintf(bw, sizeof bw, ", \"load_bytes_per_ns_per_sm\": %.1f, \"bandwidth\": ", g.loadBytesPerNsPerSm);
    return o + res + jsonString(g.resources) + bw + jsonString(g.bandwidth) + "}";
}

struct Common {
    QString file;
    qint64 runId = 0;
    qint64 kernelId = 0;
    bool json = false;
};

// Loads the selected kernel. Returns an exit code (ExitOk on success).
int loadSelected(const Common& c, const char* cmd, KernelTrace* out)
{
    try {
        const TraceStore store = TraceStore::openReadOnly(c.file.toStdString());
        const std::vector<RunInfo> runs = store.runs();
        if (runs.empty()) {
            cliError(std::string(cmd) + ": the file holds no runs");
            return ExitFailure;
        }
        RowId run = c.runId;
        if (run == 0) {
            run = runs.back().id;
            for (const RunInfo& r : runs)
                run = std::max(run, r.id);
        } else {
            bool found = false;
            for (const RunInfo& r : runs)
                found = found || r.id == run;
            if (!found) {
                cliError(std::string(cmd) + ": run " + std::to_string(run) + " does not exist");
                return ExitFailure;
            }
        }
        const std::vector<KernelLaunch> ks = store.kernels(run);
        const KernelLaunch* pick = nullptr;
        for (const KernelLaunch& k : ks) {
            if (c.kernelId != 0 ? k.id == c.kernelId : k.traced) {
                pick = &k;
                break;
            }
        }
        if (!pick) {
            if (c.kernelId != 0)
                cliError(std::string(cmd) + ": kernel " + std::to_string(c.kernelId) + " does not exist in run "
                      + std::to_string(run));
            else
                cliError(std::string(cmd) + ": run " + std::to_string(run) + " has no traced kernel");
            return ExitFailure;
        }
        if (!pick->traced) {
            cliError(std::string(cmd) + ": kernel " + std::to_string(pick->id) + " (" + pick->name
                  + ") was not traced: it has no per-warp timeline to build a dependency graph from");
            return ExitFailure;
        }
        LoadOptions lo;
        lo.stalls = false;
        lo.sources = false;
        *out = store.loadKernel(pick->id, lo);
        return ExitOk;
    } catch (const NeedsMigrationError& e) {
        cliError(e.what());
        return ExitNeedsMigration;
    } catch (const StoreError& e) {
        cliError(e.what());
        return ExitBadFile;
    } catch (const std::exception& e) {
        cliError(c.file.toStdString() + ": " + e.what());
        return ExitBadFile;
    }
}

// Parses the options both commands share; returns -1 when `a` was one of them, else an exit code or -2 (not
// a common option).
int parseCommon(const QStringList& args, int& i, Common* c, const char* cmd)
{
    const QString& a = args[i];
    if (a == QLatin1String("--json")) {
        c->json = true;
        return -1;
    }
    if (a == QLatin1String("--run") || a == QLatin1String("--kernel")) {
        if (i + 1 >= args.size())
            return wiUsage(std::string(cmd) + ": " + a.toStdString() + " needs a value");
        const QString v = args[++i];
        qint64 id = 0;
        if (!parseId(v, &id))
            return wiUsage(std::string(cmd) + ": " + a.toStdString() + " expects a positive id, got '" + v.toStdString()
                           + "'");
        (a == QLatin1String("--run") ? c->runId : c->kernelId) = id;
        return -1;
    }
    if (a.startsWith(QLatin1String("-")))
        return -2;
    if (!c->file.isEmpty())
        return wiUsage(std::string(cmd) + ": more than one FILE given ('" + c->file.toStdString() + "', '"
                       + a.toStdString() + "')");
    c->file = a;
    return -1;
}

std::string header(const KernelTrace& t)
{
    return "run " + std::to_string(t.run.id) + " " + t.run.variant + ", kernel " + std::to_string(t.launch.id)
        + " (" + t.launch.name.substr(0, 80) + ")\n";
}

std::string graphText(const GraphSummary& g)
{
    std::string o = "graph: " + std::to_string(g.ctas) + " CTAs, " + std::to_string(g.lanes) + " warps, "
        + std::to_string(g.nodes) + " phases; edges: " + std::to_string(g.dataEdges) + " data, "
        + std::to_string(g.slotEdges) + " slot, " + std::to_string(g.syncEdges) + " barrier, "
        + std::to_string(g.orderEdges) + " order, " + std::to_string(g.collectiveEdges) + " collective MMA issue; ring " + std::to_string(g.stages) + " slots, "
        + std::to_string(g.slotsPerSm) + " CTA(s) per SM" + (g.persistent ? ", persistent" : "") + "\n";
    if (g.clusterPairs > 0)
        o += std::to_string(g.clusterPairs) + " 2-CTA clusters replayed together: " + std::to_string(g.clusterEdges)
            + " edges to the partner CTA (its slot releases and loads)\n";
    if (g.uncoupledSlotWaits > 0)
        o += std::to_string(g.uncoupledSlotWaits) + " slot waits ended before the partner CTA's recorded release (the "
            "two SMs' clocks disagree by up to " + std::to_string(g.clockSkewNs) + " ns): they wait for their own "
            "CTA's release only\n";
    if (g.handoffEdges > 0)
        o += std::to_string(g.handoffEdges) + " epilogue-warp waits for the consumers' hand-off\n";
    if (g.flagEdges > 0)
        o += std::to_string(g.flagEdges) + " epilogue-warp waits on a ready flag another CTA publishes\n";
    if (!g.resources.empty())
        o += g.resources + "\n";
    if (!g.bandwidth.empty())
        o += g.bandwidth + "\n";
    if (g.reduced) {
        o += "reduced analysis:\n";
        for (const std::string& m : g.missing)
            o += "  - " + m + "\n";
    }
    return o;
}

}  // namespace

int runAnalyzeCommand(const QStringList& args)
{
    Common c;
    for (int i = 0; i < args.size(); ++i) {
        const int r = parseCommon(args, i, &c, "analyze");
        if (r == -2)
            return wiUsage("analyze: unknown option '" + args[i].toStdString() + "'");
        if (r >= 0)
            return r;
    }
    if (c.file.isEmpty())
        return wiUsage("analyze: missing FILE");
    KernelTrace t;
    if (const int rc = loadSelected(c, "analyze", &t); rc != ExitOk)
        return rc;
    try {
        const WhatIfModel model = WhatIfModel::build(t);
        const WhatIfResult res = model.predict(WhatIfParams{}, false);
        if (c.json) {
            std::printf("{\"run\": %lld, \"kernel\": %lld, \"variant\": %s, \"measured_ns\": %lld, \"predicted_ns\": %lld, "
                        "\"path_steps\": %zu, \"tail_start_ns\": %lld, \"attribution\": %s, \"graph\": %s}\n",
                        (long long)t.run.id, (long long)t.launch.id, jsonString(t.run.variant).c_str(),
                        (long long)res.measuredNs, (long long)res.predictedNs, res.path.steps.size(),
                        (long long)(res.path.tailStart - res.path.kernelStart), attributionJson(res.path).c_str(),
                        graphJson(model.summary()).c_str());
        } else {
            std::string o = header(t);
            o += "measured " + fmtUs(double(res.measuredNs)) + "   replayed " + fmtUs(double(res.predictedNs)) + "\n";
            o += "critical path (" + std::to_string(res.path.steps.size()) + " steps), time by cause:\n";
            o += attributionText(res.path);
            o += graphText(model.summary());
            std::fputs(o.c_str(), stdout);
        }
        return ExitOk;
    } catch (const WhatIfError& e) {
        cliError(std::string("analyze: ") + e.what());
        return ExitFailure;
    }
}

int parseWhatIfOption(const QStringList& args, int& i, WhatIfParams* p, const char* cmd)
{
    const QString a = args[i];
    const std::string name = std::string(cmd) + ": " + a.toStdString();
    auto value = [&](QString* v) {
        if (i + 1 >= args.size())
            return false;
        *v = args[++i];
        return true;
    };
    QString v;
    if (a == QLatin1String("--stages") || a == QLatin1String("--sms") || a == QLatin1String("--ctas-per-sm")) {
        if (!value(&v))
            return wiUsage(name + " needs a value");
        const bool st = a == QLatin1String("--stages");
        const bool cps = a == QLatin1String("--ctas-per-sm");
        const int hi = st || cps ? 64 : 4096;
        if (!parseCount(v, 1, hi, st ? &p->stages : cps ? &p->slotsPerSm : &p->sms))
            return wiUsage(name + " expects a whole number in 1.." + std::to_string(hi) + ", got '" + v.toStdString() + "'");
    } else if (a == QLatin1String("--load-latency") || a == QLatin1String("--mma") || a == QLatin1String("--epilogue")) {
        if (!value(&v))
            return wiUsage(name + " needs a value");
        double* f = a == QLatin1String("--mma") ? &p->mma : a == QLatin1String("--epilogue") ? &p->epilogue : &p->loadLatency;
        if (!parseFactor(v, f))
            return wiUsage(name + " expects a factor > 0 and <= 1000 (e.g. 0.5), got '" + v.toStdString() + "'");
    } else if (a == QLatin1String("--overlap-epilogue")) {
        p->overlapEpilogue = true;
    } else if (a == QLatin1String("--persistent")) {
        p->persistent = true;
    } else if (a == QLatin1String("--no-sync")) {
        p->dropCtaSync = true;
    } else if (a == QLatin1String("--producer-warp")) {
        p->producerWarp = true;
    } else if (a == QLatin1String("--tile-order")) {
        if (!value(&v))
            return wiUsage(name + " needs a value");
        if (!tileOrderFromName(v.toStdString(), &p->tileOrder))
            return wiUsage(name + " expects recorded, row, column, reverse or longest-first, got '" + v.toStdString() + "'");
    } else if (a == QLatin1String("--no-shared-resources")) {
        p->sharedResources = false;
    } else if (a == QLatin1String("--load-bandwidth")) {
        p->loadBandwidth = true;
    } else if (a == QLatin1String("--no-load-bandwidth")) {  // the default since session 9; kept for old command lines
        p->loadBandwidth = false;
    } else {
        return -2;
    }
    return -1;
}

int runWhatIfCommand(const QStringList& args)
{
    Common c;
    WhatIfParams p;
    for (int i = 0; i < args.size(); ++i) {
        const int r = parseCommon(args, i, &c, "whatif");
        if (r >= 0)
            return r;
        if (r == -1)
            continue;
        const int w = parseWhatIfOption(args, i, &p, "whatif");
        if (w == -2)
            return wiUsage("whatif: unknown option '" + args[i].toStdString() + "'");
        if (w >= 0)
            return w;
    }
    if (c.file.isEmpty())
        return wiUsage("whatif: missing FILE");
    KernelTrace t;
    if (const int rc = loadSelected(c, "whatif", &t); rc != ExitOk)
        return rc;
    try {
        const WhatIfModel model = WhatIfModel::build(t);
        const WhatIfResult base = model.predict(WhatIfParams{}, false);
        const WhatIfResult res = model.predict(p, false);
        const double change = res.measuredNs > 0 ? 100.0 * double(res.predictedNs - res.measuredNs) / double(res.measuredNs) : 0;
        if (c.json) {
            std::string notes = "[";
            for (std::size_t i = 0; i < res.notes.size(); ++i)
                notes += (i ? ", " : "") + jsonString(res.notes[i]);
            notes += "]";
            char params[512];
            std::snprintf(params, sizeof params,
                          "{\"stages\": %d, \"load_latency\": %g, \"mma\": %g, \"epilogue\": %g, \"overlap_epilogue\": %s, "
                          "\"persistent\": %s, \"sms\": %d, \"no_sync\": %s, \"tile_order\": \"%s\", "
                          "\"load_bandwidth\": %s, \"ctas_per_sm\": %d, \"shared_resources\": %s, \"producer_warp\": %s}",
                          p.stages, p.loadLatency, p.mma, p.epilogue, p.overlapEpilogue ? "true" : "false",
                          p.persistent ? "true" : "false", p.sms, p.dropCtaSync ? "true" : "false",
                          std::string(tileOrderName(p.tileOrder)).c_str(), p.loadBandwidth ? "true" : "false",
                          p.slotsPerSm, p.sharedResources ? "true" : "false", p.producerWarp ? "true" : "false");
            std::printf("{\"run\": %lld, \"kernel\": %lld, \"variant\": %s, \"measured_ns\": %lld, \"replayed_ns\": %lld, "
                        "\"predicted_ns\": %lld, \"change_percent\": %.2f, \"parameters\": %s, \"attribution\": %s, "
                        "\"measured_attribution\": %s, \"notes\": %s, \"graph\": %s}\n",
                        (long long)t.run.id, (long long)t.launch.id, jsonString(t.run.variant).c_str(),
                        (long long)res.measuredNs, (long long)base.predictedNs, (long long)res.predictedNs, change, params,
                        attributionJson(res.path).c_str(), attributionJson(base.path).c_str(), notes.c_str(),
                        graphJson(model.summary()).c_str());
        } else {
            std::string o = header(t);
            char buf[200];
            std::snprintf(buf, sizeof buf, "measured %s   predicted %s   (%+.1f%%)\n", fmtUs(double(res.measuredNs)).c_str(),
                          fmtUs(double(res.predictedNs)).c_str(), change);
            o += buf;
            for (const std::string& n : res.notes)
                o += "note: " + n + "\n";
            o += "predicted critical path (" + std::to_string(res.path.steps.size()) + " steps), time by cause:\n";
            o += attributionText(res.path);
            o += graphText(model.summary());
            std::fputs(o.c_str(), stdout);
        }
        return ExitOk;
    } catch (const WhatIfError& e) {
        cliError(std::string("whatif: ") + e.what());
        return ExitFailure;
    }
}

}  // namespace ws::ui
