// ladder_manifest: prints what the ladder's host API says about each rung, one
// tab-separated line per rung, for the SASS check (check_sass.py), which runs
// where there is no GPU (CI):
//   name  level  tensorCores(0/1)  tma(0/1)  tracedKernelSymbol  untracedKernelSymbol  sourceFile
// Needs no GPU: rungs() and kernelSymbol() are host-only.
#include <warpstage/ladder.h>

#include <cstdio>

int main()
{
    std::printf("# name\tlevel\ttensorCores\ttma\ttracedSymbol\tuntracedSymbol\tsourceFile\n");
    for (const auto& r : ws::ladder::rungs()) {
        std::printf("%s\t%d\t%d\t%d\t%s\t%s\t%s\n", r.name.c_str(), r.level, int(r.tensorCores), int(r.tma),
                    ws::ladder::kernelSymbol(r.name, true).c_str(), ws::ladder::kernelSymbol(r.name, false).c_str(),
                    r.sourceFile.c_str());
    }
    return 0;
}
