// Level-of-detail index for the timeline (Tracy / Perfetto style). Qt-free.
//
// A "series" is a run of spans sorted by start: a warp lane of a KernelTrace, or
// a series derived per CTA (loads in flight, load/compute overlap). A span has
// a category (an IntervalKind for lanes, a small code for derived series).
//
// SeriesIndex answers a viewport [t0, t1) split into N equal buckets (the
// viewer asks about two buckets per pixel): for every bucket, the fraction of
// its time covered by each category and how many spans start in it. It keeps,
// per block of kBlock spans, the running sum of covered time per category
// present in the series (a prefix sum) and the running maximum end. A bucket
// that holds thousands of spans is answered by two binary searches, two
// partial blocks and one prefix-sum difference: the work per frame is
// O(buckets x (log n + kBlock)) per series whatever the number of spans, and
// a series holding fewer spans than buckets is simply walked once.
// Memory: (categories present + 1) x 8 bytes per kBlock spans, i.e. about 3-4
// bytes per interval for a warp lane that uses 5-6 kinds.
//
// Spans of one series are expected not to overlap (a warp does one thing at a
// time). Overlapping spans are tolerated (coverage is clamped to the bucket)
// but the mix of a bucket then follows the spans that start in it.
#pragma once

#include "warpstage/model.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace ws::lod {

inline constexpr int kBlock = 16;
// Distinct categories one series keeps apart: any code 0..255 (a user-named phase is kind 64+) gets its own;
// a series with more distinct codes folds the highest ones into code 0 ("other").
inline constexpr int kMaxCategories = 32;

struct SeriesRef {
    const TimeNs* start = nullptr;
    const std::int32_t* duration = nullptr;
    const std::uint8_t* cat = nullptr;
    std::size_t n = 0;
    TimeNs end(std::size_t i) const { return start[i] + duration[i]; }
};
SeriesRef laneRef(const Lane& lane);

// Result of one query: bucket b covers [t0 + b*w, t0 + (b+1)*w) with w = (t1-t0)/N.
struct BucketMix {
    int buckets = 0;
    int categories = 0;                    // number of categories (stride of cover)
    std::array<std::uint8_t, kMaxCategories> category{};  // compact index -> category code
    std::vector<float> cover;              // buckets x categories, fraction of the bucket's time in [0,1]
    std::vector<std::uint16_t> starts;     // spans starting in the bucket (saturating)
    float coverAt(int bucket, int compact) const { return cover[std::size_t(bucket) * categories + compact]; }
    float totalCover(int bucket) const;
    // compact index of the category with the most time in the bucket, -1 if empty
    int dominant(int bucket) const;
};

class SeriesIndex {
public:
    // Builds the block summaries; s must stay alive and unchanged while queried.
    void build(const SeriesRef& s);
    bool built() const { return m_built; }
    // Answers [t0,t1) (ns relative to origin; fractional allowed) in nBuckets buckets.
    // Works before build() too (then by walking the spans: same answer, slower).
    void query(const SeriesRef& s, TimeNs origin, double t0, double t1, int nBuckets, BucketMix& out) const;
    std::size_t memoryBytes() const;
    int categoryCount() const { return m_ncat; }

private:
    void prepareCategories(const SeriesRef& s, BucketMix& out, std::array<std::int8_t, 256>& slot) const;
    std::vector<TimeNs> m_prefix;   // (blocks+1) x m_ncat: covered time per category of spans [0, b*kBlock)
    std::vector<TimeNs> m_maxEnd;   // per block: max end over spans [0, (b+1)*kBlock)
    std::array<std::uint8_t, kMaxCategories> m_cats{};
    std::array<std::int8_t, 256> m_slot{};
    int m_ncat = 0;
    bool m_built = false;
};

// Brute-force reference of SeriesIndex::query (tests): walks every span for every bucket.
void queryReference(const SeriesRef& s, TimeNs origin, double t0, double t1, int nBuckets, BucketMix& out);

// Index of the span containing t (ns relative to origin), or else the nearest one
// within `slack` ns; -1 if none.
std::ptrdiff_t findAt(const SeriesRef& s, TimeNs origin, double t, double slack);

// A series owning its spans (derived series).
struct OwnedSeries {
    std::vector<TimeNs> start;
    std::vector<std::int32_t> duration;
    std::vector<std::uint8_t> cat;
    SeriesIndex index;
    SeriesRef ref() const { return {start.data(), duration.data(), cat.data(), start.size()}; }
    std::size_t memoryBytes() const;
};

// Derived-series categories.
enum class OverlapState : std::uint8_t { None = 0, LoadOnly = 1, ComputeOnly = 2, Both = 3 };
inline constexpr int kMaxLoadsCategory = 4;  // loads-in-flight series: category = min(count, 4)

struct BuildOptions {
    // Called with 0..100; return false to cancel (build() then returns nullptr).
    std::function<bool(int)> progress;
};

// The index of a whole KernelTrace: one SeriesIndex per lane, and per CTA the
// loads-in-flight series (from KernelTrace::loads) and the overlap series
// (loads in flight vs compute kinds of the CTA's lanes).
class TraceIndex {
public:
    static std::unique_ptr<TraceIndex> build(const KernelTrace& trace, const BuildOptions& options = {});

    const SeriesIndex& lane(std::size_t i) const { return m_lanes[i]; }
    const OwnedSeries& ctaLoads(std::size_t cta) const { return m_loads[cta]; }
    const OwnedSeries& ctaOverlap(std::size_t cta) const { return m_overlap[cta]; }
    int maxLoadsInFlight(std::size_t cta) const { return m_maxInFlight[cta]; }
    std::size_t laneCount() const { return m_lanes.size(); }
    std::size_t ctaCount() const { return m_loads.size(); }
    std::size_t memoryBytes() const;

    // Overlap and loads series of one CTA (exposed for tests).
    static void buildCtaSeries(const KernelTrace& trace, std::size_t cta, const std::vector<std::size_t>& lanes,
                               const std::vector<std::size_t>& loads, OwnedSeries& loadsOut, OwnedSeries& overlapOut,
                               int& maxInFlight);

private:
    std::vector<SeriesIndex> m_lanes;
    std::vector<OwnedSeries> m_loads;
    std::vector<OwnedSeries> m_overlap;
    std::vector<int> m_maxInFlight;
};

}  // namespace ws::lod
