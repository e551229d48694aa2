// Rows of the timeline: SM header > CTA header (the CTA's overlap band) >
// "loads in flight" sub-lane > one lane per warp, with a thin bracket row above
// each warp that has outer scopes (KernelTrace::scopes, one level per depth). Collapsible groups and a
// lane filter ("sm:0-3", "cta:0-7", "role:producer", "warp:4-7", "wg:1";
// terms separated by ';' or spaces are ANDed; CTA numbers are blockIdx linear).
#pragma once

#include <warpstage/model.h>

#include <QSet>
#include <QString>

#include <optional>
#include <vector>

struct LaneFilter {
    struct Range {
        int lo, hi;
    };
    std::vector<Range> sm, cta, warp, wg;
    std::vector<ws::WarpRole> roles;
    bool empty() const { return sm.empty() && cta.empty() && warp.empty() && wg.empty() && roles.empty(); }
    bool acceptsCta(const ws::Cta &cta) const;
    bool acceptsLane(const ws::KernelTrace &trace, const ws::Lane &lane) const;
    // nullopt + *error on a bad filter ("lane filter 'sm:x': 'x' is not a number or range")
    static std::optional<LaneFilter> parse(const QString &text, QString *error);
};

struct TimelineRow {
    enum Type : std::uint8_t { SmHeader, CtaHeader, Loads, Warp, Brackets, Ghost };  // Ghost: predicted timeline of `lane`
    Type type = Warp;
    bool collapsed = false;  // headers
    int sm = -1;
    int cta = -1;            // index into trace.ctas
    int lane = -1;           // index into trace.lanes (Warp and Brackets rows)
    int levels = 0;          // Brackets: scope depths drawn (one level each, outermost on top)
    int top = 0;             // y of the row's top in the scrolled content, px
    int height = 0;
};

class TimelineLayout {
public:
    static constexpr int kSmHeight = 18;
    static constexpr int kCtaHeight = 14;
    static constexpr int kLoadsHeight = 10;
    static constexpr int kWarpHeight = 15;
    static constexpr int kIdleWarpHeight = 7;
    static constexpr int kBracketLevelHeight = 7;   // one depth of outer scopes
    static constexpr int kGhostHeight = 11;         // the predicted timeline of a warp (what-if ghost row)

    void build(const ws::KernelTrace *trace, const LaneFilter &filter, const QSet<int> &collapsedSms,
               const QSet<int> &collapsedCtas, double rowScale = 1.0);
    // ghostRows: a Ghost row under every non-idle warp lane (the what-if panel's predicted timeline, "beside")
    void setGhostRows(bool on) { m_ghostRows = on; }
    bool ghostRows() const { return m_ghostRows; }
    const std::vector<TimelineRow> &rows() const { return m_rows; }
    int totalHeight() const { return m_total; }
    int rowAt(int y) const;                     // -1 if none
    int firstRowBelow(int y) const;             // first row whose bottom is > y
    int rowOfLane(int lane) const;              // -1 if hidden
    int rowOfCta(int cta) const;
    int visibleLaneCount() const { return m_visibleLanes; }
    // The outer scopes of a lane: indices into trace.scopes, sorted by (depth, start); empty if none.
    struct ScopeRange {
        const int *begin = nullptr, *end = nullptr;
        bool empty() const { return begin == end; }
    };
    ScopeRange scopesOfLane(int lane) const;

private:
    std::vector<int> m_scopeOrder;                  // trace.scopes indices by (lane, depth, start)
    std::vector<std::pair<int, int>> m_scopeSpan;   // per lane: [first, last) in m_scopeOrder
    std::vector<TimelineRow> m_rows;
    std::vector<int> m_rowOfLane;
    int m_total = 0;
    int m_visibleLanes = 0;
    bool m_ghostRows = false;
};
