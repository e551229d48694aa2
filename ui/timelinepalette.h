// Colours of the timeline: per interval kind (colour-blind safe, after Paul Tol's
// "vibrant"/"muted" schemes), loads in flight and the load/compute overlap band.
// Starvation (WaitData) and back-pressure (WaitSlot) are saturated and hatched;
// compute is in muted blues, loads in teal; green is kept for "load hidden
// behind compute" in the overlap band.
#pragma once

#include <warpstage/model.h>

#include <QColor>
#include <QString>

namespace tlpalette {

QColor kindColor(ws::IntervalKind kind);     // a user-named phase: userPhaseColor(kind - kUserPhaseBase)
// The colour of user phase `index` (kind kUserPhaseBase + index): stable (the same index always gets the
// same colour), distinct from every standard kind's and from its neighbours'.
QColor userPhaseColor(int index);
bool kindHatched(ws::IntervalKind kind);     // drawn with diagonal hatching (stalls)
QColor hatchColor(ws::IntervalKind kind);    // the hatch stripes' colour
QString kindLabel(ws::IntervalKind kind);    // "Wait for data", ...
// As above, and a user-named phase (<warpstage/trace.cuh>) by its recorded name: "reduce (user phase)".
QString kindLabel(ws::IntervalKind kind, const ws::KernelTrace& trace);
// The short name written inside a wide interval: "wait_data", or a user phase's recorded name ("reduce").
QString kindName(ws::IntervalKind kind, const ws::KernelTrace* trace);

QColor loadsColor(int inFlight);             // 1..4 (4 = four or more)
QColor overlapColor(int state);              // ws::lod::OverlapState 1..3
QString overlapLabel(int state);

QColor roleColor(ws::WarpRole role);         // the chip in the label column
QColor background();
QColor rowShade();                           // alternate CTA group background
QColor gridLine();
QColor labelText();
QColor headerBackground();
QColor bracketFill(int depth);               // bracket rows (outer scopes): a level's fill, by depth
QColor bracketEdge(int depth);               // its ends and bottom line

// Blend c towards the background by f (0 = c, 1 = background).
QColor faded(QColor c, double f = 0.78);

}  // namespace tlpalette
