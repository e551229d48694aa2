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
        || k == IntervalKind::Sync;
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

}  // namespace ws
