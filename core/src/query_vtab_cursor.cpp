// SQL over traces, the cursors (query_vtab_p.h): the rows of `intervals`, `loads` and `chunk_metrics` decoded
// chunk by chunk (or, grouped by kind, every matching chunk of a launch at once), and the SQL that selects the
// chunks for what xBestIndex pushed down. Compiled twice, like query_vtab.cpp (see there).
#include "query_vtab_p.h"

namespace ws::detail::WS_VTAB_NS {

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

}  // namespace ws::detail::WS_VTAB_NS
