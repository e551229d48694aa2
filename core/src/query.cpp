// `warpstage query`: one SQL statement on a trace opened read-only, with the virtual tables of
// query_vtab.cpp, printed as an aligned table, CSV or JSON (warpstage/query.h).
#include "warpstage/query.h"
#include "warpstage/report.h"  // jsonEscape

#include "query_views.h"
#include "query_vtab.h"
#include "sqlite_util.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace ws {

int registerQueryTables(sqlite3* db)
{
    const int rc = detail::vtab::registerTables(db);
    return rc == SQLITE_OK ? sqlite3_exec(db, detail::kScopesViewSql, nullptr, nullptr, nullptr) : rc;
}

namespace {

struct Cell {
    std::string text;
    bool number = false;  // right-aligned in the table
};

std::string hexBlob(const void* p, int n)
{
    static const char* digits = "0123456789abcdef";
    std::string s = "x'";
    const auto* b = static_cast<const unsigned char*>(p);
    for (int i = 0; i < n; ++i) {
        s += digits[b[i] >> 4];
        s += digits[b[i] & 15];
    }
    return s + "'";
}

std::string columnText(sqlite3_stmt* st, int c)
{
    const auto* p = sqlite3_column_text(st, c);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(st, c)))
             : std::string();
}

std::string jsonString(const std::string& s)
{
    return "\"" + jsonEscape(s) + "\"";
}

std::string csvField(const std::string& s)
{
    if (s.find_first_of(",\"\n\r") == std::string::npos)
        return s;
    std::string out = "\"";
    for (const char ch : s) {
        if (ch == '"')
            out += '"';
        out += ch;
    }
    return out + "\"";
}

// The value of column c as the format shows it.
Cell cell(sqlite3_stmt* st, int c, QueryFormat f)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_NULL:
        return {f == QueryFormat::Json ? "null" : f == QueryFormat::Table ? "NULL" : "", false};
    case SQLITE_INTEGER:
        return {columnText(st, c), true};
    case SQLITE_FLOAT: {
        if (!std::isfinite(sqlite3_column_double(st, c)) && f == QueryFormat::Json)
            return {"null", true};
        return {columnText(st, c), true};
    }
    case SQLITE_BLOB: {
        std::string h = hexBlob(sqlite3_column_blob(st, c), sqlite3_column_bytes(st, c));
        return {f == QueryFormat::Json ? jsonString(h) : f == QueryFormat::Csv ? csvField(h) : h, false};
    }
    default: {
        std::string t = columnText(st, c);
        return {f == QueryFormat::Json ? jsonString(t) : f == QueryFormat::Csv ? csvField(t) : t, false};
    }
    }
}

// Display width of UTF-8 text: code points (no East Asian wide characters in trace names in practice).
std::size_t width(const std::string& s)
{
    std::size_t n = 0;
    for (const char ch : s)
        n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    return n;
}

void pad(std::ostream& out, std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i)
        out.put(' ');
}

struct Stmt {
    sqlite3_stmt* st = nullptr;
    ~Stmt() { sqlite3_finalize(st); }
};

bool onlyBlanksAndComments(sqlite3* db, const char* tail)
{
    Stmt rest;
    const int rc = sqlite3_prepare_v2(db, tail, -1, &rest.st, nullptr);
    return rc == SQLITE_OK && !rest.st;
}

}  // namespace

std::int64_t runQuery(const std::string& path, const std::string& sql, QueryFormat format, std::ostream& out)
{
    // The store's own checks first: a missing, damaged, foreign, older or newer file is a StoreError.
    { const TraceStore check = TraceStore::openReadOnly(path); }
    detail::Db db;
    db.open(path, SQLITE_OPEN_READONLY, "mode=ro");
    if (registerQueryTables(db.get()) != SQLITE_OK)
        throw StoreError(path, std::string("cannot register the virtual tables: ") + sqlite3_errmsg(db.get()));
    db.exec("PRAGMA query_only = ON");

    Stmt s;
    const char* tail = nullptr;
    if (sqlite3_prepare_v2(db.get(), sql.c_str(), static_cast<int>(sql.size()), &s.st, &tail) != SQLITE_OK)
        throw QueryError(sqlite3_errmsg(db.get()));
    if (!s.st)
        throw QueryError("no SQL statement given");
    if (tail && !onlyBlanksAndComments(db.get(), tail))
        throw QueryError("more than one SQL statement given (run one at a time)");
    if (!sqlite3_stmt_readonly(s.st))
        throw QueryError("the trace is opened read-only: only statements that read are allowed");

    const int n = sqlite3_column_count(s.st);
    std::vector<std::string> names(static_cast<std::size_t>(n));
    for (int c = 0; c < n; ++c) {
        const char* name = sqlite3_column_name(s.st, c);
        names[static_cast<std::size_t>(c)] = name ? name : "";
    }

    std::int64_t rows = 0;
    std::vector<std::vector<Cell>> table;  // QueryFormat::Table: all rows, for the widths
    if (format == QueryFormat::Csv) {
        for (int c = 0; c < n; ++c)
            out << (c ? "," : "") << csvField(names[static_cast<std::size_t>(c)]);
        out << '\n';
    } else if (format == QueryFormat::Json) {
        out << '[';
    }
    for (;;) {
        const int rc = sqlite3_step(s.st);
        if (rc == SQLITE_DONE)
            break;
        if (rc != SQLITE_ROW)
            throw QueryError(sqlite3_errmsg(db.get()));
        std::vector<Cell> row(static_cast<std::size_t>(n));
        for (int c = 0; c < n; ++c)
            row[static_cast<std::size_t>(c)] = cell(s.st, c, format);
        if (format == QueryFormat::Csv) {
            for (int c = 0; c < n; ++c)
                out << (c ? "," : "") << row[static_cast<std::size_t>(c)].text;
            out << '\n';
        } else if (format == QueryFormat::Json) {
            out << (rows ? ",\n  {" : "\n  {");
            for (int c = 0; c < n; ++c)
                out << (c ? ", " : "") << jsonString(names[static_cast<std::size_t>(c)]) << ": "
                    << row[static_cast<std::size_t>(c)].text;
            out << '}';
        } else {
            table.push_back(std::move(row));
        }
        ++rows;
    }
    if (format == QueryFormat::Json) {
        out << (rows ? "\n]\n" : "]\n");
    } else if (format == QueryFormat::Table) {
        std::vector<std::size_t> w(static_cast<std::size_t>(n));
        for (std::size_t c = 0; c < w.size(); ++c) {
            w[c] = width(names[c]);
            for (const auto& r : table)
                w[c] = std::max(w[c], width(r[c].text));
        }
        for (std::size_t c = 0; c < w.size(); ++c) {
            out << (c ? "  " : "") << names[c];
            if (c + 1 < w.size())
                pad(out, w[c] - width(names[c]));
        }
        out << '\n';
        for (std::size_t c = 0; c < w.size(); ++c)
            out << (c ? "  " : "") << std::string(w[c], '-');
        out << '\n';
        for (const auto& r : table) {
            for (std::size_t c = 0; c < w.size(); ++c) {
                out << (c ? "  " : "");
                const std::size_t gap = w[c] - width(r[c].text);
                if (r[c].number) {
                    pad(out, gap);
                    out << r[c].text;
                } else {
                    out << r[c].text;
                    if (c + 1 < w.size())
                        pad(out, gap);
                }
            }
            out << '\n';
        }
        out << '(' << rows << (rows == 1 ? " row)\n" : " rows)\n");
    }
    return rows;
}

}  // namespace ws
