// SQLite store: writing runs (writeRun, the streaming RunWriter), metrics and stall stages.
// Every write is one transaction.
#include "store_impl.h"
#include "store_packed.h"

#include <climits>
#include <map>
#include <numeric>
#include <stdexcept>

namespace ws {

using detail::Db;
using detail::Stmt;
using namespace detail;

// --- writing -------------------------------------------------------------------
RowId TraceStore::Impl::insertRun(const RunInfo& r)
{
    Stmt s(db, "INSERT INTO runs(variant, m, n, k, synthetic, status, failure_reason, device_name, compute_major, "
               "compute_minor, sm_count, sm_clock_khz, mem_clock_khz, l2_bytes, global_mem_bytes, driver_version, "
               "cuda_version, cupti_version, host, started_at, command_line, notes, has_timeline, has_stalls, "
               "kind, pid, parent_pid, program, working_dir, device_ordinal, device_uuid, process_start_ns, "
               "process_end_ns, exit_code, exit_signal) "
               "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
               "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (r.processEnd < r.processStart)
        fail(db.path(), "cannot write a run whose process ends before it starts");
    s.bind(1, r.variant).bind(2, r.m).bind(3, r.n).bind(4, r.k).bind(5, r.synthetic ? 1 : 0)
        .bind(6, statusName(r.status)).bind(7, r.failureReason).bind(8, r.device.name)
        .bind(9, r.device.computeMajor).bind(10, r.device.computeMinor).bind(11, r.device.smCount)
        .bind(12, r.device.smClockKHz).bind(13, r.device.memClockKHz).bind(14, r.device.l2Bytes)
        .bind(15, r.device.globalMemBytes).bind(16, r.driverVersion).bind(17, r.cudaVersion).bind(18, r.cuptiVersion)
        .bind(19, r.host).bind(20, r.startedAt).bind(21, r.commandLine).bind(22, r.notes)
        .bind(23, r.hasTimeline ? 1 : 0).bind(24, r.hasStalls ? 1 : 0)
        .bind(25, runKindName(r.kind)).bind(26, r.pid).bind(27, r.parentPid).bind(28, r.program)
        .bind(29, r.workingDir).bind(30, r.deviceOrdinal).bind(31, r.deviceUuid).bind(32, r.processStart)
        .bind(33, r.processEnd).bind(34, r.exitCode).bind(35, r.exitSignal);
    s.run();
    const RowId id = sqlite3_last_insert_rowid(db.get());
    apiBase = maxId(db, "api_calls");
    nvtxBase = maxId(db, "nvtx_events");
    return id;
}

// The largest id of a table (0 when empty): its rightmost row, no scan.
RowId TraceStore::Impl::maxId(const Db& db, const char* table)
{
    Stmt s(db, (std::string("SELECT COALESCE(MAX(id), 0) FROM ") + table).c_str());
    return s.step() ? s.i64(0) : 0;
}

// Schema 5, before the run's commit: the rows this transaction added to api_calls / nvtx_events are the ids above
// what the table held when the run began (SQLite gives a new row the largest id + 1, and the transaction holds the
// write lock), so [base + 1, largest id now] is the run's range (docs/schema.md, runs.api_first_id); with no rows
// that range is empty (first = last + 1).
void TraceStore::Impl::writeRangesOf(RowId runId)
{
    Stmt s(db, "UPDATE runs SET api_first_id = ?, api_last_id = ?, nvtx_first_id = ?, nvtx_last_id = ? WHERE id = ?");
    s.bind(1, apiBase + 1).bind(2, maxId(db, "api_calls")).bind(3, nvtxBase + 1).bind(4, maxId(db, "nvtx_events"))
        .bind(5, runId).run();
}

namespace detail {

#define WS_INSERT_KERNEL_HEAD \
    "INSERT INTO kernels(run_id, name, variant, traced, grid_x, grid_y, grid_z, block_x, block_y, " \
    "block_z, cluster_x, cluster_y, cluster_z, dynamic_smem_bytes, static_smem_bytes, " \
    "registers_per_thread, start_ns, end_ns, correlation_id, stream_id, align_residual_ns, " \
    "dropped_events, context_id, graph_id, graph_node_id, launch_index)"
const char* const kInsertKernelHead = WS_INSERT_KERNEL_HEAD;
const char* const kInsertKernelSql =
    WS_INSERT_KERNEL_HEAD " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
#undef WS_INSERT_KERNEL_HEAD

void bindLaunch(Stmt& s, RowId runId, const KernelLaunch& L, int base)
{
    s.bind(base + 1, runId).bindStatic(base + 2, L.name).bindStatic(base + 3, L.variant).bind(base + 4, L.traced ? 1 : 0);
    for (int i = 0; i < 3; ++i)
        s.bind(base + 5 + i, L.grid[i]).bind(base + 8 + i, L.block[i]).bind(base + 11 + i, L.cluster[i]);
    s.bind(base + 14, L.dynamicSmemBytes).bind(base + 15, L.staticSmemBytes).bind(base + 16, L.registersPerThread)
        .bind(base + 17, L.start).bind(base + 18, L.end).bind(base + 19, static_cast<std::int64_t>(L.correlationId))
        .bind(base + 20, static_cast<std::int64_t>(L.streamId)).bind(base + 21, L.alignResidualNs)
        .bind(base + 22, L.droppedEvents).bind(base + 23, static_cast<std::int64_t>(L.contextId))
        .bind(base + 24, static_cast<std::int64_t>(L.graphId)).bind(base + 25, static_cast<std::int64_t>(L.graphNodeId))
        .bind(base + 26, L.launchIndex);
}

// "INSERT INTO t(cols) VALUES(?, ...), (?, ...), ..." with `rows` rows of `cols` parameters.
std::string multiRowInsert(const char* head, int cols, int rows)
{
    std::string row = "(";
    for (int c = 0; c < cols; ++c)
        row += c ? ", ?" : "?";
    row += ")";
    // OR FAIL instead of the default ABORT: a statement that may abort halfway through several rows makes
    // SQLite keep a statement journal (a copy of every page the statement changes that existed before it),
    // ~20 % of a program recording's CPU (docs/benchmarks.md, "Storage (schema 4)"). The difference shows
    // only when a row fails a constraint: these tables have none but NOT NULL, the writers bind every
    // column and refuse a NaN REAL (bound as NULL) before inserting; were a row refused anyway, the rows
    // before it in that one statement would stay in the run's open transaction (the call still throws). An I/O error,
    // a full disk or no memory without a statement journal rolls back the whole transaction (the run).
    std::string_view h = head;
    constexpr std::string_view insert = "INSERT ";
    if (h.substr(0, insert.size()) != insert)
        throw std::logic_error("multiRowInsert: head must start with INSERT");
    std::string sql = "INSERT OR FAIL ";
    sql += h.substr(insert.size());
    sql += " VALUES";
    for (int r = 0; r < rows; ++r) {
        sql += r ? ", " : " ";
        sql += row;
    }
    return sql;
}

}  // namespace detail

RowId TraceStore::Impl::insertKernel(RowId runId, const KernelRecord& k)
{
    const std::string& path = db.path();
    const KernelLaunch& L = k.launch;
    if (L.end < L.start)
        fail(path, "cannot write kernel '" + L.name + "': it ends before it starts");
    RowId kernelId;
    {
        Stmt s(db, kInsertKernelSql);
        bindLaunch(s, runId, L);
        s.run();
        kernelId = sqlite3_last_insert_rowid(db.get());
    }
    const std::string where = "cannot write kernel '" + L.name + "'";

    std::vector<RowId> ctaIds(k.ctas.size());
    {
        Stmt s(db, "INSERT INTO ctas(kernel_id, block_linear, sm_id, start_ns, end_ns, tile_m, tile_n, ns_per_cycle) "
                   "VALUES(?, ?, ?, ?, ?, ?, ?, ?)");
        for (std::size_t i = 0; i < k.ctas.size(); ++i) {
            const Cta& c = k.ctas[i];
            if (c.end < c.start)
                fail(path, where + ": CTA " + str(static_cast<std::int64_t>(i)) + " ends before it starts");
            s.bind(1, kernelId).bind(2, c.blockLinear).bind(3, c.smId).bind(4, c.start).bind(5, c.end)
                .bind(6, c.tileM).bind(7, c.tileN).bind(8, c.nsPerCycle);
            s.run();
            ctaIds[i] = sqlite3_last_insert_rowid(db.get());
        }
    }
    auto ctaRow = [&](RowId local, const char* what) {
        if (local < 0 || static_cast<std::size_t>(local) >= ctaIds.size())
            fail(path, where + ": " + what + " points at missing CTA " + str(local));
        return ctaIds[static_cast<std::size_t>(local)];
    };
    std::vector<RowId> warpIds(k.warps.size());
    {
        Stmt s(db, "INSERT INTO warps(kernel_id, cta_id, warp_index, warpgroup, role, role_name) VALUES(?, ?, ?, ?, ?, ?)");
        for (std::size_t i = 0; i < k.warps.size(); ++i) {
            const Warp& w = k.warps[i];
            s.bind(1, kernelId).bind(2, ctaRow(w.ctaId, "a warp")).bind(3, w.warpIndex).bind(4, w.warpgroup)
                .bind(5, warpRoleName(w.role)).bind(6, w.roleName);
            s.run();
            warpIds[i] = sqlite3_last_insert_rowid(db.get());
        }
    }

    // Intervals: group by warp (counting sort on pointers unless already grouped), sort each by start.
    if (!k.intervals.empty()) {
        const std::size_t nw = k.warps.size();
        std::vector<std::size_t> counts(nw + 1, 0);
        bool grouped = true;
        RowId prevWarp = -1;
        for (const Interval& iv : k.intervals) {
            if (iv.warpId < 0 || static_cast<std::size_t>(iv.warpId) >= nw)
                fail(path, where + ": an interval points at missing warp " + str(iv.warpId));
            if (iv.duration < 0)
                fail(path, where + ": an interval has a negative duration (" + str(iv.duration) + " ns)");
            if (iv.warpId < prevWarp)
                grouped = false;
            prevWarp = iv.warpId;
            ++counts[static_cast<std::size_t>(iv.warpId) + 1];
        }
        std::partial_sum(counts.begin(), counts.end(), counts.begin());
        ChunkWriter chunks(&db, ChunkCodec::Zstd);
        auto byStart = [](const Interval* x, const Interval* y) { return x->start < y->start; };
        if (grouped) {
            // The usual case (the recorder and the generator write warp by warp): no copy.
            for (std::size_t w = 0; w < nw; ++w) {
                const std::size_t b = counts[w], e = counts[w + 1];
                if (b == e)
                    continue;
                const Interval* first = k.intervals.data() + b;
                bool sorted = true;
                for (std::size_t i = 1; i < e - b && sorted; ++i)
                    sorted = first[i - 1].start <= first[i].start;
                if (sorted) {
                    chunks.writeWarp(kernelId, warpIds[w], [first](std::size_t i) -> const Interval& { return first[i]; },
                                    e - b);
                } else {
                    std::vector<const Interval*> order(e - b);
                    for (std::size_t i = 0; i < e - b; ++i)
                        order[i] = first + i;
                    std::stable_sort(order.begin(), order.end(), byStart);
                    chunks.writeWarp(kernelId, warpIds[w], [&order](std::size_t i) -> const Interval& { return *order[i]; },
                                    e - b);
                }
            }
        } else {
            std::vector<const Interval*> order(k.intervals.size());
            std::vector<std::size_t> fill(counts.begin(), counts.end() - 1);
            for (const Interval& iv : k.intervals)
                order[fill[static_cast<std::size_t>(iv.warpId)]++] = &iv;
            for (std::size_t w = 0; w < nw; ++w) {
                const std::size_t b = counts[w], e = counts[w + 1];
                if (b == e)
                    continue;
                const Interval** first = order.data() + b;
                if (!std::is_sorted(first, first + (e - b), byStart))
                    std::stable_sort(first, first + (e - b), byStart);
                chunks.writeWarp(kernelId, warpIds[w], [first](std::size_t i) -> const Interval& { return *first[i]; },
                                e - b);
            }
        }
    }

    if (!k.tiles.empty()) {
        Stmt s(db, "INSERT INTO tiles(kernel_id, cta_id, warp_id, tile_m, tile_n, start_ns, end_ns) VALUES(?, ?, ?, ?, ?, ?, ?)");
        for (const TileSpan& x : k.tiles) {
            if (x.end < x.start)
                fail(path, where + ": a tile ends before it starts");
            s.bind(1, kernelId).bind(2, ctaRow(x.ctaId, "a tile"));
            if (x.warpId < 0) {
                s.bindNull(3);
            } else {
                if (static_cast<std::size_t>(x.warpId) >= warpIds.size())
                    fail(path, where + ": a tile points at missing warp " + str(x.warpId));
                s.bind(3, warpIds[static_cast<std::size_t>(x.warpId)]);
            }
            s.bind(4, x.tileM).bind(5, x.tileN).bind(6, x.start).bind(7, x.end);
            s.run();
        }
    }
    if (!k.loads.empty()) {
        // Schema 4: the loads of each CTA in one zstd chunk (docs/schema.md, "Load chunks").
        std::vector<std::vector<LoadTransfer>> perCta(k.ctas.size());
        for (const LoadTransfer& x : k.loads) {
            ctaRow(x.ctaId, "a load");
            if (x.ready < x.issue)
                fail(path, where + ": a load is ready before it was issued");
            perCta[static_cast<std::size_t>(x.ctaId)].push_back(x);
        }
        Stmt s(db, "INSERT INTO load_chunks(kernel_id, cta_id, count, first_issue_ns, last_ready_ns, codec, data) "
                   "VALUES(?, ?, ?, ?, ?, ?, ?)");
        Zstd z;
        for (std::size_t c = 0; c < perCta.size(); ++c) {
            if (perCta[c].empty())
                continue;
            const PackedLoads p = packLoads(path, z, std::move(perCta[c]));
            s.bind(1, kernelId).bind(2, ctaIds[c]).bind(3, p.count).bind(4, p.firstIssue).bind(5, p.lastReady)
                .bind(6, kPackedCodecZstd).bindBlobStatic(7, p.data.data(), p.data.size());
            s.run();
        }
    }
    if (!k.phaseNames.empty()) {
        if (k.phaseNames.size() > static_cast<std::size_t>(kMaxUserPhases))
            fail(path, where + ": " + str(static_cast<std::int64_t>(k.phaseNames.size())) + " user phase names, at most "
                           + str(kMaxUserPhases));
        Stmt s(db, "INSERT INTO phase_names(kernel_id, code, name) VALUES(?, ?, ?)");
        for (std::size_t i = 0; i < k.phaseNames.size(); ++i) {
            if (k.phaseNames[i].empty())
                continue;  // an unused code
            s.bind(1, kernelId).bind(2, static_cast<std::int64_t>(kUserPhaseBase + i)).bind(3, k.phaseNames[i]);
            s.run();
        }
    }
    if (!k.scopes.empty()) {
        // Schema 6: outer scopes of a warp (bracket lanes).
        Stmt s(db, "INSERT INTO scope_spans(kernel_id, warp_id, depth, name, start_ns, end_ns) VALUES(?, ?, ?, ?, ?, ?)");
        for (const ScopeSpan& x : k.scopes) {
            if (x.warpId < 0 || static_cast<std::size_t>(x.warpId) >= warpIds.size())
                fail(path, where + ": scope '" + x.name + "' points at missing warp " + str(x.warpId));
            if (x.end < x.start)
                fail(path, where + ": scope '" + x.name + "' ends before it starts (negative duration)");
            if (x.depth < 0)
                fail(path, where + ": scope '" + x.name + "' has a negative depth");
            s.bind(1, kernelId).bind(2, warpIds[static_cast<std::size_t>(x.warpId)]).bind(3, x.depth).bind(4, x.name)
                .bind(5, x.start).bind(6, x.end);
            s.run();
        }
    }
    if (!k.stalls.empty()) {
        Stmt s(db, "INSERT INTO stall_samples(kernel_id, pc_offset, function_name, source_file, line, reason, "
                   "reason_label, count, role, stage) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (const StallSample& x : k.stalls) {
            if (x.count < 0)
                fail(path, where + ": a stall sample has a negative count");
            s.bind(1, kernelId).bind(2, static_cast<std::int64_t>(x.pcOffset)).bind(3, x.functionName)
                .bind(4, x.sourceFile).bind(5, x.line).bind(6, x.reason).bind(7, x.reasonLabel).bind(8, x.count)
                .bind(9, warpRoleName(x.role)).bind(10, x.stage);
            s.run();
        }
    }
    return kernelId;
}

void TraceStore::Impl::insertMemOps(RowId runId, const std::vector<MemOp>& ops)
{
    insertRows(memopStmt, memopBatch,
               "INSERT INTO memops(run_id, kind, bytes, start_ns, end_ns, correlation_id, stream_id, context_id, "
               "graph_id, graph_node_id)", 10, ops,
               [&](const MemOp& m) {
                   if (m.end < m.start)
                       fail(db.path(), "cannot write a memory operation that ends before it starts");
               },
               [&](Stmt& s, int b, const MemOp& m) {
                   s.bind(b + 1, runId).bindStatic(b + 2, memOpKindName(m.kind)).bind(b + 3, m.bytes).bind(b + 4, m.start)
                       .bind(b + 5, m.end).bind(b + 6, static_cast<std::int64_t>(m.correlationId))
                       .bind(b + 7, static_cast<std::int64_t>(m.streamId)).bind(b + 8, static_cast<std::int64_t>(m.contextId))
                       .bind(b + 9, static_cast<std::int64_t>(m.graphId)).bind(b + 10, static_cast<std::int64_t>(m.graphNodeId));
               });
}

// The fast path for program recordings: launches without per-warp data, multi-row inserts.
void TraceStore::Impl::insertLaunches(RowId runId, const std::vector<KernelLaunch>& launches)
{
    insertRows(launchStmt, launchBatch, kInsertKernelHead, 26, launches,
               [&](const KernelLaunch& L) {
                   if (L.end < L.start)
                       fail(db.path(), "cannot write kernel '" + L.name + "': it ends before it starts");
                   // SQLite binds NaN as NULL, which align_residual_ns (NOT NULL) refuses halfway through a
                   // multi-row INSERT OR FAIL (multiRowInsert): refuse the call before any row is written
                   if (L.alignResidualNs != L.alignResidualNs)
                       fail(db.path(), "cannot write kernel '" + L.name + "': its alignment residual is not a number");
               },
               [&](Stmt& s, int b, const KernelLaunch& L) { bindLaunch(s, runId, L, b); });
}

void TraceStore::Impl::insertStreams(RowId runId, const std::vector<StreamInfo>& streams)
{
    if (streams.empty())
        return;
    // The recorder may learn a stream's name or priority late: a second row for the same stream updates it.
    Stmt s(db, "INSERT INTO streams(run_id, context_id, stream_id, priority, is_default, name) VALUES(?, ?, ?, ?, ?, ?) "
               "ON CONFLICT(run_id, context_id, stream_id) DO UPDATE SET priority = excluded.priority, "
               "is_default = excluded.is_default, name = excluded.name");
    for (const StreamInfo& x : streams) {
        s.bind(1, runId).bind(2, static_cast<std::int64_t>(x.contextId)).bind(3, static_cast<std::int64_t>(x.streamId))
            .bind(4, x.priority).bind(5, x.isDefault ? 1 : 0).bind(6, x.name);
        s.run();
    }
}

RowId TraceStore::Impl::nameId(const std::string& name)
{
    if (const auto it = nameIds.find(name); it != nameIds.end())
        return it->second;
    Stmt& sel = cached(nameSel, "SELECT id FROM names WHERE name = ?");
    sel.bind(1, name);
    RowId id = 0;
    const bool found = sel.step();
    if (found)
        id = sel.i64(0);
    sel.reset();
    if (!found) {
        cached(nameIns, "INSERT INTO names(name) VALUES(?)").bind(1, name).run();
        id = sqlite3_last_insert_rowid(db.get());
    }
    nameIds.emplace(name, id);
    return id;
}

void TraceStore::Impl::insertNvtx(RowId runId, const std::vector<NvtxRange>& ranges)
{
    // Schema 5: domain and name interned (names); the rows go to nvtx_events, read through the view nvtx_ranges.
    const std::string* lastDomain = nullptr;
    RowId lastDomainId = 0;
    insertRows(nvtxStmt, nvtxBatch,
               "INSERT INTO nvtx_events(run_id, kind, domain_id, name_id, start_ns, end_ns, thread_id, depth, color, "
               "category, closed)", 11, ranges,
               [&](const NvtxRange& r) {
                   if (r.end < r.start)
                       fail(db.path(), "cannot write NVTX range '" + r.name + "': it ends before it starts");
               },
               [&](Stmt& s, int b, const NvtxRange& r) {
                   if (!lastDomain || *lastDomain != r.domain) {
                       lastDomainId = nameId(r.domain);
                       lastDomain = &r.domain;
                   }
                   s.bind(b + 1, runId).bindStatic(b + 2, nvtxKindName(r.kind)).bind(b + 3, lastDomainId)
                       .bind(b + 4, nameId(r.name)).bind(b + 5, r.start).bind(b + 6, r.end)
                       .bind(b + 7, static_cast<std::int64_t>(r.threadId)).bind(b + 8, r.depth)
                       .bind(b + 9, static_cast<std::int64_t>(r.color)).bind(b + 10, r.category).bind(b + 11, r.closed ? 1 : 0);
               });
}

void TraceStore::Impl::insertApiSpans(RowId runId, const std::vector<ApiSpan>& spans)
{
    // Schema 5: the name interned (names); the rows go to api_calls, read through the view api_spans. Calls come
    // in runs of the same name: the last one is remembered before asking the cache.
    const std::string* lastName = nullptr;
    RowId lastId = 0;
    insertRows(apiStmt, apiBatch,
               "INSERT INTO api_calls(run_id, name_id, cbid, driver, start_ns, end_ns, thread_id, correlation_id, "
               "result)", 9, spans,
               [&](const ApiSpan& a) {
                   if (a.end < a.start)
                       fail(db.path(), "cannot write API call '" + a.name + "': it ends before it starts");
               },
               [&](Stmt& s, int b, const ApiSpan& a) {
                   if (!lastName || *lastName != a.name) {
                       lastId = nameId(a.name);
                       lastName = &a.name;
                   }
                   s.bind(b + 1, runId).bind(b + 2, lastId).bind(b + 3, static_cast<std::int64_t>(a.cbid))
                       .bind(b + 4, a.driver ? 1 : 0).bind(b + 5, a.start).bind(b + 6, a.end)
                       .bind(b + 7, static_cast<std::int64_t>(a.threadId))
                       .bind(b + 8, static_cast<std::int64_t>(a.correlationId)).bind(b + 9, a.result);
               });
}

void TraceStore::Impl::insertMetrics(RowId runId, const std::vector<Metric>& ms, const std::vector<RowId>* kernelIds)
{
    if (ms.empty())
        return;
    Stmt s(db, "INSERT INTO metrics(run_id, kernel_id, scope, name, value, unit) VALUES(?, ?, ?, ?, ?, ?) "
               "ON CONFLICT(run_id, kernel_id, scope, name) DO UPDATE SET value = excluded.value, unit = excluded.unit");
    // Per-CTA / per-warpgroup metrics (scope cta:N, wg:N) go into one packed chunk per (kernel, prefix).
    std::map<std::pair<RowId, std::string>, MetricGroup> packed;
    for (const Metric& m : ms) {
        RowId kid = m.kernelId;
        if (kernelIds && kid != 0) {
            if (kid < 1 || static_cast<std::size_t>(kid) > kernelIds->size())
                fail(db.path(), "cannot write metric '" + m.name + "': it points at missing kernel " + str(kid));
            kid = (*kernelIds)[static_cast<std::size_t>(kid - 1)];
        }
        if (auto ps = packedScope(m.scope)) {
            packed[{kid, ps->first}][MetricKey{ps->second, m.name}] = MetricValue{m.value, m.unit};
            continue;
        }
        s.bind(1, runId).bind(2, kid).bind(3, m.scope).bind(4, m.name);
        if (m.value != m.value)
            s.bindNull(5);
        else
            s.bind(5, m.value);
        s.bind(6, m.unit);
        s.run();
    }
    if (packed.empty())
        return;
    Stmt sel(db, "SELECT id, count, codec, data FROM metric_chunks WHERE run_id = ? AND kernel_id = ? AND scope_prefix = ?");
    Stmt ins(db, "INSERT INTO metric_chunks(run_id, kernel_id, scope_prefix, count, codec, data) VALUES(?, ?, ?, ?, ?, ?) "
                 "ON CONFLICT(run_id, kernel_id, scope_prefix) DO UPDATE SET count = excluded.count, "
                 "codec = excluded.codec, data = excluded.data");
    Zstd z;
    for (auto& [key, group] : packed) {
        sel.bind(1, runId).bind(2, key.first).bind(3, key.second);
        if (sel.step()) {  // writing again replaces metrics one by one, as for rows
            MetricGroup old;
            unpackMetrics(db.path(), z, sel.i64(0), sel.i64(1), sel.i64(2), sel.blob(3), old);
            group.insert(old.begin(), old.end());  // keeps the new value where both have one
        }
        sel.reset();
        const std::string data = packMetrics(db.path(), z, group);
        ins.bind(1, runId).bind(2, key.first).bind(3, key.second).bind(4, static_cast<std::int64_t>(group.size()))
            .bind(5, kPackedCodecZstd).bindBlobStatic(6, data.data(), data.size());
        ins.run();
    }
}

void TraceStore::Impl::insertSources(RowId runId, const std::vector<SourceFile>& sources)
{
    if (sources.empty())
        return;
    Stmt text(db, "INSERT INTO source_texts(sha256, size, codec, data) VALUES(?, ?, ?, ?) ON CONFLICT(sha256) DO NOTHING");
    Stmt file(db, "INSERT INTO sources(run_id, path, sha256) VALUES(?, ?, ?) "
                  "ON CONFLICT(run_id, path) DO UPDATE SET sha256 = excluded.sha256");
    Zstd z;
    std::string data;
    for (const SourceFile& f : sources) {
        if (f.path.empty())
            fail(db.path(), "cannot write a source file without a path");
        const std::string digest = sha256Hex(f.text);
        if (!f.sha256.empty() && f.sha256 != digest)
            fail(db.path(), "cannot write source file '" + f.path + "': its sha256 " + f.sha256
                                + " does not match its text (" + digest + ")");
        z.compress(db.path(), f.text, data);
        text.bind(1, digest).bind(2, static_cast<std::int64_t>(f.text.size())).bind(3, kPackedCodecZstd)
            .bindBlobStatic(4, data.data(), data.size());
        text.run();
        file.bind(1, runId).bind(2, f.path).bind(3, digest);
        file.run();
    }
}

RowId TraceStore::writeRun(const RunRecord& rec)
{
    if (m_readOnly || !m_impl->writable)
        fail(m_path, "opened read-only; cannot write a run");
    if (m_impl->inRun)
        fail(m_path, "a streaming run is still open; commit it before writing another run");
    const Db& db = m_impl->db;
    db.exec("BEGIN IMMEDIATE");
    try {
        const RowId runId = m_impl->insertRun(rec.info);
        std::vector<RowId> kernelIds;
        kernelIds.reserve(rec.kernels.size());
        for (const KernelRecord& k : rec.kernels)
            kernelIds.push_back(m_impl->insertKernel(runId, k));
        m_impl->insertMemOps(runId, rec.memOps);
        m_impl->insertMetrics(runId, rec.metrics, &kernelIds);
        m_impl->insertStreams(runId, rec.streams);
        m_impl->insertNvtx(runId, rec.nvtx);
        m_impl->insertApiSpans(runId, rec.apiSpans);
        m_impl->insertSources(runId, rec.sources);
        m_impl->writeRangesOf(runId);
        db.exec("COMMIT");
        m_impl->useWal();
        return runId;
    } catch (...) {
        sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        m_impl->forgetNames();
        throw;
    }
}

namespace {

// One write into an existing run of a store open for writing, outside a streaming run, in its own transaction
// (rolled back on any error): what writeMetrics and writeSources share. `what` names the data in messages.
template <class StoreImpl, class Fn>  // StoreImpl = TraceStore::Impl (private: deduced, not named)
void writeIntoRun(bool readOnly, StoreImpl& impl, const std::string& path, RowId runId, const std::string& what,
                  Fn&& insert)
{
    if (readOnly || !impl.writable)
        fail(path, "opened read-only; cannot write " + what);
    if (impl.inRun)
        fail(path, "a streaming run is still open; commit it before writing " + what);
    const Db& db = impl.db;
    db.exec("BEGIN IMMEDIATE");
    try {
        Stmt chk(db, "SELECT 1 FROM runs WHERE id = ?");
        chk.bind(1, runId);
        if (!chk.step())
            fail(path, "cannot write " + what + ": no run " + str(runId));
        insert();
        db.exec("COMMIT");
        impl.useWal();
    } catch (...) {
        sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

}  // namespace

void TraceStore::writeMetrics(RowId runId, const std::vector<Metric>& ms)
{
    writeIntoRun(m_readOnly, *m_impl, m_path, runId, "metrics", [&] { m_impl->insertMetrics(runId, ms, nullptr); });
}

void TraceStore::writeSources(RowId runId, const std::vector<SourceFile>& sources)
{
    writeIntoRun(m_readOnly, *m_impl, m_path, runId, "source files", [&] { m_impl->insertSources(runId, sources); });
}

void TraceStore::updateStallStages(RowId runId, const std::map<RowId, std::vector<StallSample>>& byKernel,
                                   const std::string& note)
{
    if (m_readOnly || !m_impl->writable)
        fail(m_path, "opened read-only; cannot update stall samples");
    if (m_impl->inRun)
        fail(m_path, "a streaming run is still open; commit it before updating stall samples");
    const Db& db = m_impl->db;
    db.exec("BEGIN IMMEDIATE");
    try {
        Stmt sel(db, "SELECT id, pc_offset, line FROM stall_samples WHERE kernel_id = ? ORDER BY id");
        Stmt kernelRun(db, "SELECT run_id FROM kernels WHERE id = ?");
        Stmt upd(db, "UPDATE stall_samples SET role = ?, stage = ? WHERE id = ?");
        for (const auto& [kernelId, samples] : byKernel) {
            kernelRun.bind(1, kernelId);
            if (!kernelRun.step() || kernelRun.i64(0) != runId)
                fail(m_path, "cannot update stall samples: kernel " + str(kernelId) + " is not in run " + str(runId));
            kernelRun.reset();
            std::vector<RowId> ids;
            sel.bind(1, kernelId);
            for (std::size_t i = 0; sel.step(); ++i) {
                if (i >= samples.size() || static_cast<std::uint64_t>(sel.i64(1)) != samples[i].pcOffset
                    || sel.i64(2) != samples[i].line)
                    fail(m_path, "cannot update stall samples of kernel " + str(kernelId)
                                     + ": they do not match the stored ones");
                ids.push_back(sel.i64(0));
            }
            sel.reset();
            if (ids.size() != samples.size())
                fail(m_path, "cannot update stall samples of kernel " + str(kernelId) + ": " + str(ids.size())
                                 + " stored, " + str(samples.size()) + " given");
            for (std::size_t i = 0; i < ids.size(); ++i) {
                upd.bind(1, warpRoleName(samples[i].role)).bind(2, samples[i].stage).bind(3, ids[i]);
                upd.run();
            }
        }
        if (!note.empty()) {
            Stmt n(db, "UPDATE runs SET notes = notes || ? WHERE id = ?");
            n.bind(1, note).bind(2, runId);
            n.run();
        }
        db.exec("COMMIT");
        m_impl->useWal();
    } catch (...) {
        sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

RunWriter TraceStore::beginRun(const RunInfo& info)
{
    if (m_readOnly || !m_impl->writable)
        fail(m_path, "opened read-only; cannot write a run");
    if (m_impl->inRun)
        fail(m_path, "a streaming run is already open");
    m_impl->useWal();
    const Db& db = m_impl->db;
    db.exec("BEGIN IMMEDIATE");
    RowId id;
    try {
        id = m_impl->insertRun(info);
    } catch (...) {
        sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
    m_impl->inRun = true;
    return RunWriter(this, id);
}

// --- RunWriter -------------------------------------------------------------------
RunWriter::RunWriter(TraceStore* store, RowId runId) : m_store(store), m_runId(runId), m_open(true) {}

RunWriter::RunWriter(RunWriter&& o) noexcept
    : m_store(std::exchange(o.m_store, nullptr)), m_runId(o.m_runId), m_open(std::exchange(o.m_open, false))
{
}

RunWriter::~RunWriter()
{
    if (m_open)
        rollback();
}

namespace {
void requireOpen(bool open, TraceStore* st)
{
    if (!open || !st)
        throw StoreError(st ? st->path() : std::string("(no file)"), "the run was already committed or rolled back");
}
}  // namespace

RowId RunWriter::addKernel(const KernelRecord& kernel)
{
    requireOpen(m_open, m_store);
    return m_store->m_impl->insertKernel(m_runId, kernel);
}

void RunWriter::addMemOps(const std::vector<MemOp>& ops)
{
    requireOpen(m_open, m_store);
    m_store->m_impl->insertMemOps(m_runId, ops);
}

void RunWriter::addMetrics(const std::vector<Metric>& metrics)
{
    requireOpen(m_open, m_store);
    m_store->m_impl->insertMetrics(m_runId, metrics, nullptr);
}

void RunWriter::addLaunches(const std::vector<KernelLaunch>& launches)
{
    requireOpen(m_open, m_store);
    m_store->m_impl->insertLaunches(m_runId, launches);
}

void RunWriter::addStreams(const std::vector<StreamInfo>& streams)
{
    requireOpen(m_open, m_store);
    m_store->m_impl->insertStreams(m_runId, streams);
}

void RunWriter::addNvtxRanges(const std::vector<NvtxRange>& ranges)
{
    requireOpen(m_open, m_store);
    m_store->m_impl->insertNvtx(m_runId, ranges);
}

void RunWriter::addApiSpans(const std::vector<ApiSpan>& spans)
{
    requireOpen(m_open, m_store);
    m_store->m_impl->insertApiSpans(m_runId, spans);
}

void RunWriter::addSources(const std::vector<SourceFile>& sources)
{
    requireOpen(m_open, m_store);
    m_store->m_impl->insertSources(m_runId, sources);
}

void RunWriter::setProcessEnd(TimeNs processStart, TimeNs processEnd, int exitCode, int exitSignal)
{
    requireOpen(m_open, m_store);
    if (processEnd < processStart)
        fail(m_store->path(), "cannot write a run whose process ends before it starts");
    Stmt s(m_store->m_impl->db,
           "UPDATE runs SET process_start_ns = ?, process_end_ns = ?, exit_code = ?, exit_signal = ? WHERE id = ?");
    s.bind(1, processStart).bind(2, processEnd).bind(3, exitCode).bind(4, exitSignal).bind(5, m_runId).run();
}

void RunWriter::setIncomplete(const std::string& reason)
{
    requireOpen(m_open, m_store);
    Stmt s(m_store->m_impl->db, "UPDATE runs SET status = 'incomplete', failure_reason = ? WHERE id = ?");
    s.bind(1, reason).bind(2, m_runId).run();
}

void RunWriter::setFailed(const std::string& reason)
{
    requireOpen(m_open, m_store);
    Stmt s(m_store->m_impl->db, "UPDATE runs SET status = 'failed', failure_reason = ? WHERE id = ?");
    s.bind(1, reason).bind(2, m_runId).run();
}

void RunWriter::setNotes(const std::string& notes)
{
    requireOpen(m_open, m_store);
    Stmt s(m_store->m_impl->db, "UPDATE runs SET notes = ? WHERE id = ?");
    s.bind(1, notes).bind(2, m_runId).run();
}

void RunWriter::setHasStalls(bool hasStalls)
{
    requireOpen(m_open, m_store);
    Stmt s(m_store->m_impl->db, "UPDATE runs SET has_stalls = ? WHERE id = ?");
    s.bind(1, hasStalls ? 1 : 0).bind(2, m_runId).run();
}

void RunWriter::commit()
{
    requireOpen(m_open, m_store);
    m_store->m_impl->writeRangesOf(m_runId);
    m_store->m_impl->db.exec("COMMIT");
    m_open = false;
    m_store->m_impl->inRun = false;
    m_store->m_impl->useWal();
}

void RunWriter::rollback()
{
    if (!m_open || !m_store)
        return;
    sqlite3_exec(m_store->m_impl->db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    m_store->m_impl->forgetNames();  // names this run inserted are gone with it
    m_open = false;
    m_store->m_impl->inRun = false;
}


}  // namespace ws
