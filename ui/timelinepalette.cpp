#include "timelinepalette.h"

#include <cstdlib>

#include <warpstage/lod.h>

#include <QObject>

namespace tlpalette {

using K = ws::IntervalKind;

QColor userPhaseColor(int index)
{
    // Ten colours none of the standard kinds uses and far from them (mostly Paul Tol's "muted" and "light" sets;
    // the stall reds and oranges, the blues of MMA and loads and the teals of loads left out), in an order that
    // keeps neighbouring indices apart; past ten, the same colours darker.
    static const QRgb base[] = {0x332288, 0xBBCC33, 0xFFAABB, 0x999933, 0x117733,
                                0xEEDD88, 0x997700, 0x444444, 0x88CCEE, 0x663333};
    constexpr int n = int(sizeof base / sizeof base[0]);
    if (index < 0)
        index = 0;
    const QColor c = QColor::fromRgb(base[index % n]);
    const int round = index / n;
    return round == 0 ? c : c.darker(100 + 35 * round);
}

QColor kindColor(ws::IntervalKind kind)
{
    if (ws::isUserPhase(kind))
        return userPhaseColor(int(static_cast<std::uint8_t>(kind)) - ws::kUserPhaseBase);
    switch (kind) {
    case K::Other: return QColor(0xBB, 0xBB, 0xBB);
    case K::Setup: return QColor(0xD4, 0xCF, 0xC4);      // pale sand-grey
    case K::WaitSlot: return QColor(0xEE, 0x77, 0x33);   // vibrant orange: back-pressure
    case K::IssueLoad: return QColor(0x00, 0x99, 0x88);  // teal: load issue
    case K::WaitData: return QColor(0xCC, 0x33, 0x11);   // vibrant red: starvation
    case K::MmaIssue: return QColor(0x33, 0x66, 0xAA);   // muted blue: tensor-core issue
    case K::MmaWait: return QColor(0x99, 0xBB, 0xDD);    // pale blue: tensor cores busy
    case K::Release: return QColor(0x99, 0x88, 0xCC);    // lavender
    case K::Epilogue: return QColor(0xAA, 0x44, 0x99);   // purple
    case K::Store: return QColor(0x88, 0x22, 0x55);      // wine
    case K::Load: return QColor(0x33, 0xBB, 0xAA);       // light teal: synchronous load
    case K::Sync: return QColor(0xDD, 0xCC, 0x77);       // sand
    case K::Compute: return QColor(0x55, 0x88, 0xCC);    // blue: CUDA-core math
    case K::WaitOrder: return QColor(0xEE, 0x33, 0x77);  // magenta
    case K::WaitPartial: return QColor(0xCC, 0x66, 0xAA);  // pink-violet: a finisher waits for partial sums
    case K::Fixup: return QColor(0x66, 0x33, 0x77);        // deep violet: partial sums to/from the workspace
    default: return QColor(0xBB, 0xBB, 0xBB);
    }
}

bool kindHatched(ws::IntervalKind kind) { return kind == K::WaitSlot || kind == K::WaitData; }

QColor hatchColor(ws::IntervalKind kind)
{
    return kind == K::WaitData ? QColor(0x88, 0x1A, 0x08) : QColor(0xB3, 0x4E, 0x14);
}

QString kindLabel(ws::IntervalKind kind)
{
    const auto l = ws::intervalKindLabel(kind);
    return QString::fromUtf8(l.data(), qsizetype(l.size()));
}

QString kindLabel(ws::IntervalKind kind, const ws::KernelTrace& trace)
{
    if (ws::isUserPhase(kind)) {
        const auto i = std::size_t(static_cast<std::uint8_t>(kind) - ws::kUserPhaseBase);
        if (i < trace.phaseNames.size() && !trace.phaseNames[i].empty())
            return QObject::tr("%1 (user phase)").arg(QString::fromStdString(trace.phaseNames[i]));
        return QObject::tr("user phase %1").arg(i);
    }
    return kindLabel(kind);
}

QString kindName(ws::IntervalKind kind, const ws::KernelTrace* trace)
{
    if (ws::isUserPhase(kind)) {
        const auto i = std::size_t(static_cast<std::uint8_t>(kind) - ws::kUserPhaseBase);
        if (trace && i < trace->phaseNames.size() && !trace->phaseNames[i].empty())
            return QString::fromStdString(trace->phaseNames[i]);
        return QStringLiteral("user_%1").arg(i);
    }
    const auto nm = ws::intervalKindName(kind);
    return QString::fromUtf8(nm.data(), qsizetype(nm.size()));
}

QColor loadsColor(int inFlight)
{
    switch (inFlight) {
    case 1: return QColor(0xBB, 0xDD, 0xF2);
    case 2: return QColor(0x77, 0xB4, 0xE0);
    case 3: return QColor(0x33, 0x88, 0xCC);
    default: return QColor(0x11, 0x55, 0x99);
    }
}

QColor overlapColor(int state)
{
    switch (state) {
    case int(ws::lod::OverlapState::LoadOnly): return QColor(0xEE, 0x66, 0x77);     // exposed load (rose)
    case int(ws::lod::OverlapState::ComputeOnly): return QColor(0xB4, 0xBE, 0xC8);  // compute, nothing loading (neutral)
    case int(ws::lod::OverlapState::Both): return QColor(0x22, 0x88, 0x33);         // load hidden behind compute
    default: return background();
    }
}

QString overlapLabel(int state)
{
    switch (state) {
    case int(ws::lod::OverlapState::LoadOnly): return QStringLiteral("Load exposed (no compute)");
    case int(ws::lod::OverlapState::ComputeOnly): return QStringLiteral("Compute, no load in flight");
    case int(ws::lod::OverlapState::Both): return QStringLiteral("Load hidden behind compute");
    default: return QStringLiteral("Idle");
    }
}

QColor roleColor(ws::WarpRole role)
{
    switch (role) {
    case ws::WarpRole::Producer: return QColor(0x00, 0x99, 0x88);
    case ws::WarpRole::Consumer: return QColor(0x33, 0x66, 0xAA);
    case ws::WarpRole::Epilogue: return QColor(0xAA, 0x44, 0x99);
    case ws::WarpRole::Worker: return QColor(0x55, 0x88, 0xCC);
    case ws::WarpRole::Idle: return QColor(0xCC, 0xCC, 0xCC);
    default: return QColor(0x99, 0x99, 0x99);
    }
}

QColor background() { return QColor(0xFF, 0xFF, 0xFF); }
QColor rowShade() { return QColor(0xF4, 0xF5, 0xF7); }
QColor gridLine() { return QColor(0xE2, 0xE4, 0xE8); }
QColor labelText() { return QColor(0x20, 0x24, 0x2A); }
QColor headerBackground() { return QColor(0xE8, 0xEB, 0xF0); }
// light, so that the lanes below stay the eye's target; three hues cycled by depth
QColor bracketFill(int depth)
{
    static const QColor c[] = {QColor(0xC9, 0xD3, 0xE2), QColor(0xDD, 0xD3, 0xE8), QColor(0xD3, 0xE4, 0xD6)};
    return c[std::abs(depth) % 3];
}
QColor bracketEdge(int depth)
{
    static const QColor c[] = {QColor(0x5A, 0x6E, 0x8C), QColor(0x6E, 0x5A, 0x8C), QColor(0x5A, 0x82, 0x64)};
    return c[std::abs(depth) % 3];
}

QColor faded(QColor c, double f)
{
    const QColor b = background();
    return QColor(int(c.red() + (b.red() - c.red()) * f), int(c.green() + (b.green() - c.green()) * f),
                  int(c.blue() + (b.blue() - c.blue()) * f));
}

}  // namespace tlpalette
