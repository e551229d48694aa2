// Helpers shared by the core test suites (header-only, test code only).
#pragma once

#include "warpstage/model.h"
#include "warpstage/store.h"

#include <sqlite3.h>

#include <QCryptographicHash>
#include <QFile>
#include <QString>
#include <QtTest>

#include <string>

namespace wstest {

// Runs SQL on a file directly (bypassing the store), to damage files on purpose.
inline void rawExec(const std::string& path, const std::string& sql)
{
    sqlite3* db = nullptr;
    QCOMPARE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    const QString msg = err ? QString::fromUtf8(err) : QString();
    sqlite3_free(err);
    sqlite3_close(db);
    QVERIFY2(rc == SQLITE_OK, qPrintable(msg + " in: " + QString::fromStdString(sql)));
}

// One integer from a query run on a file directly (bypassing the store); -1 on any error.
inline long long rawQueryInt(const std::string& path, const std::string& sql)
{
    sqlite3* db = nullptr;
    long long v = -1;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return v;
}

inline QByteArray fileHash(const std::string& path)
{
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

// A small, hand-made kernel: `ctas` CTAs on SM i, each with a producer and a consumer warp.
inline ws::RunRecord smallRun(int ctas = 2, int ksteps = 3)
{
    ws::RunRecord r;
    r.info.variant = "test_rung";
    r.info.m = 256;
    r.info.n = 128;
    r.info.k = 64;
    r.info.synthetic = true;
    r.info.device.name = "Test GPU";
    r.info.device.smCount = 4;
    r.info.notes = "SYNTHETIC hand-made test run";
    ws::KernelRecord k;
    k.launch.name = "test_kernel";
    k.launch.variant = "test_rung";
    k.launch.traced = true;
    k.launch.start = 1000;
    k.launch.end = 1000 + 100 * ksteps + 100;
    for (int c = 0; c < ctas; ++c) {
        ws::Cta cta;
        cta.blockLinear = c;
        cta.smId = c;
        cta.start = 1000 + c;
        cta.end = 1000 + 100 * ksteps + 50;
        cta.tileM = c;
        cta.tileN = 0;
        k.ctas.push_back(cta);
        for (int w = 0; w < 2; ++w) {
            ws::Warp wp;
            wp.ctaId = c;
            wp.warpIndex = w * 4;
            wp.warpgroup = w;
            wp.role = w == 0 ? ws::WarpRole::Producer : ws::WarpRole::Consumer;
            wp.roleName = w == 0 ? "producer" : "consumer WG1";
            k.warps.push_back(wp);
        }
        const ws::RowId prod = 2 * c, cons = 2 * c + 1;
        for (int s = 0; s < ksteps; ++s) {
            const ws::TimeNs t = 1000 + c + 100 * s;
            k.intervals.push_back({prod, ws::IntervalKind::WaitSlot, static_cast<std::int16_t>(s % 2), s, t, 5});
            k.intervals.push_back({prod, ws::IntervalKind::IssueLoad, static_cast<std::int16_t>(s % 2), s, t + 5, 10});
            k.intervals.push_back({cons, ws::IntervalKind::WaitData, static_cast<std::int16_t>(s % 2), s, t, 30});
            k.intervals.push_back({cons, ws::IntervalKind::MmaIssue, static_cast<std::int16_t>(s % 2), s, t + 30, 20});
            k.intervals.push_back({cons, ws::IntervalKind::MmaWait, static_cast<std::int16_t>(s % 2), s, t + 50, 40});
            k.intervals.push_back({cons, ws::IntervalKind::Release, static_cast<std::int16_t>(s % 2), s, t + 90, 0});
            k.loads.push_back({c, static_cast<std::int16_t>(s % 2), s, t + 10, t + 30, 4096});
        }
        k.tiles.push_back({c, cons, c, 0, 1000 + c, 1000 + 100 * ksteps});
    }
    k.stalls.push_back({0, 0x40, "test_kernel", "test.cu", 12, "smsp__pcsamp_warps_issue_stalled_barrier", "barrier", 7,
                        ws::WarpRole::Consumer, "wait_data"});
    r.kernels.push_back(k);
    ws::MemOp m;
    m.kind = ws::MemOpKind::HtoD;
    m.bytes = 1 << 20;
    m.start = 10;
    m.end = 500;
    r.memOps.push_back(m);
    r.metrics.push_back({0, 1, "kernel", "custom_metric", 42.5, "ns"});
    r.metrics.push_back({0, 0, "run", "run_metric", 1.5, "ratio"});
    return r;
}

}  // namespace wstest
