#include "sourcemodel.h"

#include <QBrush>
#include <QColor>
#include <QFileInfo>
#include <QFontDatabase>

#include <algorithm>
#include <map>

namespace ws::ui {

SourceModel::SourceModel(QObject* parent) : QAbstractTableModel(parent) {}

void SourceModel::clear()
{
    beginResetModel();
    m_lines.clear();
    m_fileName.clear();
    m_max = m_attributed = m_total = 0;
    endResetModel();
}

void SourceModel::setSource(const QString& fileName, const QString& text, const std::vector<ws::StallSample>& samples)
{
    beginResetModel();
    m_lines.clear();
    m_fileName = fileName;
    m_max = m_attributed = m_total = 0;
    const QStringList lines = text.split(QLatin1Char('\n'));
    m_lines.resize(size_t(lines.size()));
    for (int i = 0; i < lines.size(); ++i) {
        QString l = lines[i];
        l.replace(QLatin1Char('\t'), QStringLiteral("    "));
        m_lines[size_t(i)].code = l;
    }
    // per line: samples by (role, stage) and by reason label
    std::vector<std::map<std::pair<int, std::string>, qint64>> stages(m_lines.size());
    std::vector<std::map<std::string, qint64>> reasons(m_lines.size());
    const QString base = QFileInfo(fileName).fileName();
    for (const ws::StallSample& s : samples) {
        m_total += s.count;
        if (s.line <= 0 || size_t(s.line) > m_lines.size())
            continue;
        if (QFileInfo(QString::fromStdString(s.sourceFile)).fileName() != base)
            continue;
        const size_t li = size_t(s.line - 1);
        m_lines[li].samples += s.count;
        m_attributed += s.count;
        stages[li][{int(s.role), s.stage}] += s.count;
        reasons[li][s.reasonLabel.empty() ? s.reason : s.reasonLabel] += s.count;
    }
    for (size_t i = 0; i < m_lines.size(); ++i) {
        Line& L = m_lines[i];
        m_max = std::max(m_max, L.samples);
        qint64 best = 0;
        for (const auto& [key, n] : stages[i]) {
            auto kind = ws::intervalKindFromName(key.second);
            if (!kind || n <= best)
                continue;
            best = n;
            Stage st;
            st.role = ws::WarpRole(key.first);
            st.kind = *kind;
            st.name = QStringLiteral("%1/%2").arg(QString::fromUtf8(ws::warpRoleName(st.role).data(),
                                                                     qsizetype(ws::warpRoleName(st.role).size())),
                                                   QString::fromStdString(key.second));
            L.stage = st;
        }
        std::vector<std::pair<qint64, std::string>> rs;
        for (const auto& [r, n] : reasons[i])
            rs.emplace_back(n, r);
        std::sort(rs.begin(), rs.end(), std::greater<>());
        QStringList parts;
        for (size_t k = 0; k < rs.size() && k < 4; ++k)
            parts << QStringLiteral("%1: %2").arg(QString::fromStdString(rs[k].second)).arg(rs[k].first);
        L.reasons = parts.join(QLatin1Char('\n'));
    }
    endResetModel();
}

int SourceModel::hottestRow() const
{
    int best = -1;
    qint64 n = 0;
    for (size_t i = 0; i < m_lines.size(); ++i)
        if (m_lines[i].samples > n) {
            n = m_lines[i].samples;
            best = int(i);
        }
    return best;
}

std::optional<SourceModel::Stage> SourceModel::stageOfRow(int row) const
{
    if (row < 0 || size_t(row) >= m_lines.size())
        return std::nullopt;
    return m_lines[size_t(row)].stage;
}

int SourceModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : int(m_lines.size());
}

int SourceModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SourceModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Line& L = m_lines[size_t(index.row())];
    const double heat = m_max > 0 ? double(L.samples) / double(m_max) : 0.0;
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case ColLine: return index.row() + 1;
        case ColSamples: return L.samples > 0 ? QVariant(L.samples) : QVariant(QString());
        case ColStage: return L.stage ? L.stage->name : QString();
        case ColCode: return L.code;
        }
        return {};
    case Qt::FontRole:
        return QFontDatabase::systemFont(QFontDatabase::FixedFont);
    case Qt::TextAlignmentRole:
        return index.column() == ColLine || index.column() == ColSamples ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter))
                                                                          : QVariant();
    case Qt::BackgroundRole:
        if (L.samples > 0 && index.column() != ColLine) {
            // white -> orange -> red
            const int a = int(40 + heat * 200);
            return QBrush(QColor(230, int(120 - 80 * heat), 30, a));
        }
        return {};
    case Qt::ForegroundRole:
        if (index.column() == ColLine)
            return QBrush(QColor(0x90, 0xa4, 0xae));
        return {};
    case Qt::ToolTipRole:
        if (L.samples > 0)
            return tr("%1 stall samples (%2 % of the rung's samples)\n%3%4")
                .arg(L.samples)
                .arg(m_total > 0 ? 100.0 * double(L.samples) / double(m_total) : 0.0, 0, 'f', 1)
                .arg(L.reasons)
                .arg(L.stage ? tr("\nStage: %1 (click to highlight on the timeline)").arg(L.stage->name) : QString());
        return {};
    case SamplesRole: return L.samples;
    case HeatRole: return heat;
    case RoleRole: return L.stage ? QVariant(int(L.stage->role)) : QVariant();
    case KindRole: return L.stage ? QVariant(int(L.stage->kind)) : QVariant();
    }
    return {};
}

QVariant SourceModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case ColLine: return tr("Line");
    case ColSamples: return tr("Samples");
    case ColStage: return tr("Stage");
    case ColCode: return m_fileName.isEmpty() ? tr("Source") : m_fileName;
    }
    return {};
}

}  // namespace ws::ui
