// SQL over traces: the eponymous virtual tables `intervals`, `loads` and `chunk_metrics` (docs/schema.md,
// "Virtual tables"). Each decodes its packed table (interval_chunks, load_chunks, metric_chunks) chunk by
// chunk while SQLite steps through the rows; xBestIndex pushes constraints on the launch, the warp / CTA
// and the time down into the SQL that selects the chunks, so chunks that cannot match are never decoded.
//
// This file is compiled twice: into warpstage_core (sqlite3.h, registerQueryTables()) and into the loadable
// extension libwarpstage_sqlite (WARPSTAGE_SQLITE_EXTENSION: sqlite3ext.h, every SQLite call goes through
// the host's sqlite3_api). So the table code below calls the SQLite C API only, never the Db/Stmt wrappers
// of sqlite_util.h (their inline functions are compiled before the extension macros and call the linked
// library directly, which may not be the host's).
#include "store_impl.h"
#include "store_packed.h"

#ifdef WARPSTAGE_SQLITE_EXTENSION
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
#define WS_VTAB_NS vtab_ext
#else
#include <sqlite3.h>
#define WS_VTAB_NS vtab
#endif

#include "query_vtab.h"

#include <cmath>
#include <cstring>
#include <bitset>
#include <map>
#include <unordered_map>

namespace ws::detail::WS_VTAB_NS {

namespace {

// --- what xBestIndex can push down ------------------------------------------------------------------
// Slots in argv order; idxNum has bit (1 << slot) set for each slot used.
enum Slot : int {
    KernelEq = 0,  // kernel_id = ? (and IN: SQLite calls xFilter once per value)
    WarpIdEq,      // warp_id = ?
    CtaIdEq,       // cta_id = ?
    CtaEq,         // cta (block_linear) = ?
    WarpEq,        // warp (warp index in the CTA) = ?
    TimeLo,        // start_ns / issue_ns > or >= ?
    TimeHi,        // start_ns / issue_ns < or <= ?
    SlotCount
};
// idxNum bits beyond the slots: the plan reads one launch at most and SQLite wants its rows ordered (ORDER
// BY) or grouped (GROUP BY) by kind / kind_name. The cursor then decodes the launch's matching chunks first
// and returns them kind by kind, so SQLite needs no sorter (a GROUP BY kind over 4 M intervals: 0.8 s of
// sorting saved; docs/benchmarks.md).
constexpr int kByKind = 1 << 10;
constexpr int kByKindName = 1 << 11;
// Bits 16..30: the columns the statement reads (xBestIndex's colUsed): a grouped cursor keeps only those.
constexpr int kColumnsShift = 16;

enum class Kind { Intervals, Loads, Metrics };

struct TableDef {
    const char* name;
    const char* schema;
    int column[SlotCount];  // the column each slot constrains, -1 none
};

// Column numbers of the CREATE TABLE statements below.
namespace ic {
enum : int { KernelId, WarpId, CtaId, Sm, Cta, Warp, Warpgroup, Role, Kind, KindName, StartNs, EndNs, DurNs, Kstep, Slot };
}
namespace lc {
enum : int { KernelId, CtaId, Sm, Cta, Slot, Kstep, IssueNs, ReadyNs, LatencyNs, Bytes };
}
namespace mc {
enum : int { RunId, KernelId, Scope, ScopePrefix, ScopeIndex, Name, Value, Unit };
}

const TableDef kIntervals = {
    "intervals",
    "CREATE TABLE x(kernel_id INTEGER, warp_id INTEGER, cta_id INTEGER, sm INTEGER, cta INTEGER, warp INTEGER, "
    "warpgroup INTEGER, role TEXT, kind INTEGER, kind_name TEXT, start_ns INTEGER, end_ns INTEGER, dur_ns INTEGER, "
    "kstep INTEGER, slot INTEGER)",
    {ic::KernelId, ic::WarpId, ic::CtaId, ic::Cta, ic::Warp, ic::StartNs, ic::StartNs}};
const TableDef kLoads = {
    "loads",
    "CREATE TABLE x(kernel_id INTEGER, cta_id INTEGER, sm INTEGER, cta INTEGER, slot INTEGER, kstep INTEGER, "
    "issue_ns INTEGER, ready_ns INTEGER, latency_ns INTEGER, bytes INTEGER)",
    {lc::KernelId, -1, lc::CtaId, lc::Cta, -1, lc::IssueNs, lc::IssueNs}};
const TableDef kMetrics = {
    "chunk_metrics",
    "CREATE TABLE x(run_id INTEGER, kernel_id INTEGER, scope TEXT, scope_prefix TEXT, scope_index INTEGER, "
    "name TEXT, value REAL, unit TEXT)",
    {mc::KernelId, -1, -1, -1, -1, -1, -1}};

struct Table {
    sqlite3_vtab base;  // first: SQLite's view of the table
    sqlite3* db;
    Kind kind;
    const TableDef* def;
};

void setError(sqlite3_vtab* t, const std::string& msg)
{
    sqlite3_free(t->zErrMsg);
    t->zErrMsg = sqlite3_mprintf("%s", msg.c_str());
}

std::string dbPath(sqlite3* db)
{
    const char* f = sqlite3_db_filename(db, "main");
    return f && *f ? f : "(database)";
}

// One prepared statement, finalized on destruction.
struct Query {
    sqlite3_stmt* st = nullptr;
    Query() = default;
    Query(const Query&) = delete;
    Query& operator=(const Query&) = delete;
    ~Query() { sqlite3_finalize(st); }
    void prepare(sqlite3* db, const std::string& sql)
    {
        sqlite3_finalize(st);
        st = nullptr;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
            throw std::runtime_error(std::string(sqlite3_errmsg(db))
                                     + " (is this a Warpstage trace of schema 4 or newer?)");
    }
    bool step(sqlite3* db)
    {
        const int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            return true;
        if (rc == SQLITE_DONE)
            return false;
        throw std::runtime_error(sqlite3_errmsg(db));
    }
    std::int64_t i64(int c) const { return sqlite3_column_int64(st, c); }
    std::string text(int c) const
    {
        const auto* p = sqlite3_column_text(st, c);
        return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(st, c)))
                 : std::string();
    }
    std::string_view blob(int c) const
    {
        const void* p = sqlite3_column_blob(st, c);
        const int n = sqlite3_column_bytes(st, c);
        return p && n > 0 ? std::string_view(static_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string_view();
    }
};

// A time bound usable for pruning: a conservative integer (lower bounds rounded down, upper bounds up) or
// none (NULL, text, blob: SQLite checks those rows itself, as it checks every time bound).
struct Bound {
    bool set = false;
    bool empty = false;  // NULL: the comparison is never true
    TimeNs v = 0;
};
Bound bound(sqlite3_value* v, bool lower)
{
    Bound b;
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
        b.set = true;
        b.v = sqlite3_value_int64(v);
        break;
    case SQLITE_FLOAT: {
        const double d = sqlite3_value_double(v);
        if (std::isnan(d))
            break;
        const double r = lower ? std::floor(d) : std::ceil(d);
        if (r <= -9.2e18 || r >= 9.2e18)
            break;  // beyond int64: no pruning
        b.set = true;
        b.v = static_cast<TimeNs>(r);
        break;
    }
    case SQLITE_NULL:
        b.empty = true;
        break;
    default:
        break;
    }
    return b;
}

// --- cursors -----------------------------------------------------------------------------------------
struct WarpMeta {
    RowId ctaId = 0;
    std::int64_t sm = -1, cta = -1, warp = 0, warpgroup = 0;
    std::string role;
};
struct CtaMeta {
    std::int64_t sm = -1, cta = -1;
};

struct Cursor {
    sqlite3_vtab_cursor base;  // first
    Table* table = nullptr;
    Query chunks;
    Query meta;
    Query phases;
    bool eof = true;
    std::int64_t rowid = 0;
    TimeNs lo = std::numeric_limits<TimeNs>::min();
    TimeNs hi = std::numeric_limits<TimeNs>::max();
    std::string path;

    // the launch whose warps / CTAs / phase names are loaded
    RowId metaKernel = -1;
    std::unordered_map<RowId, WarpMeta> warps;
    std::unordered_map<RowId, CtaMeta> ctas;
    std::map<int, std::string> phaseNames;

    // the chunk being read
    RowId kernelId = 0;
    RowId runId = 0;
    RowId ownerId = 0;  // warp (intervals) or CTA (loads)
    const WarpMeta* warp = nullptr;
    const CtaMeta* cta = nullptr;
    std::size_t pos = 0, end = 0;
    const Lane* cur = nullptr;  // the lane the row is in: &lane, or a part's (grouped)
    Lane lane;
    // grouped by kind (kByKind / kByKindName): every matching chunk of the launch, decoded
    struct Part {
        RowId warpId;
        const WarpMeta* warp;
        Lane lane;
        std::size_t begin, end;
    };
    std::vector<Part> parts;
    std::vector<std::bitset<256>> groups;  // the kind codes of each group, in output order
    std::size_t group = 0, part = 0;
    ChunkDecoder decoder;
    std::vector<LoadTransfer> loads;
    Zstd zstd;
    std::string prefix;
    std::vector<std::pair<MetricKey, MetricValue>> metrics;
};

void loadMeta(Cursor& c, RowId kernelId)
{
    if (c.metaKernel == kernelId)
        return;
    sqlite3* db = c.table->db;
    c.warps.clear();
    c.ctas.clear();
    c.phaseNames.clear();
    if (c.table->kind == Kind::Intervals) {
        if (!c.meta.st)
            c.meta.prepare(db, "SELECT w.id, w.cta_id, w.warp_index, w.warpgroup, w.role, t.block_linear, t.sm_id "
                               "FROM warps w LEFT JOIN ctas t ON t.id = w.cta_id WHERE w.kernel_id = ?");
        if (!c.phases.st)
            c.phases.prepare(db, "SELECT code, name FROM phase_names WHERE kernel_id = ?");
        sqlite3_reset(c.meta.st);
        sqlite3_bind_int64(c.meta.st, 1, kernelId);
        while (c.meta.step(db)) {
            WarpMeta& w = c.warps[c.meta.i64(0)];
            w.ctaId = c.meta.i64(1);
            w.warp = c.meta.i64(2);
            w.warpgroup = c.meta.i64(3);
            w.role = c.meta.text(4);
            w.cta = sqlite3_column_type(c.meta.st, 5) == SQLITE_NULL ? -1 : c.meta.i64(5);
            w.sm = sqlite3_column_type(c.meta.st, 6) == SQLITE_NULL ? -1 : c.meta.i64(6);
        }
        sqlite3_reset(c.phases.st);
        sqlite3_bind_int64(c.phases.st, 1, kernelId);
        while (c.phases.step(db))
            c.phaseNames[static_cast<int>(c.phases.i64(0))] = c.phases.text(1);
    } else {
        if (!c.meta.st)
            c.meta.prepare(db, "SELECT id, block_linear, sm_id FROM ctas WHERE kernel_id = ?");
        sqlite3_reset(c.meta.st);
        sqlite3_bind_int64(c.meta.st, 1, kernelId);
        while (c.meta.step(db))
            c.ctas[c.meta.i64(0)] = {c.meta.i64(2), c.meta.i64(1)};
    }
    c.metaKernel = kernelId;
}

// kind_name of a code in the launch whose phase names are loaded: the standard name, or a user phase's
// recorded name ("phase_<i>" when it has none).
std::string kindNameOf(const Cursor& c, int code)
{
    const auto k = static_cast<IntervalKind>(code);
    if (!isUserPhase(k))
        return std::string(intervalKindName(k));
    auto it = c.phaseNames.find(code);
    return it != c.phaseNames.end() && !it->second.empty() ? it->second
                                                            : "phase_" + std::to_string(code - kUserPhaseBase);
}

// Reads chunks until one has a row in [lo, hi] (or none is left); positions the cursor on that row.
void nextChunk(Cursor& c)
{
    sqlite3* db = c.table->db;
    for (;;) {
        if (!c.chunks.step(db)) {
            c.eof = true;
            return;
        }
        const Query& q = c.chunks;
        const RowId id = q.i64(0);
        c.kernelId = q.i64(1);
        c.ownerId = q.i64(2);
        switch (c.table->kind) {
        case Kind::Intervals: {
            loadMeta(c, c.kernelId);
            auto it = c.warps.find(c.ownerId);
            if (it == c.warps.end())
                fail(c.path, "interval chunk " + str(id) + " points at missing warp " + str(c.ownerId));
            c.warp = &it->second;
            c.lane.start.clear();
            c.lane.duration.clear();
            c.lane.kind.clear();
            c.lane.slot.clear();
            c.lane.kstep.clear();
            c.decoder.decode(c.path, id, c.ownerId, q.i64(3), q.i64(4), q.i64(10), q.blob(5), q.blob(6), q.blob(7),
                             q.blob(8), q.blob(9), c.lane);
            const auto& s = c.lane.start;
            c.pos = static_cast<std::size_t>(std::lower_bound(s.begin(), s.end(), c.lo) - s.begin());
            c.end = static_cast<std::size_t>(std::upper_bound(s.begin(), s.end(), c.hi) - s.begin());
            c.cur = &c.lane;
            break;
        }
        case Kind::Loads: {
            loadMeta(c, c.kernelId);
            auto it = c.ctas.find(c.ownerId);
            if (it == c.ctas.end())
                fail(c.path, "load chunk " + str(id) + " points at missing CTA " + str(c.ownerId));
            c.cta = &it->second;
            c.loads.clear();
            unpackLoads(c.path, c.zstd, id, q.i64(3), q.i64(4), q.i64(5), q.blob(6), 0, c.loads);
            // written sorted by issue (docs/schema.md); a file that is not still gives every row
            const bool sorted = std::is_sorted(c.loads.begin(), c.loads.end(),
                                               [](const LoadTransfer& a, const LoadTransfer& b) { return a.issue < b.issue; });
            if (sorted) {
                auto lessIssue = [](const LoadTransfer& a, TimeNs t) { return a.issue < t; };
                auto lessT = [](TimeNs t, const LoadTransfer& a) { return t < a.issue; };
                c.pos = static_cast<std::size_t>(std::lower_bound(c.loads.begin(), c.loads.end(), c.lo, lessIssue) - c.loads.begin());
                c.end = static_cast<std::size_t>(std::upper_bound(c.loads.begin(), c.loads.end(), c.hi, lessT) - c.loads.begin());
            } else {
                c.pos = 0;
                c.end = c.loads.size();
            }
            break;
        }
        case Kind::Metrics: {
            c.runId = q.i64(3);
            c.prefix = q.text(4);
            MetricGroup g;
            unpackMetrics(c.path, c.zstd, id, q.i64(5), q.i64(6), q.blob(7), g);
            c.metrics.assign(std::make_move_iterator(g.begin()), std::make_move_iterator(g.end()));
            c.pos = 0;
            c.end = c.metrics.size();
            break;
        }
        }
        if (c.pos < c.end)
            return;
    }
}

// Grouped by kind: positions the cursor on the next row of the current group (from the current row on
// when `advance` is false), moving on to the next part and group; eof when none is left.
void nextGrouped(Cursor& c, bool advance)
{
    if (advance)
        ++c.pos;
    while (c.group < c.groups.size()) {
        const auto& bits = c.groups[c.group];
        while (c.part < c.parts.size()) {
            const Cursor::Part& p = c.parts[c.part];
            const IntervalKind* kind = p.lane.kind.data();
            for (; c.pos < p.end; ++c.pos)
                if (bits.test(static_cast<std::uint8_t>(kind[c.pos]))) {
                    c.cur = &p.lane;
                    c.warp = p.warp;
                    c.ownerId = p.warpId;
                    return;
                }
            if (++c.part < c.parts.size())
                c.pos = c.parts[c.part].begin;
        }
        ++c.group;
        c.part = 0;
        c.pos = c.parts.empty() ? 0 : c.parts[0].begin;
    }
    c.eof = true;
}

// Grouped by kind (one launch): decodes every matching chunk, then makes the groups (one per kind code, in
// code order; or one per kind_name, in name order) and positions the cursor on the first row.
void startGrouped(Cursor& c, bool byName, int columns)
{
    auto used = [columns](int col) { return (columns & (1 << col)) != 0; };
    const bool start = used(ic::StartNs) || used(ic::EndNs), dur = used(ic::DurNs) || used(ic::EndNs);
    const bool slot = used(ic::Slot), kstep = used(ic::Kstep);
    c.parts.clear();
    while (!c.eof) {
        // Only the columns read (a GROUP BY kind summing durations keeps 5 bytes per interval, not 19).
        const Lane& l = c.lane;
        auto b = static_cast<std::ptrdiff_t>(c.pos), e = static_cast<std::ptrdiff_t>(c.end);
        Cursor::Part& p = c.parts.emplace_back(Cursor::Part{c.ownerId, c.warp, Lane(), 0, c.end - c.pos});
        p.lane.kind.assign(l.kind.begin() + b, l.kind.begin() + e);
        if (start)
            p.lane.start.assign(l.start.begin() + b, l.start.begin() + e);
        if (dur)
            p.lane.duration.assign(l.duration.begin() + b, l.duration.begin() + e);
        if (slot)
            p.lane.slot.assign(l.slot.begin() + b, l.slot.begin() + e);
        if (kstep)
            p.lane.kstep.assign(l.kstep.begin() + b, l.kstep.begin() + e);
        nextChunk(c);
    }
    std::bitset<256> present;
    for (const auto& p : c.parts)
        for (std::size_t i = p.begin; i < p.end; ++i)
            present.set(static_cast<std::uint8_t>(p.lane.kind[i]));
    c.groups.clear();
    if (byName) {
        std::map<std::string, std::bitset<256>> names;  // std::string order = SQLite's BINARY collation
        for (int k = 0; k < 256; ++k)
            if (present.test(static_cast<std::size_t>(k)))
                names[kindNameOf(c, k)].set(static_cast<std::size_t>(k));
        for (auto& [name, bits] : names)
            c.groups.push_back(bits);
    } else {
        for (int k = 0; k < 256; ++k)
            if (present.test(static_cast<std::size_t>(k)))
                c.groups.emplace_back().set(static_cast<std::size_t>(k));
    }
    c.group = 0;
    c.part = 0;
    c.pos = c.parts.empty() ? 0 : c.parts[0].begin;
    c.eof = false;
    nextGrouped(c, false);
}

// The SQL that selects the chunks for the slots in idxNum; parameter ?N+1 is argv[N].
std::string chunkSql(Kind kind, int idxNum, const int argOf[SlotCount])
{
    auto p = [&](Slot s) { return "?" + std::to_string(argOf[s] + 1); };
    auto has = [&](Slot s) { return (idxNum & (1 << s)) != 0; };
    std::string sql;
    switch (kind) {
    case Kind::Intervals:
        sql = "SELECT c.id, c.kernel_id, c.warp_id, c.first_start_ns, c.count, c.starts, c.durations, c.kinds, c.slots, "
              "c.ksteps, c.codec FROM interval_chunks c WHERE 1";
        if (has(KernelEq))
            sql += " AND c.kernel_id = " + p(KernelEq);
        if (has(WarpIdEq))
            sql += " AND c.kernel_id = (SELECT kernel_id FROM warps WHERE id = " + p(WarpIdEq) + ") AND c.warp_id = "
                + p(WarpIdEq);
        if (has(CtaIdEq))
            sql += " AND c.kernel_id = (SELECT kernel_id FROM ctas WHERE id = " + p(CtaIdEq)
                + ") AND c.warp_id IN (SELECT id FROM warps WHERE cta_id = " + p(CtaIdEq) + ")";
        if (has(CtaEq))
            sql += " AND c.warp_id IN (SELECT w.id FROM warps w JOIN ctas t ON t.id = w.cta_id WHERE t.block_linear = "
                + p(CtaEq) + ")";
        if (has(WarpEq))
            sql += " AND c.warp_id IN (SELECT id FROM warps WHERE warp_index = " + p(WarpEq) + ")";
        // A chunk holds starts in [first_start_ns, last_end_ns] (its last end is at least its last start).
        if (has(TimeLo))
            sql += " AND c.last_end_ns >= " + p(TimeLo);
        if (has(TimeHi))
            sql += " AND c.first_start_ns <= " + p(TimeHi);
        sql += " ORDER BY c.kernel_id, c.warp_id, c.chunk_index, c.id";
        break;
    case Kind::Loads:
        sql = "SELECT l.id, l.kernel_id, l.cta_id, l.count, l.first_issue_ns, l.codec, l.data FROM load_chunks l WHERE 1";
        if (has(KernelEq))
            sql += " AND l.kernel_id = " + p(KernelEq);
        if (has(CtaIdEq))
            sql += " AND l.kernel_id = (SELECT kernel_id FROM ctas WHERE id = " + p(CtaIdEq) + ") AND l.cta_id = "
                + p(CtaIdEq);
        if (has(CtaEq))
            sql += " AND l.cta_id IN (SELECT id FROM ctas WHERE block_linear = " + p(CtaEq) + ")";
        // Issues lie in [first_issue_ns, last_ready_ns] (a load is ready after its issue).
        if (has(TimeLo))
            sql += " AND l.last_ready_ns >= " + p(TimeLo);
        if (has(TimeHi))
            sql += " AND l.first_issue_ns <= " + p(TimeHi);
        sql += " ORDER BY l.kernel_id, l.cta_id, l.id";
        break;
    case Kind::Metrics:
        sql = "SELECT m.id, m.kernel_id, 0, m.run_id, m.scope_prefix, m.count, m.codec, m.data FROM metric_chunks m "
              "WHERE 1";
        if (has(KernelEq))
            sql += " AND m.kernel_id = " + p(KernelEq);
        sql += " ORDER BY m.kernel_id, m.scope_prefix, m.id";
        break;
    }
    return sql;
}

// --- the module callbacks ------------------------------------------------------------------------------
template <Kind K>
int xConnect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char** err)
{
    const TableDef* def = K == Kind::Intervals ? &kIntervals : K == Kind::Loads ? &kLoads : &kMetrics;
    const int rc = sqlite3_declare_vtab(db, def->schema);
    if (rc != SQLITE_OK) {
        *err = sqlite3_mprintf("%s: cannot declare the table", def->name);
        return rc;
    }
    auto* t = static_cast<Table*>(sqlite3_malloc(sizeof(Table)));
    if (!t)
        return SQLITE_NOMEM;
    std::memset(t, 0, sizeof(Table));
    t->db = db;
    t->kind = K;
    t->def = def;
    *out = &t->base;
    return SQLITE_OK;
}

int xDisconnect(sqlite3_vtab* v)
{
    sqlite3_free(v);
    return SQLITE_OK;
}

int xBestIndex(sqlite3_vtab* v, sqlite3_index_info* info)
{
    const TableDef& def = *reinterpret_cast<Table*>(v)->def;
    int use[SlotCount];
    std::fill(std::begin(use), std::end(use), -1);
    for (int i = 0; i < info->nConstraint; ++i) {
        const auto& con = info->aConstraint[i];
        if (!con.usable)
            continue;
        for (int s = 0; s < SlotCount; ++s) {
            // (iColumn -1 is the rowid: no slot is about it)
            if (def.column[s] < 0 || def.column[s] != con.iColumn || use[s] >= 0)
                continue;
            const bool eq = con.op == SQLITE_INDEX_CONSTRAINT_EQ;
            const bool lo = con.op == SQLITE_INDEX_CONSTRAINT_GT || con.op == SQLITE_INDEX_CONSTRAINT_GE;
            const bool hi = con.op == SQLITE_INDEX_CONSTRAINT_LT || con.op == SQLITE_INDEX_CONSTRAINT_LE;
            if ((s == TimeLo && lo) || (s == TimeHi && hi) || (s < TimeLo && eq)) {
                use[s] = i;
                break;
            }
        }
    }
    int idxNum = 0, argc = 0;
    double cost = 1e9, rows = 1e8;
    for (int s = 0; s < SlotCount; ++s) {
        if (use[s] < 0)
            continue;
        idxNum |= 1 << s;
        auto& u = info->aConstraintUsage[use[s]];
        u.argvIndex = ++argc;
        // Equalities on ids select exactly the chunks whose rows match. Time bounds only prune whole chunks
        // and rows outside the bound: SQLite checks them itself (a bound may be a REAL or text).
        u.omit = s < TimeLo ? 1 : 0;
        const double f = s == KernelEq ? 1e-3 : s == WarpIdEq ? 1e-5 : s == CtaIdEq ? 1e-4 : s == CtaEq ? 1e-3
                         : s == WarpEq ? 1e-1 : 0.5;
        cost *= f;
        rows *= f;
    }
    // One launch at most (an IN on kernel_id makes SQLite call xFilter per value and ignore orderByConsumed):
    // rows can come kind by kind.
    const bool oneLaunch = use[KernelEq] >= 0 || use[WarpIdEq] >= 0 || use[CtaIdEq] >= 0;
    if (oneLaunch && &def == &kIntervals && info->nOrderBy == 1
        && !info->aOrderBy[0].desc
        && (info->aOrderBy[0].iColumn == ic::Kind || info->aOrderBy[0].iColumn == ic::KindName)) {
        idxNum |= info->aOrderBy[0].iColumn == ic::Kind ? kByKind : kByKindName;
        idxNum |= static_cast<int>(info->colUsed & 0x7fff) << kColumnsShift;
        info->orderByConsumed = 1;
    }
    info->idxNum = idxNum;
    info->estimatedCost = cost;
    info->estimatedRows = static_cast<sqlite3_int64>(std::max(1.0, rows));
    return SQLITE_OK;
}

int xOpen(sqlite3_vtab* v, sqlite3_vtab_cursor** out)
{
    auto* c = new (std::nothrow) Cursor;
    if (!c)
        return SQLITE_NOMEM;
    std::memset(&c->base, 0, sizeof(c->base));
    c->table = reinterpret_cast<Table*>(v);
    c->path = dbPath(c->table->db);
    *out = &c->base;
    return SQLITE_OK;
}

int xClose(sqlite3_vtab_cursor* cur)
{
    delete reinterpret_cast<Cursor*>(cur);
    return SQLITE_OK;
}

template <class F>
int guarded(sqlite3_vtab_cursor* cur, F f)
{
    try {
        f(*reinterpret_cast<Cursor*>(cur));
        return SQLITE_OK;
    } catch (const std::bad_alloc&) {
        return SQLITE_NOMEM;
    } catch (const std::exception& e) {
        setError(cur->pVtab, std::string(reinterpret_cast<Cursor*>(cur)->table->def->name) + ": " + e.what());
        return SQLITE_ERROR;
    }
}

int xFilter(sqlite3_vtab_cursor* cur, int idxNum, const char*, int argc, sqlite3_value** argv)
{
    return guarded(cur, [&](Cursor& c) {
        c.eof = true;
        c.rowid = 0;
        c.lo = std::numeric_limits<TimeNs>::min();
        c.hi = std::numeric_limits<TimeNs>::max();
        const int grouped = idxNum & (kByKind | kByKindName);
        const int columns = idxNum >> kColumnsShift;
        idxNum &= (1 << SlotCount) - 1;
        c.parts.clear();
        c.groups.clear();
        int argOf[SlotCount];
        int a = 0;
        for (int s = 0; s < SlotCount; ++s)
            argOf[s] = idxNum & (1 << s) ? a++ : -1;
        if (a != argc)
            throw std::runtime_error("internal error: " + std::to_string(argc) + " arguments for plan "
                                     + std::to_string(idxNum));
        int mask = idxNum;
        for (const Slot s : {TimeLo, TimeHi}) {
            if (argOf[s] < 0)
                continue;
            const Bound b = bound(argv[argOf[s]], s == TimeLo);
            if (b.empty)
                return;  // compared with NULL: no row
            if (!b.set)
                mask &= ~(1 << s);  // not a number: no pruning, SQLite compares every row
            else
                (s == TimeLo ? c.lo : c.hi) = b.v;
        }
        sqlite3* db = c.table->db;
        c.chunks.prepare(db, chunkSql(c.table->kind, mask, argOf));
        for (int s = 0; s < SlotCount; ++s)
            if (mask & (1 << s))
                sqlite3_bind_value(c.chunks.st, argOf[s] + 1, argv[argOf[s]]);
        c.eof = false;
        nextChunk(c);
        if (grouped)
            startGrouped(c, grouped == kByKindName, columns);
    });
}

int xNext(sqlite3_vtab_cursor* cur)
{
    return guarded(cur, [](Cursor& c) {
        ++c.rowid;
        if (!c.groups.empty()) {
            nextGrouped(c, true);
            return;
        }
        if (++c.pos < c.end)
            return;
        nextChunk(c);
    });
}

int xEof(sqlite3_vtab_cursor* cur) { return reinterpret_cast<Cursor*>(cur)->eof ? 1 : 0; }

int xRowid(sqlite3_vtab_cursor* cur, sqlite3_int64* id)
{
    *id = reinterpret_cast<Cursor*>(cur)->rowid;
    return SQLITE_OK;
}

void kindName(sqlite3_context* ctx, const Cursor& c, IntervalKind k)
{
    if (!isUserPhase(k)) {
        const std::string_view n = intervalKindName(k);
        sqlite3_result_text(ctx, n.data(), static_cast<int>(n.size()), SQLITE_STATIC);
        return;
    }
    const std::string n = kindNameOf(c, static_cast<int>(k));
    sqlite3_result_text(ctx, n.data(), static_cast<int>(n.size()), SQLITE_TRANSIENT);
}

void text(sqlite3_context* ctx, const std::string& s)
{
    sqlite3_result_text(ctx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

int xColumn(sqlite3_vtab_cursor* cur, sqlite3_context* ctx, int col)
{
    const Cursor& c = *reinterpret_cast<Cursor*>(cur);
    const std::size_t i = c.pos;
    switch (c.table->kind) {
    case Kind::Intervals: {
        const Lane& l = *c.cur;
        const WarpMeta& w = *c.warp;
        switch (col) {
        case ic::KernelId: sqlite3_result_int64(ctx, c.kernelId); break;
        case ic::WarpId: sqlite3_result_int64(ctx, c.ownerId); break;
        case ic::CtaId: sqlite3_result_int64(ctx, w.ctaId); break;
        case ic::Sm: sqlite3_result_int64(ctx, w.sm); break;
        case ic::Cta: sqlite3_result_int64(ctx, w.cta); break;
        case ic::Warp: sqlite3_result_int64(ctx, w.warp); break;
        case ic::Warpgroup: sqlite3_result_int64(ctx, w.warpgroup); break;
        case ic::Role: text(ctx, w.role); break;
        case ic::Kind: sqlite3_result_int(ctx, static_cast<int>(l.kind[i])); break;
        case ic::KindName: kindName(ctx, c, l.kind[i]); break;
        // (a grouped cursor keeps only the columns xBestIndex was told about: NULL if one is asked anyway)
        case ic::StartNs: i < l.start.size() ? sqlite3_result_int64(ctx, l.start[i]) : sqlite3_result_null(ctx); break;
        case ic::EndNs:
            i < l.start.size() && i < l.duration.size() ? sqlite3_result_int64(ctx, l.end(i)) : sqlite3_result_null(ctx);
            break;
        case ic::DurNs: i < l.duration.size() ? sqlite3_result_int64(ctx, l.duration[i]) : sqlite3_result_null(ctx); break;
        case ic::Kstep: i < l.kstep.size() ? sqlite3_result_int64(ctx, l.kstep[i]) : sqlite3_result_null(ctx); break;
        case ic::Slot: i < l.slot.size() ? sqlite3_result_int64(ctx, l.slot[i]) : sqlite3_result_null(ctx); break;
        default: sqlite3_result_null(ctx);
        }
        break;
    }
    case Kind::Loads: {
        const LoadTransfer& x = c.loads[i];
        switch (col) {
        case lc::KernelId: sqlite3_result_int64(ctx, c.kernelId); break;
        case lc::CtaId: sqlite3_result_int64(ctx, c.ownerId); break;
        case lc::Sm: sqlite3_result_int64(ctx, c.cta->sm); break;
        case lc::Cta: sqlite3_result_int64(ctx, c.cta->cta); break;
        case lc::Slot: sqlite3_result_int64(ctx, x.slot); break;
        case lc::Kstep: sqlite3_result_int64(ctx, x.kstep); break;
        case lc::IssueNs: sqlite3_result_int64(ctx, x.issue); break;
        case lc::ReadyNs: sqlite3_result_int64(ctx, x.ready); break;
        case lc::LatencyNs: sqlite3_result_int64(ctx, x.ready - x.issue); break;
        case lc::Bytes: sqlite3_result_int64(ctx, x.bytes); break;
        default: sqlite3_result_null(ctx);
        }
        break;
    }
    case Kind::Metrics: {
        const auto& [k, v] = c.metrics[i];
        switch (col) {
        case mc::RunId: sqlite3_result_int64(ctx, c.runId); break;
        case mc::KernelId: sqlite3_result_int64(ctx, c.kernelId); break;
        case mc::Scope: text(ctx, c.prefix + ":" + std::to_string(k.index)); break;
        case mc::ScopePrefix: text(ctx, c.prefix); break;
        case mc::ScopeIndex: sqlite3_result_int64(ctx, k.index); break;
        case mc::Name: text(ctx, k.name); break;
        case mc::Value:
            if (std::isnan(v.value))
                sqlite3_result_null(ctx);
            else
                sqlite3_result_double(ctx, v.value);
            break;
        case mc::Unit: text(ctx, v.unit); break;
        default: sqlite3_result_null(ctx);
        }
        break;
    }
    }
    return SQLITE_OK;
}

template <Kind K>
constexpr sqlite3_module makeModule()
{
    sqlite3_module m{};
    m.iVersion = 0;
    m.xCreate = nullptr;  // eponymous only: no CREATE VIRTUAL TABLE
    m.xConnect = xConnect<K>;
    m.xBestIndex = xBestIndex;
    m.xDisconnect = xDisconnect;
    m.xDestroy = xDisconnect;
    m.xOpen = xOpen;
    m.xClose = xClose;
    m.xFilter = xFilter;
    m.xNext = xNext;
    m.xEof = xEof;
    m.xColumn = xColumn;
    m.xRowid = xRowid;
    return m;
}

const sqlite3_module kIntervalsModule = makeModule<Kind::Intervals>();
const sqlite3_module kLoadsModule = makeModule<Kind::Loads>();
const sqlite3_module kMetricsModule = makeModule<Kind::Metrics>();

}  // namespace

int registerTables(sqlite3* db)
{
    int rc = sqlite3_create_module(db, kIntervals.name, &kIntervalsModule, nullptr);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_module(db, kLoads.name, &kLoadsModule, nullptr);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_module(db, kMetrics.name, &kMetricsModule, nullptr);
    return rc;
}

}  // namespace ws::detail::WS_VTAB_NS
