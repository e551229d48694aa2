// The ladder's spelling of the public instrumentation API (<warpstage/trace.cuh>): a thin layer, no
// engine of its own. Every rung is a template on `bool Traced` and holds one WarpTrace<Traced> per
// warp and one CtaTrace<Traced> per CTA, with the buffer passed explicitly as a kernel argument:
//
//   WarpTrace<true>  = ws::trace::Warp<Staged>: the public Warp class with the staged engine
//                      (shared-memory staging + TMA bulk copies, kTraceSmemPerWarp bytes of shared memory
//                      per warp from the kernel); the rungs call its begin(buffer, ...), event(), now(),
//                      eventAt() and end();
//   WarpTrace<false> = ws::trace::Warp<Off>: every member an empty inline function, so the untraced build
//                      contains no trace code at all (checked on the SASS by a test);
//   CtaTrace<true>   = CtaRecordWriter (the engine of ws::trace::Cta), CtaTrace<false> = NullCtaRecord.
//
// The ladder does not use the control symbol (its host code passes the buffer), so this layer asks
// trace.cuh for no module symbols. Cost model and rules: trace.cuh and docs/your-kernels.md.
#pragma once

#ifndef WARPSTAGE_TRACE_NO_SYMBOLS
#define WARPSTAGE_TRACE_NO_SYMBOLS
#define WARPSTAGE_DETAIL_LADDER_SET_NO_SYMBOLS_
#endif
#include "warpstage/trace.cuh"
#include "warpstage/trace_relay.cuh"
#include "warpstage/trace_lean.cuh"
#ifdef WARPSTAGE_DETAIL_LADDER_SET_NO_SYMBOLS_
#undef WARPSTAGE_TRACE_NO_SYMBOLS
#undef WARPSTAGE_DETAIL_LADDER_SET_NO_SYMBOLS_
#endif

#ifdef __CUDACC__
namespace ws::trace {

template <bool Traced>
using WarpTrace = Warp<typename std::conditional<Traced, Staged, Off>::type>;

// The ping-pong body's (rungs 6-7, session 9): RelayedWarp (trace_relay.cuh: events staged in shared memory, one
// warp of the CTA copies them out; no flush on the warps that record), or nothing.
struct NullRelayedWarp : NullWarp {
    __device__ __forceinline__ void attach(RelayShared*, int) {}
    __device__ __forceinline__ void endRelay(void*) {}
    __device__ __forceinline__ void endOwn(void*) {}
};
template <bool Traced>
using RelayWarpTrace = typename std::conditional<Traced && kEnabled, RelayedWarp, NullRelayedWarp>::type;

struct NullLeanWarp : NullWarp {
    __device__ __forceinline__ void settle() {}
};
// The ping-pong body's lean start (session 10, -DWS_PP_TRACE_LEAN_START=1): LeanStagedWarp (trace_lean.cuh: no header
// load before the warp's first events), or nothing.
// WarpCopy (-DWS_PP_TRACE_LEAN_START=2): the flush copied by lanes 16-31, no async proxy (trace_lean.cuh).
template <bool Traced, bool WarpCopy = false>
using LeanWarpTrace = typename std::conditional<Traced && kEnabled, LeanStagedWarpT<WarpCopy>, NullLeanWarp>::type;

template <bool Traced>
struct CtaTrace : NullCtaRecord {};
template <>
struct CtaTrace<true> : CtaRecordWriter {};

}  // namespace ws::trace
#endif  // __CUDACC__
