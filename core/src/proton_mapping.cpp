// Proton scope names -> Warpstage phase kinds and roles: globs, the built-in defaults, the mapping file.
#include "warpstage/proton.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace ws {

namespace {

char lower(char c)
{
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> words(std::string_view s)
{
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
            ++i;
        const std::size_t b = i;
        while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])))
            ++i;
        if (i > b)
            out.push_back(s.substr(b, i - b));
    }
    return out;
}

std::string kindList()
{
    std::string s;
    for (int i = 0; i < kIntervalKindCount; ++i)
        s += std::string(intervalKindName(static_cast<IntervalKind>(i))) + ", ";
    return s + "user";
}

struct DefaultRule {
    const char* glob;
    IntervalKind kind;
};
// Order matters: the first match wins ("wgmma_wait" is an MMA wait, not a wait for data; "wgmma_issue"
// issues MMAs, not loads).
constexpr DefaultRule kDefaults[] = {
    {"*mma*wait*", IntervalKind::MmaWait},   {"*wait*mma*", IntervalKind::MmaWait},
    {"*dot*wait*", IntervalKind::MmaWait},
    {"*tma*wait*", IntervalKind::WaitData},  {"*wait*tma*", IntervalKind::WaitData},
    {"*mbar*wait*", IntervalKind::WaitData}, {"*wait*mbar*", IntervalKind::WaitData},
    {"*ready*wait*", IntervalKind::WaitData}, {"*wait*ready*", IntervalKind::WaitData},
    {"*full*wait*", IntervalKind::WaitData}, {"*wait*full*", IntervalKind::WaitData},
    {"*empty*", IntervalKind::WaitSlot},     {"*free*", IntervalKind::WaitSlot},
    {"*mma*", IntervalKind::MmaIssue},       {"*dot*", IntervalKind::MmaIssue},
    {"*issue*", IntervalKind::IssueLoad},    {"*load*", IntervalKind::IssueLoad},
    {"*store*", IntervalKind::Epilogue},     {"*epilogue*", IntervalKind::Epilogue},
};

}  // namespace

bool globMatch(std::string_view glob, std::string_view text)
{
    // Iterative matcher with one backtrack point for the last '*'.
    std::size_t g = 0, t = 0, star = std::string_view::npos, mark = 0;
    while (t < text.size()) {
        if (g < glob.size() && (glob[g] == '?' || (glob[g] != '*' && lower(glob[g]) == lower(text[t])))) {
            ++g;
            ++t;
        } else if (g < glob.size() && glob[g] == '*') {
            star = g++;
            mark = t;
        } else if (star != std::string_view::npos) {
            g = star + 1;
            t = ++mark;
        } else {
            return false;
        }
    }
    while (g < glob.size() && glob[g] == '*')
        ++g;
    return g == glob.size();
}

ScopeMapping ScopeMapping::defaults()
{
    ScopeMapping m;
    for (const auto& d : kDefaults)
        m.m_rules.push_back(ScopeRule{d.glob, d.kind, false, std::nullopt, 0});
    return m;
}

ScopeMapping ScopeMapping::parse(std::string_view text, const std::string& fileName)
{
    ScopeMapping m;
    int lineNo = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos)
            nl = text.size();
        std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        ++lineNo;
        if (const auto hash = line.find('#'); hash != std::string_view::npos)
            line = line.substr(0, hash);
        line = trim(line);
        if (line.empty())
            continue;
        const auto fail = [&](const std::string& why) {
            throw ProtonError(fileName + ":" + std::to_string(lineNo) + ": " + why);
        };
        const auto eq = line.find('=');
        if (eq == std::string_view::npos)
            fail("expected 'GLOB = KIND [ROLE]', found no '='");
        const std::string_view glob = trim(line.substr(0, eq));
        if (glob.empty())
            fail("empty scope-name pattern before '='");
        if (words(glob).size() != 1)
            fail("the pattern '" + std::string(glob) + "' contains blanks");
        const auto rhs = words(line.substr(eq + 1));
        if (rhs.empty())
            fail("no phase kind after '=' (known: " + kindList() + ")");
        if (rhs.size() > 2)
            fail("too many words after '=': expected 'KIND [ROLE]'");
        ScopeRule r;
        r.glob = std::string(glob);
        r.line = lineNo;
        const std::string kindName(rhs[0]);
        if (kindName == "user") {
            r.userPhase = true;
        } else if (auto k = intervalKindFromName(kindName)) {
            r.kind = *k;
        } else {
            fail("unknown phase kind '" + kindName + "' (known: " + kindList() + ")");
        }
        if (rhs.size() == 2) {
            const std::string roleName(rhs[1]);
            auto role = warpRoleFromName(roleName);
            if (!role)
                fail("unknown role '" + roleName + "' (known: producer, consumer, epilogue, worker, idle, unknown)");
            r.role = role;
        }
        m.m_rules.push_back(std::move(r));
        if (nl == text.size())
            break;
    }
    for (const auto& d : kDefaults)
        m.m_rules.push_back(ScopeRule{d.glob, d.kind, false, std::nullopt, 0});
    return m;
}

ScopeMapping ScopeMapping::load(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw ProtonError(path + ": cannot open the mapping file");
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse(ss.str(), path);
}

const ScopeRule* ScopeMapping::match(std::string_view name) const
{
    for (const auto& r : m_rules)
        if (globMatch(r.glob, name))
            return &r;
    return nullptr;
}

}  // namespace ws
