// The packed tables of schema 4: loads per CTA, per-CTA / per-warpgroup metrics, source text
// (docs/schema.md, "Load chunks", "Metric chunks", "Sources").
#include "store_packed.h"

#include "schema.h"
#include "store_impl.h"

#include <zstd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>

namespace ws::detail {

namespace {

constexpr int kZstdLevel = 3;
constexpr std::size_t kMetricPayloadBound = std::size_t(1) << 27;

const unsigned char* u8(std::string_view b) { return reinterpret_cast<const unsigned char*>(b.data()); }

// Splits `payload` into `k` columns: k-1 varint lengths, then the columns (the last takes the rest).
template <std::size_t K>
std::array<std::string_view, K> splitColumns(const std::string& path, const std::string& where, std::string_view payload)
{
    const unsigned char* p = u8(payload);
    const unsigned char* end = p + payload.size();
    std::uint64_t len[K - 1];
    for (auto& l : len)
        if (!getVarint(p, end, l))
            fail(path, where + ": bad payload (truncated column sizes)");
    std::size_t off = static_cast<std::size_t>(p - u8(payload));
    std::array<std::string_view, K> cols;
    for (std::size_t i = 0; i + 1 < K; ++i) {
        if (len[i] > payload.size() - off)
            fail(path, where + ": bad payload (column sizes exceed the decompressed size)");
        cols[i] = payload.substr(off, static_cast<std::size_t>(len[i]));
        off += static_cast<std::size_t>(len[i]);
    }
    cols[K - 1] = payload.substr(off);
    return cols;
}

struct Reader {
    const unsigned char* p;
    const unsigned char* end;
    explicit Reader(std::string_view b) : p(u8(b)), end(u8(b) + b.size()) {}
    bool next(std::uint64_t& v) { return getVarint(p, end, v); }
    bool done() const { return p == end; }
};

}  // namespace

// --- zstd --------------------------------------------------------------------------------------------
Zstd::Zstd() = default;
Zstd::~Zstd()
{
    ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(m_c));
    ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(m_d));
}

void Zstd::compress(const std::string& path, std::string_view in, std::string& out)
{
    if (!m_c) {
        if (!(m_c = ZSTD_createCCtx()))
            throw std::bad_alloc();
        ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(m_c), ZSTD_c_compressionLevel, kZstdLevel);
        ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(m_c), ZSTD_c_contentSizeFlag, 1);
    }
    out.resize(ZSTD_compressBound(in.size()));
    const std::size_t z = ZSTD_compress2(static_cast<ZSTD_CCtx*>(m_c), out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(z))
        fail(path, std::string("cannot compress (") + ZSTD_getErrorName(z) + ")");
    out.resize(z);
}

std::string_view Zstd::decompress(const std::string& path, const std::string& where, std::string_view blob,
                                  std::size_t bound)
{
    const unsigned long long size = ZSTD_getFrameContentSize(blob.data(), blob.size());
    if (size == ZSTD_CONTENTSIZE_ERROR)
        fail(path, where + ": corrupt zstd frame (bad header)");
    if (size == ZSTD_CONTENTSIZE_UNKNOWN)
        fail(path, where + ": zstd frame without its decompressed size");
    if (size > bound)
        fail(path, where + ": zstd frame decompresses to " + str(static_cast<std::int64_t>(size))
                       + " bytes, more than its row count can take");
    const std::size_t frame = ZSTD_findFrameCompressedSize(blob.data(), blob.size());
    if (ZSTD_isError(frame))
        fail(path, where + ": corrupt or truncated zstd frame (" + ZSTD_getErrorName(frame) + ")");
    if (frame != blob.size())
        fail(path, where + ": bad blob (trailing bytes after the zstd frame)");
    if (!m_d && !(m_d = ZSTD_createDCtx()))
        throw std::bad_alloc();
    m_buf.resize(static_cast<std::size_t>(size));
    const std::size_t got = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(m_d), m_buf.data(), m_buf.size(), blob.data(),
                                                blob.size());
    if (ZSTD_isError(got))
        fail(path, where + ": corrupt zstd frame (" + ZSTD_getErrorName(got) + ")");
    if (got != size)
        fail(path, where + ": zstd frame decompressed to " + str(static_cast<std::int64_t>(got))
                       + " bytes, its header says " + str(static_cast<std::int64_t>(size)));
    return m_buf;
}

// --- loads ----------------------------------------------------------------------------------------------
// Payload: len(issue) len(latency) len(slot) len(kstep) | issue latency slot kstep bytes, n LEB128 varints
// each: issue = zigzag(issue[i] - issue[i-1]) (issue[-1] = first_issue_ns), latency = ready - issue
// (unsigned), slot = zigzag(slot), kstep = zigzag(kstep[i] - kstep[i-1]) (kstep[-1] = -1), bytes =
// zigzag(bytes[i] - bytes[i-1]) (bytes[-1] = 0).
PackedLoads packLoads(const std::string& path, Zstd& z, std::vector<LoadTransfer> loads)
{
    std::stable_sort(loads.begin(), loads.end(),
                     [](const LoadTransfer& a, const LoadTransfer& b) { return a.issue < b.issue; });
    PackedLoads out;
    out.count = static_cast<std::int64_t>(loads.size());
    out.firstIssue = loads.empty() ? 0 : loads.front().issue;
    out.lastReady = loads.empty() ? 0 : loads.front().ready;
    std::string cols[5];
    TimeNs prevIssue = out.firstIssue;
    std::int64_t prevKstep = -1, prevBytes = 0;
    for (const LoadTransfer& x : loads) {
        if (x.ready < x.issue)
            fail(path, "cannot write a load that is ready before it was issued");
        putVarint(cols[0], zigzag(static_cast<std::int64_t>(static_cast<std::uint64_t>(x.issue)
                                                            - static_cast<std::uint64_t>(prevIssue))));
        putVarint(cols[1], static_cast<std::uint64_t>(x.ready) - static_cast<std::uint64_t>(x.issue));
        putVarint(cols[2], zigzag(x.slot));
        putVarint(cols[3], zigzag(static_cast<std::int64_t>(x.kstep) - prevKstep));
        putVarint(cols[4], zigzag(static_cast<std::int64_t>(static_cast<std::uint64_t>(x.bytes)
                                                            - static_cast<std::uint64_t>(prevBytes))));
        prevIssue = x.issue;
        prevKstep = x.kstep;
        prevBytes = x.bytes;
        out.lastReady = std::max(out.lastReady, x.ready);
    }
    std::string payload;
    for (int i = 0; i < 4; ++i)
        putVarint(payload, cols[i].size());
    for (const auto& c : cols)
        payload += c;
    z.compress(path, payload, out.data);
    return out;
}

void unpackLoads(const std::string& path, Zstd& z, RowId chunkId, std::int64_t count, TimeNs firstIssue,
                 std::int64_t codec, std::string_view data, std::int32_t ctaIndex, std::vector<LoadTransfer>& out)
{
    const std::string where = "load chunk " + str(chunkId);
    if (count < 0 || count > kMaxPackedRows)
        fail(path, where + ": bad load count " + str(count));
    if (codec != kPackedCodecZstd)
        fail(path, where + ": unknown codec " + str(codec) + " (this build reads 1)");
    const auto n = static_cast<std::size_t>(count);
    const std::string_view payload = z.decompress(path, where, data, 20 + 50 * n);
    const auto cols = splitColumns<5>(path, where, payload);
    Reader r[5] = {Reader(cols[0]), Reader(cols[1]), Reader(cols[2]), Reader(cols[3]), Reader(cols[4])};
    TimeNs issue = firstIssue;
    std::int64_t kstep = -1, bytes = 0;
    for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t v[5];
        for (int c = 0; c < 5; ++c)
            if (!r[c].next(v[c]))
                fail(path, where + ": truncated or bad blob (load " + str(static_cast<std::int64_t>(i)) + ")");
        LoadTransfer x;
        if (__builtin_add_overflow(issue, unzigzag(v[0]), &issue))
            fail(path, where + ": timestamp out of range");
        if (v[1] > static_cast<std::uint64_t>(std::numeric_limits<TimeNs>::max())
            || __builtin_add_overflow(issue, static_cast<TimeNs>(v[1]), &x.ready))
            fail(path, where + ": ready time out of range");
        const std::int64_t slot = unzigzag(v[2]);
        if (slot < INT16_MIN || slot > INT16_MAX)
            fail(path, where + ": slot " + str(slot) + " out of range");
        if (__builtin_add_overflow(kstep, unzigzag(v[3]), &kstep) || kstep < INT32_MIN || kstep > INT32_MAX)
            fail(path, where + ": k-step out of range");
        if (__builtin_add_overflow(bytes, unzigzag(v[4]), &bytes))
            fail(path, where + ": byte count out of range");
        x.ctaId = ctaIndex;
        x.issue = issue;
        x.slot = static_cast<std::int16_t>(slot);
        x.kstep = static_cast<std::int32_t>(kstep);
        x.bytes = bytes;
        out.push_back(x);
    }
    for (const Reader& rr : r)
        if (!rr.done())
            fail(path, where + ": bad blob (trailing bytes after " + str(count) + " loads)");
}

// --- metrics --------------------------------------------------------------------------------------------
std::optional<std::pair<std::string, std::int64_t>> packedScope(const std::string& scope)
{
    const auto colon = scope.find(':');
    if (colon == std::string::npos)
        return std::nullopt;
    const std::string prefix = scope.substr(0, colon);
    if (prefix != "cta" && prefix != "wg")
        return std::nullopt;
    const std::string num = scope.substr(colon + 1);
    if (num.empty() || num.size() > 18 || !std::all_of(num.begin(), num.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    if (num.size() > 1 && num[0] == '0')
        return std::nullopt;  // not canonical: would not read back the same
    return std::make_pair(prefix, static_cast<std::int64_t>(std::stoll(num)));
}

// Payload: varint d | d × (varint len, name bytes, varint len, unit bytes) | varint len(rows) | rows | values.
// rows: n × (zigzag(index[i] - index[i-1]) (index[-1] = 0), varint dictionary entry); values: n × 8 bytes,
// IEEE-754 double little-endian (NaN = NULL).
std::string packMetrics(const std::string& path, Zstd& z, const MetricGroup& g)
{
    std::map<std::pair<std::string, std::string>, std::uint64_t> dict;
    std::string dictBytes, rows, values;
    std::int64_t prev = 0;
    for (const auto& [k, v] : g) {
        auto [it, added] = dict.emplace(std::make_pair(k.name, v.unit), dict.size());
        if (added) {
            putVarint(dictBytes, k.name.size());
            dictBytes += k.name;
            putVarint(dictBytes, v.unit.size());
            dictBytes += v.unit;
        }
        putVarint(rows, zigzag(k.index - prev));
        prev = k.index;
        putVarint(rows, it->second);
        std::uint64_t bits;
        std::memcpy(&bits, &v.value, 8);
        for (int i = 0; i < 8; ++i)
            values.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
    }
    std::string payload;
    putVarint(payload, dict.size());
    payload += dictBytes;
    putVarint(payload, rows.size());
    payload += rows;
    payload += values;
    std::string out;
    z.compress(path, payload, out);
    return out;
}

void unpackMetrics(const std::string& path, Zstd& z, RowId chunkId, std::int64_t count, std::int64_t codec,
                   std::string_view data, MetricGroup& out)
{
    const std::string where = "metric chunk " + str(chunkId);
    if (count < 0 || count > kMaxPackedRows)
        fail(path, where + ": bad metric count " + str(count));
    if (codec != kPackedCodecZstd)
        fail(path, where + ": unknown codec " + str(codec) + " (this build reads 1)");
    const std::string_view payload = z.decompress(path, where, data, kMetricPayloadBound);
    Reader r(payload);
    auto bad = [&](const char* what) { fail(path, where + ": bad payload (" + what + ")"); };
    auto bytes = [&](std::string& s) {
        std::uint64_t len;
        if (!r.next(len) || len > static_cast<std::uint64_t>(r.end - r.p))
            bad("truncated dictionary");
        s.assign(reinterpret_cast<const char*>(r.p), static_cast<std::size_t>(len));
        r.p += len;
    };
    std::uint64_t d;
    if (!r.next(d) || d > payload.size())
        bad("truncated dictionary");
    std::vector<std::pair<std::string, std::string>> dict(static_cast<std::size_t>(d));
    for (auto& [name, unit] : dict) {
        bytes(name);
        bytes(unit);
    }
    std::uint64_t rowsLen;
    if (!r.next(rowsLen) || rowsLen > static_cast<std::uint64_t>(r.end - r.p))
        bad("truncated rows");
    Reader rows(std::string_view(reinterpret_cast<const char*>(r.p), static_cast<std::size_t>(rowsLen)));
    const unsigned char* values = r.p + rowsLen;
    if (static_cast<std::uint64_t>(r.end - values) != 8 * static_cast<std::uint64_t>(count))
        bad("the values do not match the row count");
    std::int64_t index = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        std::uint64_t delta, entry;
        if (!rows.next(delta) || !rows.next(entry))
            bad("truncated rows");
        if (entry >= dict.size())
            bad("a row points past the dictionary");
        if (__builtin_add_overflow(index, unzigzag(delta), &index) || index < 0)
            bad("scope index out of range");
        std::uint64_t bits = 0;
        for (int b = 0; b < 8; ++b)
            bits |= static_cast<std::uint64_t>(values[8 * i + b]) << (8 * b);
        MetricValue v;
        std::memcpy(&v.value, &bits, 8);
        v.unit = dict[entry].second;
        if (!out.emplace(MetricKey{index, dict[entry].first}, std::move(v)).second)
            bad("a metric appears twice");
    }
    if (!rows.done())
        bad("trailing bytes after the rows");
}

// --- SHA-256 (FIPS 180-4) --------------------------------------------------------------------------------
std::string sha256Hex(std::string_view data)
{
    static constexpr std::uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::string msg(data);
    const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
    msg.push_back(static_cast<char>(0x80));
    while (msg.size() % 64 != 56)
        msg.push_back('\0');
    for (int i = 7; i >= 0; --i)
        msg.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
    auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
    for (std::size_t off = 0; off < msg.size(); off += 64) {
        std::uint32_t w[64];
        for (int i = 0; i < 16; ++i) {
            const auto* b = reinterpret_cast<const unsigned char*>(msg.data() + off + 4 * i);
            w[i] = (std::uint32_t(b[0]) << 24) | (std::uint32_t(b[1]) << 16) | (std::uint32_t(b[2]) << 8) | b[3];
        }
        for (int i = 16; i < 64; ++i) {
            const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        std::uint32_t a = h[0], b = h[1], c = h[2], dd = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int i = 0; i < 64; ++i) {
            const std::uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
            const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            hh = g;
            g = f;
            f = e;
            e = dd + t1;
            dd = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        h[0] += a; h[1] += b; h[2] += c; h[3] += dd; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
    }
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (std::uint32_t v : h)
        for (int i = 7; i >= 0; --i)
            out.push_back(hex[(v >> (4 * i)) & 0xf]);
    return out;
}

}  // namespace ws::detail
