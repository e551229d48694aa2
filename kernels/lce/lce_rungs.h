// Device side of the linear-compression family: the problem's buffers and the five rungs.
// Rungs 0-2 (rungs_cublas.cu) use cuBLAS for their GEMMs plus small kernels, as the published story
// did; rungs 3 (epilogue_warp.cu) and 4 (user_first.cu) are our TMA + wgmma kernel (one body, lce_body.cuh)
// instrumented with <warpstage/trace.cuh>.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "lce_shape.h"

namespace ws::lce {

struct Problem {
    Shape s;
    int users = 0, kUserP = 0, kCandP = 0;
    // inputs
    __half *wUser = nullptr, *wCand = nullptr;  // M x K_user, M x K_cand
    __half *eUser = nullptr, *eCand = nullptr;  // [users, K_user, N], [B, K_cand, N]
    std::int32_t* userOf = nullptr;             // [B]
    // layouts a rung keeps (prepared once, untimed: how a model stores its weights and tables)
    __half* wCat = nullptr;                      // rung 0: [W_user | W_cand], M x (K_user + K_cand)
    __half *wUserP = nullptr, *wCandP = nullptr; // rungs 2-3: K padded to a multiple of 8 (zero columns)
    __half *eUserP = nullptr, *eCandP = nullptr; // rung 2: [.., K padded, N] (zero rows); rung 3 reads E_cand as is
    // workspaces and the output
    __half* cat = nullptr;  // rung 0: [B, K_user + K_cand, N]
    __half* u = nullptr;    // rungs 1-3: U = W_user . E_user, [users, M, N]
    __half* out = nullptr;  // [B, M, N]
    int* flags = nullptr;   // rung 4: ready flags of the user tiles (lceFlagCount ints, zeroed once)
    cublasHandle_t blas = nullptr;
    cudaStream_t stream = nullptr;
    // the last launch of rungs 3-4 (the driver's --trace-cost attaches a trace buffer to that kernel's module)
    const void* lastKernel = nullptr;
    unsigned lastGrid = 0;
};

// Allocates and fills the inputs (random, from the seed) and everything rungs 0-4 need.
std::string allocate(Problem& p, const Shape& s);
void release(Problem& p);

// Enqueues rung `rung` on p.stream (refusal() must be empty). Returns "" or what failed.
std::string runRung(int rung, Problem& p);

// rungs_cublas.cu
std::string runOriginal(Problem& p);
std::string runDecomposed(Problem& p, bool padded);
std::string userGemm(Problem& p, bool padded);  // U = W_user . E_user (rungs 1-3)
// epilogue_warp.cu (rung 3: the epilogue warp, U from cuBLAS)
std::string runFusedEpilogueWarp(Problem& p);
// epilogue_warp.cu: rung 3's kernel alone (U as it is: the driver's --user-stage diagnostic)
std::string runCandidateKernel(Problem& p);
// user_first.cu (rung 4: rung 3 + the user stage in one persistent launch; its walk per shape: rung4Broadcast)
std::string runUserFirst(Problem& p);
// true: rungs 3-4 launch their traced kernels (lceEpilogueWarp, lceUserFirst: the trace code, recording when a trace
// buffer is attached to the module's control symbol); false: the same kernels compiled without it (...Untraced: no
// clock reads, no trace stores or branches). Starts true under warpstage-record (WARPSTAGE_SINK set), else false;
// the driver's --trace-cost sets it around its traced launches (epilogue_warp.cu, s15-lceuntraced).
bool& traceLaunches();
// true: rung 4 launches run the user-first walk's user units alone (the driver's --user-stage diagnostic)
bool& userStageOnly();
// Rungs 3-4's kernel configuration (lce_shape.h: configKind) for the launches that follow; -1: back to LCE_TVAR's;
// false (nothing set) when there is no configuration v (`LCE_TVAR_B=v lce --interleave 4,4` times configuration v
// against the rung as built in one process).
bool setRungVariant(int v);
// transposed_probe.cu (s8-lcespeed): the transposed formulation's main loop alone (no output), 3 or 4 stages
std::string runTransposedProbe(Problem& p, int stages);
// The epoch a rung-4 launch writes into the ready flags (never reset: each launch writes a new one). Atomic: threads
// that launch rung 4 on their own problems at once (lce_capi.h: one thread per problem) never repeat a problem's last
// epoch (a plain ++ could lose an update and hand a thread the epoch its flags already hold: a candidate tile would
// read its user tile as ready before it is).
inline int nextFlagEpoch()
{
    static std::atomic<int> epoch{0};
    return epoch.fetch_add(1, std::memory_order_relaxed) + 1;
}
// Ready flags rung 4 needs (lce_shape.h: one per user tile half of its walk).
inline size_t lceFlagCount(const Shape& s) { return userFirstWalk(s, 1).flags; }

// The fp32 reference (reference.cu): ref[b] = W_cand.E_cand[b] + W_user.E_user[u(b)] in fp32 from
// the same fp16 inputs, and the comparison: |out - ref| <= kRelTol*|ref| + kAbsTol*rms(ref).
inline constexpr double kRelTol = 4e-3, kAbsTol = 1e-2;
struct CheckResult {
    std::uint64_t bad = 0, nonFinite = 0;
    double maxErr = 0, rms = 0;
    std::int64_t firstBad = -1;  // flat index of the first violation
    float got = 0, want = 0;
    bool passed() const { return bad == 0 && nonFinite == 0; }
};
std::string reference(const Problem& p, float* ref);
std::string compare(const Problem& p, const float* ref, CheckResult& r);
// One rung's check as `lce --check` runs it (and the library, lce_capi.cpp): p.out poisoned with NaN (unwritten
// outputs fail), the rung on p.stream, a synchronisation, compare(). Returns "" or what failed to run.
std::string checkRung(int rung, Problem& p, const float* ref, CheckResult& r);
// The check's line: "PASS rung R NAME: max |err| ..." or "FAIL rung R NAME: ..." (err: checkRung's answer).
std::string checkVerdict(int rung, const std::string& err, const CheckResult& c);

}  // namespace ws::lce
