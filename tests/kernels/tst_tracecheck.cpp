// CPU test (no GPU, runs in CI): the trace-buffer checker that the GPU tests use
// (ws::ktest::checkTrace) accepts a well-formed synthetic buffer and reports each
// planted fault -- so the GPU trace tests are able to fail. Also parseShape() and trace::clearRanges().
// Exit: 0 passed, 1 failed.
#include "ladder_testutil.h"

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace ws;
using namespace ws::ktest;

namespace {

int g_fail = 0;
void expect(bool ok, const std::string& what)
{
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    if (!ok) ++g_fail;
}

// A synthetic, well-formed buffer: 3 CTAs x 4 warps, capacity 8; each warp has 5 events
// (Setup, WaitData, MmaIssue, Release, End) with increasing clocks inside its CTA's span.
struct Synth {
    trace::TraceBufferHeader h{};
    std::vector<std::uint8_t> buf;
    Synth()
    {
        h.magic = trace::kMagic;
        h.version = trace::kFormatVersion;
        h.numCtas = 3;
        h.warpsPerCta = 4;
        h.eventsPerWarp = 8;
        h.stages = 4;
        h.bytesPerKStep = 49152;
        buf.assign(trace::bufferBytes(h.numCtas, h.warpsPerCta, h.eventsPerWarp), 0);
        std::memcpy(buf.data(), &h, sizeof h);
        for (std::uint32_t c = 0; c < h.numCtas; ++c) {
            trace::CtaRecord r{};
            r.globaltimerStart = 1000000 + c * 10;
            r.clockStart = 5000 + c * 100;
            r.globaltimerEnd = r.globaltimerStart + 5000;
            r.clockEnd = r.clockStart + 10000;
            r.smId = c;
            r.flags = 3;
            std::memcpy(cta(c), &r, sizeof r);
            for (std::uint32_t w = 0; w < h.warpsPerCta; ++w) {
                trace::WarpRegionHeader wr{};
                wr.count = 5;
                wr.role = w == 0 ? 1 : 2;
                wr.warpgroup = std::uint8_t(w / 4);
                wr.flags = 1;
                std::memcpy(region(c, w), &wr, sizeof wr);
                const std::uint8_t kinds[5] = {1, 4, 5, 7, trace::kEventEnd};
                for (int i = 0; i < 5; ++i) {
                    trace::TraceEvent ev{};
                    ev.clock = r.clockStart + 10 + 100 * i + w;
                    ev.kstep = i;
                    ev.slot = std::uint8_t(i % 4);
                    ev.kind = kinds[i];
                    std::memcpy(event(c, w, i), &ev, sizeof ev);
                }
            }
        }
    }
    std::uint8_t* cta(std::uint32_t c) { return buf.data() + sizeof(trace::TraceBufferHeader) + c * sizeof(trace::CtaRecord); }
    std::uint8_t* region(std::uint32_t c, std::uint32_t w)
    {
        return buf.data() + trace::warpRegionOffset(h.numCtas, h.warpsPerCta, h.eventsPerWarp, c, w);
    }
    std::uint8_t* event(std::uint32_t c, std::uint32_t w, int i)
    {
        return region(c, w) + sizeof(trace::WarpRegionHeader) + i * sizeof(trace::TraceEvent);
    }
    trace::WarpRegionHeader& wr(std::uint32_t c, std::uint32_t w) { return *reinterpret_cast<trace::WarpRegionHeader*>(region(c, w)); }
    trace::TraceEvent& ev(std::uint32_t c, std::uint32_t w, int i) { return *reinterpret_cast<trace::TraceEvent*>(event(c, w, i)); }
    trace::CtaRecord& rec(std::uint32_t c) { return *reinterpret_cast<trace::CtaRecord*>(cta(c)); }
};

bool mentions(const TraceCheck& tc, const std::string& s)
{
    for (auto& e : tc.errors)
        if (e.find(s) != std::string::npos) return true;
    return false;
}

void fault(const char* name, const std::function<void(Synth&)>& plant, const std::string& expectText,
           bool allowOverflow = false)
{
    Synth s;
    plant(s);
    TraceCheck tc = checkTrace(s.buf, s.h, 132, allowOverflow);
    std::string got = tc.errors.empty() ? "(no error)" : tc.errors.front();
    expect(mentions(tc, expectText), std::string("planted fault '") + name + "' reported (" + got + ")");
}

}  // namespace

int main()
{
    {
        Synth s;
        TraceCheck tc = checkTrace(s.buf, s.h, 132, false);
        expect(tc.errors.empty(), "well-formed synthetic buffer passes (" + std::to_string(tc.errors.size()) + " errors)");
        expect(tc.events == 60 && tc.warps == 12 && tc.ctas == 3, "counts: 60 events, 12 warps, 3 CTAs");
        expect(tc.overflowedWarps == 0 && tc.maxCount == 5, "no overflow, max count 5");
    }
    fault("header changed", [](Synth& s) { s.buf[8] ^= 1; }, "header changed");
    fault("CTA end not written", [](Synth& s) { s.rec(1).flags = 1; }, "start and end must both be written");
    fault("clock64 end < start", [](Synth& s) { s.rec(2).clockEnd = s.rec(2).clockStart - 1; }, "clock64 end < start");
    fault("SM id out of range", [](Synth& s) { s.rec(0).smId = 500; }, "smId 500");
    fault("role not declared", [](Synth& s) { s.wr(1, 2).flags = 0; }, "role not declared");
    fault("unknown role", [](Synth& s) { s.wr(1, 3).role = 9; }, "is not a WarpRole");
    fault("overflow", [](Synth& s) { s.wr(2, 1).count = 9; }, "count 9 > capacity 8");
    fault("clock backwards", [](Synth& s) { s.ev(0, 1, 3).clock = s.ev(0, 1, 2).clock - 1; }, "clock goes backwards");
    fault("unknown kind", [](Synth& s) { s.ev(0, 0, 1).kind = 0x80; }, "unknown kind 128");
    fault("unwritten event", [](Synth& s) { s.ev(1, 1, 2).clock = 0; }, "clock 0 (not written)");
    fault("no End event", [](Synth& s) { s.ev(2, 3, 4).kind = 5; }, "is not kEventEnd");
    fault("empty region", [](Synth& s) { s.wr(0, 2).count = 0; }, "no events");
    {
        // An overflowed warp: all 8 slots written (the kernel writes while count < capacity),
        // count keeps counting to 40.
        Synth s;
        s.wr(2, 1).count = 40;
        s.ev(2, 1, 4).kind = 5;  // no End among the first 8: the warp went on
        for (int i = 5; i < 8; ++i) {
            s.ev(2, 1, i) = s.ev(2, 1, i - 1);
            s.ev(2, 1, i).clock += 50;
        }
        TraceCheck tc = checkTrace(s.buf, s.h, 132, /*allowOverflow=*/true);
        expect(tc.errors.empty() && tc.overflowedWarps == 1 && tc.maxCount == 40,
               "overflow tallied, not an error, when allowed (overflowed warps " + std::to_string(tc.overflowedWarps) + ")");
    }
    {
        Synth s;
        std::vector<std::uint8_t> shortBuf(s.buf.begin(), s.buf.end() - 16);
        TraceCheck tc = checkTrace(shortBuf, s.h, 132, false);
        expect(mentions(tc, "smaller than the header says"), "truncated buffer reported");
    }
    {
        // trace::clearRanges (session 16: what the recorders zero before a traced launch) names exactly the CTA records
        // and every warp region's header: zeroing its ranges in a buffer of stale bytes leaves every CtaRecord and
        // WarpRegionHeader zero, and the buffer's header and every event byte as they were.
        const std::uint32_t ctas = 7, warps = 12, events = 37;
        std::vector<std::uint8_t> b(trace::bufferBytes(ctas, warps, events), 0x5A);
        const trace::ClearRanges r = trace::clearRanges(ctas, warps, events);
        std::memset(b.data() + r.ctaOffset, 0, r.ctaBytes);
        for (std::uint64_t row = 0; row < r.headerRows; ++row)
            std::memset(b.data() + r.headerOffset + row * r.headerPitch, 0, r.headerBytes);
        std::uint64_t zeroed = 0, headersZero = 0;
        for (std::uint8_t x : b) zeroed += x == 0;
        for (std::uint32_t c = 0; c < ctas; ++c)
            for (std::uint32_t w = 0; w < warps; ++w) {
                const std::uint64_t off = trace::warpRegionOffset(ctas, warps, events, c, w);
                bool z = true;
                for (std::size_t i = 0; i < sizeof(trace::WarpRegionHeader); ++i) z = z && b[off + i] == 0;
                headersZero += z;
            }
        bool ctaZero = true;
        for (std::uint64_t i = 0; i < std::uint64_t(ctas) * sizeof(trace::CtaRecord); ++i)
            ctaZero = ctaZero && b[sizeof(trace::TraceBufferHeader) + i] == 0;
        expect(ctaZero && headersZero == std::uint64_t(ctas) * warps
                   && zeroed == std::uint64_t(ctas) * (sizeof(trace::CtaRecord) + warps * sizeof(trace::WarpRegionHeader)),
               "clearRanges zeroes the CTA records and all " + std::to_string(ctas * warps) + " region headers ("
                   + std::to_string(headersZero) + "), nothing else (" + std::to_string(zeroed) + " bytes zeroed)");
    }
    {
        // trace::writtenEvents (session 16: what the recorders zero after reading a traced launch back): the most events
        // of any region -- a finished warp's count (capped at the capacity), an unfinished warp's (count 0) events up to
        // its first all-zero one; stale bytes past a finished warp's count do not count.
        const std::uint32_t ctas = 3, warps = 4, events = 16;
        std::vector<std::uint8_t> b(trace::bufferBytes(ctas, warps, events), 0);
        auto region = [&](std::uint32_t c, std::uint32_t w) { return b.data() + trace::warpRegionOffset(ctas, warps, events, c, w); };
        auto setCount = [&](std::uint32_t c, std::uint32_t w, std::uint32_t n) { std::memcpy(region(c, w), &n, 4); };
        auto fill = [&](std::uint32_t c, std::uint32_t w, std::uint32_t n) {
            std::memset(region(c, w) + sizeof(trace::WarpRegionHeader), 0x33, std::size_t(n) * sizeof(trace::TraceEvent));
        };
        const auto we = [&] { return trace::writtenEvents(b.data(), b.size(), ctas, warps, events); };
        const std::uint32_t empty = we();
        setCount(0, 1, 5), fill(0, 1, 12);  // finished: 5 events, stale bytes after them
        const std::uint32_t finished = we();
        fill(2, 3, 9);  // unfinished (count 0): 9 events written
        const std::uint32_t unfinished = we();
        setCount(1, 0, 40), fill(1, 0, 16);  // overflowed: count past the capacity
        const std::uint32_t overflow = we();
        expect(empty == 0 && finished == 5 && unfinished == 9 && overflow == 16,
               "writtenEvents: empty 0 (" + std::to_string(empty) + "), a finished warp's count 5 (" + std::to_string(finished)
                   + "), an unfinished warp's 9 events (" + std::to_string(unfinished) + "), an overflow the capacity 16 ("
                   + std::to_string(overflow) + ")");
    }
    // parseShape
    try {
        ladder::Shape a = parseShape("4096");
        ladder::Shape b = parseShape("2048x6144x4096");
        expect(a.m == 4096 && a.n == 4096 && a.k == 4096, "parseShape(\"4096\") is a cube");
        expect(b.m == 2048 && b.n == 6144 && b.k == 4096, "parseShape(\"2048x6144x4096\")");
    } catch (const std::exception& e) {
        expect(false, std::string("parseShape threw: ") + e.what());
    }
    for (const char* bad : {"", "12x", "x12", "1x2", "1x2x3x4", "4096xabcx1"}) {
        bool threw = false;
        try {
            parseShape(bad);
        } catch (const std::invalid_argument&) {
            threw = true;
        }
        expect(threw, std::string("parseShape rejects '") + bad + "'");
    }
    std::printf("\n%s\n", g_fail ? "FAILED" : "all passed");
    return g_fail ? 1 : 0;
}
