// libwarpstage_sqlite: the virtual tables of `warpstage query` (intervals, loads, chunk_metrics; the view scopes; docs/schema.md,
// "Virtual tables") as a loadable SQLite extension, for the sqlite3 shell or any SQLite program:
//
//   sqlite3 trace.wstrace
//   sqlite> .load build/default/core/libwarpstage_sqlite
//   sqlite> SELECT kind_name, sum(dur_ns) FROM intervals WHERE kernel_id = 1 GROUP BY kind_name;
//
// SQLite derives the entry point from the file name (sqlite3_warpstagesqlite_init); sqlite3_warpstage_init
// is the same for `.load FILE sqlite3_warpstage_init`.
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "query_views.h"
#include "query_vtab.h"

#ifdef _WIN32
#define WS_EXPORT __declspec(dllexport)
#else
#define WS_EXPORT __attribute__((visibility("default")))
#endif

extern "C" {

WS_EXPORT int sqlite3_warpstagesqlite_init(sqlite3* db, char** err, const sqlite3_api_routines* api)
{
    SQLITE_EXTENSION_INIT2(api);
    int rc = ws::detail::vtab_ext::registerTables(db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, ws::detail::kScopesViewSql, nullptr, nullptr, nullptr);   // the `scopes` view
    if (rc != SQLITE_OK && err)
        *err = sqlite3_mprintf("warpstage: cannot register the virtual tables (%s)", sqlite3_errstr(rc));
    return rc;
}

WS_EXPORT int sqlite3_warpstage_init(sqlite3* db, char** err, const sqlite3_api_routines* api)
{
    return sqlite3_warpstagesqlite_init(db, err, api);
}

}  // extern "C"
