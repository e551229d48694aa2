// Bundled samples (resources/samples/*.wstrace) are opened where they are when their schema is the
// current one. When the code's schema moves on, the build runs this for each older sample: it writes the
// migrated copy the viewer and the tests open (<build>/samples/NAME) with TraceStore::migrateCopy, which
// leaves the committed file untouched. A current sample is copied as it is.
//
// With --sources it also stores source files in every run of the copy (TraceStore::writeSources; the
// path as given, relative to ROOT), then VACUUMs it: how resources/samples/ladder-h200-4096.wstrace got
// the ladder's kernel sources (resources/samples/README.md).
//
//   warpstage_migrate_sample RECORDED.wstrace OUT.wstrace [--sources ROOT PATH...]
#include "warpstage/store.h"

#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
    if (argc < 3 || (argc > 3 && (std::string(argv[3]) != "--sources" || argc < 6))) {
        std::fprintf(stderr, "usage: %s RECORDED.wstrace OUT.wstrace [--sources ROOT PATH...]\n", argv[0]);
        return 2;
    }
    const std::string out = argv[2];
    try {
        std::vector<ws::SourceFile> sources;
        for (int i = 5; i < argc; ++i) {
            const std::string full = std::string(argv[4]) + "/" + argv[i];
            std::ifstream in(full, std::ios::binary);
            if (!in) {
                std::fprintf(stderr, "%s: cannot read the source file\n", full.c_str());
                return 1;
            }
            std::ostringstream text;
            text << in.rdbuf();
            sources.push_back({argv[i], "", text.str()});
        }
        std::filesystem::remove(out);
        const ws::FileCheck c = ws::TraceStore::checkFile(argv[1]);
        if (!c.needsMigration) {
            std::filesystem::copy_file(argv[1], out);
        } else {
            const ws::MigrationResult r = ws::TraceStore::migrateCopy(argv[1], out);
            std::printf("%s: schema %d -> %d (%lld intervals)\n", out.c_str(), r.fromVersion, r.toVersion,
                        static_cast<long long>(r.intervalsMigrated));
        }
        if (!sources.empty()) {
            {
                auto st = ws::TraceStore::openForWriting(out);
                for (const ws::RunInfo& r : st.runs())
                    st.writeSources(r.id, sources);
            }
            sqlite3* db = nullptr;
            if (sqlite3_open(out.c_str(), &db) != SQLITE_OK
                || sqlite3_exec(db, "PRAGMA journal_mode = DELETE; VACUUM;", nullptr, nullptr, nullptr) != SQLITE_OK) {
                std::fprintf(stderr, "%s: VACUUM failed: %s\n", out.c_str(), sqlite3_errmsg(db));
                sqlite3_close(db);
                return 1;
            }
            sqlite3_close(db);
            std::printf("%s: %zu source files stored in every run\n", out.c_str(), sources.size());
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        std::filesystem::remove(out);
        return 1;
    }
}
