// The linear-compression family's problem (CUDA-free, unit-tested by tst_lce_shape):
//   out[b] = W_cand . E_cand[b] + W_user . E_user[u(b)]      for every candidate b < B
// W_cand M x K_cand, W_user M x K_user (row-major), E_cand [B, K_cand, N], E_user [users, K_user, N],
// out [B, M, N] (N contiguous everywhere); fp16 in, fp32 accumulation, fp16 out. u maps each
// candidate to its user (int32): `perUser` candidates per user, contiguous or shuffled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ws::lce {

struct Shape {
    int m = 433, n = 256, kUser = 1178, kCand = 866, b = 1024, perUser = 70;
    bool shuffled = false;
    std::uint64_t seed = 1;

    int users() const { return (b + perUser - 1) / perUser; }
    // Useful FLOPs: 2*M*N*(K_cand*B + K_user*users) (the user GEMM counted once per user).
    double flops() const;
    std::string text() const;  // "M=433 N=256 Ku=1178 Kc=866 B=1024 per-user=70"
};

inline constexpr int kRungs = 5;
const char* rungName(int rung);   // "original", "decomposed", "padded", "fused-epilogue", "persistent"
const char* rungIdea(int rung);   // one sentence

// K rounded up to a multiple of 8 (16-byte fp16 rows).
inline int padK(int k) { return (k + 7) / 8 * 8; }

// "" if `rung` can run `s`, else a sentence saying why not (the driver refuses, never a wrong result).
std::string refusal(int rung, const Shape& s);

// Bytes the rung moves through DRAM at least: the compulsory traffic (inputs read once, out written
// once) plus the intermediates it writes and reads back.
double bytesMoved(int rung, const Shape& s);
// The compulsory traffic alone (any implementation).
double compulsoryBytes(const Shape& s);

// u(b) for every candidate: b / perUser, then (shuffled) a Fisher-Yates permutation from the seed.
std::vector<std::int32_t> userMapping(const Shape& s);

// Rungs 3-4's walk (lce_body.cuh, host side; since s9-lcet the transposed tiles): a unit is (batch, M tile of
// kUfTileM = 224 rows of M, N tile of kUfTileN = 256 columns) and is computed by one CTA pair (kUfCluster), each CTA on
// one 128-wide half of the N tile; user units first (rung 4; rung 3 walks the candidate units alone), M tiles
// fastest; cluster c of `clusters` takes units c, c + clusters, ... `clusters` is the resident count, or the units if
// fewer. Ready flags (rung 4): one per (user, M tile, N tile, CTA rank, half of 64 N), index
// (((user * mTiles + tm) * nTiles + tn) * 2 + rank) * 2 + half; `flags` of them, the driver allocates that many
// (lceFlagCount). mUnits = mTiles (every unit one M tile; sessions 5-8's walk paired two M tiles of 128 rows).
// The broadcast walk (broadcast = true; rung 4 since s11-lceuser where rung4Broadcast says so): a unit is (user, M
// tile, N tile), M tile fastest, and runs the user tile (K_user) and then the tiles of the user's candidates (K_cand)
// on the same CTA pair, U's tile kept in the consumers' registers (fp16) and added in each candidate's epilogue: no
// U in global memory, no ready flags (flags = 0), userUnits = units (every unit starts with its user tile). It needs
// the candidates of a user to be b = u * perUser + i (the unshuffled mapping).
inline constexpr int kUfTileM = 224, kUfTileN = 256, kUfCluster = 2;
struct UserFirstWalk {
    int mTiles = 0, mUnits = 0, nTiles = 0;
    long long userUnits = 0, units = 0;
    int clusters = 0;
    std::size_t flags = 0;
    bool broadcast = false;
};
UserFirstWalk userFirstWalk(const Shape& s, int maxClusters, bool broadcast = false);
// Rung 4's walk per shape, for `clusters` resident CTA pairs: the broadcast walk where it has the unshuffled mapping,
// few candidates per user (at most kBroadcastMaxPerUser: the user stage is a large share of the work; the range
// measured) and units that balance over the pairs (its units are 1 + perUser tiles long: the last round's idle pairs,
// ceil(units / clusters) * clusters / units - 1, at most kBroadcastMaxIdle); the user-first walk otherwise.
// Measured (H200, 66 pairs): docs/benchmarks/lce-transposed.md, s11-lceuser.
inline constexpr int kBroadcastMaxPerUser = 5;
inline constexpr double kBroadcastMaxIdle = 0.05;
bool rung4Broadcast(const Shape& s, int clusters);
// The balanced user-first walk (s11-lcewalk; lce_body.cuh's kVariant walk = 2): the same units as userFirstWalk's
// user-first walk, dealt so that the longest pair has as few k-steps as any static assignment allows. Pairs are
// numbered by position q = 0 .. pairs-1 (the kernel's cluster index). User units go round robin from the LAST position
// (unit u to position pairs - 1 - u % pairs), so the positions with one user unit more are the last ones; then each
// position q takes balancedCandidates(w, q) candidate units (non-increasing in q: the positions with user work take
// fewer), dealt round robin over the positions that still take one: in round i the first balancedRoundWidth(w, i)
// positions take candidate units S_i + q, S_i = the widths of the rounds before. So every unit is dealt exactly once,
// each position walks its units in increasing order, user units first (lce_body.cuh's deadlock argument), and the
// candidates in flight at any time stay as close together as round robin keeps them.
// The counts: the least T (k-steps) for which the positions' capacities floor((T - userSteps(q)) / kStepsCand) cover
// the candidate units; then water-filled (each position min(capacity, x) for the least x that covers them, the excess
// taken one each from the last positions at x). At most 4 distinct counts (two capacities, each level split once).
#if defined(__CUDACC__)
#define WS_LCE_HD __host__ __device__ __forceinline__
#else
#define WS_LCE_HD inline
#endif
inline constexpr int kBalancedLevels = 4;
struct BalancedWalk {
    int pairs = 0;
    int userUnits = 0, candUnits = 0;   // (32-bit: the kernel's unit numbers)
    int kStepsUser = 0, kStepsCand = 0; // k-steps of a user / candidate unit
    // positions [end[j-1], end[j]) take count[j] candidate units (end[-1] = 0); count non-increasing, unused levels
    // count 0 and end = pairs
    int count[kBalancedLevels] = {}, end[kBalancedLevels] = {};
    int longest = 0;  // the longest position's k-steps
};
// For `pairs` resident CTA pairs (userFirstWalk(s, maxClusters).clusters). kStepsUser / kStepsCand: ceil(K / 64).
BalancedWalk balancedWalk(const Shape& s, int pairs);
// Candidate units position q takes.
WS_LCE_HD int balancedCandidates(const BalancedWalk& w, int q)
{
    int n = 0;
#pragma unroll
    for (int j = kBalancedLevels - 1; j >= 0; --j)
        if (q < w.end[j]) n = w.count[j];
    return n;
}
// How many positions take a candidate unit in round i (those with more than i: a prefix, the counts non-increasing).
WS_LCE_HD int balancedRoundWidth(const BalancedWalk& w, int i)
{
    int e = 0;
#pragma unroll
    for (int j = 0; j < kBalancedLevels; ++j)
        if (w.count[j] > i) e = w.end[j];
    return e;
}
// Position q's first user unit (round robin from the last position; the next ones `pairs` apart).
WS_LCE_HD int balancedFirstUser(const BalancedWalk& w, int q) { return w.pairs - 1 - q; }
// User units position q takes.
WS_LCE_HD int balancedUserUnits(const BalancedWalk& w, int q)
{
    const int r = balancedFirstUser(w, q);
    return r < w.userUnits ? (w.userUnits - 1 - r) / w.pairs + 1 : 0;
}
// The walk of position q, as the kernel runs it: u = balancedFirst(...), then u = balancedNext(..., u, ...) while
// u < end (end = userUnits + candUnits; lce --user-stage: userUnits, the user units alone).
struct BalancedCursor {
    int round = -1, c = 0;  // -1: in the user units; then the candidate round and the candidate index
};
WS_LCE_HD int balancedCandidateStart(const BalancedWalk& w, int q, int end, BalancedCursor& k)
{
    k.round = 0;
    k.c = q;
    return balancedCandidates(w, q) > 0 ? w.userUnits + q : end;
}
WS_LCE_HD int balancedFirst(const BalancedWalk& w, int q, int end, BalancedCursor& k)
{
    const int u = balancedFirstUser(w, q);
    return u < w.userUnits ? u : balancedCandidateStart(w, q, end, k);
}
WS_LCE_HD int balancedNext(const BalancedWalk& w, int q, int u, int end, BalancedCursor& k)
{
    if (k.round < 0) {
        u += w.pairs;
        return u < w.userUnits ? u : balancedCandidateStart(w, q, end, k);
    }
    k.c += balancedRoundWidth(w, k.round);
    ++k.round;
    return k.round < balancedCandidates(w, q) ? w.userUnits + k.c : end;
}
// The units of position q in its order (the tests: the cursor above, to the end).
std::vector<long long> balancedUnitsOf(const BalancedWalk& w, int q);

// Command-line options of the driver. Returns "" or the sentence to print (exit 2).
struct Options {
    Shape shape;
    int rung = -1;  // -1: all
    bool check = false, time = false, sweep = false;
    bool traceCost = false;  // rungs 3-4: traced vs untraced time (lce_main.cu)
    int abA = -1, abB = -1;  // --interleave A,B: rungs A and B timed alternately in one process (lce_main.cu)
    bool userStage = false;  // --user-stage: the two stages of rungs 3-4 timed apart (lce_main.cu)
    int warmup = 5, iters = 20;
};
std::string parseOptions(int argc, char** argv, Options& o);
const char* usage();

}  // namespace ws::lce
