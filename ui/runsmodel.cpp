#include "runsmodel.h"
#include "warpstage/program.h"
#include "warpstage/runfamily.h"

#include <QBrush>
#include <QFont>
#include <QIcon>
#include <QPalette>

#include <cmath>

namespace ws::ui {

// Internal id: 0 for a top-level row (a run; grouped: a family header), kGroupBase + group for a run row under
// a header, kKernelBase + run (index into m_contents->runs) for a kernel row.
static constexpr quintptr kGroupBase = 1;
static constexpr quintptr kKernelBase = quintptr(1) << 20;

RunsModel::RunsModel(QObject* parent) : QAbstractItemModel(parent) {}

QString shapeText(const ws::RunInfo& info)
{
    if (info.m <= 0)
        return QStringLiteral("—");
    return QStringLiteral("%1×%2×%3").arg(info.m).arg(info.n).arg(info.k);
}

void RunsModel::setContents(const FileContents* contents)
{
    beginResetModel();
    m_contents = contents;
    m_groups.clear();
    m_groupOfRun.clear();
    m_rowInGroup.clear();
    if (contents) {
        // Families in a fixed order (GEMM ladder, lce, programs), runs in file order within each.
        for (ws::RunFamily f : {ws::RunFamily::GemmLadder, ws::RunFamily::Lce, ws::RunFamily::Program}) {
            Group g;
            g.key = QString::fromUtf8(ws::familyKey(f).data(), qsizetype(ws::familyKey(f).size()));
            g.title = QString::fromUtf8(ws::familyTitle(f).data(), qsizetype(ws::familyTitle(f).size()));
            for (size_t r = 0; r < contents->runs.size(); ++r)
                if (ws::familyOf(contents->runs[r].summary.info).family == f)
                    g.runs.push_back(r);
            if (!g.runs.empty())
                m_groups.push_back(std::move(g));
        }
        m_groupOfRun.assign(contents->runs.size(), 0);
        m_rowInGroup.assign(contents->runs.size(), 0);
        for (size_t g = 0; g < m_groups.size(); ++g)
            for (size_t i = 0; i < m_groups[g].runs.size(); ++i) {
                m_groupOfRun[m_groups[g].runs[i]] = int(g);
                m_rowInGroup[m_groups[g].runs[i]] = int(i);
            }
    }
    endResetModel();
}

QModelIndex RunsModel::runIndex(size_t run, int column) const
{
    if (!grouped())
        return createIndex(int(run), column, quintptr(0));
    return createIndex(m_rowInGroup[run], column, kGroupBase + quintptr(m_groupOfRun[run]));
}

int RunsModel::runRowOf(const QModelIndex& index) const
{
    if (!index.isValid() || !m_contents)
        return -1;
    const quintptr id = index.internalId();
    if (!grouped())
        return id == 0 ? index.row() : -1;
    if (id >= kGroupBase && id < kKernelBase) {
        const auto& g = m_groups[size_t(id - kGroupBase)];
        return index.row() < int(g.runs.size()) ? int(g.runs[size_t(index.row())]) : -1;
    }
    return -1;
}

QModelIndex RunsModel::indexOfKernel(qint64 kernelId, int column) const
{
    if (!m_contents)
        return {};
    for (size_t r = 0; r < m_contents->runs.size(); ++r) {
        const auto& ks = m_contents->runs[r].kernels;
        for (size_t k = 0; k < ks.size(); ++k)
            if (ks[k].summary.launch.id == kernelId)
                return createIndex(int(k), column, kKernelBase + quintptr(r));
    }
    return {};
}

QModelIndex RunsModel::indexOfRun(qint64 runId, int column) const
{
    if (!m_contents)
        return {};
    for (size_t r = 0; r < m_contents->runs.size(); ++r)
        if (m_contents->runs[r].summary.info.id == runId)
            return runIndex(r, column);
    return {};
}

QModelIndex RunsModel::index(int row, int column, const QModelIndex& parent) const
{
    if (!hasIndex(row, column, parent) || !m_contents)
        return {};
    if (!parent.isValid())
        return createIndex(row, column, quintptr(0));
    if (grouped() && parent.internalId() == 0)  // a family header's runs
        return createIndex(row, column, kGroupBase + quintptr(parent.row()));
    const int run = runRowOf(parent);
    if (run >= 0)
        return createIndex(row, column, kKernelBase + quintptr(run));
    return {};
}

QModelIndex RunsModel::parent(const QModelIndex& child) const
{
    if (!child.isValid() || child.internalId() == 0 || !m_contents)
        return {};
    const quintptr id = child.internalId();
    if (id >= kKernelBase)
        return runIndex(size_t(id - kKernelBase), 0);
    return createIndex(int(id - kGroupBase), 0, quintptr(0));  // a run's family header
}

int RunsModel::rowCount(const QModelIndex& parent) const
{
    if (!m_contents)
        return 0;
    if (!parent.isValid())
        return grouped() ? int(m_groups.size()) : int(m_contents->runs.size());
    if (parent.column() != 0)
        return 0;
    if (grouped() && parent.internalId() == 0)
        return int(m_groups[size_t(parent.row())].runs.size());
    const int run = runRowOf(parent);
    return run >= 0 ? int(m_contents->runs[size_t(run)].kernels.size()) : 0;
}

int RunsModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

Qt::ItemFlags RunsModel::flags(const QModelIndex& index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable;
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case ColName: return tr("Run / kernel");
        case ColRung: return tr("Rung");
        case ColShape: return tr("Shape");
        case ColDuration: return tr("Duration");
        case ColTflops: return tr("TFLOP/s");
        case ColOverlap: return tr("Overlap");
        case ColDevice: return tr("Device");
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case ColDuration: return tr("CUPTI kernel duration (run: first kernel start to last kernel end)");
        case ColTflops: return tr("Achieved TFLOP/s = 2·M·N·K / kernel duration (run row: the untraced launch, free of tracing cost)");
        case ColOverlap: return tr("compute_overlap_share: share of compute time during which a load of the same CTA was in flight");
        }
    }
    if (role == Qt::TextAlignmentRole && (section == ColDuration || section == ColTflops || section == ColOverlap))
        return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant RunsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid) || !m_contents)
        return {};
    if (grouped() && index.internalId() == 0)
        return groupData(index.row(), index.column(), role);
    if (const int run = runRowOf(index); run >= 0)
        return runData(m_contents->runs[size_t(run)], index.column(), role);
    const auto& r = m_contents->runs[size_t(index.internalId() - kKernelBase)];
    return kernelData(r, r.kernels[size_t(index.row())], index.column(), role);
}

QVariant RunsModel::groupData(int group, int column, int role) const
{
    const Group& g = m_groups[size_t(group)];
    switch (role) {
    case RunIdRole:
    case KernelIdRole: return qint64(0);
    case FamilyRole: return g.key;
    case TracedRole: return false;
    case Qt::FontRole: {
        QFont f;
        f.setBold(true);
        f.setItalic(true);
        return column == ColName ? QVariant(f) : QVariant();
    }
    case Qt::ToolTipRole: return tr("%1: %n run(s)", nullptr, int(g.runs.size())).arg(g.title);
    case SortRole:
        return column == ColName ? QVariant(group) : QVariant();  // families stay in their order
    case Qt::DisplayRole:
        if (column == ColName)
            return g.title;
        if (column == ColRung)
            return tr("%n run(s)", nullptr, int(g.runs.size()));
        return {};
    }
    return {};
}

QVariant RunsModel::runData(const RunEntry& r, int column, int role) const
{
    const ws::RunInfo& info = r.summary.info;
    switch (role) {
    case RunIdRole: return qint64(info.id);
    case KernelIdRole: return qint64(0);
    case RungRole: return QString::fromStdString(info.variant);
    case FamilyRole: {
        const auto f = ws::familyKey(ws::familyOf(info).family);
        return QString::fromUtf8(f.data(), qsizetype(f.size()));
    }
    case TracedRole: return false;
    case Qt::DecorationRole:
        if (column == ColName)
            return QIcon(info.status == ws::RunStatus::Failed ? QStringLiteral(":/icons/warning.svg")
                                                               : QStringLiteral(":/icons/runs.svg"));
        return {};
    case Qt::FontRole: {
        QFont f;
        f.setBold(true);
        return column == ColName ? QVariant(f) : QVariant();
    }
    case Qt::ToolTipRole: {
        QString t = tr("Run %1 · %2 · started %3\n%4").arg(info.id).arg(QString::fromStdString(info.variant),
                        QString::fromStdString(info.startedAt), QString::fromStdString(info.commandLine));
        if (info.synthetic)
            t += tr("\nSYNTHETIC: generated, not recorded on a GPU");
        if (info.status == ws::RunStatus::Failed)
            t += tr("\nFAILED: %1").arg(QString::fromStdString(info.failureReason));
        if (!info.notes.empty())
            t += QStringLiteral("\n") + QString::fromStdString(info.notes);
        return t;
    }
    case Qt::TextAlignmentRole:
        if (column == ColDuration || column == ColTflops || column == ColOverlap)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case SortRole:
    case Qt::DisplayRole:
        switch (column) {
        case ColName: {
            QString s = tr("Run %1").arg(info.id);
            if (info.synthetic)
                s += tr(" (synthetic)");
            if (info.status == ws::RunStatus::Failed)
                s += tr(" (failed)");
            return s;
        }
        case ColRung: return QString::fromStdString(info.variant);
        case ColShape: return shapeText(info);
        case ColDuration:
            if (role == SortRole)
                return double(r.summary.end - r.summary.start);
            return r.summary.end > r.summary.start ? formatDuration(double(r.summary.end - r.summary.start))
                                                   : QStringLiteral("—");
        case ColTflops:
        case ColOverlap: {
            // run summary: speed of the untraced launch (no tracing cost) if there is one, overlap of the traced one
            double v = std::numeric_limits<double>::quiet_NaN();
            for (const KernelEntry& k : r.kernels) {
                if (column == ColTflops && !std::isnan(k.tflops) && (std::isnan(v) || !k.summary.launch.traced))
                    v = k.tflops;
                if (column == ColOverlap && k.summary.launch.traced && !std::isnan(k.overlap) && std::isnan(v))
                    v = k.overlap;
            }
            if (role == SortRole)
                return std::isnan(v) ? -1.0 : v;
            if (std::isnan(v))
                return QStringLiteral("—");
            return column == ColTflops ? QString::number(v, 'f', 1) : QStringLiteral("%1 %").arg(v * 100, 0, 'f', 1);
        }
        case ColDevice: return QString::fromStdString(info.device.name);
        }
        return {};
    }
    return {};
}

QVariant RunsModel::kernelData(const RunEntry& r, const KernelEntry& k, int column, int role) const
{
    const ws::KernelLaunch& l = k.summary.launch;
    const QString rung = QString::fromStdString(l.variant.empty() ? std::string() : l.variant);
    switch (role) {
    case RunIdRole: return qint64(l.runId);
    case KernelIdRole: return qint64(l.id);
    case RungRole: return rung;
    case TracedRole: return l.traced;
    case Qt::ForegroundRole:
        if (!l.traced)
            return QBrush(QPalette().color(QPalette::Disabled, QPalette::Text));
        return {};
    case Qt::ToolTipRole:
        return tr("%1\n%2 CTAs · %3 warps · %4 intervals · %5 loads · %6 stall samples\n"
                  "grid %7×%8×%9, block %10, %11 regs/thread, %12 B dynamic smem%13")
            .arg(QString::fromStdString(l.name))
            .arg(k.summary.ctaCount)
            .arg(k.summary.warpCount)
            .arg(k.summary.intervalCount)
            .arg(k.summary.loadCount)
            .arg(k.summary.stallSampleCount)
            .arg(l.grid[0])
            .arg(l.grid[1])
            .arg(l.grid[2])
            .arg(l.block[0])
            .arg(l.registersPerThread)
            .arg(l.dynamicSmemBytes)
            .arg(l.traced ? QString() : tr("\nUntraced launch (timing and stall samples only; no per-warp timeline)"));
    case Qt::TextAlignmentRole:
        if (column == ColDuration || column == ColTflops || column == ColOverlap)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case SortRole:
        switch (column) {
        case ColDuration: return double(l.end - l.start);
        case ColTflops: return std::isnan(k.tflops) ? -1.0 : k.tflops;
        case ColOverlap: return std::isnan(k.overlap) ? -1.0 : k.overlap;
        }
        [[fallthrough]];
    case Qt::DisplayRole:
        switch (column) {
        case ColName:
            return l.traced ? tr("#%1 traced").arg(l.id) : tr("#%1 untraced").arg(l.id);
        case ColRung:  // a program run's kernels have no rung: their name without namespaces and parameters
            return rung.isEmpty() ? QString::fromStdString(ws::kernelFamily(l.name)) : rung;
        case ColShape: return shapeText(r.summary.info);
        case ColDuration: return formatDuration(double(l.end - l.start));
        case ColTflops: return std::isnan(k.tflops) ? QStringLiteral("—") : QString::number(k.tflops, 'f', 1);
        case ColOverlap:
            return std::isnan(k.overlap) ? QStringLiteral("—") : QStringLiteral("%1 %").arg(k.overlap * 100, 0, 'f', 1);
        case ColDevice: return QString::fromStdString(r.summary.info.device.name);
        }
        return {};
    }
    return {};
}

}  // namespace ws::ui
