// `warpstage import` of Warpstage's own Chrome Trace Event JSON export (traceimport.h), read with the
// streaming JsonReader: events are handled one at a time, only the intervals are kept.
#include "warpstage/traceimport.h"

#include "warpstage/jsonreader.h"
#include "warpstage/proton.h"
#include "warpstage/store.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace ws {

using Tok = JsonReader::Token;

std::string_view importFormatName(ImportFormat f)
{
    switch (f) {
    case ImportFormat::WarpstageChromeJson: return "warpstage-chrome-json";
    case ImportFormat::ProtonJson: return "proton-chrome-json";
    }
    return "?";
}

namespace {

bool fileExists(const std::string& p)
{
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0;
}

std::optional<std::int64_t> toInt(const std::string& t)
{
    if (t.empty() || t.find_first_of(".eE") != std::string::npos)
        return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (errno || *end)
        return std::nullopt;
    return v;
}

// A JSON number of µs -> ns, exact for up to three fractional digits (what the export writes).
std::optional<TimeNs> microsToNs(const std::string& t)
{
    if (t.find_first_of("eE") != std::string::npos) {
        const double v = std::strtod(t.c_str(), nullptr) * 1000.0;
        if (!std::isfinite(v) || std::fabs(v) > 9e18)
            return std::nullopt;
        return TimeNs(std::llround(v));
    }
    std::size_t i = 0;
    const bool neg = !t.empty() && t[0] == '-';
    if (neg)
        ++i;
    TimeNs whole = 0;
    for (; i < t.size() && t[i] != '.'; ++i) {
        if (whole > 9'000'000'000'000'000 / 10 / 1000)
            return std::nullopt;
        whole = whole * 10 + (t[i] - '0');
    }
    TimeNs frac = 0;
    int digits = 0;
    bool roundUp = false;
    if (i < t.size() && t[i] == '.')
        for (++i; i < t.size(); ++i, ++digits) {
            if (digits < 3)
                frac = frac * 10 + (t[i] - '0');
            else if (digits == 3)
                roundUp = t[i] >= '5';
        }
    for (int d = digits; d < 3; ++d)
        frac *= 10;
    const TimeNs ns = whole * 1000 + frac + (roundUp ? 1 : 0);
    return neg ? -ns : ns;
}

// The scalars of one JSON object (nested containers skipped), read at the reader's current BeginObject.
struct Fields {
    struct F {
        std::string key;
        Tok tok;
        std::string text;
    };
    std::vector<F> f;
    const F* find(std::string_view k) const
    {
        for (const F& x : f)
            if (x.key == k)
                return &x;
        return nullptr;
    }
    std::optional<std::int64_t> integer(std::string_view k) const
    {
        const F* x = find(k);
        return x && x->tok == Tok::Number ? toInt(x->text) : std::nullopt;
    }
    std::optional<std::string> string(std::string_view k) const
    {
        const F* x = find(k);
        if (!x || x->tok != Tok::String)
            return std::nullopt;
        return x->text;
    }
};

class Importer {
public:
    Importer(const std::string& path) : m_path(path), m_src(openFileSource(path)), m_r(*m_src) {}

    RunRecord run();

private:
    struct CtaMeta {
        int sm = -1, cta = -1;
        std::optional<TimeNs> start, end;
        int tileM = -1, tileN = -1;
        double nsPerCycle = 0;
    };
    struct Iv {
        IntervalKind kind;
        std::int16_t slot;
        std::int32_t kstep;
        TimeNs start, duration;
    };
    struct WarpData {
        bool named = false;
        int warp = 0, warpgroup = 0;
        WarpRole role = WarpRole::Unknown;
        std::string roleName;
        std::vector<Iv> intervals;
        std::vector<ScopeSpan> scopes;   // times after the origin; warpId set in run()
    };

    [[noreturn]] void bad(const std::string& what) const { throw ImportError(m_path + ": " + what); }
    void expect(Tok got, Tok want, std::string_view where)
    {
        if (got != want)
            bad("not a Warpstage export: " + std::string(where) + " is " + std::string(JsonReader::tokenName(got)) +
                ", expected " + std::string(JsonReader::tokenName(want)) + " (byte " + std::to_string(m_r.offset()) + ")");
    }
    Fields readFields(std::vector<std::pair<std::string, Fields>>* nested = nullptr);
    void readOtherData();
    void readWarpstage();
    void readEvents();
    void event(const Fields& e, const Fields& args);

    std::string m_path;
    std::unique_ptr<ByteSource> m_src;
    JsonReader m_r;
    bool m_haveMeta = false;
    std::string m_view;
    TimeNs m_origin = 0;
    RunInfo m_run;
    KernelLaunch m_launch;
    bool m_haveLaunchTimes = false;
    std::vector<std::string> m_phaseNames;
    bool m_haveEvents = false;
    std::map<std::int64_t, CtaMeta> m_ctas;
    std::map<std::pair<std::int64_t, std::int64_t>, WarpData> m_warps;
    std::int64_t m_intervals = 0;
};

// At a BeginObject just read: its scalar fields; objects one level down go into *nested (by key).
Fields Importer::readFields(std::vector<std::pair<std::string, Fields>>* nested)
{
    Fields out;
    for (Tok t = m_r.next(); t != Tok::EndObject; t = m_r.next()) {
        std::string key = m_r.text();
        const Tok v = m_r.next();
        if (v == Tok::BeginObject && nested) {
            Fields inner = readFields(nullptr);
            nested->emplace_back(std::move(key), std::move(inner));
        } else if (v == Tok::BeginObject || v == Tok::BeginArray) {
            m_r.skipContainer();
        } else {
            out.f.push_back({std::move(key), v, m_r.text()});
        }
    }
    return out;
}

void Importer::readWarpstage()
{
    m_haveMeta = true;
    for (Tok t = m_r.next(); t != Tok::EndObject; t = m_r.next()) {
        const std::string key = m_r.text();
        const Tok v = m_r.next();
        if (key == "phase_names" && v == Tok::BeginArray) {
            for (Tok s = m_r.next(); s != Tok::EndArray; s = m_r.next()) {
                expect(s, Tok::String, "a phase name");
                m_phaseNames.push_back(m_r.text());
            }
        } else if ((key == "run" || key == "kernel") && v == Tok::BeginObject) {
            // grid/block arrays are read by hand; everything else through Fields.
            Fields f;
            std::vector<std::int64_t> grid, block;
            for (Tok k = m_r.next(); k != Tok::EndObject; k = m_r.next()) {
                const std::string name = m_r.text();
                const Tok w = m_r.next();
                if (w == Tok::BeginArray && (name == "grid" || name == "block")) {
                    auto& dst = name == "grid" ? grid : block;
                    for (Tok n = m_r.next(); n != Tok::EndArray; n = m_r.next()) {
                        expect(n, Tok::Number, "a grid/block size");
                        dst.push_back(toInt(m_r.text()).value_or(1));
                    }
                } else if (w == Tok::BeginObject || w == Tok::BeginArray) {
                    m_r.skipContainer();
                } else {
                    f.f.push_back({name, w, m_r.text()});
                }
            }
            if (key == "run") {
                m_run.variant = f.string("variant").value_or("");
                if (const auto k = f.string("kind"))
                    m_run.kind = runKindFromName(*k).value_or(RunKind::Ladder);
                m_run.m = int(f.integer("m").value_or(0));
                m_run.n = int(f.integer("n").value_or(0));
                m_run.k = int(f.integer("k").value_or(0));
                const auto* s = f.find("synthetic");
                m_run.synthetic = s && s->tok == Tok::True;
                m_run.device.name = f.string("device").value_or("");
                m_run.device.smCount = int(f.integer("sm_count").value_or(0));
                m_run.host = f.string("host").value_or("");
                m_run.startedAt = f.string("started_at").value_or("");
                m_run.notes = f.string("tiles").value_or("");  // the [ws-tiles] tag (tilegeom.h), if exported
            } else {
                m_launch.name = f.string("name").value_or("imported kernel");
                m_launch.variant = f.string("variant").value_or("");
                const auto a = f.integer("start_ns"), b = f.integer("end_ns");
                if (a && b && *b >= *a) {
                    m_launch.start = *a;
                    m_launch.end = *b;
                    m_haveLaunchTimes = true;
                }
                for (std::size_t i = 0; i < 3 && i < grid.size(); ++i)
                    m_launch.grid[i] = int(grid[i]);
                for (std::size_t i = 0; i < 3 && i < block.size(); ++i)
                    m_launch.block[i] = int(block[i]);
            }
        } else if (v == Tok::BeginObject || v == Tok::BeginArray) {
            m_r.skipContainer();
        } else if (key == "view") {
            m_view = m_r.text();
        } else if (key == "origin_ns") {
            m_origin = toInt(m_r.text()).value_or(0);
        }
    }
}

void Importer::readOtherData()
{
    for (Tok t = m_r.next(); t != Tok::EndObject; t = m_r.next()) {
        const std::string key = m_r.text();
        const Tok v = m_r.next();
        if (key == "warpstage" && v == Tok::BeginObject)
            readWarpstage();
        else if (v == Tok::BeginObject || v == Tok::BeginArray)
            m_r.skipContainer();
    }
}

void Importer::event(const Fields& e, const Fields& args)
{
    const auto ph = e.string("ph");
    if (!ph)
        bad("an event without \"ph\" (byte " + std::to_string(m_r.offset()) + ")");
    const std::int64_t pid = e.integer("pid").value_or(0);
    const std::int64_t tid = e.integer("tid").value_or(0);
    const std::string name = e.string("name").value_or("");
    if (*ph == "M") {
        if (name == "process_name") {
            CtaMeta& c = m_ctas[pid];
            const std::string pname = args.string("name").value_or("");
            int sm = -1, cta = -1;
            if (std::sscanf(pname.c_str(), "SM %d / CTA %d", &sm, &cta) != 2)
                sm = cta = -1;
            c.sm = int(args.integer("sm").value_or(sm));
            c.cta = int(args.integer("cta").value_or(cta >= 0 ? cta : pid - 1));
            c.start = args.integer("start_ns");
            c.end = args.integer("end_ns");
            c.tileM = int(args.integer("tile_m").value_or(-1));
            c.tileN = int(args.integer("tile_n").value_or(-1));
            if (const auto* f = args.find("ns_per_cycle"); f && f->tok == Tok::Number)
                c.nsPerCycle = std::strtod(f->text.c_str(), nullptr);
        } else if (name == "thread_name") {
            WarpData& w = m_warps[{pid, tid}];
            const std::string tname = args.string("name").value_or("");
            int idx = int(tid);
            std::sscanf(tname.c_str(), "w%d ", &idx);
            w.named = true;
            w.warp = int(args.integer("warp").value_or(idx));
            w.warpgroup = int(args.integer("warpgroup").value_or(w.warp / 4));
            w.role = warpRoleFromName(args.string("role").value_or("")).value_or(WarpRole::Unknown);
            w.roleName = args.string("role_name").value_or("");
        }
        return;
    }
    if (*ph != "X")
        return;   // counters ("C") and flows ("s"/"f") are derived data: the loads are not exported
    const auto* ts = e.find("ts");
    const auto* dur = e.find("dur");
    const auto start = ts && ts->tok == Tok::Number ? microsToNs(ts->text) : std::nullopt;
    const auto d = dur && dur->tok == Tok::Number ? microsToNs(dur->text) : std::nullopt;
    if (!start || !d || *d < 0)
        bad("slice '" + name + "' has no valid ts/dur (byte " + std::to_string(m_r.offset()) + ")");
    if (e.string("cat").value_or("") == "scope") {   // a scope bracket (Proton's outer scopes)
        const auto depth = args.integer("depth");
        if (!depth || *depth < 0 || *depth > 1000)
            bad("scope '" + name + "' has no valid args.depth (byte " + std::to_string(m_r.offset()) + ")");
        m_warps[{pid, tid}].scopes.push_back(ScopeSpan{0, int(*depth), name, *start, *start + *d});
        return;
    }
    const std::string kindText = args.string("kind").value_or("");
    IntervalKind kind;
    if (kindText.rfind("user:", 0) == 0) {
        const auto i = toInt(kindText.substr(5));
        if (!i || *i < 0 || *i >= kMaxUserPhases)
            bad("slice '" + name + "': bad user phase kind '" + kindText + "'");
        kind = static_cast<IntervalKind>(kUserPhaseBase + *i);
    } else if (const auto k = intervalKindFromName(kindText)) {
        kind = *k;
    } else {
        bad("slice '" + name + "' has no known args.kind ('" + kindText + "', byte " + std::to_string(m_r.offset()) + ")");
    }
    WarpData& w = m_warps[{pid, tid}];
    w.intervals.push_back(Iv{kind, std::int16_t(args.integer("slot").value_or(-1)),
                             std::int32_t(args.integer("kstep").value_or(-1)), *start, *d});
    ++m_intervals;
}

void Importer::readEvents()
{
    m_haveEvents = true;
    if (m_haveMeta && m_view != "warp")
        bad("a Warpstage export of the '" + m_view + "' view; only the warp view (one kernel's timeline) can be imported");
    for (Tok t = m_r.next(); t != Tok::EndArray; t = m_r.next()) {
        expect(t, Tok::BeginObject, "a trace event");
        std::vector<std::pair<std::string, Fields>> nested;
        const Fields e = readFields(&nested);
        static const Fields none;
        const Fields* args = &none;
        for (const auto& [k, f] : nested)
            if (k == "args")
                args = &f;
        event(e, *args);
    }
}

RunRecord Importer::run()
{
    try {
        expect(m_r.next(), Tok::BeginObject, "the document");
        for (Tok t = m_r.next(); t != Tok::EndObject; t = m_r.next()) {
            const std::string key = m_r.text();
            const Tok v = m_r.next();
            if (key == "otherData" && v == Tok::BeginObject)
                readOtherData();
            else if (key == "traceEvents" && v == Tok::BeginArray)
                readEvents();
            else if (v == Tok::BeginObject || v == Tok::BeginArray)
                m_r.skipContainer();
        }
        expect(m_r.next(), Tok::End, "what follows the document");
    } catch (const JsonError& e) {
        bad(e.what());
    }
    if (!m_haveEvents)
        bad("JSON, but not a trace (no \"traceEvents\")");
    if (!m_haveMeta)
        bad("a Chrome trace not written by Warpstage (no otherData.warpstage); this version imports Warpstage's own export only");
    if (m_view != "warp")
        bad("a Warpstage export of the '" + m_view + "' view; only the warp view (one kernel's timeline) can be imported");
    if (m_intervals == 0)
        bad("the export holds no interval (no warp timeline to import)");

    RunRecord r;
    r.info = m_run;
    r.info.id = 0;
    r.info.commandLine = "warpstage import " + m_path;
    r.info.notes = "imported from " + m_path + " (Warpstage Chrome JSON export)"
                   + (m_run.notes.empty() ? std::string() : "\n" + m_run.notes);  // the [ws-tiles] tag, if any
    KernelRecord k;
    k.launch = m_launch;
    k.launch.traced = true;
    k.phaseNames = m_phaseNames;
    k.intervals.reserve(std::size_t(m_intervals));   // no doubling reallocation on a 10M-interval import
    std::map<std::int64_t, int> ctaIndex;
    TimeNs lo = 0, hi = 0;
    bool any = false;
    for (auto& [key, w] : m_warps) {
        if (w.intervals.empty() && w.scopes.empty() && !w.named)
            continue;
        if (!ctaIndex.count(key.first)) {
            const int i = int(k.ctas.size());
            ctaIndex[key.first] = i;
            const auto it = m_ctas.find(key.first);
            const CtaMeta c = it != m_ctas.end() ? it->second : CtaMeta{-1, int(key.first - 1), {}, {}, -1, -1, 0};
            Cta cta;
            cta.id = i;
            cta.smId = c.sm;
            cta.blockLinear = c.cta;
            cta.tileM = c.tileM;
            cta.tileN = c.tileN;
            cta.nsPerCycle = c.nsPerCycle;
            cta.start = c.start.value_or(std::numeric_limits<TimeNs>::max());
            cta.end = c.end.value_or(std::numeric_limits<TimeNs>::min());
            k.ctas.push_back(cta);
        }
        const int ci = ctaIndex[key.first];
        Warp wp;
        wp.id = RowId(k.warps.size());
        wp.ctaId = ci;
        wp.warpIndex = w.named ? w.warp : int(key.second);
        wp.warpgroup = w.named ? w.warpgroup : wp.warpIndex / 4;
        wp.role = w.role;
        wp.roleName = w.roleName;
        k.warps.push_back(wp);
        std::sort(w.intervals.begin(), w.intervals.end(), [](const Iv& a, const Iv& b) { return a.start < b.start; });
        Cta& cta = k.ctas[std::size_t(ci)];
        const auto it = m_ctas.find(key.first);
        const bool ctaTimes = it != m_ctas.end() && it->second.start && it->second.end;
        for (ScopeSpan sc : w.scopes) {
            sc.warpId = wp.id;
            sc.start += m_origin;
            sc.end += m_origin;
            k.scopes.push_back(std::move(sc));
        }
        for (const Iv& iv : w.intervals) {
            Interval x;
            x.warpId = wp.id;
            x.kind = iv.kind;
            x.slot = iv.slot;
            x.kstep = iv.kstep;
            x.start = m_origin + iv.start;
            x.duration = iv.duration;
            k.intervals.push_back(x);
            if (!ctaTimes) {
                cta.start = std::min(cta.start, x.start);
                cta.end = std::max(cta.end, x.start + x.duration);
            }
            lo = any ? std::min(lo, x.start) : x.start;
            hi = any ? std::max(hi, x.start + x.duration) : x.start + x.duration;
            any = true;
        }
        if (cta.end < cta.start)
            cta.end = cta.start = lo;
        std::vector<Iv>().swap(w.intervals);   // converted: give the memory back before the next warp
    }
    if (!m_haveLaunchTimes) {
        k.launch.start = lo;
        k.launch.end = hi;
    }
    r.kernels.push_back(std::move(k));
    return r;
}

}  // namespace

ImportFormat detectImportFormat(const std::string& path)
{
    char head[16] = {};
    {
        std::FILE* f = std::fopen(path.c_str(), "rb");
        if (!f)
            throw ImportError(path + ": cannot open (" + std::strerror(errno) + ")");
        const std::size_t n = std::fread(head, 1, sizeof head, f);
        std::fclose(f);
        if (n == 0)
            throw ImportError(path + ": empty file");
        if (n == 16 && std::memcmp(head, "SQLite format 3", 16) == 0)
            throw ImportError(path + ": an SQLite file (a Warpstage trace is opened directly, not imported)");
    }
    try {
        auto src = openFileSource(path);
        JsonReader r(*src);
        const Tok t = r.next();
        if (t == Tok::BeginArray && looksLikeProtonTrace(path))
            return ImportFormat::ProtonJson;
        if (t == Tok::BeginArray)
            throw ImportError(path + ": a Chrome trace in array form, not written by Warpstage nor by Triton's Proton "
                                     "(no event pid \"<kernel> Core<SM> CTA<n>\")");
        if (t != Tok::BeginObject)
            throw ImportError(path + ": JSON, but not a trace (the document is not an object)");
        bool events = false;
        for (Tok k = r.next(); k != Tok::EndObject; k = r.next()) {
            const std::string key = r.text();
            const Tok v = r.next();
            if (key == "otherData" && v == Tok::BeginObject) {
                for (Tok o = r.next(); o != Tok::EndObject; o = r.next()) {
                    const std::string ok = r.text();
                    const Tok ov = r.next();
                    if (ok == "warpstage" && ov == Tok::BeginObject)
                        return ImportFormat::WarpstageChromeJson;
                    r.skipContainer();
                }
            } else if (key == "traceEvents" && v == Tok::BeginArray) {
                // Decided from the first events (looksLikeProtonTrace reads up to the first Proton scope, at
                // most 256 events), not after skipping the whole array: a Proton file is then read once more
                // only by the import itself. Warpstage's own export writes otherData before traceEvents.
                if (looksLikeProtonTrace(path))
                    return ImportFormat::ProtonJson;
                events = true;
                r.skipContainer();
            } else {
                events = events || key == "traceEvents";
                r.skipContainer();
            }
        }
        if (events)
            throw ImportError(path + ": a Chrome trace not written by Warpstage (no otherData.warpstage) nor by "
                                     "Triton's Proton (no event pid \"<kernel> Core<SM> CTA<n>\")");
        throw ImportError(path + ": JSON, but not a trace (no \"traceEvents\")");
    } catch (const JsonError& e) {
        const std::string w = e.what();
        throw ImportError(path + ": " + (w.rfind(path, 0) == 0 ? w.substr(path.size() + 2) : w) +
                          (w.find("not JSON") != std::string::npos ? " (and no other format this version imports)" : ""));
    }
}

RunRecord importWarpstageChromeJson(const std::string& path)
{
    try {
        Importer im(path);
        return im.run();
    } catch (const JsonError& e) {
        throw ImportError(path + ": " + e.what());
    }
}

std::vector<ImportedRun> importTraces(const std::vector<std::string>& inputs, const std::string& out,
                                      const ImportOptions& options)
{
    if (inputs.empty())
        throw ImportError("nothing to import");
    if (fileExists(out))
        throw ImportError(out + ": already exists (import writes a new file; remove it or choose another name)");
    // Read and check every input before anything is written.
    std::vector<std::pair<ImportedRun, RunRecord>> runs;
    for (const std::string& in : inputs) {
        ImportedRun ir{in, detectImportFormat(in), 0, 0};
        RunRecord rec = ir.format == ImportFormat::ProtonJson ? importProtonTrace(in, options)
                                                              : importWarpstageChromeJson(in);
        for (const KernelRecord& k : rec.kernels)   // a Proton file may hold several kernels
            ir.intervals += std::int64_t(k.intervals.size());
        runs.emplace_back(std::move(ir), std::move(rec));
    }
    const std::string tmp = out + ".tmp-" + std::to_string(::getpid());
    auto cleanup = [&] {
        for (const char* sfx : {"", "-wal", "-shm", "-journal"})
            std::remove((tmp + sfx).c_str());
    };
    cleanup();
    std::vector<ImportedRun> result;
    try {
        {
            TraceStore store = TraceStore::openForWriting(tmp);
            for (auto& [ir, rec] : runs) {
                ir.runId = store.writeRun(rec);
                result.push_back(ir);
            }
        }
        if (std::rename(tmp.c_str(), out.c_str()) != 0)
            throw ImportError(out + ": cannot rename the finished file into place (" + std::strerror(errno) + ")");
    } catch (...) {
        cleanup();
        throw;
    }
    cleanup();
    return result;
}

}  // namespace ws
