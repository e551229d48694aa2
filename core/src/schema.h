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
};

struct TableDef {
    std::string_view name;
    std::vector<ColumnDef> columns;
    std::string_view constraints;        // extra table constraints ("UNIQUE(...)"), may be empty
    std::vector<std::string_view> indexes;  // "CREATE INDEX ..." statements
    int sinceVersion = 1;                // first schema version that has the table
    int untilVersion = 1 << 30;          // last schema version that has the table
};

// All tables of all versions.
const std::vector<TableDef>& schemaTables();
// "CREATE TABLE name(...)" for one table.
std::string createTableSql(const TableDef& t);
const TableDef* findTable(std::string_view name);

// Intervals per interval_chunks row (the writer's choice; readers accept any count).
inline constexpr int kChunkIntervals = 8192;
// Upper bound a reader accepts for one chunk's count.
inline constexpr std::int64_t kMaxChunkIntervals = 1 << 24;

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
