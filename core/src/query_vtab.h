// Internal: the virtual-table modules of query_vtab.cpp, compiled once into warpstage_core (namespace
// vtab) and once into the loadable extension libwarpstage_sqlite (namespace vtab_ext, SQLite calls through
// the host's sqlite3_api). Public entry: ws::registerQueryTables (warpstage/query.h).
#pragma once

struct sqlite3;

namespace ws::detail {
namespace vtab {
int registerTables(sqlite3* db);
}
namespace vtab_ext {
int registerTables(sqlite3* db);
}
}  // namespace ws::detail
