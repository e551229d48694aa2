// Program-level analysis (program.h): kernel families, the kernel summary table, idle gaps, busy time.
#include "warpstage/program.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace ws {

namespace {

constexpr std::string_view kAnonymousNs = "(anonymous namespace)";

bool isIdentChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

// Length of the operator symbol at s[i..] (after the word "operator"), 0 if none. Longest match first, so
// "operator<<<int>" is operator<< with template argument <int>.
std::size_t operatorSymbolLength(std::string_view s, std::size_t i)
{
    static constexpr std::array<std::string_view, 42> ops = {
        "<=>", "<<=", ">>=", "->*", "()", "[]", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--",
        "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<", ">", "+", "-", "*", "/", "%", "^", "&", "|", "~",
        "!", "=", ",", "\"\"", "new", "delete"};
    for (std::string_view op : ops)
        if (s.substr(i, op.size()) == op)
            return op.size();
    return 0;
}

// Index just past the group opened at s[i] ('(' / '<' / '{' / '['), counting only that bracket pair;
// s.size() if unbalanced.
std::size_t skipGroup(std::string_view s, std::size_t i)
{
    const char open = s[i];
    const char close = open == '(' ? ')' : open == '<' ? '>' : open == '{' ? '}' : ']';
    int depth = 0;
    for (; i < s.size(); ++i) {
        if (s[i] == open)
            ++depth;
        else if (s[i] == close && --depth == 0)
            return i + 1;
    }
    return s.size();
}

}  // namespace

std::string kernelFamily(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    std::size_t i = 0;
    while (i < s.size()) {
        const char c = s[i];
        if (s.substr(i, kAnonymousNs.size()) == kAnonymousNs) {  // (anonymous namespace):: is no part of the family
            i += kAnonymousNs.size();
            if (s.substr(i, 2) == "::")
                i += 2;
            continue;
        }
        if (c == 'o' && s.substr(i, 8) == "operator" && (i == 0 || !isIdentChar(s[i - 1])) &&
            (i + 8 >= s.size() || !isIdentChar(s[i + 8]))) {
            out += "operator";
            i += 8;
            const std::size_t n = operatorSymbolLength(s, i);
            out.append(s.substr(i, n));
            i += n;
            while (n > 0 && i < s.size() && s[i] == ' ')  // "operator< <int>": the demangler's space is no return type
                ++i;
            continue;
        }
        if (c == '<') {  // template arguments
            i = skipGroup(s, i);
            continue;
        }
        if (c == '{' || c == '[') {  // {lambda(int)#1}, {unnamed type#1}: part of the name
            const std::size_t e = skipGroup(s, i);
            out.append(s.substr(i, e - i));
            i = e;
            continue;
        }
        if (c == '(') {
            // the parameter list; a local entity's name goes on after it ("f(int)::{lambda()#1}::operator()")
            std::size_t e = skipGroup(s, i);
            std::size_t k = e;
            while (k < s.size() && s[k] == ' ')
                ++k;
            if (s.substr(k, 5) == "const")
                k += 5;
            if (s.substr(k, 2) == "::") {
                i = k;
                continue;
            }
            break;
        }
        if (c == ' ') {  // what came before was the return type ("void ", "unsigned int ")
            out.clear();
            ++i;
            continue;
        }
        out += c;
        ++i;
    }
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    return out.empty() ? std::string(s) : out;
}

std::vector<KernelStats> kernelStats(const ProgramTrace& program)
{
    std::unordered_map<std::string_view, KernelStats> byName;  // views into program.kernels' names
    std::int64_t grand = 0;
    for (const KernelLaunch& k : program.kernels) {
        const std::int64_t d = std::max<TimeNs>(0, k.end - k.start);
        auto it = byName.find(k.name);
        if (it == byName.end()) {
            KernelStats s;
            s.name = k.name;
            s.family = kernelFamily(k.name);
            s.minNs = d;
            s.maxNs = d;
            it = byName.emplace(k.name, std::move(s)).first;
        }
        KernelStats& s = it->second;
        ++s.launches;
        s.totalNs += d;
        s.minNs = std::min(s.minNs, d);
        s.maxNs = std::max(s.maxNs, d);
        if (k.traced)
            ++s.tracedLaunches;
        grand += d;
    }
    std::vector<KernelStats> out;
    out.reserve(byName.size());
    for (auto& [name, s] : byName) {
        s.meanNs = double(s.totalNs) / double(s.launches);
        s.share = grand > 0 ? double(s.totalNs) / double(grand) : 0.0;
        out.push_back(std::move(s));
    }
    std::stable_sort(out.begin(), out.end(), [](const KernelStats& a, const KernelStats& b) {
        if (a.totalNs != b.totalNs)
            return a.totalNs > b.totalNs;
        return a.name < b.name;
    });
    return out;
}

namespace {

// Kernel and memory-operation intervals of the run, merged into disjoint busy stretches in time order.
std::vector<std::pair<TimeNs, TimeNs>> busyStretches(const ProgramTrace& p)
{
    std::vector<std::pair<TimeNs, TimeNs>> iv;
    iv.reserve(p.kernels.size() + p.memOps.size());
    for (const KernelLaunch& k : p.kernels)
        iv.emplace_back(k.start, std::max(k.start, k.end));
    for (const MemOp& m : p.memOps)
        iv.emplace_back(m.start, std::max(m.start, m.end));
    std::sort(iv.begin(), iv.end());
    std::vector<std::pair<TimeNs, TimeNs>> merged;
    for (const auto& [a, b] : iv) {
        if (!merged.empty() && a <= merged.back().second)
            merged.back().second = std::max(merged.back().second, b);
        else
            merged.emplace_back(a, b);
    }
    return merged;
}

}  // namespace

std::vector<IdleGap> idleGaps(const ProgramTrace& program, TimeNs minGapNs)
{
    // One run is one process on one device (RunInfo::deviceOrdinal): every record belongs to that device.
    const auto merged = busyStretches(program);
    std::vector<IdleGap> gaps;
    for (std::size_t i = 1; i < merged.size(); ++i) {
        const TimeNs a = merged[i - 1].second, b = merged[i].first;
        if (b > a && b - a >= minGapNs)
            gaps.push_back({program.run.deviceOrdinal, a, b});
    }
    return gaps;
}

std::optional<Burst> busiestBurst(const ProgramTrace& program, double minGapFraction, double maxSpanFraction,
                                  double minBusyFraction)
{
    const auto merged = busyStretches(program);
    const TimeNs span = program.lastEnd() - program.firstStart();
    if (merged.empty() || span <= 0)
        return std::nullopt;
    const double minGap = minGapFraction * double(span);
    Burst best, cur{merged[0].first, merged[0].first, 0};
    TimeNs busy = 0;  // the run's (gpuBusyNs), summed on the way
    for (const auto& [a, b] : merged) {
        if (double(a - cur.end) >= minGap) {
            if (cur.busyNs > best.busyNs)
                best = cur;
            cur = {a, b, 0};
        }
        cur.end = std::max(cur.end, b);
        cur.busyNs += b - a;
        busy += b - a;
    }
    if (cur.busyNs > best.busyNs)
        best = cur;
    if (double(best.end - best.start) >= maxSpanFraction * double(span) || double(best.busyNs) < minBusyFraction * double(busy))
        return std::nullopt;
    return best;
}

TimeNs gpuBusyNs(const ProgramTrace& program)
{
    TimeNs busy = 0;
    for (const auto& [a, b] : busyStretches(program))
        busy += b - a;
    return busy;
}

}  // namespace ws
