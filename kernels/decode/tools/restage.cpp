// warpstage-restage: re-assigns the pipeline role and stage of every stall sample in a
// Warpstage file with this build's stage map (warpstage/stage_map.h), reading the rung sources
// under SOURCE_DIR. The samples themselves (PC, function, source line, reason, count) are not
// touched, and nothing else in the file changes except each updated run's notes, which say so.
// Use it when the mapping rules improve: a recording keeps the stages assigned when it was made.
// CUDA-free, no GPU needed.
//
//   warpstage-restage FILE [--source-dir DIR] [--dry-run]
//
// Exit: 0 done (or nothing to change), 1 the file could not be read or written, 2 usage.
#include "warpstage/stage_map.h"
#include "warpstage/store.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#ifndef WARPSTAGE_SOURCE_DIR
#define WARPSTAGE_SOURCE_DIR ""
#endif

using namespace ws;

namespace {

int usage(const char* why)
{
    if (why) std::fprintf(stderr, "warpstage-restage: %s\n", why);
    std::fprintf(stderr, "usage: warpstage-restage FILE [--source-dir DIR] [--dry-run]\n"
                         "Re-assigns the pipeline role/stage of every stall sample with this build's stage map.\n");
    return 2;
}

std::string readText(const std::filesystem::path& p)
{
    std::ifstream f(p);
    if (!f) return {};
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

struct Row {
    sqlite3_int64 id = 0;
    StallSample s;
    std::string oldStage, oldRole;
};

void fail(sqlite3* db, const std::string& what)
{
    throw StoreError(sqlite3_db_filename(db, "main") ? sqlite3_db_filename(db, "main") : "?",
                     what + ": " + sqlite3_errmsg(db));
}

}  // namespace

int main(int argc, char** argv)
{
    std::string file, sourceDir = WARPSTAGE_SOURCE_DIR;
    bool dryRun = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--source-dir") {
            if (++i >= argc) return usage("--source-dir needs a directory");
            sourceDir = argv[i];
        } else if (a == "--dry-run") {
            dryRun = true;
        } else if (a == "-h" || a == "--help") {
            usage(nullptr);
            return 0;
        } else if (!a.empty() && a[0] == '-') {
            return usage(("unknown option " + a).c_str());
        } else if (file.empty()) {
            file = a;
        } else {
            return usage("one file at a time");
        }
    }
    if (file.empty()) return usage("no file given");
    if (sourceDir.empty()) return usage("no --source-dir and this build does not know its source tree");

    try {
        // Everything the stage map needs comes through the store's API (read-only first, so a bad file
        // is reported before anything is opened for writing).
        struct Plan {
            RunInfo run;
            std::vector<KernelLaunch> kernels;  // those with stall samples
            std::vector<WarpRole> roles;
            bool hasWaitOrder = false;
            std::string source;  // repository-relative rung source
        };
        std::vector<Plan> plans;
        {
            const TraceStore in = TraceStore::openReadOnly(file);
            for (const RunInfo& run : in.runs()) {
                Plan p;
                p.run = run;
                bool haveTraced = false;
                for (const KernelLaunch& k : in.kernels(run.id)) {
                    if (k.traced && !haveTraced) {
                        const KernelTrace t = in.loadKernel(k.id);
                        p.roles = decode::rolesByKind(t);
                        for (const auto& lane : t.lanes)
                            p.hasWaitOrder = p.hasWaitOrder
                                || std::find(lane.kind.begin(), lane.kind.end(), IntervalKind::WaitOrder) != lane.kind.end();
                        haveTraced = true;
                    }
                    if (!in.stallSamples(k.id).empty()) p.kernels.push_back(k);
                }
                if (p.kernels.empty()) continue;
                if (!haveTraced) {
                    std::printf("run %lld (%s): stall samples but no traced launch to tell the roles; skipped\n",
                                (long long)run.id, run.variant.c_str());
                    continue;
                }
                p.source = "kernels/src/" + run.variant + ".cu";
                plans.push_back(std::move(p));
            }
        }
        if (plans.empty()) {
            std::printf("%s: no stall samples to re-assign\n", file.c_str());
            return 0;
        }

        sqlite3* db = nullptr;
        if (sqlite3_open_v2(file.c_str(), &db, dryRun ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE, nullptr)
            != SQLITE_OK) {
            std::fprintf(stderr, "warpstage-restage: %s: cannot open: %s\n", file.c_str(), sqlite3_errmsg(db));
            sqlite3_close(db);
            return 1;
        }
        sqlite3_busy_timeout(db, 5000);
        if (!dryRun && sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK)
            fail(db, "cannot start a transaction");
        sqlite3_stmt* sel = nullptr;
        sqlite3_stmt* upd = nullptr;
        sqlite3_stmt* note = nullptr;
        if (sqlite3_prepare_v2(db,
                               "SELECT id, pc_offset, function_name, source_file, line, reason, count, stage, role "
                               "FROM stall_samples WHERE kernel_id = ? ORDER BY id",
                               -1, &sel, nullptr)
                != SQLITE_OK
            || sqlite3_prepare_v2(db, "UPDATE stall_samples SET stage = ?, role = ? WHERE id = ?", -1, &upd, nullptr)
                != SQLITE_OK
            || sqlite3_prepare_v2(db, "UPDATE runs SET notes = notes || ? WHERE id = ?", -1, &note, nullptr) != SQLITE_OK)
            fail(db, "cannot prepare statements");

        std::int64_t changedAll = 0;
        for (const Plan& p : plans) {
            const std::filesystem::path src = std::filesystem::path(sourceDir) / p.source;
            const std::string text = readText(src);
            if (text.empty()) {
                std::printf("run %lld (%s): %s not found; skipped\n", (long long)p.run.id, p.run.variant.c_str(),
                            src.string().c_str());
                continue;
            }
            auto map = decode::StageMap::fromSource(p.source, text);
            std::error_code ec;
            for (const auto& e : std::filesystem::directory_iterator(src.parent_path(), ec))
                if (e.path().extension() == ".cuh")
                    map.addHelperSource(std::filesystem::path(p.source).parent_path().string() + "/"
                                            + e.path().filename().string(),
                                        readText(e.path()));

            std::map<std::string, std::pair<std::int64_t, std::int64_t>> byStage;  // role/stage -> (before, after)
            std::int64_t all = 0, changed = 0;
            for (const KernelLaunch& k : p.kernels) {
                std::vector<Row> rows;
                sqlite3_reset(sel);
                sqlite3_bind_int64(sel, 1, k.id);
                int rc;
                while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
                    Row r;
                    r.id = sqlite3_column_int64(sel, 0);
                    r.s.kernelId = k.id;
                    r.s.pcOffset = std::uint64_t(sqlite3_column_int64(sel, 1));
                    auto txt = [&](int c) {
                        const unsigned char* t = sqlite3_column_text(sel, c);
                        return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
                    };
                    r.s.functionName = txt(2);
                    r.s.sourceFile = txt(3);
                    r.s.line = sqlite3_column_int(sel, 4);
                    r.s.reason = txt(5);
                    r.s.count = sqlite3_column_int64(sel, 6);
                    r.oldStage = txt(7);
                    r.oldRole = txt(8);
                    rows.push_back(std::move(r));
                }
                if (rc != SQLITE_DONE) fail(db, "cannot read stall samples");
                std::vector<StallSample> samples;
                samples.reserve(rows.size());
                for (const Row& r : rows) samples.push_back(r.s);
                decode::assignStages(samples, map, p.roles, p.hasWaitOrder);
                for (std::size_t i = 0; i < rows.size(); ++i) {
                    const std::string role(warpRoleName(samples[i].role));
                    const std::string& stage = samples[i].stage;
                    all += rows[i].s.count;
                    byStage[rows[i].oldRole + "/" + rows[i].oldStage].first += rows[i].s.count;
                    byStage[role + "/" + stage].second += rows[i].s.count;
                    if (stage == rows[i].oldStage && role == rows[i].oldRole) continue;
                    changed += rows[i].s.count;
                    if (dryRun) continue;
                    sqlite3_reset(upd);
                    sqlite3_bind_text(upd, 1, stage.c_str(), -1, SQLITE_TRANSIENT);
                    sqlite3_bind_text(upd, 2, role.c_str(), -1, SQLITE_TRANSIENT);
                    sqlite3_bind_int64(upd, 3, rows[i].id);
                    if (sqlite3_step(upd) != SQLITE_DONE) fail(db, "cannot update a stall sample");
                }
            }
            std::printf("run %lld (%s): %lld of %lld stall samples change role/stage\n", (long long)p.run.id,
                        p.run.variant.c_str(), (long long)changed, (long long)all);
            std::vector<std::pair<std::string, std::pair<std::int64_t, std::int64_t>>> v(byStage.begin(), byStage.end());
            std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
            for (const auto& [key, ba] : v)
                if (ba.first != ba.second && all > 0)
                    std::printf("    %-28s %5.1f%% -> %5.1f%%\n", key.c_str(), 100.0 * double(ba.first) / double(all),
                                100.0 * double(ba.second) / double(all));
            changedAll += changed;
            if (changed > 0 && !dryRun) {
                const std::string n = "\nstall stages re-assigned by warpstage-restage (the samples are unchanged): "
                    + std::to_string(changed) + " of " + std::to_string(all) + " samples changed role/stage";
                sqlite3_reset(note);
                sqlite3_bind_text(note, 1, n.c_str(), -1, SQLITE_TRANSIENT);
                sqlite3_bind_int64(note, 2, p.run.id);
                if (sqlite3_step(note) != SQLITE_DONE) fail(db, "cannot update the run's notes");
            }
        }
        sqlite3_finalize(sel);
        sqlite3_finalize(upd);
        sqlite3_finalize(note);
        if (!dryRun && sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) fail(db, "cannot commit");
        sqlite3_close(db);
        std::printf("%s: %lld samples re-assigned%s\n", file.c_str(), (long long)changedAll, dryRun ? " (dry run: file unchanged)" : "");
        return 0;
    } catch (const StoreError& e) {
        std::fprintf(stderr, "warpstage-restage: %s: %s\n", e.path().c_str(), e.problem().c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "warpstage-restage: %s: %s\n", file.c_str(), e.what());
        return 1;
    }
}
