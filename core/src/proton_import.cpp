// Proton intra-kernel trace events -> one Warpstage run (proton.h; docs/interop.md "Importing from Proton").
#include "warpstage/proton.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace ws {

namespace {

std::optional<int> number(std::string_view s)
{
    if (s.empty() || s.size() > 9)
        return std::nullopt;
    int v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < 0)
        return std::nullopt;
    return v;
}

// "<prefix><digits>" -> digits
std::optional<int> prefixed(std::string_view s, std::string_view prefix)
{
    if (s.substr(0, prefix.size()) != prefix)
        return std::nullopt;
    return number(s.substr(prefix.size()));
}

bool isLoopKind(IntervalKind k)
{
    return k == IntervalKind::IssueLoad || k == IntervalKind::WaitSlot || k == IntervalKind::WaitData
        || k == IntervalKind::MmaIssue || k == IntervalKind::MmaWait;
}

bool isMmaKind(IntervalKind k)
{
    return isComputeKind(k);
}

std::string fmt(double v)
{
    std::ostringstream ss;
    ss.precision(6);
    ss << v;
    return ss.str();
}

struct RawScope {
    std::uint32_t name = 0;        // index into the interned names
    int line = 0;
    double ts = 0, dur = 0;
};
struct WarpData {
    int warp = 0;
    std::vector<RawScope> raw;     // as written
    std::vector<WarpScope> scopes; // in ns, sorted by start
};
struct CtaData {
    int cta = 0;
    int sm = -1;
    double minTs = 0;
    double freq = 1000;
    bool haveTs = false;
    std::map<int, WarpData> warps;
};
struct KernelData {
    std::string name;
    int launch = 0;                // 0-based among the file's launches of this kernel name
    std::map<int, CtaData> ctas;   // by CTA id
    // Where the writer is in this launch: Proton writes one launch after the other, and inside a launch
    // all the events of one CTA, warp by warp, together. A (CTA, warp) that comes back after the writer
    // left it, or a CTA on another SM, is the next launch.
    int curCta = -1, curWarp = -1;
    std::set<std::pair<int, int>> doneWarps;
};

}  // namespace

std::optional<ProtonPid> parseProtonPid(std::string_view pid)
{
    const auto sp2 = pid.rfind(' ');
    if (sp2 == std::string_view::npos)
        return std::nullopt;
    const auto cta = prefixed(pid.substr(sp2 + 1), "CTA");
    const std::string_view head = pid.substr(0, sp2);
    const auto sp1 = head.rfind(' ');
    const std::string_view coreWord = sp1 == std::string_view::npos ? head : head.substr(sp1 + 1);
    const auto sm = prefixed(coreWord, "Core");
    if (!cta || !sm)
        return std::nullopt;
    ProtonPid p;
    p.kernel = sp1 == std::string_view::npos ? std::string() : std::string(head.substr(0, sp1));
    p.sm = *sm;
    p.cta = *cta;
    return p;
}

std::optional<ProtonTid> parseProtonTid(std::string_view tid)
{
    constexpr std::string_view a = "warp ", b = " (line ";
    if (tid.substr(0, a.size()) != a || tid.empty() || tid.back() != ')')
        return std::nullopt;
    const std::string_view rest = tid.substr(a.size(), tid.size() - a.size() - 1);
    const auto m = rest.find(b);
    if (m == std::string_view::npos)
        return std::nullopt;
    const auto w = number(rest.substr(0, m));
    const auto l = number(rest.substr(m + b.size()));
    if (!w || !l)
        return std::nullopt;
    return ProtonTid{*w, *l};
}

std::vector<ScopePiece> innermostPieces(const std::vector<WarpScope>& scopes)
{
    std::vector<std::size_t> order(scopes.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        return scopes[x].start < scopes[y].start;
    });
    std::vector<TimeNs> times;
    times.reserve(2 * scopes.size());
    for (const auto& s : scopes) {
        times.push_back(s.start);
        times.push_back(s.end);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());

    // Owner among the open scopes: the latest start, then the earliest end, then the deeper line.
    const auto better = [&](std::size_t x, std::size_t y) {
        const auto& a = scopes[x];
        const auto& b = scopes[y];
        if (a.start != b.start)
            return a.start > b.start;
        if (a.end != b.end)
            return a.end < b.end;
        return a.line > b.line;
    };
    std::vector<ScopePiece> out;
    std::vector<std::size_t> open;
    std::size_t next = 0;
    for (std::size_t ti = 0; ti + 1 < times.size(); ++ti) {
        const TimeNs t0 = times[ti], t1 = times[ti + 1];
        while (next < order.size() && scopes[order[next]].start <= t0)
            open.push_back(order[next++]);
        open.erase(std::remove_if(open.begin(), open.end(), [&](std::size_t i) { return scopes[i].end <= t0; }),
                   open.end());
        if (open.empty())
            continue;
        std::size_t best = open.front();
        for (std::size_t i : open)
            if (better(i, best))
                best = i;
        if (!out.empty() && out.back().scope == best && out.back().end == t0)
            out.back().end = t1;
        else
            out.push_back({best, t0, t1});
    }
    // A zero-length scope owns no time; keep it as a zero-length piece so that it is never dropped.
    bool zero = false;
    for (std::size_t i = 0; i < scopes.size(); ++i)
        if (scopes[i].end <= scopes[i].start) {
            out.push_back({i, scopes[i].start, scopes[i].start});
            zero = true;
        }
    if (zero)
        std::stable_sort(out.begin(), out.end(), [](const ScopePiece& a, const ScopePiece& b) { return a.start < b.start; });
    return out;
}

std::vector<std::pair<std::size_t, int>> outerScopes(const std::vector<WarpScope>& scopes)
{
    std::vector<std::size_t> order(scopes.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        if (scopes[x].start != scopes[y].start)
            return scopes[x].start < scopes[y].start;
        if (scopes[x].end != scopes[y].end)
            return scopes[x].end > scopes[y].end;
        return scopes[x].line < scopes[y].line;
    });
    std::vector<std::size_t> stack;
    std::vector<int> depth(scopes.size(), 0);
    std::vector<bool> isOuter(scopes.size(), false);
    for (std::size_t i : order) {
        while (!stack.empty() && scopes[stack.back()].end <= scopes[i].start
               && !(scopes[stack.back()].end == scopes[i].start && scopes[i].end == scopes[i].start))
            stack.pop_back();
        if (!stack.empty() && scopes[stack.back()].end >= scopes[i].end)
            isOuter[stack.back()] = true;
        depth[i] = static_cast<int>(stack.size());
        stack.push_back(i);
    }
    std::vector<std::pair<std::size_t, int>> out;
    for (std::size_t i : order)
        if (isOuter[i])
            out.push_back({i, depth[i]});
    return out;
}

struct ProtonBuilder::State {
    std::vector<KernelData> kernels;
    std::map<std::string, std::size_t, std::less<>> kernelIndex;   // name -> its current (latest) launch
    std::vector<std::string> names;                       // scope names, interned
    std::map<std::string, std::uint32_t, std::less<>> nameIndex;
    std::int64_t foreign = 0, used = 0;
    bool recordedFreq = false;
    double fileFreq = 1000.0;
};

ProtonBuilder::ProtonBuilder(ProtonImportOptions options)
    : m_options(std::move(options)), m_state(std::make_unique<State>())
{
}

ProtonBuilder::~ProtonBuilder() = default;

std::int64_t ProtonBuilder::scopeEvents() const
{
    return m_state->used;
}

void ProtonBuilder::add(const ProtonEvent& e)
{
    State& st = *m_state;
    const std::string& src = m_options.sourceName;
    const auto pid = parseProtonPid(e.pid);
    const auto tid = parseProtonTid(e.tid);
    if (!pid || !tid) {
        ++st.foreign;
        return;
    }
    if (!(e.frequencyMhz > 0) || !std::isfinite(e.frequencyMhz) || !std::isfinite(e.ts) || !std::isfinite(e.dur)
        || e.dur < 0)
        throw ProtonError(src + ": scope '" + e.name + "' of " + e.pid + ", " + e.tid + " has a bad time (ts "
                          + fmt(e.ts) + ", dur " + fmt(e.dur) + ", frequency " + fmt(e.frequencyMhz) + " MHz)");
    if (e.frequencyMhz != 1000.0) {
        st.recordedFreq = true;
        st.fileFreq = e.frequencyMhz;
    }
    auto it = st.kernelIndex.find(pid->kernel);
    if (it == st.kernelIndex.end()) {
        it = st.kernelIndex.emplace(pid->kernel, st.kernels.size()).first;
        st.kernels.push_back(KernelData{pid->kernel, 0, {}});
    }
    {
        KernelData& kd = st.kernels[it->second];
        const auto known = kd.ctas.find(pid->cta);
        const bool otherSm = known != kd.ctas.end() && known->second.sm != pid->sm;
        const bool sameBlock = kd.curCta == pid->cta && kd.curWarp == tid->warp;
        if (otherSm || (!sameBlock && kd.doneWarps.count({pid->cta, tid->warp}))) {
            const int launch = kd.launch + 1;   // the next launch of this kernel
            it->second = st.kernels.size();
            st.kernels.push_back(KernelData{pid->kernel, launch, {}});
        }
    }
    KernelData& kd = st.kernels[it->second];
    if (kd.curCta != pid->cta || kd.curWarp != tid->warp) {
        kd.curCta = pid->cta;
        kd.curWarp = tid->warp;
        kd.doneWarps.insert({pid->cta, tid->warp});
    }
    CtaData& c = kd.ctas[pid->cta];
    c.cta = pid->cta;
    c.sm = pid->sm;
    c.freq = e.frequencyMhz;
    c.minTs = c.haveTs ? std::min(c.minTs, e.ts) : e.ts;
    c.haveTs = true;
    WarpData& w = c.warps[tid->warp];
    w.warp = tid->warp;
    auto ni = st.nameIndex.find(e.name);
    if (ni == st.nameIndex.end()) {
        ni = st.nameIndex.emplace(e.name, static_cast<std::uint32_t>(st.names.size())).first;
        st.names.push_back(e.name);
    }
    // Converted per CTA in finish(), once its first event is known.
    w.raw.push_back(RawScope{ni->second, tid->line, e.ts, e.dur});
    ++st.used;
}

ProtonImport importProtonEvents(const std::vector<ProtonEvent>& events, const ProtonImportOptions& options)
{
    ProtonBuilder b(options);
    for (const auto& e : events)
        b.add(e);
    return b.finish();
}

ProtonImport ProtonBuilder::finish()
{
    State& st = *m_state;
    const ProtonImportOptions& options = m_options;
    const std::string src = options.sourceName.empty() ? std::string("input") : options.sourceName;
    ProtonImport result;
    ProtonImportReport& rep = result.report;
    auto& kernels = st.kernels;
    const auto used = st.used, foreign = st.foreign;
    const bool recordedFreq = st.recordedFreq;
    const double fileFreq = st.fileFreq;
    if (used == 0)
        throw ProtonError(src + ": not a Proton intra-kernel trace (no event has a pid \"<kernel> Core<SM> CTA<n>\" "
                          "and a tid \"warp <w> (line <l>)\"; "
                          + std::to_string(used + foreign) + " events read)");

    // 2. The SM clock.
    if (options.smClockMhz) {
        if (!(*options.smClockMhz > 0) || *options.smClockMhz > 1e5)
            throw ProtonError("--sm-clock-mhz: " + fmt(*options.smClockMhz) + " is not a clock rate in MHz");
        rep.clockMhz = *options.smClockMhz;
        rep.clockSource = "--sm-clock-mhz";
    } else if (recordedFreq) {
        rep.clockMhz = fileFreq;
        rep.clockSource = "recorded in the trace (args \"Frequency (MHz)\")";
    } else {
        rep.clockMhz = kAssumedSmClockMhz;
        rep.clockSource = "assumed (the trace does not record the SM clock; pass --sm-clock-mhz)";
    }
    const double nsPerCycle = 1000.0 / rep.clockMhz;

    // 3. Launches: all (one kernel each), or the one asked for.
    int launchesMax = 0;
    for (const KernelData& kd : kernels)
        launchesMax = std::max(launchesMax, kd.launch + 1);
    if (options.launch) {
        if (*options.launch < 0 || *options.launch >= launchesMax)
            throw ProtonError(src + ": --launch " + std::to_string(*options.launch) + ": the file holds "
                              + std::to_string(launchesMax) + (launchesMax == 1 ? " launch" : " launches")
                              + " per kernel (0 to " + std::to_string(launchesMax - 1) + ")");
        kernels.erase(std::remove_if(kernels.begin(), kernels.end(),
                                     [&](const KernelData& kd) { return kd.launch != *options.launch; }),
                      kernels.end());
    }
    rep.launches = static_cast<int>(kernels.size());

    RunRecord& run = result.run;
    run.info.variant = kernels.front().name;
    run.info.hasTimeline = true;
    run.info.device.smClockKHz = static_cast<int>(std::lround(rep.clockMhz * 1000));
    std::set<std::string> unmapped;

    for (KernelData& kd : kernels) {
        KernelRecord k;
        std::size_t scopeCount = 0;
        for (const auto& [ctaId, c] : kd.ctas)
            for (const auto& [warpIdx, w] : c.warps)
                scopeCount += w.raw.size();
        k.intervals.reserve(scopeCount);   // one interval per scope, more where scopes nest
        std::vector<ScopeSpan> brackets;
        std::map<std::string, int> userIndex;
        int maxWarp = 0, maxCta = 0;
        TimeNs kStart = 0, kEnd = 0;
        bool kAny = false;
        struct WarpInfo {
            std::size_t local;                         // index into k.warps
            std::vector<std::size_t> issue, waitData;  // scope indices (by start) of IssueLoad / WaitData scopes
            const WarpData* data;
        };
        for (auto& [ctaId, c] : kd.ctas) {
            const std::size_t ctaLocal = k.ctas.size();
            Cta cta;
            cta.id = static_cast<RowId>(ctaLocal);
            cta.blockLinear = ctaId;
            cta.smId = c.sm;
            cta.nsPerCycle = nsPerCycle;
            maxCta = std::max(maxCta, ctaId);
            // CTA start: the global-timer ns Proton aligned it by; within the CTA, cycles since its first event.
            const double ctaStartNs = c.minTs * c.freq;
            TimeNs cs = 0, ce = 0;
            bool cAny = false;
            std::vector<WarpInfo> infos;
            const std::size_t ctaFirstInterval = k.intervals.size();
            for (auto& [warpIdx, w] : c.warps) {
                w.scopes.reserve(w.raw.size());
                for (const auto& r : w.raw) {
                    const double cycles = (r.ts - c.minTs) * c.freq;
                    const auto start = static_cast<TimeNs>(std::llround(ctaStartNs + cycles * nsPerCycle));
                    const auto dur = static_cast<TimeNs>(std::llround(r.dur * c.freq * nsPerCycle));
                    w.scopes.push_back(WarpScope{st.names[r.name], start, start + dur, r.line});
                }
                std::vector<RawScope>().swap(w.raw);   // converted: free it now (peak memory of big files)
                std::stable_sort(w.scopes.begin(), w.scopes.end(),
                                 [](const WarpScope& a, const WarpScope& b) { return a.start < b.start; });
                maxWarp = std::max(maxWarp, warpIdx);
                Warp wp;
                wp.id = static_cast<RowId>(k.warps.size());
                wp.ctaId = static_cast<RowId>(ctaLocal);
                wp.warpIndex = warpIdx;
                wp.warpgroup = warpIdx / 4;
                WarpInfo info{k.warps.size(), {}, {}, &w};

                // Kinds per scope, k-step ordinal per (warp, kind), the role a rule names.
                std::vector<IntervalKind> kinds(w.scopes.size());
                std::vector<std::int32_t> ksteps(w.scopes.size(), -1);
                std::map<IntervalKind, std::int32_t> ordinal;
                std::optional<WarpRole> ruleRole;
                bool issues = false, mmas = false;
                for (std::size_t i = 0; i < w.scopes.size(); ++i) {
                    const auto& s = w.scopes[i];
                    const ScopeRule* r = options.mapping.match(s.name);
                    if (r && !r->userPhase) {
                        kinds[i] = r->kind;
                    } else {
                        if (!r)
                            unmapped.insert(s.name);
                        auto [ui, freshName] = userIndex.try_emplace(s.name, static_cast<int>(k.phaseNames.size()));
                        if (freshName) {
                            if (static_cast<int>(k.phaseNames.size()) >= kMaxUserPhases)
                                throw ProtonError(src + ": kernel '" + kd.name + "' has more than "
                                                  + std::to_string(kMaxUserPhases)
                                                  + " distinct scope names without a phase kind; map some of them with --mapping");
                            k.phaseNames.push_back(s.name);
                        }
                        kinds[i] = static_cast<IntervalKind>(kUserPhaseBase + ui->second);
                    }
                    if (r && r->role && !ruleRole)
                        ruleRole = r->role;
                    if (isLoopKind(kinds[i]))
                        ksteps[i] = ordinal[kinds[i]]++;
                    if (kinds[i] == IntervalKind::IssueLoad) {
                        issues = true;
                        info.issue.push_back(i);
                    }
                    if (kinds[i] == IntervalKind::WaitData)
                        info.waitData.push_back(i);
                    mmas = mmas || isMmaKind(kinds[i]);
                }
                if (ruleRole)
                    wp.role = *ruleRole;
                else if (issues && mmas)
                    wp.role = WarpRole::Worker;
                else if (issues)
                    wp.role = WarpRole::Producer;
                else if (mmas)
                    wp.role = WarpRole::Consumer;
                wp.roleName = wp.role == WarpRole::Consumer || wp.role == WarpRole::Worker
                    ? std::string(warpRoleName(wp.role)) + " WG" + std::to_string(wp.warpgroup)
                    : (wp.role == WarpRole::Unknown ? std::string("warp") : std::string(warpRoleName(wp.role)));
                k.warps.push_back(wp);

                // Innermost scope per instant -> intervals; outer scopes -> brackets.
                for (const auto& p : innermostPieces(w.scopes)) {
                    Interval iv;
                    iv.warpId = wp.id;
                    iv.kind = kinds[p.scope];
                    iv.kstep = ksteps[p.scope];
                    iv.start = p.start;
                    iv.duration = p.end - p.start;
                    k.intervals.push_back(iv);
                    cs = cAny ? std::min(cs, p.start) : p.start;
                    ce = cAny ? std::max(ce, p.end) : p.end;
                    cAny = true;
                }
                for (const auto& [si, depth] : outerScopes(w.scopes))
                    brackets.push_back(ScopeSpan{wp.id, depth, w.scopes[si].name, w.scopes[si].start, w.scopes[si].end});
                infos.push_back(std::move(info));
            }
            cta.start = cs;
            cta.end = ce;
            k.ctas.push_back(cta);
            if (cAny) {
                kStart = kAny ? std::min(kStart, cs) : cs;
                kEnd = kAny ? std::max(kEnd, ce) : ce;
                kAny = true;
            }

            // Loads of the CTA, inferred: the j-th issue scope (earliest among the warps that issue) loads
            // the k-step whose wait is the (j + d)-th wait-for-data scope, d = #waits - #issues (issues left
            // out of the trace come first: a prologue outside any scope); ready = end of that wait, the
            // earliest among the warps that wait. Exact when every k-step has one issue and one wait scope.
            std::size_t nIssue = 0, nWait = 0;
            for (const auto& in : infos) {
                nIssue = std::max(nIssue, in.issue.size());
                nWait = std::max(nWait, in.waitData.size());
            }
            if (nIssue > 0 && nWait >= nIssue) {
                const std::size_t d = nWait - nIssue;
                for (std::size_t j = 0; j < nIssue; ++j) {
                    std::optional<TimeNs> issue, ready;
                    for (const auto& in : infos) {
                        if (j < in.issue.size()) {
                            const auto& s = in.data->scopes[in.issue[j]];
                            issue = issue ? std::min(*issue, s.end) : s.end;
                        }
                        if (j + d < in.waitData.size()) {
                            const auto& s = in.data->scopes[in.waitData[j + d]];
                            ready = ready ? std::min(*ready, s.end) : s.end;
                        }
                    }
                    if (!issue || !ready)
                        continue;
                    LoadTransfer ld;
                    ld.ctaId = static_cast<RowId>(ctaLocal);
                    ld.kstep = static_cast<std::int32_t>(j + d);
                    ld.issue = *issue;
                    ld.ready = std::max(*ready, *issue);
                    k.loads.push_back(ld);
                    ++rep.loadsInferred;
                }
                // The issue intervals carry the k-step of the load they issue.
                if (d > 0)
                    for (std::size_t i = ctaFirstInterval; i < k.intervals.size(); ++i)
                        if (k.intervals[i].kind == IntervalKind::IssueLoad && k.intervals[i].kstep >= 0)
                            k.intervals[i].kstep += static_cast<std::int32_t>(d);
            }
            for (auto& [warpIdx, w] : c.warps)
                std::vector<WarpScope>().swap(w.scopes);   // the CTA is done
        }
        std::sort(k.loads.begin(), k.loads.end(), [](const LoadTransfer& a, const LoadTransfer& b) {
            return a.issue < b.issue;
        });
        KernelLaunch& L = k.launch;
        L.name = kd.name;
        L.launchIndex = kd.launch;
        L.traced = true;
        L.grid[0] = maxCta + 1;
        L.block[0] = 32 * (maxWarp + 1);
        L.start = kStart;
        L.end = kEnd;
        k.scopes = std::move(brackets);
        run.kernels.push_back(std::move(k));
    }
    rep.unmappedScopes.assign(unmapped.begin(), unmapped.end());

    // 3. Notes: where the numbers came from, and the original ones.
    std::ostringstream n;
    n << "Imported from " << src << " (Triton Proton intra-kernel trace, Chrome JSON).\n";
    n << "SM clock: " << fmt(rep.clockMhz) << " MHz, " << rep.clockSource << ". Proton writes ts/dur as cycles / "
      << fmt(recordedFreq ? fileFreq : 1000.0) << " (args \"Frequency (MHz)\"); Warpstage ns = cycles x "
      << fmt(nsPerCycle) << ". CTA starts are Proton's global-timer offsets (ns), kept as they are.\n";
    n << "Original numbers: ";
    for (const auto& kd : kernels) {
        n << "kernel '" << kd.name << "' launch " << kd.launch << ": " << kd.ctas.size() << " CTAs;";
        for (const auto& [ctaId, c] : kd.ctas)
            n << " CTA" << ctaId << "@Core" << c.sm << " first ts " << fmt(c.minTs) << ";";
        n << " ";
    }
    if (launchesMax > 1)
        n << "Launches: " << launchesMax << " of one kernel in the file (told apart by the order Proton writes them: a CTA's "
          << "warp that comes back, or a CTA on another SM, starts the next launch); "
          << (options.launch ? "launch " + std::to_string(*options.launch) + " imported (--launch). "
                             : std::string("each is a kernel of this run. "));
    n << used << " scope events";
    if (foreign > 0)
        n << " (" << foreign << " events without a Proton pid/tid skipped)";
    n << ".\n";
    n << "Timeline: the innermost scope of each warp at each instant (an outer scope shows where its inner scopes "
         "leave gaps; the scopes that contain others are kept as brackets).\n";
    if (!rep.unmappedScopes.empty()) {
        n << "Scopes without a phase kind (user-named phases):";
        for (const auto& s : rep.unmappedScopes)
            n << " " << s;
        n << ".\n";
    }
    if (rep.loadsInferred > 0)
        n << "Loads: " << rep.loadsInferred << " INFERRED from the order of issue and wait-for-data scopes "
          << "(issue = end of the issue scope, ready = end of the matching wait: an upper bound of the real arrival).\n";
    else
        n << "Loads: none inferred (no issue scopes, or fewer wait-for-data scopes than issue scopes).\n";
    run.info.notes = n.str();
    return result;
}

}  // namespace ws
