// Internal: plain SQL views that `warpstage query` and the loadable extension add next to the virtual tables
// of query_vtab.cpp (docs/schema.md, "Virtual tables"). TEMP views: they live in the connection, never in the
// file, so a read-only trace is not touched and older files (no scope_spans before schema 6) still open; a
// statement that reads `scopes` on such a file fails with SQLite's "no such table: main.scope_spans".
#pragma once

namespace ws::detail {

// `scopes`: the scope brackets (scope_spans, schema 6) with the columns of `intervals` that place them.
inline constexpr const char* kScopesViewSql =
    "CREATE TEMP VIEW IF NOT EXISTS scopes AS SELECT s.kernel_id AS kernel_id, s.warp_id AS warp_id, "
    "w.cta_id AS cta_id, c.sm_id AS sm, c.block_linear AS cta, w.warp_index AS warp, s.depth AS depth, "
    "s.name AS name, s.start_ns AS start_ns, s.end_ns AS end_ns, s.end_ns - s.start_ns AS dur_ns "
    "FROM main.scope_spans s JOIN main.warps w ON w.id = s.warp_id JOIN main.ctas c ON c.id = w.cta_id";

}  // namespace ws::detail
