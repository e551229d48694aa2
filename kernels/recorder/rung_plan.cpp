// Which selected rungs can take the shape; see warpstage/rung_plan.h.
#include "warpstage/rung_plan.h"

namespace ws::rec {

GemmRungPlan planGemmRungs(const std::vector<std::string>& rungs, const ladder::Shape& shape)
{
    GemmRungPlan p;
    std::vector<std::string> names = rungs;
    if (names.empty())
        for (const auto& r : ladder::rungs()) names.push_back(r.name);
    for (const auto& r : names) {
        if (!ladder::findRung(r)) {
            p.error = "unknown rung '" + r + "'";
            return p;
        }
        if (std::string why = ladder::checkShape(r, shape); !why.empty())
            p.skipped.push_back({r, std::move(why)});
        else
            p.record.push_back(r);
    }
    return p;
}

LceRungPlan planLceRungs(const std::vector<int>& rungs, const lce::Shape& shape)
{
    LceRungPlan p;
    for (int r : rungs) {
        if (std::string why = lce::refusal(r, shape); !why.empty())
            p.skipped.push_back({"lce:" + std::to_string(r), std::move(why)});
        else
            p.record.push_back(r);
    }
    return p;
}

std::string skippedText(const SkippedRung& s)
{
    return s.rung + " skipped: it cannot take this shape (" + s.why + "); the other rungs are recorded";
}

std::string noRungTakesText(const std::vector<SkippedRung>& skipped, const std::string& shapeText)
{
    std::string t = "no selected rung can take the shape " + shapeText + ":";
    for (std::size_t i = 0; i < skipped.size(); ++i) t += (i ? "; " : " ") + skipped[i].rung + ": " + skipped[i].why;
    return t + " (nothing run, nothing written)";
}

}  // namespace ws::rec
