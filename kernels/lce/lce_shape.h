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

// Rungs 3-4's kernel configurations (lce_body.cuh: the Variant of each). The number is the kernels' template argument
// V, the value the switches take and the variant number the notes use (the other numbers were measured and removed:
// docs/kernel-notes/lce-first-round.md, "Tried and removed"). What rung 3 and rung 4 run as built:
inline constexpr int kRung3Config = 0;            // rung 3: whole staging halves, 3 ring stages
inline constexpr int kRung4BroadcastConfig = 10;  // rung 4's broadcast walk (where rung4Broadcast says so)
inline constexpr int kRung4UserFirstConfig = 15;  // rung 4's user-first walk (elsewhere)
// What a configuration is (None: there is no configuration of that number).
enum class ConfigKind { None, Rung3, Rung4Broadcast, Rung4UserFirst };
constexpr ConfigKind configKind(int config)
{
    return config == kRung3Config            ? ConfigKind::Rung3
           : config == kRung4BroadcastConfig ? ConfigKind::Rung4Broadcast
           : config == kRung4UserFirstConfig ? ConfigKind::Rung4UserFirst
                                             : ConfigKind::None;
}
// The switches (read by the driver's option parser, which refuses a bad value, and by rungs 3-4's launches):
//   LCE_TVAR=V    every launch of rungs 3-4 that has configuration V runs it (rung 3: a Rung3 one; rung 4: a
//                 Rung4* one, on every shape the walk can run), the others run as built;
//   LCE_TVAR_B=V  the same for rung B of `lce --interleave A,B` (A,A allowed: V against the rung as built);
//   LCE_R4UF=V    rung 4's user-first walk runs V (a Rung4UserFirst one) where rung 4 takes that walk.
// The configuration `value` of switch `name` names: "" and `config` set, or the sentence that refuses the value.
std::string parseConfigSwitch(const char* name, const char* value, int& config);
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
