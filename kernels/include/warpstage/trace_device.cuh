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
#include <utility>

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

// The ping-pong body's k-steps (rungs 6-7, session 11) take only clock reads where their phases begin and stage the
// events together later: Stamp<Traced> (<warpstage/trace.cuh>, public since session 16: the lce family uses it too).
// w.eventsAt(e) where the engine has it (Warp<>, the staged engine's one-test batch); otherwise N eventAt() calls (the
// experiments' engines: LeanStagedWarpT, RelayedWarp).
template <class W, class = void>
struct HasEventsAt : std::false_type {};
template <class W>
struct HasEventsAt<W, std::void_t<decltype(std::declval<W&>().eventsAt(std::declval<const StampedEvent (&)[1]>()))>>
    : std::true_type {};
template <class W, int N>
__device__ __forceinline__ void eventsAtOf(W& w, const StampedEvent (&e)[N])
{
    if constexpr (HasEventsAt<W>::value) {
        w.eventsAt(e);
    } else {
#pragma unroll
        for (int j = 0; j < N; ++j) w.eventAt(e[j].clock, e[j].kind, e[j].kstep, e[j].slot, e[j].aux);
    }
}

// w.kStepAt<Stages, Lag>(e) where the engine has it (Warp<>: the staged engine's packed k-step record, session 14);
// otherwise eventsAtOf (the experiments' engines).
template <class W, class = void>
struct HasKStepAt : std::false_type {};
template <class W>
struct HasKStepAt<W, std::void_t<decltype(std::declval<W&>().template kStepAt<1, 0>(
                         std::declval<const StampedEvent (&)[4]>()))>> : std::true_type {};
template <int Stages, int Lag, class W>
__device__ __forceinline__ void kStepAtOf(W& w, const StampedEvent (&e)[4])
{
    if constexpr (HasKStepAt<W>::value) w.template kStepAt<Stages, Lag>(e);
    else eventsAtOf(w, e);
}

template <class W, class = void>
struct HasLoadAt : std::false_type {};
template <class W>
struct HasLoadAt<W, std::void_t<decltype(std::declval<W&>().template loadAt<1>(std::declval<const StampedEvent (&)[2]>()))>>
    : std::true_type {};
template <int Stages, class W>
__device__ __forceinline__ void loadAtOf(W& w, const StampedEvent (&e)[2])
{
    if constexpr (HasLoadAt<W>::value) w.template loadAt<Stages>(e);
    else eventsAtOf(w, e);
}

template <bool Traced>
struct CtaTrace : NullCtaRecord {};
template <>
struct CtaTrace<true> : CtaRecordWriter {};

}  // namespace ws::trace
#endif  // __CUDACC__
