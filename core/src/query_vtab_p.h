// Internal to SQL over traces (query_vtab.cpp: the SQLite module callbacks and the table definitions;
// query_vtab_cursor.cpp: the cursors that decode the packed chunks and the SQL that selects them). Like those two
// files, this header is compiled twice: into warpstage_core (sqlite3.h, namespace ws::detail::vtab) and into the
// loadable extension libwarpstage_sqlite (WARPSTAGE_SQLITE_EXTENSION: sqlite3ext.h, namespace
// ws::detail::vtab_ext), so everything here calls the SQLite C API only (see query_vtab.cpp's header).
#pragma once

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
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ws::detail::WS_VTAB_NS {

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

struct Table {
    sqlite3_vtab base;  // first: SQLite's view of the table
    sqlite3* db;
    Kind kind;
    const TableDef* def;
};

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
Bound bound(sqlite3_value* v, bool lower);

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

// query_vtab_cursor.cpp
// Loads the warps, CTAs and phase names of launch kernelId into the cursor (once per launch).
void loadMeta(Cursor& c, RowId kernelId);

// kind_name of a code in the launch whose phase names are loaded: the standard name, or a user phase's
// recorded name ("phase_<i>" when it has none).
std::string kindNameOf(const Cursor& c, int code);

// Reads chunks until one has a row in [lo, hi] (or none is left); positions the cursor on that row.
void nextChunk(Cursor& c);

// Grouped by kind: positions the cursor on the next row of the current group (from the current row on
// when `advance` is false), moving on to the next part and group; eof when none is left.
void nextGrouped(Cursor& c, bool advance);

// Grouped by kind (one launch): decodes every matching chunk, then makes the groups (one per kind code, in
// code order; or one per kind_name, in name order) and positions the cursor on the first row.
void startGrouped(Cursor& c, bool byName, int columns);

// The SQL that selects the chunks for the slots in idxNum; parameter ?N+1 is argv[N].
std::string chunkSql(Kind kind, int idxNum, const int argOf[SlotCount]);

}  // namespace ws::detail::WS_VTAB_NS
