// Hand-built event buffers for the decoder tests (no GPU): the same bytes a traced
// kernel writes (kernels/include/warpstage/trace_format.h).
#pragma once

#include "warpstage/ladder.h"
#include "warpstage/trace_format.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace wsfix {

using namespace ws::trace;

inline constexpr std::uint8_t kNoSlot = 0xFF;

class BufferBuilder {
public:
    BufferBuilder(std::uint32_t ctas, std::uint32_t warps, std::uint32_t cap, std::uint32_t stages = 4,
                  std::uint32_t bytesPerKStep = 32768)
        : m_ctas(ctas), m_warps(warps), m_cap(cap), m_bytes(bufferBytes(ctas, warps, cap), 0)
    {
        TraceBufferHeader h{};
        h.magic = kMagic;
        h.version = kFormatVersion;
        h.numCtas = ctas;
        h.warpsPerCta = warps;
        h.eventsPerWarp = cap;
        h.stages = stages;
        h.bytesPerKStep = bytesPerKStep;
        std::memcpy(m_bytes.data(), &h, sizeof h);
    }

    ws::ladder::TraceGeometry geometry() const
    {
        ws::ladder::TraceGeometry g;
        g.numCtas = m_ctas;
        g.warpsPerCta = m_warps;
        g.eventsPerWarp = m_cap;
        g.bufferBytes = m_bytes.size();
        return g;
    }

    // CTA record: start/end pairs (flags 3), or only the start (endWritten = false).
    void cta(std::uint32_t c, std::uint64_t gtStart, std::uint64_t clkStart, std::uint64_t gtEnd, std::uint64_t clkEnd,
             std::uint32_t sm, bool endWritten = true)
    {
        CtaRecord r{};
        r.globaltimerStart = gtStart;
        r.clockStart = clkStart;
        r.globaltimerEnd = endWritten ? gtEnd : 0;
        r.clockEnd = endWritten ? clkEnd : 0;
        r.smId = sm;
        r.flags = endWritten ? 3u : 1u;
        std::memcpy(m_bytes.data() + sizeof(TraceBufferHeader) + std::size_t(c) * sizeof(CtaRecord), &r, sizeof r);
    }

    struct Ev {
        std::uint64_t clock;
        std::uint8_t kind;
        std::int32_t kstep = -1;
        std::uint8_t slot = kNoSlot;
        std::int16_t aux = 0;
    };

    // Writes a warp region (`userRole` >= 0: a role named by the kernel's WARPSTAGE_ROLE_NAMES[userRole]). `count` < 0: the number of events (as a finished warp writes it);
    // otherwise the given attempted count (e.g. > cap for overflow, 0 for a warp that never ended).
    void warp(std::uint32_t c, std::uint32_t w, std::uint8_t role, std::uint8_t wg, std::uint8_t roleIndex,
              const std::vector<Ev>& events, long count = -1, int userRole = -1)
    {
        const std::uint64_t off = warpRegionOffset(m_ctas, m_warps, m_cap, c, w);
        WarpRegionHeader h{};
        h.count = count < 0 ? std::uint32_t(events.size()) : std::uint32_t(count);
        h.role = role;
        h.warpgroup = wg;
        h.roleIndex = roleIndex;
        h.flags = userRole >= 0 ? 3 : 1;
        h.userRole = userRole >= 0 ? std::uint32_t(userRole) : 0u;
        std::memcpy(m_bytes.data() + off, &h, sizeof h);
        for (std::size_t i = 0; i < events.size() && i < m_cap; ++i) {
            TraceEvent e{};
            e.clock = events[i].clock;
            e.kind = events[i].kind;
            e.kstep = events[i].kstep;
            e.slot = events[i].slot;
            e.aux = events[i].aux;
            std::memcpy(m_bytes.data() + off + sizeof(WarpRegionHeader) + i * sizeof(TraceEvent), &e, sizeof e);
        }
    }

    std::vector<unsigned char>& bytes() { return m_bytes; }

private:
    std::uint32_t m_ctas, m_warps, m_cap;
    std::vector<unsigned char> m_bytes;
};

}  // namespace wsfix
