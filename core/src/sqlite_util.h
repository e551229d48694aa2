// Internal: thin RAII wrappers over the SQLite C API that turn every error into
// ws::StoreError naming the file. Not installed, not part of the public API.
#pragma once

#include "warpstage/store.h"

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace ws::detail {

// Human wording of an SQLite failure ("damaged file (database disk image is malformed)").
std::string describeSqliteError(int rc, const char* msg);

class Db {
public:
    Db() = default;
    Db(const Db&) = delete;
    Db& operator=(const Db&) = delete;
    Db(Db&& o) noexcept : m_db(std::exchange(o.m_db, nullptr)), m_path(std::move(o.m_path)) {}
    Db& operator=(Db&& o) noexcept
    {
        if (this != &o) {
            close();
            m_db = std::exchange(o.m_db, nullptr);
            m_path = std::move(o.m_path);
        }
        return *this;
    }
    ~Db() { close(); }

    // Opens `path` (a plain file name) with flags; uri: extra "?..." query for URI mode.
    void open(const std::string& path, int flags, const std::string& uriQuery = {});
    void close() noexcept;
    sqlite3* get() const noexcept { return m_db; }
    const std::string& path() const noexcept { return m_path; }
    explicit operator bool() const noexcept { return m_db != nullptr; }

    void exec(const char* sql) const;
    [[noreturn]] void fail(int rc, std::string_view what = {}) const;
    std::int64_t pragmaInt(const char* pragma) const;

private:
    sqlite3* m_db = nullptr;
    std::string m_path;
};

class Stmt {
public:
    Stmt(const Db& db, const char* sql);
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;
    ~Stmt() { sqlite3_finalize(m_stmt); }

    Stmt& bind(int i, std::int64_t v)
    {
        check(sqlite3_bind_int64(m_stmt, i, v));
        return *this;
    }
    Stmt& bind(int i, int v) { return bind(i, static_cast<std::int64_t>(v)); }
    Stmt& bind(int i, double v)
    {
        check(sqlite3_bind_double(m_stmt, i, v));
        return *this;
    }
    Stmt& bind(int i, std::string_view v)
    {
        check(sqlite3_bind_text(m_stmt, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
        return *this;
    }
    Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
    // The text must stay alive until the next step()/reset() (no copy: the bulk writers' fast path).
    Stmt& bindStatic(int i, std::string_view v)
    {
        check(sqlite3_bind_text(m_stmt, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC));
        return *this;
    }

    Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
    Stmt& bindNull(int i)
    {
        check(sqlite3_bind_null(m_stmt, i));
        return *this;
    }
    // The bytes must stay alive until the next step()/reset().
    Stmt& bindBlobStatic(int i, const void* data, std::size_t n)
    {
        check(sqlite3_bind_blob64(m_stmt, i, n ? data : "", n, SQLITE_STATIC));
        return *this;
    }

    // true: a row is available; false: done. Throws on error.
    bool step();
    // step() for statements without result rows, then reset().
    void run();
    void reset()
    {
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
    }

    std::int64_t i64(int c) const { return sqlite3_column_int64(m_stmt, c); }
    int i32(int c) const;  // clamps to int range
    double f64(int c) const { return sqlite3_column_double(m_stmt, c); }
    bool isNull(int c) const { return sqlite3_column_type(m_stmt, c) == SQLITE_NULL; }
    std::string text(int c) const
    {
        const auto* p = sqlite3_column_text(m_stmt, c);
        const int n = sqlite3_column_bytes(m_stmt, c);
        return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string();
    }
    // Blob bytes valid until the next step/reset. Empty view for NULL.
    std::string_view blob(int c) const
    {
        const void* p = sqlite3_column_blob(m_stmt, c);
        const int n = sqlite3_column_bytes(m_stmt, c);
        return p && n > 0 ? std::string_view(static_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string_view();
    }
    sqlite3_stmt* get() const noexcept { return m_stmt; }

private:
    void check(int rc) const
    {
        if (rc != SQLITE_OK)
            m_db->fail(rc);
    }
    const Db* m_db;
    sqlite3_stmt* m_stmt = nullptr;
};

}  // namespace ws::detail
