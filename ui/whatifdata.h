// What the viewer shows of the critical path and of a what-if replay (issue 13): the path's segments on
// the warp lanes, its attribution to causes, and a predicted timeline (ghost lanes). These are the GUI's
// own small types; ui/whatifengine.cpp fills them from core's analysis (warpstage/whatif.h), so the widgets
// and their tests do not depend on how core computes them.
#pragma once

#include <warpstage/lod.h>
#include <warpstage/model.h>

#include <QColor>
#include <QString>

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

class QThreadPool;

namespace ws::ui {

// The causes a critical path's length is attributed to, in the order the attribution bar draws them.
enum class PathCause : std::uint8_t {
    LoadLatency = 0,   // waiting for a load's data (issue → ready on the path)
    Mma = 1,           // tensor-core (or CUDA-core) math
    BackPressure = 2,  // the producer waiting for a free slot (ring too small)
    Epilogue = 3,      // epilogue and store of C
    Ordering = 4,      // ping-pong turn / CTA barriers
    Prologue = 5,      // set-up before the first load
    Tail = 6,          // last wave's tail: SMs idle while others finish (wave quantization)
    Launch = 7,        // launch to first CTA start, CTA to the next CTA of an SM slot, last CTA to kernel end
    Other = 8,         // gaps between phases, unnamed / user phases
    Count_ = 9
};
inline constexpr int kPathCauseCount = int(PathCause::Count_);

QString pathCauseLabel(PathCause c);      // "Load latency", ...
QString pathCauseKey(PathCause c);        // "load_latency", ... (the names of `warpstage analyze --json`)
QColor pathCauseColor(PathCause c);       // the timeline palette's colour of the matching interval kind

// One step of the critical path: lane (index into KernelTrace::lanes; -1: not on a warp, e.g. launch or
// tail) busy or waiting from start to end (absolute ns) for `cause`.
struct PathSegment {
    int lane = -1;
    TimeNs start = 0;
    TimeNs end = 0;
    PathCause cause = PathCause::Mma;
};

// The path's length split by cause (ns); total() is the path's length.
struct Attribution {
    std::array<double, kPathCauseCount> ns{};
    double total() const;
    double share(PathCause c) const;     // 0..1 of total (0 if empty)
};

struct CriticalPathView {
    std::vector<PathSegment> segments;   // in time order (a chain)
    Attribution attribution;
    TimeNs measuredNs = 0;               // the kernel's measured duration
    QString note;                        // what the analysis could not see (kernels without loads), "" if none
};

// A predicted timeline: lane i is the prediction for the measured trace's lane i (same warp), so the ghost row
// of a warp sits next to it. Each lane carries its LOD index (built off the GUI thread with the prediction).
// The index of a lane is built when the lane is first drawn (laneIndex()): a re-predict hands over 1M-interval
// lanes of which a screen shows a few dozen, and indexing them all cost more than the replay (docs/benchmarks.md).
struct GhostLanes {
    std::vector<Lane> lanes;
    TimeNs start = 0, end = 0;             // predicted kernel start / end (absolute ns, measured time base)
    // From one vector of intervals per lane (sorted or not; sorted here by start); the index is built lazily.
    static std::shared_ptr<GhostLanes> fromIntervals(const KernelTrace& measured,
                                                     std::vector<std::vector<Interval>> perLane);
    // Lane i's LOD index, built on the first call (thread-safe: the raster threads may ask for lanes at once).
    const lod::SeriesIndex& laneIndex(std::size_t i) const;
    void resetIndex();                     // after `lanes` changed: every lane's index unbuilt
    void buildIndex();                     // every lane's index now
    std::size_t indexedLanes() const;      // how many lanes' indexes are built (tests)

private:
    mutable std::vector<lod::SeriesIndex> m_index;
    mutable std::unique_ptr<std::once_flag[]> m_once;
};

// Where the predicted timeline is drawn: not at all, as a ghost row under each warp, or as a frame over each lane.
enum class GhostMode { Off = 0, Beside = 1, Over = 2 };

// The replay's parameters as the what-if panel edits them. 0 / 1.0 / false mean "as recorded".
struct WhatIfParams {
    int stages = 0;                  // ring stages (0: as recorded)
    double loadLatency = 1.0;        // load latency ×
    double mmaTime = 1.0;            // MMA time ×
    double epilogueTime = 1.0;       // epilogue time ×
    bool epilogueOverlapped = false; // epilogue overlapped with the next tile's main loop
    bool persistent = false;         // persistent CTAs (one per SM, walking tiles)
    int sms = 0;                     // number of SMs (0: as recorded)
    bool noSync = false;             // CTA barriers dropped (`warpstage whatif --no-sync`)
    int ctasPerSm = 0;               // CTAs resident at once per SM (`--ctas-per-sm`; 0: as recorded)
    bool producerWarp = false;       // worker kernels: loads issued by a producer warp (`--producer-warp`)
    bool sharedResources = true;     // the SM's tensor cores shared by its CTAs (false: `--no-shared-resources`)
    bool loadBandwidth = false;      // the SM's load bandwidth shared by its loads (opt-in: `--load-bandwidth`)
    int tileOrder = 0;               // persistent kernels: the order tiles are dealt in (`--tile-order`; the value
                                     // of ws::TileOrder: 0 recorded, 1 row, 2 column, 3 reverse, 4 longest-first)
    bool operator==(const WhatIfParams&) const = default;
    bool unchanged() const { return *this == WhatIfParams{}; }
};

struct Prediction {
    WhatIfParams params;
    TimeNs measuredNs = 0;
    TimeNs predictedNs = 0;
    Attribution attribution;              // of the predicted critical path
    std::shared_ptr<const GhostLanes> ghost;  // may be null (no timeline predicted)
    QString error;                        // non-empty: the replay refused these parameters (why)
    QString note;                         // what a parameter could not do on this kernel (shown under the result)
    double computeMs = 0;                 // how long the replay took (worker thread, wall clock)
    double computeCpuMs = 0;              // the worker thread's CPU time for it (what a busy machine does not inflate)
};

// A replay of one kernel (whatifengine.h, makePredictor), run on a worker thread: parameters, whether the predicted
// timeline is wanted, and a flag (may be null) that the caller sets when it no longer wants the answer.
using WhatIfPredictor = std::function<Prediction(const WhatIfParams&, bool withTimeline, const std::atomic<bool>* cancel)>;

// The one worker thread of the what-if work (critical path, replays): never the global pool, whose threads the
// timeline's index build and raster need (a replay of seconds there would hold up a kernel's first paint).
QThreadPool* whatIfPool();

}  // namespace ws::ui
