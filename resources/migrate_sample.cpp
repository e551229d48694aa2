// Build step: the bundled samples are kept as recorded (resources/samples/*.tar.xz, unpacked into
// <build>/samples-recorded at configure time); this writes the migrated copy the viewer and the tests open
// (<build>/samples/NAME) with TraceStore::migrateCopy, which leaves the recorded file untouched.
#include "warpstage/store.h"

#include <cstdio>
#include <filesystem>

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s RECORDED.wstrace OUT.wstrace\n", argv[0]);
        return 2;
    }
    try {
        std::filesystem::remove(argv[2]);
        const ws::FileCheck c = ws::TraceStore::checkFile(argv[1]);
        if (!c.needsMigration) {
            std::filesystem::copy_file(argv[1], argv[2]);
            return 0;
        }
        const ws::MigrationResult r = ws::TraceStore::migrateCopy(argv[1], argv[2]);
        std::printf("%s: schema %d -> %d (%lld intervals)\n", argv[2], r.fromVersion, r.toVersion,
                    static_cast<long long>(r.intervalsMigrated));
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        std::filesystem::remove(argv[2]);
        return 1;
    }
}
