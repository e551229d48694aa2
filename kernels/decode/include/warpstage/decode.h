// Decoding of a traced launch's event buffer (kernels/include/warpstage/trace_format.h)
// into a ws::KernelRecord whose times are int64 ns on CUPTI's time base.
//
// CUDA-free and Qt-free: the recorder copies the buffer to the host and calls this;
// the tests build buffers by hand. docs/recording.md explains the method:
//
//  * Calibration, per CTA: ns per cycle = (globaltimerEnd - globaltimerStart) /
//    (clockEnd - clockStart). %globaltimer ticks every 32 ns on the H200, so the
//    slope has a relative error of about 32 ns / span; because the line goes through
//    both (quantised) end points, an event's time is off by at most about one tick.
//    CTAs shorter than DecodeOptions::minCalibrationSpanNs use the median slope of
//    the kernel's long CTAs (or the device clock) instead.
//  * Alignment: %globaltimer and CUPTI share an epoch but were seen ~177-220 us apart.
//    One offset per kernel moves the CTAs into CUPTI's [start, end]: with
//    slack = (cuptiEnd - cuptiStart) - (maxCtaEnd - minCtaStart) the CTA span is
//    centred in the CUPTI window (offset = cuptiStart - minCtaStart + slack/2);
//    alignResidualNs = |slack|/2, the most the centring can be wrong by. slack < 0
//    (CTA span longer than CUPTI's duration) is reported: the span cannot fit.
//  * Intervals: event i of a warp starts phase kind_i, which lasts until the warp's
//    next phase event (markers do not end a phase); kEventEnd closes the last one.
//  * Loads: a producer's IssueLoad of k-step k -> the earliest end of a WaitData of
//    k-step k (or a LoadReady marker of k) in the same CTA. Synchronous loads (Load
//    intervals of Worker warps) become one transfer per k-step spanning its Load
//    intervals in the CTA.
//  * Tiles: TileBegin (kstep = tileM, aux = tileN) .. TileEnd markers of a warp.
//  * User phases (kinds kUserPhaseBase + i) keep their kind; KernelRecord::phaseNames
//    gets DecodeOptions::phaseNames, extended with "phase <i>" (and a warning) for kinds
//    the kernel used without naming them. A warp with a user role (flags bit 1) shows
//    roleNames[userRole], plus " <roleIndex>" when warps of that name differ in roleIndex.
//  * Overflow (a warp's count > eventsPerWarp; every such warp is listed in
//    DecodeReport::overflows), a warp that declared a role but never wrote its end, a
//    CTA without its end record, or traced CTAs in which no warp declared a role make
//    the report not ok: the run must be stored as Failed with DecodeReport::failureReason.
#pragma once

#include "warpstage/ladder.h"
#include "warpstage/model.h"
#include "warpstage/trace_format.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <map>
#include <string>
#include <vector>

namespace ws::decode {

// The buffer cannot be decoded at all (wrong magic/version, too small, header
// inconsistent with the launch geometry). The message names the problem.
class DecodeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// --- Clock calibration -------------------------------------------------------
struct CtaClock {
    double nsPerCycle = 0;        // slope used for this CTA
    std::int64_t gtStart = 0;     // %globaltimer at CTA start (ns)
    std::uint64_t clkStart = 0;   // clock64 right after it
    bool ownSlope = false;        // slope from this CTA's own two pairs (else fallback)
    double slopeRelError = 0;     // ~ tick / span: relative error of the own slope (0 if fallback)
};

// %globaltimer resolution seen on the H200 (docs/device-log.md).
inline constexpr double kGlobalTimerTickNs = 32.0;

// Slope of one CTA's record. Returns ownSlope = false (and fallbackNsPerCycle) when
// the record lacks its end pair, the span is shorter than minSpanNs, or the pairs are
// not increasing.
CtaClock calibrateCta(const trace::CtaRecord& r, double fallbackNsPerCycle, std::int64_t minSpanNs);

// ns on the globaltimer base of a clock64 value read on the CTA's SM.
// %globaltimer ns of a clock64 value of the CTA. Integer result: the absolute epoch (~1.8e18 ns on
// the device) is beyond where a double holds single nanoseconds; only the CTA-relative part is a double.
inline std::int64_t clockToNs(const CtaClock& c, std::uint64_t clk)
{
    return c.gtStart + std::llround(double(std::int64_t(clk - c.clkStart)) * c.nsPerCycle);
}

// --- Alignment onto CUPTI's time base ----------------------------------------
struct Alignment {
    std::int64_t offsetNs = 0;    // add to globaltimer-base times
    std::int64_t slackNs = 0;     // CUPTI duration - CTA span
    double residualNs = 0;        // |slack| / 2
    bool fits = true;             // slack >= 0: the aligned CTA span lies inside [cuptiStart, cuptiEnd]
};
Alignment alignToCupti(TimeNs cuptiStart, TimeNs cuptiEnd, std::int64_t minCtaStartGt, std::int64_t maxCtaEndGt);

// --- Decoding -----------------------------------------------------------------
struct DecodeOptions {
    std::vector<int> keepCtas;             // linear block indices to keep (empty: all)
    std::vector<int> keepSms;              // SM ids to keep (empty: all); a CTA is kept if it passes both
    double deviceNsPerCycle = 0;           // 1e6 / clockKHz: fallback slope of last resort
    std::int64_t minCalibrationSpanNs = 4000;  // shorter CTAs borrow the kernel's median slope
    // Names a user-instrumented kernel declared (<warpstage/trace.cuh>: WARPSTAGE_PHASE_NAMES,
    // WARPSTAGE_ROLE_NAMES). phaseNames[i] names kind kUserPhaseBase + i; they become
    // KernelRecord::phaseNames. roleNames[i] is the display name of warps that declared user role i.
    std::vector<std::string> phaseNames;
    std::vector<std::string> roleNames;
    // Users' kernels: a warp of a traced CTA that declared no role is kept as a warp of role Unknown named
    // kNoRoleName, with no intervals, so that the viewer shows it (and says why it is empty) instead of
    // leaving it out. Off for the ladder, whose idle warps stay undeclared on purpose.
    bool keepUndeclaredWarps = false;
};

// The display name of a warp that declared no role (DecodeOptions::keepUndeclaredWarps).
inline constexpr const char* kNoRoleName = "no role";

// A warp that attempted more events than its region holds.
struct WarpOverflow {
    int cta = 0;                           // linear block index
    int warp = 0;                          // warp index in the CTA
    std::uint32_t attempted = 0;           // events the warp tried to write
    std::uint32_t capacity = 0;            // events its region holds
};

struct DecodeReport {
    bool ok = true;                        // false: store the run as Failed with failureReason
    std::string failureReason;
    std::int64_t droppedEvents = 0;        // events lost to overflow (sum over warps)
    int overflowWarps = 0;
    std::vector<WarpOverflow> overflows;   // every overflowing warp (failureReason names the first few)
    int unfinishedWarps = 0;               // declared a role but wrote no end (fault / early exit)
    int missingCtas = 0;                   // CTA record without its start or end pair
    int undeclaredWarps = 0;               // warp regions never claimed (not traced: skipped)
    std::map<int, int> undeclaredByWarp;   // warp index -> traced CTAs in which that warp declared no role
    bool noRoleDeclared = false;           // CTAs ran traced but no warp of any declared a role (a failure)
    int unnamedUserPhases = 0;             // user phase kinds with no name in DecodeOptions::phaseNames
    int unnamedUserRoles = 0;              // warps whose user role has no name in DecodeOptions::roleNames
    int fallbackCalibrations = 0;          // CTAs that used a borrowed slope
    int unmatchedLoads = 0;                // IssueLoad without a matching ready
    int clampedIntervals = 0;              // negative durations clamped to 0 (clock went backwards)
    std::int64_t observedKSteps = 0;       // consumer k-steps rebuilt from k-step observers' stamps (trace_observed.h)
    std::int64_t unobservedKSteps = 0;     // k-steps an observer's stamps did not cover (left as the warp recorded them)
    int ctasTotal = 0, ctasKept = 0;
    double medianNsPerCycle = 0;
    double maxSlopeRelError = 0;
    Alignment alignment;
    std::vector<std::string> warnings;
};

// Decodes `size` bytes at `data`. `geom` is what the recorder asked the ladder for
// (the header must agree with it); `launch` carries CUPTI's start/end and is copied
// into the result with alignResidualNs and droppedEvents filled in.
// Throws DecodeError if the buffer is unusable; overflow and unfinished warps are
// reported in `report` (never thrown), with whatever could be decoded.
KernelRecord decodeTrace(const void* data, std::size_t size, const ladder::TraceGeometry& geom,
                         const KernelLaunch& launch, const DecodeOptions& options, DecodeReport& report);

// Parses "0-15,100,200-203" (used for --ctas / --sms). Throws std::invalid_argument.
std::vector<int> parseIndexList(const std::string& text);

// Display name of a warp's role: "producer", "consumer WG0", "worker WG1", "epilogue", "idle".
std::string roleDisplayName(WarpRole role, int warpgroup, int roleIndex);

}  // namespace ws::decode
