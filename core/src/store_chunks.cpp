// Interval chunks: the packed per-warp interval columns (docs/schema.md, "Interval chunks").
#include "store_impl.h"

#include <climits>

namespace ws::detail {

const char* const kInsertChunkSql =
    "INSERT INTO interval_chunks(kernel_id, warp_id, chunk_index, first_start_ns, last_end_ns, count, starts, "
    "durations, kinds, slots, ksteps) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

void decodeChunk(const std::string& path, RowId chunkId, RowId warpId, TimeNs firstStart, std::int64_t count,
                 std::string_view starts, std::string_view durations, std::string_view kinds, std::string_view slots,
                 std::string_view ksteps, Lane& lane)
{
    const std::string where = "interval chunk " + str(chunkId) + " of warp " + str(warpId);
    if (count < 0 || count > detail::kMaxChunkIntervals)
        fail(path, where + ": bad interval count " + str(count));
    const auto n = static_cast<std::size_t>(count);
    if (kinds.size() != n)
        fail(path, where + ": truncated or bad blob (kinds has " + str(static_cast<std::int64_t>(kinds.size()))
                       + " bytes, expected " + str(count) + ")");
    auto sizeOk = [n](std::string_view b) { return b.size() >= n && b.size() <= 10 * n; };
    if (!sizeOk(starts) || !sizeOk(durations) || !sizeOk(slots) || !sizeOk(ksteps))
        fail(path, where + ": truncated or bad blob (column sizes do not match " + str(count) + " intervals)");

    const std::size_t old = lane.size();
    lane.start.resize(old + n);
    lane.duration.resize(old + n);
    lane.kind.resize(old + n);
    lane.slot.resize(old + n);
    lane.kstep.resize(old + n);

    auto u8 = [](std::string_view b) { return reinterpret_cast<const unsigned char*>(b.data()); };
    const unsigned char *ps = u8(starts), *pe_s = ps + starts.size();
    const unsigned char *pd = u8(durations), *pe_d = pd + durations.size();
    const unsigned char *pl = u8(slots), *pe_l = pl + slots.size();
    const unsigned char *pk = u8(ksteps), *pe_k = pk + ksteps.size();
    const unsigned char* pkind = u8(kinds);

    TimeNs cur = firstStart;
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t d, dur, sl, ks;
        if (!detail::getVarint(ps, pe_s, d) || !detail::getVarint(pd, pe_d, dur) || !detail::getVarint(pl, pe_l, sl)
            || !detail::getVarint(pk, pe_k, ks))
            fail(path, where + ": truncated or bad blob (interval " + str(static_cast<std::int64_t>(i)) + ")");
        TimeNs s;
        if (d > static_cast<std::uint64_t>(std::numeric_limits<TimeNs>::max())
            || __builtin_add_overflow(cur, static_cast<TimeNs>(d), &s))
            fail(path, where + ": timestamp out of range");
        cur = s;
        const std::int64_t du = detail::unzigzag(dur);
        if (du < 0)
            fail(path, where + ": negative duration (" + str(du) + " ns) at " + str(s) + " ns");
        TimeNs e;
        if (__builtin_add_overflow(s, du, &e))
            fail(path, where + ": interval end out of range");
        const std::int64_t slot = detail::unzigzag(sl);
        const std::int64_t kstep = detail::unzigzag(ks);
        if (slot < INT16_MIN || slot > INT16_MAX)
            fail(path, where + ": slot " + str(slot) + " out of range");
        if (kstep < INT32_MIN || kstep > INT32_MAX)
            fail(path, where + ": k-step " + str(kstep) + " out of range");
        const unsigned k = pkind[i];
        const std::size_t j = old + i;
        lane.start[j] = s;
        lane.duration[j] = static_cast<std::int32_t>(std::min<std::int64_t>(du, INT32_MAX));
        lane.kind[j] = k < static_cast<unsigned>(kIntervalKindCount) ? static_cast<IntervalKind>(k) : IntervalKind::Other;
        lane.slot[j] = static_cast<std::int16_t>(slot);
        lane.kstep[j] = static_cast<std::int32_t>(kstep);
    }
    if (ps != pe_s || pd != pe_d || pl != pe_l || pk != pe_k)
        fail(path, where + ": bad blob (trailing bytes after " + str(count) + " intervals)");
    if (old > 0 && n > 0 && lane.start[old] < lane.start[old - 1])
        fail(path, where + ": chunks out of order (starts before the previous chunk)");
}


}  // namespace ws::detail
