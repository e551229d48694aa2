#include "schema.h"

namespace ws::detail {

// THE schema. Versions: 1 = intervals as rows ('intervals'); 2 = intervals packed
// per warp ('interval_chunks'); 3 = programs (run kind/process/exit, streams, nvtx_ranges,
// api_spans, launch context/graph ids) and compressed chunks (interval_chunks.codec); 4 = loads and
// per-CTA / per-warpgroup metrics packed (load_chunks, metric_chunks), phase_names, sources; 5 = API call and
// NVTX names interned (names, api_calls, nvtx_events; views api_spans, nvtx_ranges with the old columns);
// 6 = scope_spans (the outer scopes of a warp, drawn as bracket lanes).
// See docs/schema.md for what every column means.
const std::vector<TableDef>& schemaTables()
{
    static const std::vector<TableDef> tables = {
        {"meta",
         {{"key", "TEXT PRIMARY KEY"}, {"value", "TEXT NOT NULL"}},
         {}, {}},
        {"interval_kinds",
         {{"id", "INTEGER PRIMARY KEY"}, {"name", "TEXT NOT NULL"}, {"label", "TEXT NOT NULL"}},
         {}, {}},
        {"runs",
         {{"id", "INTEGER PRIMARY KEY"},
          {"variant", "TEXT NOT NULL DEFAULT ''"},
          {"m", "INTEGER NOT NULL DEFAULT 0"},
          {"n", "INTEGER NOT NULL DEFAULT 0"},
          {"k", "INTEGER NOT NULL DEFAULT 0"},
          {"synthetic", "INTEGER NOT NULL DEFAULT 0"},
          {"status", "TEXT NOT NULL DEFAULT 'complete'"},
          {"failure_reason", "TEXT NOT NULL DEFAULT ''"},
          {"device_name", "TEXT NOT NULL DEFAULT ''"},
          {"compute_major", "INTEGER NOT NULL DEFAULT 0"},
          {"compute_minor", "INTEGER NOT NULL DEFAULT 0"},
          {"sm_count", "INTEGER NOT NULL DEFAULT 0"},
          {"sm_clock_khz", "INTEGER NOT NULL DEFAULT 0"},
          {"mem_clock_khz", "INTEGER NOT NULL DEFAULT 0"},
          {"l2_bytes", "INTEGER NOT NULL DEFAULT 0"},
          {"global_mem_bytes", "INTEGER NOT NULL DEFAULT 0"},
          {"driver_version", "TEXT NOT NULL DEFAULT ''"},
          {"cuda_version", "TEXT NOT NULL DEFAULT ''"},
          {"cupti_version", "TEXT NOT NULL DEFAULT ''"},
          {"host", "TEXT NOT NULL DEFAULT ''"},
          {"started_at", "TEXT NOT NULL DEFAULT ''"},
          {"command_line", "TEXT NOT NULL DEFAULT ''"},
          {"notes", "TEXT NOT NULL DEFAULT ''"},
          {"has_timeline", "INTEGER NOT NULL DEFAULT 1"},
          {"has_stalls", "INTEGER NOT NULL DEFAULT 0"},
          {"kind", "TEXT NOT NULL DEFAULT 'ladder'", 3},
          {"pid", "INTEGER NOT NULL DEFAULT 0", 3},
          {"parent_pid", "INTEGER NOT NULL DEFAULT 0", 3},
          {"program", "TEXT NOT NULL DEFAULT ''", 3},
          {"working_dir", "TEXT NOT NULL DEFAULT ''", 3},
          {"device_ordinal", "INTEGER NOT NULL DEFAULT 0", 3},
          {"device_uuid", "TEXT NOT NULL DEFAULT ''", 3},
          {"process_start_ns", "INTEGER NOT NULL DEFAULT 0", 3},
          {"process_end_ns", "INTEGER NOT NULL DEFAULT 0", 3},
          {"exit_code", "INTEGER NOT NULL DEFAULT -1", 3},
          {"exit_signal", "INTEGER NOT NULL DEFAULT 0", 3},
          // version 5: the id range of the run's rows in api_calls / nvtx_events (one run = one transaction, so
          // its rows have consecutive ids); 0, 0 = not known (readers then look at every row's run_id)
          {"api_first_id", "INTEGER NOT NULL DEFAULT 0", 5},
          {"api_last_id", "INTEGER NOT NULL DEFAULT 0", 5},
          {"nvtx_first_id", "INTEGER NOT NULL DEFAULT 0", 5},
          {"nvtx_last_id", "INTEGER NOT NULL DEFAULT 0", 5}},
         {}, {}},
        {"kernels",
         {{"id", "INTEGER PRIMARY KEY"},
          {"run_id", "INTEGER NOT NULL REFERENCES runs(id)"},
          {"name", "TEXT NOT NULL DEFAULT ''"},
          {"variant", "TEXT NOT NULL DEFAULT ''"},
          {"traced", "INTEGER NOT NULL DEFAULT 0"},
          {"grid_x", "INTEGER NOT NULL DEFAULT 1"}, {"grid_y", "INTEGER NOT NULL DEFAULT 1"}, {"grid_z", "INTEGER NOT NULL DEFAULT 1"},
          {"block_x", "INTEGER NOT NULL DEFAULT 1"}, {"block_y", "INTEGER NOT NULL DEFAULT 1"}, {"block_z", "INTEGER NOT NULL DEFAULT 1"},
          {"cluster_x", "INTEGER NOT NULL DEFAULT 1"}, {"cluster_y", "INTEGER NOT NULL DEFAULT 1"}, {"cluster_z", "INTEGER NOT NULL DEFAULT 1"},
          {"dynamic_smem_bytes", "INTEGER NOT NULL DEFAULT 0"},
          {"static_smem_bytes", "INTEGER NOT NULL DEFAULT 0"},
          {"registers_per_thread", "INTEGER NOT NULL DEFAULT 0"},
          {"start_ns", "INTEGER NOT NULL"},
          {"end_ns", "INTEGER NOT NULL"},
          {"correlation_id", "INTEGER NOT NULL DEFAULT 0"},
          {"stream_id", "INTEGER NOT NULL DEFAULT 0"},
          {"align_residual_ns", "REAL NOT NULL DEFAULT 0"},
          {"dropped_events", "INTEGER NOT NULL DEFAULT 0"},
          {"context_id", "INTEGER NOT NULL DEFAULT 0", 3},
          {"graph_id", "INTEGER NOT NULL DEFAULT 0", 3},
          {"graph_node_id", "INTEGER NOT NULL DEFAULT 0", 3},
          {"launch_index", "INTEGER NOT NULL DEFAULT 0", 3}},
         {}, {"CREATE INDEX kernels_run ON kernels(run_id)"}},
        {"memops",
         {{"id", "INTEGER PRIMARY KEY"},
          {"run_id", "INTEGER NOT NULL REFERENCES runs(id)"},
          {"kind", "TEXT NOT NULL DEFAULT 'unknown'"},
          {"bytes", "INTEGER NOT NULL DEFAULT 0"},
          {"start_ns", "INTEGER NOT NULL"},
          {"end_ns", "INTEGER NOT NULL"},
          {"correlation_id", "INTEGER NOT NULL DEFAULT 0"},
          {"stream_id", "INTEGER NOT NULL DEFAULT 0"},
          {"context_id", "INTEGER NOT NULL DEFAULT 0", 3},
          {"graph_id", "INTEGER NOT NULL DEFAULT 0", 3},
          {"graph_node_id", "INTEGER NOT NULL DEFAULT 0", 3}},
         {}, {"CREATE INDEX memops_run ON memops(run_id)"}},
        {"streams",  // version 3: CUDA streams of a program run
         {{"id", "INTEGER PRIMARY KEY"},
          {"run_id", "INTEGER NOT NULL REFERENCES runs(id)"},
          {"context_id", "INTEGER NOT NULL DEFAULT 0"},
          {"stream_id", "INTEGER NOT NULL DEFAULT 0"},
          {"priority", "INTEGER NOT NULL DEFAULT 0"},
          {"is_default", "INTEGER NOT NULL DEFAULT 0"},
          {"name", "TEXT NOT NULL DEFAULT ''"}},
         "UNIQUE(run_id, context_id, stream_id)", {"CREATE INDEX streams_run ON streams(run_id)"}, 3},
        {"nvtx_ranges",  // version 3
         {{"id", "INTEGER PRIMARY KEY"},
          {"run_id", "INTEGER NOT NULL REFERENCES runs(id)"},
          {"kind", "TEXT NOT NULL DEFAULT 'push_pop'"},
          {"domain", "TEXT NOT NULL DEFAULT ''"},
          {"name", "TEXT NOT NULL DEFAULT ''"},
          {"start_ns", "INTEGER NOT NULL"},
          {"end_ns", "INTEGER NOT NULL"},
          {"thread_id", "INTEGER NOT NULL DEFAULT 0"},
          {"depth", "INTEGER NOT NULL DEFAULT 0"},
          {"color", "INTEGER NOT NULL DEFAULT 0"},
          {"category", "INTEGER NOT NULL DEFAULT 0"},
          {"closed", "INTEGER NOT NULL DEFAULT 1"}},
         {}, {"CREATE INDEX nvtx_ranges_run ON nvtx_ranges(run_id, start_ns)"}, 3, 4},
        {"api_spans",  // version 3
         {{"id", "INTEGER PRIMARY KEY"},
          {"run_id", "INTEGER NOT NULL REFERENCES runs(id)"},
          {"name", "TEXT NOT NULL DEFAULT ''"},
          {"cbid", "INTEGER NOT NULL DEFAULT 0"},
          {"driver", "INTEGER NOT NULL DEFAULT 0"},
          {"start_ns", "INTEGER NOT NULL"},
          {"end_ns", "INTEGER NOT NULL"},
          {"thread_id", "INTEGER NOT NULL DEFAULT 0"},
          {"correlation_id", "INTEGER NOT NULL DEFAULT 0"},
          {"result", "INTEGER NOT NULL DEFAULT 0"}},
         {}, {"CREATE INDEX api_spans_run ON api_spans(run_id, start_ns)"}, 3, 4},
        {"names",  // version 5: every API call name, NVTX name and NVTX domain once (interned)
         {{"id", "INTEGER PRIMARY KEY"}, {"name", "TEXT NOT NULL"}},
         "UNIQUE(name)", {}, 5},
        {"api_calls",  // version 5: api_spans' rows with the name interned (view api_spans)
         {{"id", "INTEGER PRIMARY KEY"},
          {"run_id", "INTEGER NOT NULL REFERENCES runs(id)"},
          {"name_id", "INTEGER NOT NULL REFERENCES names(id)"},
          {"cbid", "INTEGER NOT NULL DEFAULT 0"},
          {"driver", "INTEGER NOT NULL DEFAULT 0"},
          {"start_ns", "INTEGER NOT NULL"},
          {"end_ns", "INTEGER NOT NULL"},
          {"thread_id", "INTEGER NOT NULL DEFAULT 0"},
          {"correlation_id", "INTEGER NOT NULL DEFAULT 0"},
          {"result", "INTEGER NOT NULL DEFAULT 0"}},
         {}, {}, 5},  // no per-row index: a run's rows are found by runs.api_first_id .. api_last_id
        {"nvtx_events",  // version 5: nvtx_ranges' rows with name and domain interned (view nvtx_ranges)
         {{"id", "INTEGER PRIMARY KEY"},
          {"run_id", "INTEGER NOT NULL REFERENCES runs(id)"},
          {"kind", "TEXT NOT NULL DEFAULT 'push_pop'"},
          {"domain_id", "INTEGER NOT NULL REFERENCES names(id)"},
          {"name_id", "INTEGER NOT NULL REFERENCES names(id)"},
          {"start_ns", "INTEGER NOT NULL"},
          {"end_ns", "INTEGER NOT NULL"},
          {"thread_id", "INTEGER NOT NULL DEFAULT 0"},
          {"depth", "INTEGER NOT NULL DEFAULT 0"},
          {"color", "INTEGER NOT NULL DEFAULT 0"},
          {"category", "INTEGER NOT NULL DEFAULT 0"},
          {"closed", "INTEGER NOT NULL DEFAULT 1"}},
         {}, {}, 5},  // found by runs.nvtx_first_id .. nvtx_last_id
        {"ctas",
         {{"id", "INTEGER PRIMARY KEY"},
          {"kernel_id", "INTEGER NOT NULL REFERENCES kernels(id)"},
          {"block_linear", "INTEGER NOT NULL"},
          {"sm_id", "INTEGER NOT NULL DEFAULT -1"},
          {"start_ns", "INTEGER NOT NULL"},
          {"end_ns", "INTEGER NOT NULL"},
          {"tile_m", "INTEGER NOT NULL DEFAULT -1"},
          {"tile_n", "INTEGER NOT NULL DEFAULT -1"},
          {"ns_per_cycle", "REAL NOT NULL DEFAULT 0"}},
         {}, {"CREATE INDEX ctas_kernel ON ctas(kernel_id)"}},
        {"warps",
         {{"id", "INTEGER PRIMARY KEY"},
          {"kernel_id", "INTEGER NOT NULL REFERENCES kernels(id)"},
          {"cta_id", "INTEGER NOT NULL REFERENCES ctas(id)"},
          {"warp_index", "INTEGER NOT NULL"},
          {"warpgroup", "INTEGER NOT NULL"},
          {"role", "TEXT NOT NULL DEFAULT 'unknown'"},
          {"role_name", "TEXT NOT NULL DEFAULT ''"}},
         {}, {"CREATE INDEX warps_kernel ON warps(kernel_id)"}},
        {"intervals",  // version 1 only: one row per interval
         {{"id", "INTEGER PRIMARY KEY"},
          {"warp_id", "INTEGER NOT NULL REFERENCES warps(id)"},
          {"kind", "INTEGER NOT NULL"},
          {"slot", "INTEGER NOT NULL DEFAULT -1"},
          {"kstep", "INTEGER NOT NULL DEFAULT -1"},
          {"start_ns", "INTEGER NOT NULL"},
          {"duration_ns", "INTEGER NOT NULL"}},
         {}, {"CREATE INDEX intervals_warp ON intervals(warp_id, start_ns)"}, 1, 1},
        {"interval_chunks",  // version 2: intervals packed per warp (docs/schema.md, "Interval chunks")
         {{"id", "INTEGER PRIMARY KEY"},
          {"kernel_id", "INTEGER NOT NULL REFERENCES kernels(id)"},
          {"warp_id", "INTEGER NOT NULL REFERENCES warps(id)"},
          {"chunk_index", "INTEGER NOT NULL"},
          {"first_start_ns", "INTEGER NOT NULL"},
          {"last_end_ns", "INTEGER NOT NULL"},
          {"count", "INTEGER NOT NULL"},
          {"starts", "BLOB NOT NULL"},
          {"durations", "BLOB NOT NULL"},
          {"kinds", "BLOB NOT NULL"},
          {"slots", "BLOB NOT NULL"},
          {"ksteps", "BLOB NOT NULL"},
          {"codec", "INTEGER NOT NULL DEFAULT 0", 3}},
         {}, {"CREATE INDEX interval_chunks_kernel ON interval_chunks(kernel_id, warp_id, chunk_index)"}, 2},
        {"tiles",
         {{"id", "INTEGER PRIMARY KEY"},
          {"kernel_id", "INTEGER NOT NULL REFERENCES kernels(id)"},
          {"cta_id", "INTEGER NOT NULL REFERENCES ctas(id)"},
          {"warp_id", "INTEGER REFERENCES warps(id)"},
          {"tile_m", "INTEGER NOT NULL"},
          {"tile_n", "INTEGER NOT NULL"},
          {"start_ns", "INTEGER NOT NULL"},
          {"end_ns", "INTEGER NOT NULL"}},
         {}, {"CREATE INDEX tiles_kernel ON tiles(kernel_id)"}},
        {"loads",
         {{"id", "INTEGER PRIMARY KEY"},
          {"kernel_id", "INTEGER NOT NULL REFERENCES kernels(id)"},
          {"cta_id", "INTEGER NOT NULL REFERENCES ctas(id)"},
          {"slot", "INTEGER NOT NULL DEFAULT -1"},
          {"kstep", "INTEGER NOT NULL DEFAULT -1"},
          {"issue_ns", "INTEGER NOT NULL"},
          {"ready_ns", "INTEGER NOT NULL"},
          {"bytes", "INTEGER NOT NULL DEFAULT 0"}},
         {}, {"CREATE INDEX loads_kernel ON loads(kernel_id)"}, 1, 3},
        {"load_chunks",  // version 4: the loads of one CTA packed (docs/schema.md, "Load chunks")
         {{"id", "INTEGER PRIMARY KEY"},
          {"kernel_id", "INTEGER NOT NULL REFERENCES kernels(id)"},
          {"cta_id", "INTEGER NOT NULL REFERENCES ctas(id)"},
          {"count", "INTEGER NOT NULL"},
          {"first_issue_ns", "INTEGER NOT NULL"},
          {"last_ready_ns", "INTEGER NOT NULL"},
          {"codec", "INTEGER NOT NULL DEFAULT 1"},
          {"data", "BLOB NOT NULL"}},
         {}, {"CREATE INDEX load_chunks_kernel ON load_chunks(kernel_id, cta_id)"}, 4},
        {"stall_samples",
         {{"id", "INTEGER PRIMARY KEY"},
          {"kernel_id", "INTEGER NOT NULL REFERENCES kernels(id)"},
          {"pc_offset", "INTEGER NOT NULL"},
          {"function_name", "TEXT NOT NULL DEFAULT ''"},
          {"source_file", "TEXT NOT NULL DEFAULT ''"},
          {"line", "INTEGER NOT NULL DEFAULT 0"},
          {"reason", "TEXT NOT NULL"},
          {"reason_label", "TEXT NOT NULL DEFAULT ''"},
          {"count", "INTEGER NOT NULL"},
          {"role", "TEXT NOT NULL DEFAULT 'unknown'"},
          {"stage", "TEXT NOT NULL DEFAULT ''"}},
         {}, {"CREATE INDEX stall_samples_kernel ON stall_samples(kernel_id)"}},
        {"metrics",
         {{"id", "INTEGER PRIMARY KEY"},
          {"run_id", "INTEGER NOT NULL REFERENCES runs(id)"},
          {"kernel_id", "INTEGER NOT NULL DEFAULT 0"},
          {"scope", "TEXT NOT NULL"},
          {"name", "TEXT NOT NULL"},
          {"value", "REAL"},
          {"unit", "TEXT NOT NULL DEFAULT ''"}},
         "UNIQUE(run_id, kernel_id, scope, name)", {"CREATE INDEX metrics_run ON metrics(run_id)"}},
        {"metric_chunks",  // version 4: the per-CTA / per-warpgroup metrics of one launch, packed
         {{"id", "INTEGER PRIMARY KEY"},
          {"run_id", "INTEGER NOT NULL REFERENCES runs(id)"},
          {"kernel_id", "INTEGER NOT NULL DEFAULT 0"},
          {"scope_prefix", "TEXT NOT NULL"},
          {"count", "INTEGER NOT NULL"},
          {"codec", "INTEGER NOT NULL DEFAULT 1"},
          {"data", "BLOB NOT NULL"}},
         "UNIQUE(run_id, kernel_id, scope_prefix)", {}, 4},
        {"phase_names",  // version 4: names of the user phases of a traced launch (issue 10)
         {{"id", "INTEGER PRIMARY KEY"},
          {"kernel_id", "INTEGER NOT NULL REFERENCES kernels(id)"},
          {"code", "INTEGER NOT NULL"},
          {"name", "TEXT NOT NULL"}},
         "UNIQUE(kernel_id, code)", {}, 4},
        {"source_texts",  // version 4: recorded source text, stored once per content (sha256)
         {{"sha256", "TEXT PRIMARY KEY"},
          {"size", "INTEGER NOT NULL"},
          {"codec", "INTEGER NOT NULL DEFAULT 1"},
          {"data", "BLOB NOT NULL"}},
         "", {}, 4, 1 << 30, true},
        {"sources",  // version 4: the source files of a run (issue 10: self-contained traces)
         {{"id", "INTEGER PRIMARY KEY"},
          {"run_id", "INTEGER NOT NULL REFERENCES runs(id)"},
          {"path", "TEXT NOT NULL"},
          {"sha256", "TEXT NOT NULL REFERENCES source_texts(sha256)"}},
         "UNIQUE(run_id, path)", {}, 4},
        {"scope_spans",  // version 6: outer scopes of a warp (Proton's nested scopes), drawn as bracket lanes
         {{"id", "INTEGER PRIMARY KEY"},
          {"kernel_id", "INTEGER NOT NULL REFERENCES kernels(id)"},
          {"warp_id", "INTEGER NOT NULL REFERENCES warps(id)"},
          {"depth", "INTEGER NOT NULL DEFAULT 0"},
          {"name", "TEXT NOT NULL DEFAULT ''"},
          {"start_ns", "INTEGER NOT NULL"},
          {"end_ns", "INTEGER NOT NULL"}},
         {}, {"CREATE INDEX scope_spans_kernel ON scope_spans(kernel_id)"}, 6},
    };
    return tables;
}

// Schema 5: the schema-4 tables api_spans and nvtx_ranges as views over the interned rows, same columns in the
// same order, so that SQL written for schema 3/4 (docs/schema.md's examples) reads them unchanged.
const std::vector<ViewDef>& schemaViews()
{
    static const std::vector<ViewDef> views = {
        {"api_spans",
         "CREATE VIEW api_spans AS SELECT a.id AS id, a.run_id AS run_id, n.name AS name, a.cbid AS cbid, "
         "a.driver AS driver, a.start_ns AS start_ns, a.end_ns AS end_ns, a.thread_id AS thread_id, "
         "a.correlation_id AS correlation_id, a.result AS result FROM api_calls a JOIN names n ON n.id = a.name_id",
         5},
        {"nvtx_ranges",
         "CREATE VIEW nvtx_ranges AS SELECT e.id AS id, e.run_id AS run_id, e.kind AS kind, d.name AS domain, "
         "n.name AS name, e.start_ns AS start_ns, e.end_ns AS end_ns, e.thread_id AS thread_id, e.depth AS depth, "
         "e.color AS color, e.category AS category, e.closed AS closed "
         "FROM nvtx_events e JOIN names d ON d.id = e.domain_id JOIN names n ON n.id = e.name_id",
         5},
    };
    return views;
}

std::string createTableSql(const TableDef& t, int version)
{
    std::string sql = "CREATE TABLE ";
    sql += t.name;
    sql += "(";
    bool first = true;
    for (const ColumnDef& c : t.columns) {
        if (!columnActive(c, version))
            continue;
        if (!first)
            sql += ", ";
        first = false;
        sql += c.name;
        sql += ' ';
        sql += c.decl;
    }
    if (!t.constraints.empty()) {
        sql += ", ";
        sql += t.constraints;
    }
    sql += ")";
    if (t.withoutRowid)
        sql += " WITHOUT ROWID";
    return sql;
}

const TableDef* findTable(std::string_view name)
{
    for (const TableDef& t : schemaTables())
        if (t.name == name)
            return &t;
    return nullptr;
}

}  // namespace ws::detail
