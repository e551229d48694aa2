// SQLite store: reading runs, kernels, memory operations, metrics, stall samples, and loading one
// launch columnar (loadKernel).
#include "store_impl.h"
#include "store_packed.h"

#include <climits>
#include <tuple>
#include <unordered_map>

namespace ws {

using detail::Db;
using detail::Stmt;
using namespace detail;

namespace detail {

// --- row readers -------------------------------------------------------------
const char* const kRunColumns =
    "id, variant, m, n, k, synthetic, status, failure_reason, device_name, compute_major, compute_minor, sm_count, "
    "sm_clock_khz, mem_clock_khz, l2_bytes, global_mem_bytes, driver_version, cuda_version, cupti_version, host, "
    "started_at, command_line, notes, has_timeline, has_stalls, kind, pid, parent_pid, program, working_dir, "
    "device_ordinal, device_uuid, process_start_ns, process_end_ns, exit_code, exit_signal";

RunInfo readRun(const Stmt& s)
{
    RunInfo r;
    r.id = s.i64(0);
    r.variant = s.text(1);
    r.m = s.i32(2);
    r.n = s.i32(3);
    r.k = s.i32(4);
    r.synthetic = s.i64(5) != 0;
    r.status = statusFromName(s.text(6));
    r.failureReason = s.text(7);
    r.device.name = s.text(8);
    r.device.computeMajor = s.i32(9);
    r.device.computeMinor = s.i32(10);
    r.device.smCount = s.i32(11);
    r.device.smClockKHz = s.i32(12);
    r.device.memClockKHz = s.i32(13);
    r.device.l2Bytes = s.i64(14);
    r.device.globalMemBytes = s.i64(15);
    r.driverVersion = s.text(16);
    r.cudaVersion = s.text(17);
    r.cuptiVersion = s.text(18);
    r.host = s.text(19);
    r.startedAt = s.text(20);
    r.commandLine = s.text(21);
    r.notes = s.text(22);
    r.hasTimeline = s.i64(23) != 0;
    r.hasStalls = s.i64(24) != 0;
    r.kind = runKindFromName(s.text(25)).value_or(RunKind::Ladder);
    r.pid = s.i64(26);
    r.parentPid = s.i64(27);
    r.program = s.text(28);
    r.workingDir = s.text(29);
    r.deviceOrdinal = s.i32(30);
    r.deviceUuid = s.text(31);
    r.processStart = s.i64(32);
    r.processEnd = s.i64(33);
    r.exitCode = s.i32(34);
    r.exitSignal = s.i32(35);
    return r;
}

const char* const kKernelColumns =
    "id, run_id, name, variant, traced, grid_x, grid_y, grid_z, block_x, block_y, block_z, cluster_x, cluster_y, "
    "cluster_z, dynamic_smem_bytes, static_smem_bytes, registers_per_thread, start_ns, end_ns, correlation_id, "
    "stream_id, align_residual_ns, dropped_events, context_id, graph_id, graph_node_id, launch_index";

KernelLaunch readKernel(const Stmt& s, const std::string& path)
{
    KernelLaunch k;
    k.id = s.i64(0);
    k.runId = s.i64(1);
    k.name = s.text(2);
    k.variant = s.text(3);
    k.traced = s.i64(4) != 0;
    for (int i = 0; i < 3; ++i) {
        k.grid[i] = s.i32(5 + i);
        k.block[i] = s.i32(8 + i);
        k.cluster[i] = s.i32(11 + i);
    }
    k.dynamicSmemBytes = s.i32(14);
    k.staticSmemBytes = s.i32(15);
    k.registersPerThread = s.i32(16);
    k.start = s.i64(17);
    k.end = s.i64(18);
    k.correlationId = static_cast<std::uint32_t>(s.i64(19));
    k.streamId = static_cast<std::uint32_t>(s.i64(20));
    k.alignResidualNs = s.f64(21);
    k.droppedEvents = s.i64(22);
    k.contextId = static_cast<std::uint32_t>(s.i64(23));
    k.graphId = static_cast<std::uint32_t>(s.i64(24));
    k.graphNodeId = static_cast<std::uint64_t>(s.i64(25));
    k.launchIndex = s.i32(26);
    if (k.end < k.start)
        fail(path, "kernel " + str(k.id) + " ends before it starts (negative duration)");
    return k;
}

const char* const kStallColumns =
    "kernel_id, pc_offset, function_name, source_file, line, reason, reason_label, count, role, stage";

StallSample readStall(const Stmt& s, const std::string& path)
{
    StallSample x;
    x.kernelId = s.i64(0);
    x.pcOffset = static_cast<std::uint64_t>(s.i64(1));
    x.functionName = s.text(2);
    x.sourceFile = s.text(3);
    x.line = s.i32(4);
    x.reason = s.text(5);
    x.reasonLabel = s.text(6);
    x.count = s.i64(7);
    x.role = roleFromText(s.text(8));
    x.stage = s.text(9);
    if (x.count < 0)
        fail(path, "stall sample of kernel " + str(x.kernelId) + " has a negative count");
    return x;
}

}  // namespace detail

// --- reading -------------------------------------------------------------------
std::vector<RunInfo> TraceStore::runs() const
{
    std::vector<RunInfo> out;
    Stmt s(m_impl->db, (std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id").c_str());
    while (s.step())
        out.push_back(readRun(s));
    return out;
}

RunInfo TraceStore::run(RowId runId) const
{
    Stmt s(m_impl->db, (std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?").c_str());
    s.bind(1, runId);
    if (!s.step())
        fail(m_path, "no run " + str(runId));
    return readRun(s);
}

std::vector<RunSummary> TraceStore::runSummaries() const
{
    std::vector<RunSummary> out;
    Stmt q(m_impl->db,
           "SELECT COUNT(*), COALESCE(MIN(start_ns), 0), COALESCE(MAX(end_ns), 0), "
           "(SELECT COALESCE(SUM(c.count), 0) FROM interval_chunks c JOIN kernels k2 ON k2.id = c.kernel_id "
           "WHERE k2.run_id = ?1) FROM kernels WHERE run_id = ?1");
    for (RunInfo& r : runs()) {
        RunSummary s;
        s.info = std::move(r);
        q.reset();
        q.bind(1, s.info.id);
        if (q.step()) {
            s.kernelCount = q.i64(0);
            s.start = q.i64(1);
            s.end = q.i64(2);
            s.intervalCount = q.i64(3);
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<KernelLaunch> TraceStore::kernels(RowId runId) const
{
    std::vector<KernelLaunch> out;
    Stmt s(m_impl->db,
           (std::string("SELECT ") + kKernelColumns + " FROM kernels WHERE run_id = ? ORDER BY start_ns, id").c_str());
    s.bind(1, runId);
    while (s.step())
        out.push_back(readKernel(s, m_path));
    return out;
}

KernelLaunch TraceStore::kernel(RowId kernelId) const
{
    Stmt s(m_impl->db, (std::string("SELECT ") + kKernelColumns + " FROM kernels WHERE id = ?").c_str());
    s.bind(1, kernelId);
    if (!s.step())
        fail(m_path, "no kernel " + str(kernelId));
    return readKernel(s, m_path);
}

std::vector<KernelSummary> TraceStore::kernelSummaries(RowId runId) const
{
    std::vector<KernelSummary> out;
    Stmt q(m_impl->db,
           "SELECT (SELECT COUNT(*) FROM ctas WHERE kernel_id = ?1), (SELECT COUNT(*) FROM warps WHERE kernel_id = ?1), "
           "(SELECT COALESCE(SUM(count), 0) FROM interval_chunks WHERE kernel_id = ?1), "
           "(SELECT COALESCE(SUM(count), 0) FROM load_chunks WHERE kernel_id = ?1), "
           "(SELECT COALESCE(SUM(count), 0) FROM stall_samples WHERE kernel_id = ?1)");
    for (KernelLaunch& k : kernels(runId)) {
        KernelSummary s;
        s.launch = std::move(k);
        q.reset();
        q.bind(1, s.launch.id);
        if (q.step()) {
            s.ctaCount = q.i64(0);
            s.warpCount = q.i64(1);
            s.intervalCount = q.i64(2);
            s.loadCount = q.i64(3);
            s.stallSampleCount = q.i64(4);
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<MemOp> TraceStore::memOps(RowId runId) const
{
    std::vector<MemOp> out;
    Stmt s(m_impl->db, "SELECT id, run_id, kind, bytes, start_ns, end_ns, correlation_id, stream_id, context_id, "
                       "graph_id, graph_node_id FROM memops WHERE run_id = ? ORDER BY start_ns, id");
    s.bind(1, runId);
    while (s.step()) {
        MemOp m;
        m.id = s.i64(0);
        m.runId = s.i64(1);
        m.kind = memOpKindFromName(s.text(2));
        m.bytes = s.i64(3);
        m.start = s.i64(4);
        m.end = s.i64(5);
        m.correlationId = static_cast<std::uint32_t>(s.i64(6));
        m.streamId = static_cast<std::uint32_t>(s.i64(7));
        m.contextId = static_cast<std::uint32_t>(s.i64(8));
        m.graphId = static_cast<std::uint32_t>(s.i64(9));
        m.graphNodeId = static_cast<std::uint64_t>(s.i64(10));
        if (m.end < m.start)
            fail(m_path, "memory operation " + str(m.id) + " ends before it starts (negative duration)");
        out.push_back(m);
    }
    return out;
}

std::vector<StreamInfo> TraceStore::streams(RowId runId) const
{
    std::vector<StreamInfo> out;
    Stmt s(m_impl->db, "SELECT id, run_id, context_id, stream_id, priority, is_default, name FROM streams "
                       "WHERE run_id = ? ORDER BY context_id, stream_id, id");
    s.bind(1, runId);
    while (s.step()) {
        StreamInfo x;
        x.id = s.i64(0);
        x.runId = s.i64(1);
        x.contextId = static_cast<std::uint32_t>(s.i64(2));
        x.streamId = static_cast<std::uint32_t>(s.i64(3));
        x.priority = s.i32(4);
        x.isDefault = s.i64(5) != 0;
        x.name = s.text(6);
        out.push_back(std::move(x));
    }
    return out;
}

namespace {

// Schema 5: the id range of a run's rows in api_calls / nvtx_events (runs.api_first_id .. api_last_id): [lo, hi] to
// bind beside run_id. 0, 0 (not known) gives every id; otherwise both ends must be rows of that run.
std::pair<RowId, RowId> runRange(const Db& db, const std::string& path, RowId runId, const char* table,
                                 const char* what)
{
    const std::string t = table;
    const std::string p = t == "api_calls" ? "api" : "nvtx";
    Stmt s(db, ("SELECT " + p + "_first_id, " + p + "_last_id FROM runs WHERE id = ?").c_str());
    s.bind(1, runId);
    if (!s.step())
        return {1, 0};  // no such run: no rows
    const RowId lo = s.i64(0), hi = s.i64(1);
    if (lo == 0 && hi == 0)
        return {std::numeric_limits<RowId>::min(), std::numeric_limits<RowId>::max()};
    if (lo > hi)
        return {lo, hi};  // none
    Stmt end(db, ("SELECT run_id FROM " + t + " WHERE id = ?").c_str());
    for (const RowId id : {lo, hi}) {
        end.bind(1, id);
        if (!end.step() || end.i64(0) != runId)
            fail(path, "run " + str(runId) + ": its " + what + " range " + str(lo) + ".." + str(hi)
                           + " does not match the rows (id " + str(id) + " is not one of its rows)");
        end.reset();
    }
    return {lo, hi};
}

}  // namespace

namespace {

// Texts of `names` by id, looked up once each (a run's calls use a handful of names).
class NameCache {
public:
    NameCache(const Db& db, const std::string& path) : m_sel(db, "SELECT name FROM names WHERE id = ?"), m_path(path) {}
    // `what` and `row` name the row in the message when the name is missing.
    const std::string& operator()(RowId id, const char* what, RowId row)
    {
        if (id == m_lastId)
            return *m_last;
        auto it = m_names.find(id);
        if (it == m_names.end()) {
            m_sel.bind(1, id);
            if (!m_sel.step())
                fail(m_path, std::string(what) + " " + str(row) + " points at missing name " + str(id));
            it = m_names.emplace(id, m_sel.text(0)).first;
            m_sel.reset();
        }
        m_lastId = id;
        m_last = &it->second;
        return it->second;
    }

private:
    Stmt m_sel;
    const std::string& m_path;
    std::unordered_map<RowId, std::string> m_names;
    RowId m_lastId = std::numeric_limits<RowId>::min();
    const std::string* m_last = nullptr;
};

// Rows come in id order (a rowid range, no sort in SQLite); readers return them by (start, id). A recording
// appends them nearly in start order, so this is usually a check.
template <class T>
void sortByStart(std::vector<T>& v)
{
    auto less = [](const T& x, const T& y) { return x.start != y.start ? x.start < y.start : x.id < y.id; };
    if (!std::is_sorted(v.begin(), v.end(), less))
        std::sort(v.begin(), v.end(), less);
}

}  // namespace

std::vector<NvtxRange> TraceStore::nvtxRanges(RowId runId) const
{
    std::vector<NvtxRange> out;
    // Schema 5: the rows of nvtx_events (the view nvtx_ranges shows the same with the texts joined in), the run's
    // id range first (runs.nvtx_first_id .. nvtx_last_id).
    Stmt s(m_impl->db, "SELECT id, run_id, kind, domain_id, name_id, start_ns, end_ns, thread_id, depth, color, "
                       "category, closed FROM nvtx_events WHERE run_id = ? AND id BETWEEN ? AND ? ORDER BY id");
    const auto [lo, hi] = runRange(m_impl->db, m_path, runId, "nvtx_events", "NVTX");
    s.bind(1, runId).bind(2, lo).bind(3, hi);
    NameCache names(m_impl->db, m_path);
    while (s.step()) {
        NvtxRange r;
        r.id = s.i64(0);
        r.runId = s.i64(1);
        const std::string kind = s.text(2);
        const auto k = nvtxKindFromName(kind);
        if (!k)
            fail(m_path, "NVTX range " + str(r.id) + " has an unknown kind '" + kind + "'");
        r.kind = *k;
        r.domain = names(s.i64(3), "NVTX range", r.id);
        r.name = names(s.i64(4), "NVTX range", r.id);
        r.start = s.i64(5);
        r.end = s.i64(6);
        r.threadId = static_cast<std::uint32_t>(s.i64(7));
        r.depth = s.i32(8);
        r.color = static_cast<std::uint32_t>(s.i64(9));
        r.category = s.i64(10);
        r.closed = s.i64(11) != 0;
        if (r.end < r.start)
            fail(m_path, "NVTX range " + str(r.id) + " ends before it starts (negative duration)");
        out.push_back(std::move(r));
    }
    sortByStart(out);
    return out;
}

std::vector<ApiSpan> TraceStore::apiSpans(RowId runId) const
{
    std::vector<ApiSpan> out;
    // Schema 5: the rows of api_calls (the view api_spans shows the same with the name joined in), the run's id
    // range first (runs.api_first_id .. api_last_id).
    Stmt s(m_impl->db, "SELECT id, run_id, name_id, cbid, driver, start_ns, end_ns, thread_id, correlation_id, result "
                       "FROM api_calls WHERE run_id = ? AND id BETWEEN ? AND ? ORDER BY id");
    const auto [lo, hi] = runRange(m_impl->db, m_path, runId, "api_calls", "API call");
    s.bind(1, runId).bind(2, lo).bind(3, hi);
    NameCache names(m_impl->db, m_path);
    while (s.step()) {
        ApiSpan a;
        a.id = s.i64(0);
        a.runId = s.i64(1);
        a.name = names(s.i64(2), "API call", a.id);
        a.cbid = static_cast<std::uint32_t>(s.i64(3));
        a.driver = s.i64(4) != 0;
        a.start = s.i64(5);
        a.end = s.i64(6);
        a.threadId = static_cast<std::uint32_t>(s.i64(7));
        a.correlationId = static_cast<std::uint32_t>(s.i64(8));
        a.result = s.i32(9);
        if (a.end < a.start)
            fail(m_path, "API call " + str(a.id) + " ends before it starts (negative duration)");
        out.push_back(std::move(a));
    }
    sortByStart(out);
    return out;
}

ProgramTrace TraceStore::loadProgram(RowId runId) const
{
    ProgramTrace p;
    p.run = run(runId);
    p.kernels = kernels(runId);
    p.memOps = memOps(runId);
    p.streams = streams(runId);
    p.nvtx = nvtxRanges(runId);
    p.apiSpans = apiSpans(runId);
    // Every stream a launch or copy ran on, also those the recorder wrote no row for.
    std::set<std::pair<std::uint32_t, std::uint32_t>> known;
    for (const StreamInfo& x : p.streams)
        known.emplace(x.contextId, x.streamId);
    const std::size_t stored = p.streams.size();
    auto see = [&](std::uint32_t context, std::uint32_t stream) {
        if (known.emplace(context, stream).second) {
            StreamInfo x;
            x.runId = runId;
            x.contextId = context;
            x.streamId = stream;
            p.streams.push_back(std::move(x));
        }
    };
    for (const KernelLaunch& k : p.kernels)
        see(k.contextId, k.streamId);
    for (const MemOp& m : p.memOps)
        see(m.contextId, m.streamId);
    if (p.streams.size() != stored)
        std::sort(p.streams.begin(), p.streams.end(), [](const StreamInfo& a, const StreamInfo& b) {
            return std::tie(a.contextId, a.streamId) < std::tie(b.contextId, b.streamId);
        });
    return p;
}

std::vector<Metric> TraceStore::metrics(RowId runId) const
{
    std::vector<Metric> out;
    Stmt s(m_impl->db, "SELECT run_id, kernel_id, scope, name, value, unit FROM metrics WHERE run_id = ? "
                       "ORDER BY kernel_id, id");
    s.bind(1, runId);
    while (s.step()) {
        Metric m;
        m.runId = s.i64(0);
        m.kernelId = s.i64(1);
        m.scope = s.text(2);
        m.name = s.text(3);
        m.value = s.isNull(4) ? std::numeric_limits<double>::quiet_NaN() : s.f64(4);
        m.unit = s.text(5);
        out.push_back(std::move(m));
    }
    // Packed per-CTA / per-warpgroup metrics (schema 4), after the launch's plain rows.
    Stmt p(m_impl->db, "SELECT id, kernel_id, scope_prefix, count, codec, data FROM metric_chunks WHERE run_id = ? "
                       "ORDER BY kernel_id, scope_prefix, id");
    p.bind(1, runId);
    Zstd z;
    while (p.step()) {
        MetricGroup g;
        unpackMetrics(m_path, z, p.i64(0), p.i64(3), p.i64(4), p.blob(5), g);
        const RowId kid = p.i64(1);
        const std::string prefix = p.text(2) + ":";
        for (auto& [k, v] : g)
            out.push_back({runId, kid, prefix + std::to_string(k.index), k.name, v.value, std::move(v.unit)});
    }
    std::stable_sort(out.begin(), out.end(), [](const Metric& a, const Metric& b) { return a.kernelId < b.kernelId; });
    return out;
}

std::vector<StallSample> TraceStore::stallSamples(RowId kernelId) const
{
    std::vector<StallSample> out;
    Stmt s(m_impl->db,
           (std::string("SELECT ") + kStallColumns + " FROM stall_samples WHERE kernel_id = ? ORDER BY id").c_str());
    s.bind(1, kernelId);
    while (s.step())
        out.push_back(readStall(s, m_path));
    return out;
}

std::vector<StallSample> TraceStore::stallSamplesForRung(RowId kernelId) const
{
    const KernelLaunch k = kernel(kernelId);
    std::vector<StallSample> out = stallSamples(kernelId);
    if (k.variant.empty())
        return out;
    Stmt s(m_impl->db, "SELECT id FROM kernels WHERE run_id = ? AND variant = ? AND traced = 0 AND id <> ? ORDER BY id");
    s.bind(1, k.runId).bind(2, k.variant).bind(3, kernelId);
    std::vector<RowId> others;
    while (s.step())
        others.push_back(s.i64(0));
    for (RowId o : others) {
        auto more = stallSamples(o);
        out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
    return out;
}

KernelTrace TraceStore::loadKernel(RowId kernelId, const LoadOptions& options) const
{
    const Db& db = m_impl->db;
    KernelTrace t;
    t.launch = kernel(kernelId);
    t.run = run(t.launch.runId);

    // CTAs, sorted (SM, start, block)
    {
        Stmt s(db, "SELECT id, block_linear, sm_id, start_ns, end_ns, tile_m, tile_n, ns_per_cycle FROM ctas "
                   "WHERE kernel_id = ?");
        s.bind(1, kernelId);
        while (s.step()) {
            Cta c;
            c.id = s.i64(0);
            c.kernelId = kernelId;
            c.blockLinear = s.i32(1);
            c.smId = s.i32(2);
            c.start = s.i64(3);
            c.end = s.i64(4);
            c.tileM = s.i32(5);
            c.tileN = s.i32(6);
            c.nsPerCycle = s.f64(7);
            if (c.end < c.start)
                fail(m_path, "CTA " + str(c.id) + " ends before it starts (negative duration)");
            t.ctas.push_back(c);
        }
    }
    std::sort(t.ctas.begin(), t.ctas.end(), [](const Cta& a, const Cta& b) {
        return std::tie(a.smId, a.start, a.blockLinear, a.id) < std::tie(b.smId, b.start, b.blockLinear, b.id);
    });
    std::unordered_map<RowId, std::int32_t> ctaIndex;
    ctaIndex.reserve(t.ctas.size());
    for (std::size_t i = 0; i < t.ctas.size(); ++i)
        ctaIndex.emplace(t.ctas[i].id, static_cast<std::int32_t>(i));

    // Warps -> lanes, ordered (CTA order, warp index)
    {
        Stmt s(db, "SELECT id, cta_id, warp_index, warpgroup, role, role_name FROM warps WHERE kernel_id = ?");
        s.bind(1, kernelId);
        while (s.step()) {
            Lane l;
            l.warpId = s.i64(0);
            const RowId cta = s.i64(1);
            auto it = ctaIndex.find(cta);
            if (it == ctaIndex.end())
                fail(m_path, "warp " + str(l.warpId) + " points at missing CTA " + str(cta));
            l.ctaIndex = it->second;
            l.warpIndex = s.i32(2);
            l.warpgroup = s.i32(3);
            l.role = roleFromText(s.text(4));
            l.roleName = s.text(5);
            t.lanes.push_back(std::move(l));
        }
    }
    std::sort(t.lanes.begin(), t.lanes.end(), [](const Lane& a, const Lane& b) {
        return std::tie(a.ctaIndex, a.warpIndex, a.warpId) < std::tie(b.ctaIndex, b.warpIndex, b.warpId);
    });
    std::unordered_map<RowId, std::int32_t> laneIndex;
    laneIndex.reserve(t.lanes.size());
    for (std::size_t i = 0; i < t.lanes.size(); ++i)
        laneIndex.emplace(t.lanes[i].warpId, static_cast<std::int32_t>(i));
    auto laneOf = [&](RowId warp, RowId chunk) -> Lane& {
        auto it = laneIndex.find(warp);
        if (it == laneIndex.end())
            fail(m_path, "interval chunk " + str(chunk) + " points at missing warp " + str(warp));
        return t.lanes[static_cast<std::size_t>(it->second)];
    };

    if (options.intervals) {
        // Exact reservation: no growth slack (RAM per interval), bounded by
        // the bytes actually present (a lying count cannot allocate much).
        {
            // A zstd chunk's bytes bound its count loosely (256 intervals per stored byte is far beyond
            // what real traces compress to): the reservation only avoids growth slack.
            Stmt s(db, "SELECT warp_id, MIN(id), SUM(MAX(count, 0)), "
                       "SUM(CASE codec WHEN 0 THEN length(kinds) ELSE 256 * length(starts) END) FROM interval_chunks "
                       "WHERE kernel_id = ? GROUP BY warp_id");
            s.bind(1, kernelId);
            while (s.step()) {
                Lane& l = laneOf(s.i64(0), s.i64(1));
                const auto n = static_cast<std::size_t>(std::max<std::int64_t>(0, std::min(s.i64(2), s.i64(3))));
                l.start.reserve(n);
                l.duration.reserve(n);
                l.kind.reserve(n);
                l.slot.reserve(n);
                l.kstep.reserve(n);
            }
        }
        Stmt s(db, "SELECT id, warp_id, first_start_ns, count, starts, durations, kinds, slots, ksteps, codec "
                   "FROM interval_chunks WHERE kernel_id = ? ORDER BY warp_id, chunk_index, id");
        s.bind(1, kernelId);
        ChunkDecoder dec;
        while (s.step()) {
            const RowId chunk = s.i64(0);
            const RowId warp = s.i64(1);
            Lane& l = laneOf(warp, chunk);
            dec.decode(m_path, chunk, warp, s.i64(2), s.i64(3), s.i64(9), s.blob(4), s.blob(5), s.blob(6), s.blob(7),
                       s.blob(8), l);
        }
    }

    if (options.loads) {
        Stmt s(db, "SELECT id, cta_id, count, first_issue_ns, codec, data FROM load_chunks WHERE kernel_id = ? "
                   "ORDER BY cta_id, id");
        s.bind(1, kernelId);
        Zstd z;
        while (s.step()) {
            const RowId id = s.i64(0);
            auto it = ctaIndex.find(s.i64(1));
            if (it == ctaIndex.end())
                fail(m_path, "load chunk " + str(id) + " points at missing CTA " + str(s.i64(1)));
            unpackLoads(m_path, z, id, s.i64(2), s.i64(3), s.i64(4), s.blob(5), it->second, t.loads);
        }
        std::stable_sort(t.loads.begin(), t.loads.end(),
                         [](const LoadTransfer& a, const LoadTransfer& b) { return a.issue < b.issue; });
    }

    if (options.tiles) {
        Stmt s(db, "SELECT id, cta_id, warp_id, tile_m, tile_n, start_ns, end_ns FROM tiles WHERE kernel_id = ? "
                   "ORDER BY start_ns, id");
        s.bind(1, kernelId);
        while (s.step()) {
            TileSpan x;
            const RowId id = s.i64(0);
            auto it = ctaIndex.find(s.i64(1));
            if (it == ctaIndex.end())
                fail(m_path, "tile " + str(id) + " points at missing CTA " + str(s.i64(1)));
            x.ctaId = it->second;
            if (!s.isNull(2)) {
                x.warpId = s.i64(2);
                if (!laneIndex.count(x.warpId))
                    fail(m_path, "tile " + str(id) + " points at missing warp " + str(x.warpId));
            }
            x.tileM = s.i32(3);
            x.tileN = s.i32(4);
            x.start = s.i64(5);
            x.end = s.i64(6);
            if (x.end < x.start)
                fail(m_path, "tile " + str(id) + " ends before it starts (negative duration)");
            t.tiles.push_back(x);
        }
    }

    if (options.stalls)
        t.stalls = stallSamplesForRung(kernelId);

    {
        Stmt s(db, "SELECT code, name FROM phase_names WHERE kernel_id = ? ORDER BY code");
        s.bind(1, kernelId);
        while (s.step()) {
            const std::int64_t code = s.i64(0);
            if (code < kUserPhaseBase || code >= kUserPhaseBase + kMaxUserPhases)
                fail(m_path, "phase name of kernel " + str(kernelId) + " has code " + str(code) + ", outside the user range "
                                 + str(kUserPhaseBase) + ".." + str(kUserPhaseBase + kMaxUserPhases - 1));
            const auto i = static_cast<std::size_t>(code - kUserPhaseBase);
            if (t.phaseNames.size() <= i)
                t.phaseNames.resize(i + 1);
            t.phaseNames[i] = s.text(1);
        }
    }
    if (m_version >= 6) {
        // Schema 6: outer scopes (bracket lanes); files of older versions have none.
        Stmt s(db, "SELECT id, warp_id, depth, name, start_ns, end_ns FROM scope_spans WHERE kernel_id = ? "
                   "ORDER BY warp_id, depth, start_ns, id");
        s.bind(1, kernelId);
        while (s.step()) {
            ScopeSpan x;
            const RowId id = s.i64(0);
            x.warpId = s.i64(1);
            if (!laneIndex.count(x.warpId))
                fail(m_path, "scope span " + str(id) + " points at missing warp " + str(x.warpId));
            x.depth = s.i32(2);
            x.name = s.text(3);
            x.start = s.i64(4);
            x.end = s.i64(5);
            if (x.end < x.start)
                fail(m_path, "scope span " + str(id) + " ends before it starts (negative duration)");
            t.scopes.push_back(std::move(x));
        }
    }
    if (options.sources)
        t.sources = loadSources(t.run.id);
    return t;
}

std::vector<SourceFile> TraceStore::loadSources(RowId runId) const
{
    std::vector<SourceFile> out;
    Stmt s(m_impl->db, "SELECT f.path, f.sha256, t.size, t.codec, t.data FROM sources f "
                       "LEFT JOIN source_texts t ON t.sha256 = f.sha256 WHERE f.run_id = ? ORDER BY f.path");
    s.bind(1, runId);
    Zstd z;
    while (s.step()) {
        SourceFile f;
        f.path = s.text(0);
        f.sha256 = s.text(1);
        const std::string where = "source file '" + f.path + "' of run " + str(runId);
        if (s.isNull(2))
            fail(m_path, where + ": its text (sha256 " + f.sha256 + ") is missing");
        const std::int64_t size = s.i64(2);
        if (s.i64(3) != kPackedCodecZstd)
            fail(m_path, where + ": unknown codec " + str(s.i64(3)) + " (this build reads 1)");
        if (size < 0 || size > (std::int64_t(1) << 31))
            fail(m_path, where + ": bad size " + str(size));
        const std::string_view text = z.decompress(m_path, where, s.blob(4), static_cast<std::size_t>(size));
        if (text.size() != static_cast<std::size_t>(size))
            fail(m_path, where + ": text has " + str(static_cast<std::int64_t>(text.size())) + " bytes, expected " + str(size));
        f.text.assign(text);
        if (sha256Hex(f.text) != f.sha256)
            fail(m_path, where + ": text does not match its sha256 (damaged)");
        out.push_back(std::move(f));
    }
    return out;
}

std::optional<SourceFile> TraceStore::loadSource(RowId runId, const std::string& path) const
{
    for (SourceFile& f : loadSources(runId))
        if (f.path == path)
            return std::move(f);
    return std::nullopt;
}


}  // namespace ws
