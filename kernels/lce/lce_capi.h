/* liblce_capi: the linear-compression rungs (kernels/lce, issue 11) behind a small C API, so that another process's
 * timing loop (scripts/lce/torch_reference.py --vs-lce, through ctypes) can run a rung on its own CUDA stream, side by
 * side with its own kernels. The problem is the driver's (`lce`): the same random inputs from the seed, the same
 * prepared layouts (K padded, concatenated) and ready flags (lce_rungs.h allocate), the same fp32 reference check.
 *
 * Every function returns LCE_OK (0) or an LCE_E_* code, and writes a sentence into msg (msg_size bytes, always
 * NUL-terminated when msg_size > 0; msg may be NULL): what failed, or for lce_check the PASS / FAIL line `lce --check`
 * prints. Nothing aborts. A stream is a cudaStream_t passed as void* (NULL: the legacy default stream); the caller's
 * stream is used for the call and not kept. Not thread-safe: one thread per problem.
 *
 * Typical use: lce_open(shape) -> lce_check(p, 4, stream) -> lce_run(p, 4, stream) ... -> lce_close(p). */
#ifndef WARPSTAGE_LCE_CAPI_H
#define WARPSTAGE_LCE_CAPI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LCE_API __attribute__((visibility("default")))
#else
#define LCE_API
#endif

enum {
    LCE_OK = 0,
    LCE_E_ARG = 1,     /* a bad argument: NULL problem, a size < 1, no such rung */
    LCE_E_NO_GPU = 2,  /* no CUDA device here, or none of compute capability 9.x (the rungs are built for sm_90a) */
    LCE_E_CUDA = 3,    /* a CUDA / cuBLAS call failed (out of memory, a launch error) */
    LCE_E_REFUSED = 4, /* the rung refuses the shape (e.g. rungs 3-4 need N a multiple of 8) */
    LCE_E_CHECK = 5    /* lce_check: the rung's output is outside the tolerance of the fp32 reference */
};

typedef struct LceProblem LceProblem;

/* The version of this API (1). */
LCE_API int lce_api_version(void);

/* Allocates the problem on the current device and fills it (random from seed, as `lce --seed`) on a stream of its
 * own, synchronised before it returns (so any stream may use it next). shuffled != 0: the candidates' user mapping
 * shuffled (`lce --shuffled`). *out gets the problem (NULL on failure); msg the shape ("M=433 N=256 ..."). */
LCE_API int lce_open(int m, int n, int k_user, int k_cand, int b, int per_user, int shuffled, unsigned long long seed,
                     LceProblem** out, char* msg, size_t msg_size);

/* Enqueues rung (0-4) on stream, asynchronously: errors of the enqueue (refusal, launch) only. */
LCE_API int lce_run(LceProblem* p, int rung, void* stream, char* msg, size_t msg_size);

/* Checks rung against the fp32 reference as `lce --check` does (output poisoned with NaN, the rung, compare), on
 * stream, synchronously. LCE_OK with "PASS rung ..." in msg, LCE_E_CHECK with "FAIL rung ...", or another error. */
LCE_API int lce_check(LceProblem* p, int rung, void* stream, char* msg, size_t msg_size);

/* Useful FLOPs of the problem's shape, 2*M*N*(K_cand*B + K_user*users) (0 for NULL). */
LCE_API double lce_flops(const LceProblem* p);

/* Frees the problem (NULL: nothing). Synchronises the device first. */
LCE_API void lce_close(LceProblem* p);

#ifdef __cplusplus
}
#endif

#endif /* WARPSTAGE_LCE_CAPI_H */
