// Internal: the packed tables of schema 4 (docs/schema.md, "Load chunks", "Metric chunks", "Sources"):
// loads per CTA, per-CTA / per-warpgroup metrics per launch, source text; and SHA-256 for the latter.
// Each is one zstd frame over delta-coded LEB128 columns; readers check everything and throw StoreError.
#pragma once

#include "warpstage/model.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ws::detail {

// load_chunks.codec / metric_chunks.codec / source_texts.codec: 1 = zstd (the only value written or read).
inline constexpr int kPackedCodecZstd = 1;
// Upper bound a reader accepts for one chunk's row count.
inline constexpr std::int64_t kMaxPackedRows = 1 << 24;

// One zstd context pair, reused across calls.
class Zstd {
public:
    Zstd();
    ~Zstd();
    Zstd(const Zstd&) = delete;
    Zstd& operator=(const Zstd&) = delete;
    // Compresses `in` (level 3, content size in the frame) into `out`.
    void compress(const std::string& path, std::string_view in, std::string& out);
    // Decompresses one frame that must fill `blob` exactly and decompress to at most `bound` bytes.
    // Throws StoreError "<path>: <where>: ..." otherwise. The result is valid until the next call.
    std::string_view decompress(const std::string& path, const std::string& where, std::string_view blob,
                                std::size_t bound);

private:
    void* m_c = nullptr;
    void* m_d = nullptr;
    std::string m_buf;
};

// --- loads of one CTA -------------------------------------------------------------------------
struct PackedLoads {
    std::int64_t count = 0;
    TimeNs firstIssue = 0;
    TimeNs lastReady = 0;
    std::string data;  // the zstd frame
};
// `loads` (of one CTA, any order) are packed sorted by issue (stable). Throws if one is ready before issue.
PackedLoads packLoads(const std::string& path, Zstd& z, std::vector<LoadTransfer> loads);
// Appends the chunk's loads (ctaId = ctaIndex) to `out`.
void unpackLoads(const std::string& path, Zstd& z, RowId chunkId, std::int64_t count, TimeNs firstIssue,
                 std::int64_t codec, std::string_view data, std::int32_t ctaIndex, std::vector<LoadTransfer>& out);

// --- per-CTA / per-warpgroup metrics of one launch -----------------------------------------------
// Scopes "<prefix>:<N>" (N a canonical non-negative decimal) with prefix cta or wg are packed; every
// other metric stays a row of table `metrics`.
std::optional<std::pair<std::string, std::int64_t>> packedScope(const std::string& scope);
struct MetricKey {
    std::int64_t index;  // N of "<prefix>:N"
    std::string name;
    bool operator<(const MetricKey& o) const { return index != o.index ? index < o.index : name < o.name; }
};
struct MetricValue {
    double value;  // NaN = NULL
    std::string unit;
};
using MetricGroup = std::map<MetricKey, MetricValue>;
std::string packMetrics(const std::string& path, Zstd& z, const MetricGroup& g);
void unpackMetrics(const std::string& path, Zstd& z, RowId chunkId, std::int64_t count, std::int64_t codec,
                   std::string_view data, MetricGroup& out);

// --- source text -----------------------------------------------------------------------------------
std::string sha256Hex(std::string_view data);

}  // namespace ws::detail
