#include "warpstage/model.h"

#include <algorithm>
#include <array>

namespace ws {

namespace {
struct KindInfo {
    std::string_view name;
    std::string_view label;
};
constexpr std::array<KindInfo, kIntervalKindCount> kKinds = {{
    {"other", "Other"},
    {"setup", "Setup (prologue)"},
    {"wait_slot", "Wait for free slot"},
    {"issue_load", "Issue load"},
    {"wait_data", "Wait for data"},
    {"mma_issue", "MMA issue"},
    {"mma_wait", "MMA wait"},
    {"release", "Release slot"},
    {"epilogue", "Epilogue"},
    {"store", "Store C"},
    {"load", "Synchronous load"},
    {"sync", "CTA barrier"},
    {"compute", "CUDA-core compute"},
    {"wait_order", "Wait for turn"},
    {"wait_partial", "Wait for partial sums"},
    {"fixup", "Fixup (partial sums)"},
}};

constexpr std::array<std::string_view, 6> kRoles = {"unknown", "producer", "consumer", "epilogue", "worker", "idle"};
}  // namespace

std::string_view intervalKindName(IntervalKind k)
{
    const auto i = static_cast<std::size_t>(k);
    return i < kKinds.size() ? kKinds[i].name : std::string_view("other");
}

std::string_view intervalKindLabel(IntervalKind k)
{
    const auto i = static_cast<std::size_t>(k);
    return i < kKinds.size() ? kKinds[i].label : std::string_view("Other");
}

std::optional<IntervalKind> intervalKindFromName(std::string_view name)
{
    for (std::size_t i = 0; i < kKinds.size(); ++i)
        if (kKinds[i].name == name)
            return static_cast<IntervalKind>(i);
    return std::nullopt;
}

bool isComputeKind(IntervalKind k)
{
    return k == IntervalKind::MmaIssue || k == IntervalKind::MmaWait || k == IntervalKind::Compute;
}

bool isWaitKind(IntervalKind k)
{
    return k == IntervalKind::WaitSlot || k == IntervalKind::WaitData || k == IntervalKind::WaitOrder
        || k == IntervalKind::Sync || k == IntervalKind::WaitPartial;
}

std::string_view warpRoleName(WarpRole r)
{
    const auto i = static_cast<std::size_t>(r);
    return i < kRoles.size() ? kRoles[i] : std::string_view("unknown");
}

std::optional<WarpRole> warpRoleFromName(std::string_view name)
{
    for (std::size_t i = 0; i < kRoles.size(); ++i)
        if (kRoles[i] == name)
            return static_cast<WarpRole>(i);
    return std::nullopt;
}

std::size_t KernelTrace::intervalCount() const
{
    std::size_t n = 0;
    for (const Lane& l : lanes)
        n += l.size();
    return n;
}

TimeNs KernelTrace::firstStart() const
{
    bool any = false;
    TimeNs t = 0;
    for (const Lane& l : lanes) {
        if (l.start.empty())
            continue;
        const TimeNs s = l.start.front();  // lanes are sorted by start
        t = any ? std::min(t, s) : s;
        any = true;
    }
    return any ? t : launch.start;
}

TimeNs KernelTrace::lastEnd() const
{
    bool any = false;
    TimeNs t = 0;
    for (const Lane& l : lanes) {
        for (std::size_t i = 0; i < l.size(); ++i) {
            const TimeNs e = l.end(i);
            t = any ? std::max(t, e) : e;
            any = true;
        }
    }
    return any ? t : launch.end;
}

// --- schema 3: programs ----------------------------------------------------------
namespace {
constexpr std::array<std::string_view, 2> kRunKinds = {"ladder", "program"};
constexpr std::array<std::string_view, 3> kNvtxKinds = {"push_pop", "start_end", "mark"};
}  // namespace

std::string_view runKindName(RunKind k)
{
    const auto i = static_cast<std::size_t>(k);
    return i < kRunKinds.size() ? kRunKinds[i] : std::string_view("ladder");
}

std::optional<RunKind> runKindFromName(std::string_view name)
{
    for (std::size_t i = 0; i < kRunKinds.size(); ++i)
        if (kRunKinds[i] == name)
            return static_cast<RunKind>(i);
    return std::nullopt;
}

std::string_view nvtxKindName(NvtxKind k)
{
    const auto i = static_cast<std::size_t>(k);
    return i < kNvtxKinds.size() ? kNvtxKinds[i] : std::string_view("push_pop");
}

std::optional<NvtxKind> nvtxKindFromName(std::string_view name)
{
    for (std::size_t i = 0; i < kNvtxKinds.size(); ++i)
        if (kNvtxKinds[i] == name)
            return static_cast<NvtxKind>(i);
    return std::nullopt;
}

namespace {
template <class F>
void forEachSpan(const ProgramTrace& p, F f)
{
    for (const KernelLaunch& k : p.kernels)
        f(k.start, k.end);
    for (const MemOp& m : p.memOps)
        f(m.start, m.end);
    for (const NvtxRange& r : p.nvtx)
        f(r.start, r.end);
    for (const ApiSpan& a : p.apiSpans)
        f(a.start, a.end);
}
}  // namespace

TimeNs ProgramTrace::firstStart() const
{
    bool any = false;
    TimeNs t = 0;
    forEachSpan(*this, [&](TimeNs s, TimeNs) {
        t = any ? std::min(t, s) : s;
        any = true;
    });
    return t;
}

TimeNs ProgramTrace::lastEnd() const
{
    bool any = false;
    TimeNs t = 0;
    forEachSpan(*this, [&](TimeNs, TimeNs e) {
        t = any ? std::max(t, e) : e;
        any = true;
    });
    return t;
}

}  // namespace ws
