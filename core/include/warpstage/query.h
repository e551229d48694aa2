// SQL over traces (docs/schema.md, "Virtual tables"): SQLite virtual tables that decode the packed
// per-warp and per-CTA chunks on the fly, and `warpstage query`'s runner.
//
//  * registerQueryTables(db) adds the eponymous virtual tables `intervals` (interval_chunks, one row per
//    interval), `loads` (load_chunks, one row per load) and `chunk_metrics` (metric_chunks, one row per
//    per-CTA / per-warpgroup metric) to an open connection. They need no CREATE VIRTUAL TABLE. Constraints
//    on kernel_id (=, IN), on the warp / CTA (=) and on the start time (<, <=, >, >=) are pushed down: chunks
//    that cannot match are not decoded. The same tables come as a loadable extension
//    (libwarpstage_sqlite.so: `.load libwarpstage_sqlite` in the sqlite3 shell).
//  * runQuery(path, sql, format, out) opens a trace read-only (it must be of the current schema), runs ONE
//    statement and writes its rows as an aligned text table, CSV or JSON.
//
// Qt-free; no SQLite type beyond the opaque `sqlite3` handle.
#pragma once

#include "warpstage/store.h"

#include <ostream>
#include <stdexcept>
#include <string>

struct sqlite3;

namespace ws {

// Registers the virtual-table modules on `db` (SQLite result code: SQLITE_OK = 0 on success).
int registerQueryTables(sqlite3* db);

// The statement is not valid SQL, names something that does not exist, fails while running, or tries to
// write. what() is SQLite's message ("no such column: foo", "near \"SELEC\": syntax error").
class QueryError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class QueryFormat {
    Table,  // aligned columns with a header line and a "(N rows)" footer
    Csv,    // RFC 4180: a header row, fields quoted where needed, CRLF-free ("\n")
    Json,   // one array of objects, one per row; NULL -> null, blobs -> "x'hex'", NaN/inf -> null
};

// Runs `sql` (one statement; trailing ';' and blanks allowed) on the trace `path`, opened read-only with
// the virtual tables registered, and writes the result to `out`. Returns the number of rows.
// Throws StoreError / NeedsMigrationError for a file that cannot be read, QueryError for bad SQL.
std::int64_t runQuery(const std::string& path, const std::string& sql, QueryFormat format, std::ostream& out);

}  // namespace ws
