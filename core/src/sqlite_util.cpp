#include "sqlite_util.h"

#include <climits>

namespace ws::detail {

std::string describeSqliteError(int rc, const char* msg)
{
    const std::string m = msg ? msg : sqlite3_errstr(rc);
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
        return "not an SQLite database (" + m + ")";
    case SQLITE_CORRUPT:
        return "damaged or truncated file (" + m + ")";
    case SQLITE_CANTOPEN:
        return "cannot open the file (" + m + ")";
    case SQLITE_READONLY:
        return "the file cannot be written (" + m + ")";
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return "the file is locked by another program (" + m + ")";
    case SQLITE_FULL:
        return "disk full (" + m + ")";
    case SQLITE_IOERR:
        return "I/O error, the file may be truncated (" + m + ")";
    case SQLITE_NOMEM:
        return "out of memory (" + m + ")";
    case SQLITE_TOOBIG:
        return "a value in the file is too large (" + m + ")";
    default:
        return m;
    }
}

namespace {
// Percent-escapes a path for an SQLite "file:" URI.
std::string uriEscape(const std::string& path)
{
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : path) {
        if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f) {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}
}  // namespace

void Db::open(const std::string& path, int flags, const std::string& uriQuery)
{
    close();
    m_path = path;
    std::string uri = "file:" + uriEscape(path);
    if (!uriQuery.empty())
        uri += "?" + uriQuery;
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(uri.c_str(), &db, flags | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        std::string msg = describeSqliteError(rc, db ? sqlite3_errmsg(db) : nullptr);
        sqlite3_close_v2(db);
        throw StoreError(path, msg);
    }
    m_db = db;
    sqlite3_extended_result_codes(m_db, 1);
    // Hardening against hostile files (the fuzzer feeds arbitrary bytes).
    sqlite3_db_config(m_db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(m_db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_db_config(m_db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
    sqlite3_db_config(m_db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
    sqlite3_limit(m_db, SQLITE_LIMIT_LENGTH, 512 * 1024 * 1024);
    sqlite3_busy_timeout(m_db, 5000);
}

void Db::close() noexcept
{
    if (m_db) {
        sqlite3_close_v2(m_db);
        m_db = nullptr;
    }
}

void Db::exec(const char* sql) const
{
    char* err = nullptr;
    const int rc = sqlite3_exec(m_db, sql, nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
        std::string msg = describeSqliteError(rc, err ? err : sqlite3_errmsg(m_db));
        sqlite3_free(err);
        throw StoreError(m_path, msg);
    }
}

void Db::fail(int rc, std::string_view what) const
{
    std::string msg = describeSqliteError(rc, m_db ? sqlite3_errmsg(m_db) : nullptr);
    if (!what.empty())
        msg = std::string(what) + ": " + msg;
    throw StoreError(m_path, msg);
}

std::int64_t Db::pragmaInt(const char* pragma) const
{
    Stmt s(*this, pragma);
    return s.step() ? s.i64(0) : 0;
}

Stmt::Stmt(const Db& db, const char* sql) : m_db(&db)
{
    const int rc = sqlite3_prepare_v3(db.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &m_stmt, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(m_stmt);
        m_stmt = nullptr;
        db.fail(rc);
    }
}

bool Stmt::step()
{
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
        return true;
    if (rc == SQLITE_DONE)
        return false;
    sqlite3_reset(m_stmt);
    m_db->fail(rc);
}

void Stmt::run()
{
    while (step()) {
    }
    sqlite3_reset(m_stmt);  // bindings are kept: callers rebind every parameter
}

int Stmt::i32(int c) const
{
    const std::int64_t v = sqlite3_column_int64(m_stmt, c);
    if (v > INT_MAX)
        return INT_MAX;
    if (v < INT_MIN)
        return INT_MIN;
    return static_cast<int>(v);
}

}  // namespace ws::detail
