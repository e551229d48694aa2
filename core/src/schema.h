// Internal: THE declaration of the Warpstage SQLite schema (every version), and
// the interval-chunk codec. docs/schema.md documents what is declared here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ws::detail {

struct ColumnDef {
    std::string_view name;
    std::string_view decl;     // SQL type and constraints
    int sinceVersion = 1;      // first schema version that has the column (a migration adds it)
};

struct TableDef {
    std::string_view name;
    std::vector<ColumnDef> columns;
    std::string_view constraints;        // extra table constraints ("UNIQUE(...)"), may be empty
    std::vector<std::string_view> indexes;  // "CREATE INDEX ..." statements
    int sinceVersion = 1;                // first schema version that has the table
    int untilVersion = 1 << 30;          // last schema version that has the table
    bool withoutRowid = false;           // CREATE TABLE ... WITHOUT ROWID
};

// A view of the schema (schema 5: api_spans and nvtx_ranges keep their schema-4 columns for SQL users
// while the rows live in api_calls / nvtx_events with interned names).
struct ViewDef {
    std::string_view name;
    std::string_view sql;                // "CREATE VIEW name AS ..."
    int sinceVersion = 1;
};

// All tables of all versions.
const std::vector<TableDef>& schemaTables();
// All views of all versions.
const std::vector<ViewDef>& schemaViews();
inline bool viewActive(const ViewDef& v, int version) { return version >= v.sinceVersion; }
// "CREATE TABLE name(...)" for one table as schema `version` has it (columns of later versions left out).
std::string createTableSql(const TableDef& t, int version);
inline bool columnActive(const ColumnDef& c, int version) { return version >= c.sinceVersion; }
const TableDef* findTable(std::string_view name);

// Intervals per interval_chunks row (the writer's choice; readers accept any count).
inline constexpr int kChunkIntervals = 8192;
// Upper bound a reader accepts for one chunk's count.
inline constexpr std::int64_t kMaxChunkIntervals = 1 << 24;

// interval_chunks.codec (schema 3). Raw: the five varint columns in their own blobs (every version-2
// chunk). Zstd: one zstd frame in `starts` (the other four blobs empty) holding the payload
// "varint len(starts) len(durations) len(kinds) len(slots) | starts durations kinds slots ksteps",
// where ksteps are delta-coded (zigzag of kstep - previous kstep, the first against -1). Readers
// refuse any other value.
enum class ChunkCodec : int { Raw = 0, Zstd = 1 };
inline constexpr int kChunkCodecCount = 2;

// --- LEB128 varints (little-endian base 128), zigzag for signed values ---
inline std::uint64_t zigzag(std::int64_t v) { return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63); }
inline std::int64_t unzigzag(std::uint64_t u) { return static_cast<std::int64_t>(u >> 1) ^ -static_cast<std::int64_t>(u & 1); }

inline void putVarint(std::string& out, std::uint64_t v)
{
    char buf[10];
    int n = 0;
    while (v >= 0x80) {
        buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
        v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    out.append(buf, static_cast<std::size_t>(n));
}

// Reads one varint from [p, end). Returns false on truncation or an over-long (>10 bytes / >64 bit) value.
inline bool getVarint(const unsigned char*& p, const unsigned char* end, std::uint64_t& v)
{
    std::uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p == end)
            return false;
        const unsigned b = *p++;
        if (shift == 63 && (b & 0x7e))
            return false;  // bits beyond 64
        r |= static_cast<std::uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            v = r;
            return true;
        }
    }
    return false;
}

}  // namespace ws::detail
