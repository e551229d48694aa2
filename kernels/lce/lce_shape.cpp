#include "lce_shape.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

namespace ws::lce {

double Shape::flops() const
{
    return 2.0 * m * n * (double(kCand) * b + double(kUser) * users());
}

std::string Shape::text() const
{
    char buf[160];
    std::snprintf(buf, sizeof buf, "M=%d N=%d Ku=%d Kc=%d B=%d per-user=%d%s", m, n, kUser, kCand, b, perUser,
                  shuffled ? " shuffled" : "");
    return buf;
}

const char* rungName(int rung)
{
    static const char* names[kRungs] = {"original", "decomposed", "padded", "fused-epilogue", "persistent"};
    return rung >= 0 && rung < kRungs ? names[rung] : "?";
}

const char* rungIdea(int rung)
{
    static const char* ideas[kRungs] = {
        "one batched GEMM over [E_user[u(b)]; E_cand[b]] concatenated along K (user rows copied to every candidate)",
        "user GEMM once per user, candidate GEMM, then gather + add (cuBLAS, unaligned K)",
        "as rung 1 with K padded to a multiple of 8 (16-byte rows: cuBLAS's aligned kernels)",
        "our TMA + wgmma candidate GEMM with the broadcast add of U[u(b)] fused in its epilogue (run by an epilogue warp)",
        "one persistent kernel for both stages: rung 3's epilogue-warp kernel with the user tiles first in its walk, "
        "per-user-tile ready flags"};
    return rung >= 0 && rung < kRungs ? ideas[rung] : "?";
}

std::string refusal(int rung, const Shape& s)
{
    char buf[240];
    if (rung < 0 || rung >= kRungs) return "there are rungs 0 to 4";
    if (s.m < 1 || s.n < 1 || s.kUser < 1 || s.kCand < 1 || s.b < 1 || s.perUser < 1)
        return "every size (M, N, K_user, K_cand, B, candidates per user) must be at least 1";
    // Largest index of an fp16 tensor: B * (K_user + K_cand) * N (rung 0's concatenation).
    const double elems = double(s.b) * (double(s.kUser) + s.kCand) * s.n;
    if (elems > 2147483647.0 * 4) return "the problem is too large for the driver's 32-bit tile indexing";
    if (rung >= 3) {
        if (s.n % 8 != 0) {
            std::snprintf(buf, sizeof buf,
                          "rung %d loads E_cand with TMA, whose rows must be multiples of 16 bytes: N (%d) must be a "
                          "multiple of 8",
                          rung, s.n);
            return buf;
        }
        if (double(s.b) * ((s.n + 255) / 256) * ((s.m + 127) / 128) > 2147483647.0)
            return "rungs 3-4 number their tiles in 32 bits: too many candidates for this M and N";
    }
    return {};
}

double compulsoryBytes(const Shape& s)
{
    const double users = s.users();
    return 2.0 * (double(s.m) * s.kCand + double(s.m) * s.kUser + double(s.b) * s.kCand * s.n
                  + users * s.kUser * s.n + double(s.b) * s.m * s.n)
           + 4.0 * s.b;
}

double bytesMoved(int rung, const Shape& s)
{
    const double base = compulsoryBytes(s);
    const double users = s.users();
    const double outB = 2.0 * s.b * s.m * s.n;        // one fp16 [B, M, N]
    const double userOut = 2.0 * users * s.m * s.n;   // U, fp16 [users, M, N]
    switch (rung) {
    case 0: {
        // the concatenation [B, Ku + Kc, N] written, then read by the GEMM (instead of E_cand);
        // E_user[u(b)] read once per candidate
        const double cat = 2.0 * s.b * (double(s.kUser) + s.kCand) * s.n;
        return base + cat + cat - 2.0 * double(s.b) * s.kCand * s.n + 2.0 * double(s.b) * s.kUser * s.n;
    }
    case 1:
    case 2:
        // U written and read per candidate (L2-resident when small), C written then read by the add
        return base + userOut + outB + outB + outB;
    case 3:
        return base + userOut + outB;  // U written once, read per candidate tile
    default:
        return base + userOut;
    }
}

std::vector<std::int32_t> userMapping(const Shape& s)
{
    std::vector<std::int32_t> u(size_t(s.b));
    for (int i = 0; i < s.b; ++i) u[size_t(i)] = i / s.perUser;
    if (s.shuffled) {
        std::mt19937_64 rng(s.seed * 0x9E3779B97F4A7C15ull + 7);
        for (int i = s.b - 1; i > 0; --i) {
            const int j = int(rng() % std::uint64_t(i + 1));
            std::swap(u[size_t(i)], u[size_t(j)]);
        }
    }
    return u;
}

const char* usage()
{
    return "usage: lce [--rung 0..4|all] [--m M] [--n N] [--k-user K] [--k-cand K] [--b B] [--per-user P]\n"
           "           [--shuffled] [--seed S] [--check] [--time] [--warmup W] [--iters I] [--sweep]\n"
           "           [--trace-cost] [--interleave A,B] [--user-stage]\n"
           "  Linear compression of embeddings: out[b] = W_cand.E_cand[b] + W_user.E_user[u(b)], fp16.\n"
           "  Defaults: the benchmark point M=433 N=256 K_user=1178 K_cand=866 B=1024, 70 per user.\n"
           "  --check: against an fp32 reference on random inputs; --time: CUDA events, median of --iters\n"
           "  after --warmup; --sweep: B in {512,1024,2048,3072} x per-user in {2,5,10,50,100,1000}.\n"
           "  --trace-cost: rungs 3-4 timed with a per-warp trace buffer attached (what warpstage-record\n"
           "  does) against the same launches without (the kernels compiled without trace code),\n"
           "  interleaved; medians and the difference.\n"
           "  --interleave A,B: rungs A and B (0..4, different) launched alternately, --warmup then --iters\n"
           "  pairs; medians, B/A and how many pairs B won (a verdict between two close rungs).\n"
           "  Rungs 3-4's kernel configurations (lce_body.cuh): 0 rung 3's, 10 rung 4's broadcast walk,\n"
           "  15 rung 4's user-first walk. LCE_TVAR=V: the launches of rungs 3-4 that have configuration V\n"
           "  run it (rung 4 with 10 or 15 on every shape that walk can run); LCE_TVAR_B=V: the same for\n"
           "  rung B of --interleave, and A,A is allowed (V against the rung as built); LCE_R4UF=V: rung 4's\n"
           "  user-first walk runs V where rung 4 takes that walk (15). Another value is refused (exit 2).\n"
           "  LCE_TRACED_A=1: rung A of --interleave runs the traced kernels with no buffer (A,A allowed).\n"
           "  --user-stage: the stages timed apart, interleaved: cuBLAS's user GEMM (rung 3's first launch),\n"
           "  rung 4's kernel on its user-first walk's user units alone, rung 3's kernel alone; medians.\n"
           "  Exit: 0 ok, 1 a check failed or CUDA failed, 2 bad usage, 3 a rung refused the shape,\n"
           "        77 no sm_90 GPU.\n";
}

namespace {
bool parseInt(const char* s, int& out)
{
    if (!s || !*s) return false;
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (*end != '\0' || v < 0 || v > 1L << 30) return false;
    out = int(v);
    return true;
}
}  // namespace

std::string parseOptions(int argc, char** argv, Options& o)
{
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto intArg = [&](int& dst) -> std::string {
            if (i + 1 >= argc) return a + " needs a value";
            if (!parseInt(argv[i + 1], dst)) return a + ": '" + argv[i + 1] + "' is not a non-negative integer";
            ++i;
            return {};
        };
        std::string err;
        if (a == "--rung") {
            if (i + 1 >= argc) return "--rung needs 0..4 or all";
            const std::string v = argv[++i];
            if (v == "all") o.rung = -1;
            else if (v.size() == 1 && v[0] >= '0' && v[0] < '0' + kRungs) o.rung = v[0] - '0';
            else return "--rung: '" + v + "' is not 0..4 or all";
        } else if (a == "--m") err = intArg(o.shape.m);
        else if (a == "--n") err = intArg(o.shape.n);
        else if (a == "--k-user") err = intArg(o.shape.kUser);
        else if (a == "--k-cand") err = intArg(o.shape.kCand);
        else if (a == "--b") err = intArg(o.shape.b);
        else if (a == "--per-user") err = intArg(o.shape.perUser);
        else if (a == "--warmup") err = intArg(o.warmup);
        else if (a == "--iters") err = intArg(o.iters);
        else if (a == "--seed") {
            int v = 0;
            err = intArg(v);
            o.shape.seed = std::uint64_t(v);
        } else if (a == "--shuffled") o.shape.shuffled = true;
        else if (a == "--check") o.check = true;
        else if (a == "--time") o.time = true;
        else if (a == "--sweep") o.sweep = true;
        else if (a == "--trace-cost") o.traceCost = true;
        else if (a == "--user-stage") o.userStage = true;
        else if (a == "--interleave") {
            if (i + 1 >= argc) return "--interleave needs two rungs, e.g. 3,4";
            const std::string v = argv[++i];
            // (one rung with itself only with LCE_TVAR_B set: rungs 3-4's kernel variant B against the rung)
            const bool variantB = std::getenv("LCE_TVAR_B") != nullptr || std::getenv("LCE_TRACED_A") != nullptr;
            if (v.size() != 3 || v[1] != ',' || v[0] < '0' || v[0] >= '0' + kRungs || v[2] < '0'
                || v[2] >= '0' + kRungs || (v[0] == v[2] && !variantB))
                return "--interleave: '" + v + "' is not two different rungs A,B of 0..4 (e.g. 3,4; A,A only with "
                       "LCE_TVAR_B or LCE_TRACED_A set)";
            o.abA = v[0] - '0';
            o.abB = v[2] - '0';
        }
        else if (a == "--help" || a == "-h") return "help";
        else return "unknown option '" + a + "'";
        if (!err.empty()) return err;
    }
    if (o.iters < 1) return "--iters must be at least 1";
    for (const char* name : {"LCE_TVAR", "LCE_TVAR_B", "LCE_R4UF"})  // rungs 3-4's kernel configurations
        if (const char* v = std::getenv(name)) {
            int config = -1;
            const std::string err = parseConfigSwitch(name, v, config);
            if (!err.empty()) return err;
        }
    if (o.traceCost && o.rung >= 0 && o.rung < 3) return "--trace-cost: only rungs 3 and 4 are instrumented";
    if (!o.check && !o.time && !o.traceCost && o.abA < 0 && !o.userStage) o.check = true;  // nothing asked: check
    return {};
}

UserFirstWalk userFirstWalk(const Shape& s, int maxClusters, bool broadcast)
{
    UserFirstWalk w;
    w.mTiles = (s.m + kUfTileM - 1) / kUfTileM;
    w.mUnits = w.mTiles;
    w.nTiles = (s.n + kUfTileN - 1) / kUfTileN;
    const long long perBatch = (long long)w.mTiles * w.nTiles;
    w.broadcast = broadcast;
    w.userUnits = perBatch * s.users();
    w.units = broadcast ? w.userUnits : w.userUnits + perBatch * s.b;
    w.clusters = int(w.units < maxClusters ? w.units : maxClusters);
    w.flags = std::size_t(s.users()) * std::size_t(w.mTiles) * std::size_t(w.nTiles) * std::size_t(kUfCluster) * 2;
    if (broadcast) w.flags = 0;  // (U never leaves the CTA pair: no ready flags)
    return w;
}

bool rung4Broadcast(const Shape& s, int clusters)
{
    if (s.shuffled || s.perUser > kBroadcastMaxPerUser || clusters < 1) return false;
    const long long units = userFirstWalk(s, clusters, true).units;
    const long long rounds = (units + clusters - 1) / clusters;
    return double(rounds) * clusters / double(units) - 1.0 <= kBroadcastMaxIdle;
}

std::string parseConfigSwitch(const char* name, const char* value, int& config)
{
    const bool userFirst = std::strcmp(name, "LCE_R4UF") == 0;
    char known[160];
    std::snprintf(known, sizeof known, userFirst ? "%d: rung 4's user-first walk" : "%d rung 3, %d rung 4's broadcast "
                  "walk, %d rung 4's user-first walk", userFirst ? kRung4UserFirstConfig : kRung3Config,
                  kRung4BroadcastConfig, kRung4UserFirstConfig);
    const std::string head = std::string(name) + "=" + value + ": ";
    int v = 0;
    if (!parseInt(value, v))
        return head + "not a kernel configuration number (" + known + ")";
    const ConfigKind k = configKind(v);
    if (k == ConfigKind::None)
        return head + "no such kernel configuration of rungs 3-4 (" + known
               + "; the other variant numbers were measured and removed: docs/kernel-notes/lce-first-round.md)";
    if (userFirst && k != ConfigKind::Rung4UserFirst)
        return head + "not a configuration of rung 4's user-first walk (" + known + ")";
    config = v;
    return {};
}

}  // namespace ws::lce
