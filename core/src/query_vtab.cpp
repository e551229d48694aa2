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
//
// The cursors and the chunk SQL are in query_vtab_cursor.cpp, the types both files share in query_vtab_p.h.
#include "query_vtab_p.h"

#include <cstring>

namespace ws::detail::WS_VTAB_NS {

namespace {

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
