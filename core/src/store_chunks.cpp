// Interval chunks: the packed per-warp interval columns (docs/schema.md, "Interval chunks").
#include "store_impl.h"

#include <zstd.h>

#include <climits>
#include <cstdlib>

namespace ws::detail {

namespace {

// Decodes the five varint columns of one chunk (raw, or delta-coded as codec Zstd stores them) and
// appends them to `lane`.
void decodeColumns(const std::string& path, const std::string& where, TimeNs firstStart, std::int64_t count,
                   std::string_view starts, std::string_view durations, std::string_view kinds, std::string_view slots,
                   std::string_view ksteps, bool deltaCoded, Lane& lane)
{
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

    TimeNs cur = firstStart;  // raw: previous start; delta-coded: previous end
    std::int64_t prevKstep = -1;
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t d, dur, sl, ks;
        if (!detail::getVarint(ps, pe_s, d) || !detail::getVarint(pd, pe_d, dur) || !detail::getVarint(pl, pe_l, sl)
            || !detail::getVarint(pk, pe_k, ks))
            fail(path, where + ": truncated or bad blob (interval " + str(static_cast<std::int64_t>(i)) + ")");
        TimeNs s;
        if (deltaCoded) {
            if (__builtin_add_overflow(cur, unzigzag(d), &s))
                fail(path, where + ": timestamp out of range");
        } else if (d > static_cast<std::uint64_t>(std::numeric_limits<TimeNs>::max())
                   || __builtin_add_overflow(cur, static_cast<TimeNs>(d), &s)) {
            fail(path, where + ": timestamp out of range");
        }
        if (i > 0 && s < lane.start[old + i - 1])
            fail(path, where + ": intervals out of order (interval " + str(static_cast<std::int64_t>(i))
                           + " starts before the previous one)");
        const std::int64_t du = detail::unzigzag(dur);
        if (du < 0)
            fail(path, where + ": negative duration (" + str(du) + " ns) at " + str(s) + " ns");
        TimeNs e;
        if (__builtin_add_overflow(s, du, &e))
            fail(path, where + ": interval end out of range");
        cur = deltaCoded ? e : s;
        const std::int64_t slot = detail::unzigzag(sl);
        std::int64_t kstep = detail::unzigzag(ks);
        if (deltaCoded) {
            if (__builtin_add_overflow(prevKstep, kstep, &kstep))
                fail(path, where + ": k-step out of range");
            prevKstep = kstep;
        }
        if (slot < INT16_MIN || slot > INT16_MAX)
            fail(path, where + ": slot " + str(slot) + " out of range");
        if (kstep < INT32_MIN || kstep > INT32_MAX)
            fail(path, where + ": k-step " + str(kstep) + " out of range");
        const unsigned k = pkind[i];
        const std::size_t j = old + i;
        lane.start[j] = s;
        lane.duration[j] = static_cast<std::int32_t>(std::min<std::int64_t>(du, INT32_MAX));
        // standard kinds and user phases (named in phase_names, issue 10) as stored; reserved codes read as other
        lane.kind[j] = k < static_cast<unsigned>(kIntervalKindCount) || isUserPhase(static_cast<IntervalKind>(k))
            ? static_cast<IntervalKind>(k)
            : IntervalKind::Other;
        lane.slot[j] = static_cast<std::int16_t>(slot);
        lane.kstep[j] = static_cast<std::int32_t>(kstep);
    }
    if (ps != pe_s || pd != pe_d || pl != pe_l || pk != pe_k)
        fail(path, where + ": bad blob (trailing bytes after " + str(count) + " intervals)");
    if (old > 0 && n > 0 && lane.start[old] < lane.start[old - 1])
        fail(path, where + ": chunks out of order (starts before the previous chunk)");
}



constexpr int kZstdLevel = 3;

// Upper bound of a decompressed payload of n intervals: four length varints (< 2^35: 5 bytes each), at most
// 10 bytes per varint and 1 per kind.
std::size_t payloadBound(std::size_t n) { return 20 + 41 * n; }

}  // namespace

// --- writing ---------------------------------------------------------------------------------
// WARPSTAGE_CHUNK_CODEC=raw makes the writer store raw chunks (valid in every version): for the tests
// of the raw decoder and for size comparisons (docs/schema.md).
ChunkCodec chosenCodec(ChunkCodec codec)
{
    const char* env = std::getenv("WARPSTAGE_CHUNK_CODEC");
    return env && std::string_view(env) == "raw" ? ChunkCodec::Raw : codec;
}

ChunkWriter::ChunkWriter(const Db* db, ChunkCodec codec)
    : m_db(db), m_codec(chosenCodec(codec)), m_starts(10 * kChunkIntervals), m_durations(10 * kChunkIntervals),
      m_kinds(kChunkIntervals), m_slots(10 * kChunkIntervals), m_ksteps(10 * kChunkIntervals)
{
    if (db)
        m_ins = std::make_unique<Stmt>(*db, m_codec == ChunkCodec::Raw
            ? "INSERT INTO interval_chunks(kernel_id, warp_id, chunk_index, first_start_ns, last_end_ns, count, "
              "starts, durations, kinds, slots, ksteps) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            : "INSERT INTO interval_chunks(kernel_id, warp_id, chunk_index, first_start_ns, last_end_ns, count, "
              "starts, durations, kinds, slots, ksteps, codec) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (m_codec == ChunkCodec::Zstd) {
        m_cctx = ZSTD_createCCtx();
        if (!m_cctx)
            throw std::bad_alloc();
        ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(m_cctx), ZSTD_c_compressionLevel, kZstdLevel);
        ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(m_cctx), ZSTD_c_contentSizeFlag, 1);
        ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(m_cctx), ZSTD_c_checksumFlag, 0);
    }
}

ChunkWriter::~ChunkWriter() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(m_cctx)); }

const ChunkWriter::Encoded& ChunkWriter::finish(TimeNs first, TimeNs lastEnd, std::size_t cnt, unsigned char* ps,
                                                unsigned char* pd, unsigned char* pk, unsigned char* pl,
                                                unsigned char* pq)
{
    m_enc.first = first;
    m_enc.lastEnd = lastEnd;
    m_enc.count = static_cast<std::int64_t>(cnt);
    auto view = [](const std::vector<unsigned char>& b, const unsigned char* end) {
        return std::string_view(reinterpret_cast<const char*>(b.data()), static_cast<std::size_t>(end - b.data()));
    };
    const std::string_view cols[5] = {view(m_starts, ps), view(m_durations, pd), view(m_kinds, pk),
                                      view(m_slots, pl), view(m_ksteps, pq)};
    if (m_codec == ChunkCodec::Raw) {
        for (int i = 0; i < 5; ++i)
            m_enc.blob[i] = cols[i];
        return m_enc;
    }
    m_payload.clear();
    for (int i = 0; i < 4; ++i)
        putVarint(m_payload, cols[i].size());
    for (const auto& c : cols)
        m_payload.append(c);
    m_z.resize(ZSTD_compressBound(m_payload.size()));
    const std::size_t z = ZSTD_compress2(static_cast<ZSTD_CCtx*>(m_cctx), m_z.data(), m_z.size(), m_payload.data(),
                                         m_payload.size());
    if (ZSTD_isError(z))
        fail(m_db ? m_db->path() : std::string("(chunk)"), std::string("cannot compress an interval chunk (")
                                                               + ZSTD_getErrorName(z) + ")");
    m_enc.blob[0] = std::string_view(m_z.data(), z);
    for (int i = 1; i < 5; ++i)
        m_enc.blob[i] = std::string_view();
    return m_enc;
}

void ChunkWriter::insert(RowId kernelId, RowId warpId, std::int64_t chunkIndex, const Encoded& e)
{
    Stmt& ins = *m_ins;
    ins.bind(1, kernelId).bind(2, warpId).bind(3, chunkIndex).bind(4, e.first).bind(5, e.lastEnd).bind(6, e.count);
    for (int i = 0; i < 5; ++i)
        ins.bindBlobStatic(7 + i, e.blob[i].data(), e.blob[i].size());
    if (m_codec != ChunkCodec::Raw)
        ins.bind(12, static_cast<int>(m_codec));
    ins.run();
}

// --- reading ---------------------------------------------------------------------------------
ChunkDecoder::ChunkDecoder() = default;
ChunkDecoder::~ChunkDecoder() { ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(m_dctx)); }

void ChunkDecoder::decode(const std::string& path, RowId chunkId, RowId warpId, TimeNs firstStart, std::int64_t count,
                          std::int64_t codec, std::string_view starts, std::string_view durations,
                          std::string_view kinds, std::string_view slots, std::string_view ksteps, Lane& lane)
{
    const std::string where = "interval chunk " + str(chunkId) + " of warp " + str(warpId);
    if (count < 0 || count > kMaxChunkIntervals)
        fail(path, where + ": bad interval count " + str(count));
    if (codec == static_cast<int>(ChunkCodec::Raw)) {
        decodeColumns(path, where, firstStart, count, starts, durations, kinds, slots, ksteps, false, lane);
        return;
    }
    if (codec != static_cast<int>(ChunkCodec::Zstd))
        fail(path, where + ": unknown codec " + str(codec) + " (this build reads 0 and 1)");
    if (!durations.empty() || !kinds.empty() || !slots.empty() || !ksteps.empty())
        fail(path, where + ": bad blob (a zstd chunk keeps everything in 'starts')");
    const std::size_t bound = payloadBound(static_cast<std::size_t>(count));
    const unsigned long long size = ZSTD_getFrameContentSize(starts.data(), starts.size());
    if (size == ZSTD_CONTENTSIZE_ERROR)
        fail(path, where + ": corrupt zstd frame (bad header)");
    if (size == ZSTD_CONTENTSIZE_UNKNOWN)
        fail(path, where + ": zstd frame without its decompressed size");
    if (size > bound)
        fail(path, where + ": zstd frame decompresses to " + str(static_cast<std::int64_t>(size)) + " bytes, more than "
                       + str(count) + " intervals can take");
    const std::size_t frame = ZSTD_findFrameCompressedSize(starts.data(), starts.size());
    if (ZSTD_isError(frame))
        fail(path, where + ": corrupt or truncated zstd frame (" + ZSTD_getErrorName(frame) + ")");
    if (frame != starts.size())
        fail(path, where + ": bad blob (trailing bytes after the zstd frame)");
    if (!m_dctx && !(m_dctx = ZSTD_createDCtx()))
        throw std::bad_alloc();
    m_buf.resize(static_cast<std::size_t>(size));
    const std::size_t got = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(m_dctx), m_buf.data(), m_buf.size(),
                                                starts.data(), starts.size());
    if (ZSTD_isError(got))
        fail(path, where + ": corrupt zstd frame (" + ZSTD_getErrorName(got) + ")");
    if (got != size)
        fail(path, where + ": zstd frame decompressed to " + str(static_cast<std::int64_t>(got)) + " bytes, its header says "
                       + str(static_cast<std::int64_t>(size)));
    const auto* p = reinterpret_cast<const unsigned char*>(m_buf.data());
    const auto* end = p + m_buf.size();
    std::uint64_t len[4];
    for (auto& l : len)
        if (!getVarint(p, end, l))
            fail(path, where + ": bad payload (truncated column sizes)");
    std::size_t off = static_cast<std::size_t>(p - reinterpret_cast<const unsigned char*>(m_buf.data()));
    std::string_view cols[5];
    for (int i = 0; i < 4; ++i) {
        if (len[i] > m_buf.size() - off)
            fail(path, where + ": bad payload (column sizes exceed the decompressed size)");
        cols[i] = std::string_view(m_buf.data() + off, static_cast<std::size_t>(len[i]));
        off += static_cast<std::size_t>(len[i]);
    }
    cols[4] = std::string_view(m_buf.data() + off, m_buf.size() - off);
    decodeColumns(path, where, firstStart, count, cols[0], cols[1], cols[2], cols[3], cols[4], true, lane);
}

}  // namespace ws::detail
