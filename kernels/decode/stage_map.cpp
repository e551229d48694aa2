// PC -> pipeline stage mapping and stall-reason labels: see warpstage/stage_map.h.
#include "warpstage/stage_map.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <sstream>
#include <fstream>
#include <filesystem>

namespace ws::decode {

namespace {

constexpr std::array<std::pair<std::string_view, IntervalKind>, 16> kIdentifiers = {{
    {"Other", IntervalKind::Other},
    {"Setup", IntervalKind::Setup},
    {"WaitSlot", IntervalKind::WaitSlot},
    {"IssueLoad", IntervalKind::IssueLoad},
    {"WaitData", IntervalKind::WaitData},
    {"MmaIssue", IntervalKind::MmaIssue},
    {"MmaWait", IntervalKind::MmaWait},
    {"Release", IntervalKind::Release},
    {"Epilogue", IntervalKind::Epilogue},
    {"Store", IntervalKind::Store},
    {"Load", IntervalKind::Load},
    {"Sync", IntervalKind::Sync},
    {"Compute", IntervalKind::Compute},
    {"WaitOrder", IntervalKind::WaitOrder},
    {"WaitPartial", IntervalKind::WaitPartial},
    {"Fixup", IntervalKind::Fixup},
}};

constexpr std::array<std::pair<std::string_view, IntervalKind>, 4> kRingMethods = {{
    {"waitSlot", IntervalKind::WaitSlot},
    {"issueLoad", IntervalKind::IssueLoad},
    {"waitData", IntervalKind::WaitData},
    {"release", IntervalKind::Release},
}};

// The shared MMA step's free functions (kernels/src/common/mma.cuh), called by the rungs: a call opens the phase
// its name starts with (mmaIssue, mmaIssueBf16, mmaIssueRows; mmaWait).
constexpr std::array<std::pair<std::string_view, IntervalKind>, 2> kPieceFunctionPrefixes = {{
    {"mmaIssue", IntervalKind::MmaIssue},
    {"mmaWait", IntervalKind::MmaWait},
}};

// The epilogue warp's protocol (kernels/src/common/epilogue_warp.cuh): each method records the phase of its name, so a
// call of one (`staging.waitOrderStaged(`, `st.storeHalf(`, `waitOrderFlag(`, with template arguments too:
// `staging.template epilogueStageAt<0>(`) opens that stage as an event call would.
constexpr std::array<std::pair<std::string_view, IntervalKind>, 13> kEpilogueMethods = {{
    {"waitDataHalf", IntervalKind::WaitData},
    {"storeHalf", IntervalKind::Store},
    {"storeHalfPublish", IntervalKind::Store},
    {"loadStaging", IntervalKind::Load},
    {"loadStagingEmpty", IntervalKind::Load},
    {"waitOrderStaged", IntervalKind::WaitOrder},
    {"waitOrderFlag", IntervalKind::WaitOrder},
    {"epilogueAdd", IntervalKind::Epilogue},
    {"epilogueStage", IntervalKind::Epilogue},
    {"epilogueAddAt", IntervalKind::Epilogue},  // the staging in pieces (s11-lcering)
    {"epilogueStageAt", IntervalKind::Epilogue},
    {"epilogueAddHeld", IntervalKind::Epilogue},
    {"epilogueStageHeld", IntervalKind::Epilogue},
}};

bool isIdentChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string_view baseName(std::string_view p)
{
    const auto slash = p.find_last_of("/\\");
    return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

constexpr std::string_view kStallPrefix = "smsp__pcsamp_warps_issue_stalled_";
constexpr std::string_view kNotIssued = "_not_issued";

}  // namespace

std::optional<IntervalKind> intervalKindFromIdentifier(std::string_view id)
{
    for (const auto& [name, kind] : kIdentifiers)
        if (name == id) return kind;
    return std::nullopt;
}

StageMap StageMap::fromSource(std::string path, std::string_view text)
{
    StageMap m;
    m.m_file = std::move(path);
    // Split lines; comment-only lines are blanked.
    std::vector<std::string_view> lines;
    for (std::size_t pos = 0; pos <= text.size();) {
        std::size_t eol = text.find('\n', pos);
        if (eol == std::string_view::npos) eol = text.size();
        std::string_view l = text.substr(pos, eol - pos);
        const auto first = l.find_first_not_of(" \t");
        if (first != std::string_view::npos && l.substr(first, 2) == "//") l = {};
        lines.push_back(l);
        pos = eol + 1;
    }
    auto skipSpace = [](std::string_view l, std::size_t a) {
        while (a < l.size() && (l[a] == ' ' || l[a] == '\t')) ++a;
        return a;
    };
    auto identAt = [](std::string_view l, std::size_t a, bool qualified) {
        std::size_t b = a;
        while (b < l.size() && (isIdentChar(l[b]) || (qualified && l[b] == ':'))) ++b;
        return l.substr(a, b - a);
    };
    auto kindOf = [](std::string_view qual) {
        const auto colons = qual.rfind("::");
        return intervalKindFromIdentifier(colons == std::string_view::npos ? qual : qual.substr(colons + 2));
    };
    // Split form: `t = wt.now();` ... `wt.eventAt(t, tk::Kind, ...)`: the phase begins at the now() line.
    std::vector<std::pair<int, std::string>> nows;  // (line, variable)
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string_view l = lines[i];
        const auto at = l.find(".now()");
        if (at == std::string_view::npos) continue;
        const auto eq = l.rfind('=', at);
        if (eq == std::string_view::npos || eq == 0) continue;
        std::size_t e = eq;
        while (e > 0 && (l[e - 1] == ' ' || l[e - 1] == '\t')) --e;
        std::size_t b = e;
        while (b > 0 && isIdentChar(l[b - 1])) --b;
        if (b < e) nows.emplace_back(int(i) + 1, std::string(l.substr(b, e - b)));
    }
    std::vector<std::pair<int, IntervalKind>> starts;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string_view l = lines[i];
        const int line = int(i) + 1;
        const std::size_t startsBefore = starts.size();
        // `.event(kind, ...)`, `.eventAt(t, kind, ...)` and the public API's `.phase(kind, ...)` (<warpstage/trace.cuh>)
        std::vector<std::pair<std::size_t, std::size_t>> calls;  // (position after the name, name length)
        for (std::size_t at = l.find(".event"); at != std::string_view::npos; at = l.find(".event", at + 6)) calls.emplace_back(at, 6);
        for (std::size_t at = l.find(".phase("); at != std::string_view::npos; at = l.find(".phase(", at + 7)) calls.emplace_back(at, 6);
        for (const auto& [at, len] : calls) {
            std::size_t a = at + len;
            const bool split = len == 6 && l.substr(at, 6) == ".event" && l.substr(a, 3) == "At(";
            if (!split && l.substr(a, 1) != "(") continue;
            a = skipSpace(l, a + (split ? 3 : 1));
            int startLine = line;
            if (split) {
                const std::string_view var = identAt(l, a, false);
                a = skipSpace(l, a + var.size());
                if (a >= l.size() || l[a] != ',') continue;
                a = skipSpace(l, a + 1);
                for (const auto& [nl, nv] : nows)
                    if (nl <= line && nv == var) startLine = nl;  // latest now() of that variable at or above
            }
            const std::string_view id = identAt(l, a, true);
            if (auto k = kindOf(id)) starts.emplace_back(startLine, *k);
            // a phase of the user's own (userPhase(i)): none of the standard stages ("other")
            else if (id.ends_with("userPhase") && l.substr(skipSpace(l, a + id.size()), 1) == "(")
                starts.emplace_back(startLine, IntervalKind::Other);
        }
        // The shared Ring's methods record the phase of their name (kernels/src/common/ring.cuh).
        for (const auto& [method, kind] : kRingMethods)
            for (std::size_t at = l.find(method); at != std::string_view::npos; at = l.find(method, at + 1))
                if (at > 0 && l[at - 1] == '.' && l.substr(at + method.size(), 1) == "(")
                    starts.emplace_back(line, kind);
        // ... and so do the epilogue warp's protocol methods (member or free calls, not their definitions).
        if (l.find("__device__") == std::string_view::npos)
            for (const auto& [method, kind] : kEpilogueMethods)
                for (std::size_t at = l.find(method); at != std::string_view::npos; at = l.find(method, at + 1)) {
                    if (at > 0 && (isIdentChar(l[at - 1]) || l[at - 1] == ':')) continue;
                    const std::size_t e = at + method.size();
                    if (e < l.size() && (l[e] == '(' || l[e] == '<')) starts.emplace_back(line, kind);
                }
        // ... and so do the MMA step's free functions: `mmaIssueBf16<1, BN>(...)`, `mmaWait<1>(...)` (a call, not
        // the definition: no __device__ on the line; not a member: no '.' or "::" before it).
        if (l.find("__device__") == std::string_view::npos)
            for (const auto& [prefix, kind] : kPieceFunctionPrefixes)
                for (std::size_t at = l.find(prefix); at != std::string_view::npos; at = l.find(prefix, at + 1)) {
                    if (at > 0 && (isIdentChar(l[at - 1]) || l[at - 1] == '.' || l[at - 1] == ':')) continue;
                    std::size_t e = at + prefix.size();
                    while (e < l.size() && isIdentChar(l[e])) ++e;
                    if (e < l.size() && (l[e] == '(' || l[e] == '<')) {
                        starts.emplace_back(line, kind);
                        break;
                    }
                }
        if (starts.size() > startsBefore) m.m_eventLines.push_back(line);
    }
    std::stable_sort(starts.begin(), starts.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    // Loop headers: a `for (` / `while (` line, and the lines after it up to the first stage event
    // of its body, take that event's stage. The compiler puts the loop's control (increment,
    // compare, back branch) on the header line, which runs at every iteration boundary; by text
    // order alone it would take the stage of whatever event happens to sit above the loop
    // (in the ladder: the consumer main loop under the producer's IssueLoad, or under WaitOrder).
    {
        auto code = [&](std::size_t i) {  // line i without a trailing // comment
            std::string_view l = lines[i];
            const auto c = l.find("//");
            return c == std::string_view::npos ? l : l.substr(0, c);
        };
        auto isLoopHeader = [&](std::string_view l) {
            std::size_t a = skipSpace(l, 0);
            for (std::string_view kw : {std::string_view("for"), std::string_view("while")}) {
                if (l.substr(a, kw.size()) != kw) continue;
                std::size_t b = a + kw.size();
                if (b < l.size() && isIdentChar(l[b])) continue;
                b = skipSpace(l, b);
                if (b < l.size() && l[b] == '(') return true;
            }
            return false;
        };
        std::vector<std::pair<int, IntervalKind>> loopStarts;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            if (!isLoopHeader(code(i))) continue;
            // body: from the header's first '{' to its matching '}', else the next statement
            // (which may follow the condition's closing parenthesis on the header line itself)
            int depth = 0;
            bool opened = false;
            std::size_t end = i;
            {
                const std::string_view h = code(i);
                int paren = 0;
                std::size_t close = std::string_view::npos;
                for (std::size_t a = h.find('('); a < h.size(); ++a) {
                    if (h[a] == '(') ++paren;
                    else if (h[a] == ')' && --paren == 0) {
                        close = a;
                        break;
                    }
                }
                if (close != std::string_view::npos) {
                    const std::string_view rest = h.substr(close + 1);
                    // one-line loop (`while (x) poll();`): its body is on this line, with no event call
                    // (one there would already start this line's stage)
                    if (rest.find('{') == std::string_view::npos && rest.find(';') != std::string_view::npos)
                        continue;
                }
            }
            for (std::size_t j = i; j < lines.size(); ++j) {
                for (char ch : code(j)) {
                    if (ch == '{') {
                        ++depth;
                        opened = true;
                    } else if (ch == '}') {
                        --depth;
                    }
                }
                end = j;
                if (opened && depth <= 0) break;
                if (!opened && j > i && code(j).find(';') != std::string_view::npos) break;  // braceless body
            }
            const int header = int(i) + 1, last = int(end) + 1;
            auto it = std::upper_bound(starts.begin(), starts.end(), header,
                                       [](int l, const std::pair<int, IntervalKind>& st) { return l < st.first; });
            if (it != starts.end() && it->first <= last) loopStarts.emplace_back(header, it->second);
        }
        starts.insert(starts.end(), loopStarts.begin(), loopStarts.end());
        std::stable_sort(starts.begin(), starts.end(), [](const auto& x, const auto& y) { return x.first < y.first; });

        // Blocks: a stage opened inside a `{ ... }` block (an `if` that is rarely taken, such as the
        // pingpong ordering wait, a loop body, one branch of an if/else) ends at the block's closing
        // brace; from there on the stage in effect where the block opened applies again. Blocks
        // opened on an `if constexpr (...)` line are transparent: in the traced build they always
        // run, so their events stay in effect.
        std::map<int, IntervalKind> byLine;  // events and loop headers win over restores on one line
        for (const auto& st : starts) byLine[st.first] = st.second;
        auto stageAtLine = [&](int line) -> IntervalKind {
            auto it = byLine.upper_bound(line);
            return it == byLine.begin() ? IntervalKind::Setup : std::prev(it)->second;
        };
        struct Open {
            int line;
            bool transparent;
            bool lambda = false;
        };
        std::vector<Open> stack;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const std::string_view l = code(i);
            const int line = int(i) + 1;
            for (std::size_t ci = 0; ci < l.size(); ++ci) {
                const char ch = l[ci];
                if (ch == '{') {
                    // a lambda's body: `[&](...) {`, `[=] {` (its capture list on this line, before the brace)
                    const std::string_view head = l.substr(0, ci);
                    const bool lambda = head.find("[&]") != std::string_view::npos || head.find("[=]") != std::string_view::npos
                        || head.find("[&,") != std::string_view::npos || head.find("[=,") != std::string_view::npos;
                    stack.push_back({line, l.find("constexpr") != std::string_view::npos, lambda});
                } else if (ch == '}' && !stack.empty()) {
                    const Open o = stack.back();
                    stack.pop_back();
                    if (o.lambda && line > o.line) m.m_lambdas.emplace_back(o.line + 1, line);
                    if (o.transparent || o.line == line) continue;
                    // did a stage start inside the block?
                    auto in = byLine.upper_bound(o.line);
                    if (in == byLine.end() || in->first > line) continue;
                    const IntervalKind before = stageAtLine(o.line);
                    if (byLine.count(line) == 0 && stageAtLine(line) != before) byLine[line] = before;
                }
            }
        }
        starts.assign(byLine.begin(), byLine.end());
    }
    std::sort(m.m_lambdas.begin(), m.m_lambdas.end());
    for (const auto& s : starts) {
        if (!m.m_starts.empty() && m.m_starts.back().first == s.first) m.m_starts.back().second = s.second;
        else if (m.m_starts.empty() || m.m_starts.back().second != s.second) m.m_starts.push_back(s);
    }
    return m;
}

namespace {
std::string readFile(const std::filesystem::path& p)
{
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}
}  // namespace

StageMap StageMap::fromFile(std::string path, const std::string& file)
{
    if (file.empty()) return fromSource(std::move(path), {});
    const std::string relDir = std::filesystem::path(path).parent_path().string();
    StageMap map = fromSource(std::move(path), readFile(file));
    // Helper headers next to the rung's source (hopper.cuh, wgmma_ops.cuh, ...).
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(file).parent_path(), ec))
        if (entry.path().extension() == ".cuh")
            map.addHelperSource(relDir + "/" + entry.path().filename().string(), readFile(entry.path()));
    return map;
}

std::optional<IntervalKind> StageMap::stageAt(int line) const
{
    if (m_starts.empty() || line <= 0) return std::nullopt;
    auto it = std::upper_bound(m_starts.begin(), m_starts.end(), line,
                               [](int l, const std::pair<int, IntervalKind>& s) { return l < s.first; });
    if (it == m_starts.begin()) return IntervalKind::Setup;
    return std::prev(it)->second;
}

// Same path suffix: "/abs/work/main/kernels/src/x.cu" matches "kernels/src/x.cu"; a bare basename matches too.
bool sourcePathMatches(std::string_view cuptiFile, std::string_view mine)
{
    if (cuptiFile.empty() || mine.empty()) return false;
    if (cuptiFile.size() >= mine.size() && cuptiFile.substr(cuptiFile.size() - mine.size()) == mine
        && (cuptiFile.size() == mine.size() || cuptiFile[cuptiFile.size() - mine.size() - 1] == '/'))
        return true;
    return cuptiFile.find('/') == std::string_view::npos && baseName(mine) == cuptiFile;
}

bool StageMap::matchesFile(std::string_view cuptiFile) const { return sourcePathMatches(cuptiFile, m_file); }

bool StageMap::lineStage(std::string_view cuptiFile, int line, std::optional<IntervalKind>& stage) const
{
    if (line <= 0) return false;
    if (!m_starts.empty() && matchesFile(cuptiFile)) {
        stage = stageAt(line);
        return true;
    }
    for (const auto& b : m_bodies)
        if (b.matchesFile(cuptiFile)) {
            if (m_programRules)  // a lambda's body runs where it is called: its lines take the caller's stage
                for (const auto& [first, last] : b.m_lambdas)
                    if (line >= first && line <= last && !std::binary_search(b.m_eventLines.begin(), b.m_eventLines.end(), line)) {
                        bool opens = false;
                        for (int e : b.m_eventLines) opens = opens || (e >= first && e <= last);
                        if (!opens) return false;
                    }
            // the body's function holding the line (addHelperSource registered the body's functions as helpers)
            const HelperFn* fn = nullptr;
            for (const auto& h : m_helpers)
                if (line >= h.first && line <= h.last && sourcePathMatches(cuptiFile, h.file)) fn = &h;
            if (fn) {
                const auto first = std::lower_bound(b.m_eventLines.begin(), b.m_eventLines.end(), fn->first);
                const bool opensStages = first != b.m_eventLines.end() && *first <= fn->last;
                const auto named = helperStageFromName(fn->name, std::nullopt, false);
                if (!opensStages) {
                    if (!named) return false;
                    stage = named;
                    return true;
                }
                if (named && opensStages && *first > line) {
                    stage = named;
                    return true;
                }
            }
            stage = b.stageAt(line);
            return true;
        }
    return false;
}

void StageMap::addHelperSource(std::string path, std::string_view text)
{
    std::vector<HelperFn> fns;
    int line = 1;
    for (std::size_t pos = 0; pos <= text.size(); ++line) {
        std::size_t eol = text.find('\n', pos);
        if (eol == std::string_view::npos) eol = text.size();
        const std::string_view l = text.substr(pos, eol - pos);
        pos = eol + 1;
        const auto dev = l.find("__device__");
        const auto first = l.find_first_not_of(" \t");
        if (dev == std::string_view::npos || (first != std::string_view::npos && l.substr(first, 2) == "//")) continue;
        const auto paren = l.find('(', dev);
        if (paren == std::string_view::npos) continue;
        std::size_t e = paren;
        while (e > 0 && (l[e - 1] == ' ' || l[e - 1] == '\t')) --e;
        std::size_t b = e;
        while (b > 0 && isIdentChar(l[b - 1])) --b;
        if (b == e) continue;
        if (!fns.empty()) fns.back().last = line - 1;
        fns.push_back({path, line, 1 << 30, std::string(l.substr(b, e - b))});
    }
    m_helpers.insert(m_helpers.end(), fns.begin(), fns.end());
    StageMap body = fromSource(path, text);  // a body shared by rungs: it records stages itself
    if (!body.empty()) m_bodies.push_back(std::move(body));
}

std::string StageMap::helperFunctionAt(std::string_view cuptiFile, int line) const
{
    for (const auto& h : m_helpers)
        if (line >= h.first && line <= h.last && sourcePathMatches(cuptiFile, h.file)) return h.name;
    return {};
}

std::optional<IntervalKind> StageMap::helperStageAt(std::string_view cuptiFile, int line, std::optional<IntervalKind> context,
                                                    bool hasWaitOrder) const
{
    const std::string fn = helperFunctionAt(cuptiFile, line);
    if (fn.empty()) return std::nullopt;
    return helperStageFromName(fn, context, hasWaitOrder);
}

std::optional<IntervalKind> helperStageFromName(std::string_view function, std::optional<IntervalKind> context,
                                                bool hasWaitOrder)
{
    std::string n(function);
    for (auto& c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
    auto has = [&](const char* k) { return n.find(k) != std::string::npos; };
    if (has("wgmmawait")) return IntervalKind::MmaWait;
    // The shared pieces of kernels/src/common (ring.cuh, mma.cuh, epilogue_warp.cuh) are named after the stage they
    // open.
    if (has("waitslot")) return IntervalKind::WaitSlot;
    if (has("issueload")) return IntervalKind::IssueLoad;
    if (has("waitdata")) return IntervalKind::WaitData;
    if (has("mmawait")) return IntervalKind::MmaWait;
    if (has("mmaissue")) return IntervalKind::MmaIssue;
    if (n == "release") return IntervalKind::Release;
    // epilogue_warp.cuh (the epilogue warp and its staging): waitDataHalf is caught above; storeHalf below
    if (has("waitpartial")) return IntervalKind::WaitPartial;  // stream-K's flag wait
    if (has("fixup")) return IntervalKind::Fixup;              // stream-K's partial sums
    if (has("waitorder")) return IntervalKind::WaitOrder;     // waitOrderStaged, waitOrderFlag
    if (has("loadstaging")) return IntervalKind::Load;        // U's tile TMA-loaded into the staging half
    if (has("epilogue")) return IntervalKind::Epilogue;       // epilogueAdd, epilogueHandOff, epilogueAddU
    // the accumulator into the staging (epilogue_warp.cuh: ldmatrix / stmatrix, fp16 conversion and add)
    if (has("ldmatrix") || has("stmatrix") || has("addhalf2") || has("packhalf2")) return IntervalKind::Epilogue;
    // A PTX wrapper called inside one of the epilogue warp's protocol methods (epilogue_warp.cuh: the context is the
    // method's stage) belongs to it: loadStaging's TMA load (Load), epilogueAdd's hand-off arrive (Epilogue),
    // waitOrderStaged's barrier wait (WaitOrder), storeHalf's bulk stores (Store).
    const bool protocol = context
        && (*context == IntervalKind::Load || *context == IntervalKind::Epilogue || *context == IntervalKind::WaitOrder
            || *context == IntervalKind::Store);
    // A ready flag's acquire (epilogue_warp.cuh's acquireFlag, spun on by waitOrderFlag): the wait for another
    // CTA's tile, WaitOrder (stream-K's flag wait is WaitPartial: its own name, above, or its context).
    if (has("acquireflag")) return context == IntervalKind::WaitPartial ? IntervalKind::WaitPartial : IntervalKind::WaitOrder;
    if (protocol && (has("tmaload") || has("arriveexpecttx") || has("mbararrive") || has("mbartrywait") || has("mbarwait")))
        return *context;
    if (n.rfind("wgmma", 0) == 0 || has("mmakstep") || has("fenceacc")) return IntervalKind::MmaIssue;
    if (has("tmaload") || has("arriveexpecttx") || has("tmaprefetch")) return IntervalKind::IssueLoad;
    if (has("mbartrywait") || has("mbarwait")) {
        const bool producerSide = context && (*context == IntervalKind::WaitSlot || *context == IntervalKind::IssueLoad);
        return producerSide ? IntervalKind::WaitSlot : IntervalKind::WaitData;
    }
    if (has("mbararrive")) return IntervalKind::Release;
    if (has("namedbar")) return hasWaitOrder ? IntervalKind::WaitOrder : IntervalKind::Sync;
    if (has("clustersync") || has("syncthreads")) return IntervalKind::Sync;
    if (has("store") || has("bulk")) return IntervalKind::Store;
    return std::nullopt;
}

namespace {
std::vector<WarpRole> rolesFromCounts(const std::vector<std::array<std::int64_t, 6>>& counts);
}

std::vector<WarpRole> rolesByKind(const KernelRecord& traced)
{
    std::vector<std::array<std::int64_t, 6>> counts(kIntervalKindCount);
    for (auto& c : counts) c.fill(0);
    for (const auto& iv : traced.intervals) {
        if (iv.warpId < 0 || std::size_t(iv.warpId) >= traced.warps.size()) continue;
        const auto role = static_cast<std::size_t>(traced.warps[std::size_t(iv.warpId)].role);
        const auto kind = static_cast<std::size_t>(iv.kind);
        if (role < 6 && kind < counts.size()) ++counts[kind][role];
    }
    return rolesFromCounts(counts);
}

std::vector<WarpRole> rolesByKind(const KernelTrace& traced)
{
    std::vector<std::array<std::int64_t, 6>> counts(kIntervalKindCount);
    for (auto& c : counts) c.fill(0);
    for (const auto& lane : traced.lanes) {
        const auto role = static_cast<std::size_t>(lane.role);
        if (role >= 6) continue;
        for (const IntervalKind k : lane.kind) {
            const auto kind = static_cast<std::size_t>(k);
            if (kind < counts.size()) ++counts[kind][role];
        }
    }
    return rolesFromCounts(counts);
}

namespace {
std::vector<WarpRole> rolesFromCounts(const std::vector<std::array<std::int64_t, 6>>& counts)
{
    std::vector<WarpRole> out(kIntervalKindCount, WarpRole::Unknown);
    std::array<std::int64_t, 6> perRole{};
    for (std::size_t k = 0; k < counts.size(); ++k) {
        std::int64_t best = 0;
        for (std::size_t r = 0; r < 6; ++r) {
            perRole[r] += counts[k][r];
            if (counts[k][r] > best) {
                best = counts[k][r];
                out[k] = static_cast<WarpRole>(r);
            }
        }
    }
    // The rung's only working role (Idle and Unknown warps aside), if it has exactly one.
    WarpRole only = WarpRole::Unknown;
    int working = 0;
    for (std::size_t r = 0; r < 6; ++r)
        if (perRole[r] > 0 && r != std::size_t(WarpRole::Idle) && r != std::size_t(WarpRole::Unknown)) {
            only = static_cast<WarpRole>(r);
            ++working;
        }
    if (working == 1)
        for (auto& r : out)
            if (r == WarpRole::Unknown) r = only;
    return out;
}
}  // namespace

void assignStages(std::vector<StallSample>& samples, const StageMap& map, const std::vector<WarpRole>& roles,
                  std::optional<bool> rungHasWaitOrder)
{
    auto roleOf = [&](IntervalKind k) {
        const auto i = static_cast<std::size_t>(k);
        return i < roles.size() ? roles[i] : WarpRole::Unknown;
    };
    // Order: function, pcOffset.
    std::vector<std::size_t> order(samples.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (samples[a].functionName != samples[b].functionName) return samples[a].functionName < samples[b].functionName;
        return samples[a].pcOffset < samples[b].pcOffset;
    });
    const bool hasWaitOrder = rungHasWaitOrder ? *rungHasWaitOrder : roleOf(IntervalKind::WaitOrder) != WarpRole::Unknown;
    const std::string* fn = nullptr;
    std::optional<IntervalKind> current;
    for (std::size_t idx : order) {
        StallSample& s = samples[idx];
        if (!fn || *fn != s.functionName) {
            fn = &s.functionName;
            current.reset();
        }
        std::optional<IntervalKind> k;
        if (map.lineStage(s.sourceFile, s.line, k)) {
            // a program's map: a Setup line inside another stage's code is moved code; it keeps that stage
            if (map.programRules() && k == IntervalKind::Setup && current && *current != IntervalKind::Setup) k = current;
            current = k;
        } else if (auto h = map.helperStageAt(s.sourceFile, s.line, current, hasWaitOrder)) {
            k = h;  // a helper with a pipeline meaning; the context stays the rung code's
            // (a program's map: the epilogue's data movement is where the epilogue is, for the conversions around it)
            if (map.programRules() && *h == IntervalKind::Epilogue) current = h;
        } else {
            k = current;
        }
        if (k) {
            s.stage = std::string(intervalKindName(*k));
            s.role = roleOf(*k);
        } else {
            s.stage.clear();
            s.role = WarpRole::Unknown;
        }
    }
}

bool keepStallReason(std::string_view name)
{
    if (name == "smsp__pcsamp_sample_count" || name == "smsp__pcsamp_samples_data_dropped") return false;
    if (name.size() >= kNotIssued.size() && name.substr(name.size() - kNotIssued.size()) == kNotIssued) return false;
    return true;
}

std::string stallReasonLabel(std::string_view name)
{
    std::string_view base = name;
    if (base.substr(0, kStallPrefix.size()) == kStallPrefix) base = base.substr(kStallPrefix.size());
    bool notIssued = false;
    if (base.size() >= kNotIssued.size() && base.substr(base.size() - kNotIssued.size()) == kNotIssued) {
        base = base.substr(0, base.size() - kNotIssued.size());
        notIssued = true;
    }
    static const std::map<std::string_view, std::string_view> labels = {
        {"barrier", "barrier: waiting at a CTA barrier (__syncthreads / bar.sync)"},
        {"branch_resolving", "branch resolving: waiting for a branch target"},
        {"dispatch_stall", "dispatch stall: the dispatcher could not issue"},
        {"drain", "drain: waiting for memory stores to drain at exit"},
        {"imc_miss", "IMC miss: immediate constant cache miss"},
        {"lg_throttle", "LG throttle: local/global memory queue full"},
        {"long_scoreboard", "long scoreboard: waiting on global/local memory data"},
        {"math_pipe_throttle", "math pipe throttle: execution pipe busy"},
        {"membar", "membar: waiting on a memory barrier"},
        {"mio_throttle", "MIO throttle: shared memory / special-function queue full"},
        {"misc", "misc: other hardware reason"},
        {"no_instructions", "no instructions: instruction cache miss"},
        {"not_selected", "not selected: eligible, another warp issued"},
        {"selected", "selected: issuing an instruction"},
        {"short_scoreboard", "short scoreboard: waiting on shared memory / MIO data"},
        {"sleeping", "sleeping: nanosleep / mbarrier try_wait suspended"},
        {"tex_throttle", "tex throttle: texture/TMA queue full"},
        {"wait", "wait: fixed-latency dependency"},
        {"warpgroup_arrive", "warpgroup arrive: waiting for wgmma operands/fence"},
    };
    std::string out;
    if (auto it = labels.find(base); it != labels.end()) out = std::string(it->second);
    else if (name == "smsp__pcsamp_sample_count") out = "all samples";
    else if (name == "smsp__pcsamp_samples_data_dropped") out = "dropped samples";
    else {
        out = std::string(base);
        std::replace(out.begin(), out.end(), '_', ' ');
    }
    if (notIssued) out += " (not issued)";
    return out;
}

}  // namespace ws::decode
