// ladder_check: one launch of one rung at one shape, checked; small enough to
// run under compute-sanitizer (memcheck, racecheck). The reference is a simple
// fp32 GPU kernel by default (so the sanitizer looks at the rung, not at
// cuBLAS's kernels), or cuBLAS with --ref cublas.
//
// Usage: ladder_check --rung NAME [--shape MxNxK] [--traced] [--ref naive|cublas] [--list]
// Exit: 0 correct, 1 wrong or failed, 2 bad arguments, 77 no sm_90 device.
#include "ladder_testutil.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <memory>
#include <string>

using namespace ws;
using namespace ws::ktest;

static int usage(const char* msg)
{
    if (msg)
        std::fprintf(stderr, "ladder_check: %s\n", msg);
    std::fprintf(stderr, "usage: ladder_check --rung NAME [--shape MxNxK] [--traced] [--ref naive|cublas] [--list]\n");
    return 2;
}

int main(int argc, char** argv)
{
    std::string rung, ref = "naive";
    ladder::Shape s{256, 256, 512};
    bool traced = false, list = false;
    try {
        for (int i = 1; i < argc; ++i) {
            std::string a = argv[i];
            if (a == "--rung" && i + 1 < argc) rung = argv[++i];
            else if (a == "--shape" && i + 1 < argc) s = parseShape(argv[++i]);
            else if (a == "--traced") traced = true;
            else if (a == "--ref" && i + 1 < argc) ref = argv[++i];
            else if (a == "--list") list = true;
            else return usage(("unknown argument '" + a + "'").c_str());
        }
    } catch (const std::exception& e) {
        return usage(e.what());
    }
    if (list) {
        for (const auto& r : ladder::rungs())
            std::printf("%d %s tensorCores=%d tma=%d %s\n", r.level, r.name.c_str(), int(r.tensorCores), int(r.tma),
                        r.title.c_str());
        return 0;
    }
    if (rung.empty()) return usage("--rung is required");
    if (!ladder::findRung(rung)) return usage(("no rung named '" + rung + "' (see --list)").c_str());
    if (ref != "naive" && ref != "cublas") return usage("--ref must be naive or cublas");
    const std::string tag = "ladder_check rung=" + rung + " shape=" + shapeStr(s) + (traced ? " traced" : " untraced");
    std::string why = ladder::checkShape(rung, s);
    if (!why.empty()) {
        std::printf("REFUSED %s: %s\n", tag.c_str(), why.c_str());
        return 1;
    }
    if (const int rc = gpuUnavailableExit("ladder_check"))
        return rc;
    try {
        const int sms = smCount();
        const std::size_t na = std::size_t(s.m) * s.k, nb = std::size_t(s.n) * s.k, nc = std::size_t(s.m) * s.n;
        DeviceBuffer a(na * 2), b(nb * 2), c(nc * 2), r(nc * 4);
        std::uint64_t seed = freshSeed();
        fillRandomNormalBf16(a.get(), na, seed);
        fillRandomNormalBf16(b.get(), nb, seed + 1);
        poisonBf16(c.get(), nc);
        poisonF32(r.get(), nc);
        if (ref == "cublas") {
            CublasRef cb;
            cb.gemm(s, a.get(), b.get(), r.get(), true);
        } else {
            naiveGemmF32(s, a.get(), b.get(), r.as<float>());
        }
        WS_CK(cudaDeviceSynchronize());
        std::unique_ptr<TraceBuffer> tb;
        if (traced)
            tb = std::make_unique<TraceBuffer>(ladder::traceGeometry(rung, s, sms), 0, 1 << 16);
        std::string err = ladder::launch(rung, s, a.get(), b.get(), c.get(), nullptr, tb ? tb->get() : nullptr, sms);
        if (!err.empty()) {
            std::printf("FAIL %s: launch(): %s\n", tag.c_str(), err.c_str());
            return 1;
        }
        WS_CK(cudaGetLastError());
        WS_CK(cudaDeviceSynchronize());
        ErrStats e = compareBf16ToF32(c.get(), r.as<float>(), nc);
        bool ok = e.ok();
        std::string extra;
        if (tb) {
            std::uint64_t dmg = tb->guardDamage();
            TraceCheck tc = checkTrace(tb->download(), tb->header(), sms, false);
            extra = " trace: events=" + std::to_string(tc.events) + " errors=" + std::to_string(tc.errors.size())
                + " guard_damage=" + std::to_string(dmg);
            for (auto& x : tc.errors) extra += "\n    " + x;
            ok = ok && dmg == 0 && tc.errors.empty();
        }
        std::printf("%s %s (ref %s, seed %llu): %s%s\n", ok ? "OK" : "FAIL", tag.c_str(), ref.c_str(),
                    (unsigned long long)seed, e.str().c_str(), extra.c_str());
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::printf("FAIL %s: %s\n", tag.c_str(), e.what());
        return 1;
    }
}
