#include "timelinelayout.h"

#include <QRegularExpression>

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace {
bool inRanges(const std::vector<LaneFilter::Range> &r, int v)
{
    if (r.empty())
        return true;
    return std::any_of(r.begin(), r.end(), [v](const LaneFilter::Range &x) { return v >= x.lo && v <= x.hi; });
}
}  // namespace

bool LaneFilter::acceptsCta(const ws::Cta &c) const { return inRanges(sm, c.smId) && inRanges(cta, c.blockLinear); }

bool LaneFilter::acceptsLane(const ws::KernelTrace &trace, const ws::Lane &lane) const
{
    if (lane.ctaIndex < 0 || std::size_t(lane.ctaIndex) >= trace.ctas.size())
        return false;
    if (!acceptsCta(trace.ctas[std::size_t(lane.ctaIndex)]))
        return false;
    if (!inRanges(warp, lane.warpIndex) || !inRanges(wg, lane.warpgroup))
        return false;
    if (!roles.empty() && std::find(roles.begin(), roles.end(), lane.role) == roles.end())
        return false;
    return true;
}

std::optional<LaneFilter> LaneFilter::parse(const QString &text, QString *error)
{
    LaneFilter f;
    const QStringList terms = text.split(QRegularExpression(QStringLiteral("[;\\s]+")), Qt::SkipEmptyParts);
    auto fail = [&](const QString &why) -> std::optional<LaneFilter> {
        if (error)
            *error = QStringLiteral("lane filter '%1': %2").arg(text, why);
        return std::nullopt;
    };
    for (const QString &term : terms) {
        const int colon = term.indexOf(QLatin1Char(':'));
        if (colon <= 0)
            return fail(QStringLiteral("'%1' is not key:values (keys: sm, cta, warp, wg, role)").arg(term));
        const QString key = term.left(colon).toLower();
        const QStringList values = term.mid(colon + 1).split(QLatin1Char(','), Qt::SkipEmptyParts);
        if (values.isEmpty())
            return fail(QStringLiteral("'%1' has no values").arg(term));
        if (key == QLatin1String("role")) {
            for (const QString &v : values) {
                const QByteArray name = v.toLower().toUtf8();
                auto r = ws::warpRoleFromName(std::string_view(name.constData(), std::size_t(name.size())));
                if (!r)
                    return fail(QStringLiteral("'%1' is not a role (producer, consumer, epilogue, worker, idle)").arg(v));
                f.roles.push_back(*r);
            }
            continue;
        }
        std::vector<Range> *dst = key == QLatin1String("sm")     ? &f.sm
                                  : key == QLatin1String("cta")  ? &f.cta
                                  : key == QLatin1String("warp") ? &f.warp
                                  : key == QLatin1String("wg")   ? &f.wg
                                                                 : nullptr;
        if (!dst)
            return fail(QStringLiteral("unknown key '%1' (keys: sm, cta, warp, wg, role)").arg(key));
        for (const QString &v : values) {
            const QStringList ab = v.split(QLatin1Char('-'));
            bool ok1 = false, ok2 = true;
            const int lo = ab.value(0).toInt(&ok1);
            int hi = lo;
            if (ab.size() == 2)
                hi = ab[1].toInt(&ok2);
            if (ab.size() > 2 || !ok1 || !ok2 || lo < 0 || hi < lo)
                return fail(QStringLiteral("'%1' is not a number or range (e.g. 0-3)").arg(v));
            dst->push_back({lo, hi});
        }
    }
    return f;
}

void TimelineLayout::build(const ws::KernelTrace *trace, const LaneFilter &filter, const QSet<int> &collapsedSms,
                           const QSet<int> &collapsedCtas, double rowScale)
{
    m_rows.clear();
    m_rowOfLane.clear();
    m_scopeOrder.clear();
    m_scopeSpan.clear();
    m_total = 0;
    m_visibleLanes = 0;
    if (!trace)
        return;
    auto h = [rowScale](int px) { return std::max(3, int(px * rowScale + 0.5)); };
    m_rowOfLane.assign(trace->lanes.size(), -1);
    // outer scopes per lane (bracket rows)
    m_scopeSpan.assign(trace->lanes.size(), {0, 0});
    std::vector<int> levelsOf(trace->lanes.size(), 0);
    if (!trace->scopes.empty()) {
        std::unordered_map<ws::RowId, int> laneOfWarp;
        for (std::size_t i = 0; i < trace->lanes.size(); ++i)
            laneOfWarp.emplace(trace->lanes[i].warpId, int(i));
        std::vector<std::pair<int, int>> keyed;  // (lane, scope index)
        for (std::size_t i = 0; i < trace->scopes.size(); ++i) {
            const auto it = laneOfWarp.find(trace->scopes[i].warpId);
            if (it != laneOfWarp.end() && trace->scopes[i].depth >= 0)
                keyed.push_back({it->second, int(i)});
        }
        std::stable_sort(keyed.begin(), keyed.end(), [trace](const auto &a, const auto &b) {
            const ws::ScopeSpan &x = trace->scopes[std::size_t(a.second)], &y = trace->scopes[std::size_t(b.second)];
            return std::tie(a.first, x.depth, x.start) < std::tie(b.first, y.depth, y.start);
        });
        for (std::size_t j = 0; j < keyed.size(); ++j) {
            const auto l = std::size_t(keyed[j].first);
            if (j == 0 || keyed[j - 1].first != keyed[j].first)
                m_scopeSpan[l].first = int(j);
            m_scopeSpan[l].second = int(j + 1);
            levelsOf[l] = std::max(levelsOf[l], trace->scopes[std::size_t(keyed[j].second)].depth + 1);
            m_scopeOrder.push_back(keyed[j].second);
        }
    }
    // lanes of each CTA, in trace order (SM, CTA, warp)
    std::vector<std::vector<int>> lanesOf(trace->ctas.size());
    for (std::size_t i = 0; i < trace->lanes.size(); ++i) {
        const auto &l = trace->lanes[i];
        if (l.ctaIndex >= 0 && std::size_t(l.ctaIndex) < trace->ctas.size() && filter.acceptsLane(*trace, l))
            lanesOf[std::size_t(l.ctaIndex)].push_back(int(i));
    }
    int y = 0;
    int currentSm = INT_MIN;
    bool smCollapsed = false;
    const bool roleFiltered = !filter.roles.empty() || !filter.warp.empty() || !filter.wg.empty();
    for (std::size_t c = 0; c < trace->ctas.size(); ++c) {
        const ws::Cta &cta = trace->ctas[c];
        if (!filter.acceptsCta(cta) || (roleFiltered && lanesOf[c].empty()))
            continue;
        if (cta.smId != currentSm) {
            currentSm = cta.smId;
            smCollapsed = collapsedSms.contains(currentSm);
            TimelineRow r;
            r.type = TimelineRow::SmHeader;
            r.sm = currentSm;
            r.collapsed = smCollapsed;
            r.top = y;
            r.height = h(kSmHeight);
            y += r.height;
            m_rows.push_back(r);
        }
        if (smCollapsed)
            continue;
        const bool ctaCollapsed = collapsedCtas.contains(int(c));
        TimelineRow head;
        head.type = TimelineRow::CtaHeader;
        head.sm = cta.smId;
        head.cta = int(c);
        head.collapsed = ctaCollapsed;
        head.top = y;
        head.height = h(kCtaHeight);
        y += head.height;
        m_rows.push_back(head);
        if (ctaCollapsed)
            continue;
        TimelineRow loads = head;
        loads.type = TimelineRow::Loads;
        loads.collapsed = false;
        loads.top = y;
        loads.height = h(kLoadsHeight);
        y += loads.height;
        m_rows.push_back(loads);
        for (int li : lanesOf[c]) {
            if (const int levels = levelsOf[std::size_t(li)]; levels > 0) {
                TimelineRow b;
                b.type = TimelineRow::Brackets;
                b.sm = cta.smId;
                b.cta = int(c);
                b.lane = li;
                b.levels = levels;
                b.top = y;
                b.height = levels * h(kBracketLevelHeight);
                y += b.height;
                m_rows.push_back(b);
            }
            TimelineRow r;
            r.type = TimelineRow::Warp;
            r.sm = cta.smId;
            r.cta = int(c);
            r.lane = li;
            r.top = y;
            const auto &ln = trace->lanes[std::size_t(li)];
            r.height = ln.size() == 0 || ln.role == ws::WarpRole::Idle ? h(kIdleWarpHeight) : h(kWarpHeight);
            y += r.height;
            m_rowOfLane[std::size_t(li)] = int(m_rows.size());
            m_rows.push_back(r);
            ++m_visibleLanes;
            if (m_ghostRows && ln.size() > 0 && ln.role != ws::WarpRole::Idle) {
                TimelineRow g = r;
                g.type = TimelineRow::Ghost;
                g.top = y;
                g.height = h(kGhostHeight);
                y += g.height;
                m_rows.push_back(g);
            }
        }
    }
    m_total = y;
}

int TimelineLayout::firstRowBelow(int y) const
{
    auto it = std::upper_bound(m_rows.begin(), m_rows.end(), y,
                               [](int v, const TimelineRow &r) { return v < r.top + r.height; });
    return int(it - m_rows.begin());
}

int TimelineLayout::rowAt(int y) const
{
    const int i = firstRowBelow(y);
    if (i >= int(m_rows.size()) || y < m_rows[std::size_t(i)].top)
        return -1;
    return i;
}

int TimelineLayout::rowOfLane(int lane) const
{
    return lane >= 0 && std::size_t(lane) < m_rowOfLane.size() ? m_rowOfLane[std::size_t(lane)] : -1;
}

TimelineLayout::ScopeRange TimelineLayout::scopesOfLane(int lane) const
{
    if (lane < 0 || std::size_t(lane) >= m_scopeSpan.size() || m_scopeOrder.empty())
        return {};
    const auto [a, b] = m_scopeSpan[std::size_t(lane)];
    return {m_scopeOrder.data() + a, m_scopeOrder.data() + b};
}

int TimelineLayout::rowOfCta(int cta) const
{
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].type == TimelineRow::CtaHeader && m_rows[i].cta == cta)
            return int(i);
    return -1;
}
