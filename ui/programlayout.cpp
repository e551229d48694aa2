#include "programlayout.h"

#include <warpstage/program.h>

#include <algorithm>
#include <map>
#include <tuple>

std::size_t ProgramRow::firstVisible(ws::TimeNs t) const
{
    return std::size_t(std::upper_bound(maxEnd.begin(), maxEnd.end(), t) - maxEnd.begin());
}

namespace {

void finish(ProgramRow &row)
{
    std::stable_sort(row.items.begin(), row.items.end(),
                     [](const ProgramItem &a, const ProgramItem &b) { return a.start < b.start; });
    row.maxEnd.resize(row.items.size());
    ws::TimeNs m = 0;
    for (std::size_t i = 0; i < row.items.size(); ++i) {
        m = i == 0 ? row.items[i].end : std::max(m, row.items[i].end);
        row.maxEnd[i] = m;
    }
}

}  // namespace

void ProgramLayout::build(const ws::ProgramTrace *p, const ProgramLayoutOptions &opt)
{
    m_rows.clear();
    for (auto &v : m_pos)
        v.clear();
    m_total = 0;
    if (!p)
        return;
    auto add = [&](ProgramRow &&r) {
        finish(r);
        r.top = m_total;
        m_total += r.height;
        m_rows.push_back(std::move(r));
    };

    if (opt.showNvtx && !p->nvtx.empty()) {
        // one row per (domain, thread, depth)
        std::map<std::tuple<std::string, std::uint32_t, int>, ProgramRow> nv;
        for (std::size_t i = 0; i < p->nvtx.size(); ++i) {
            const ws::NvtxRange &r = p->nvtx[i];
            ProgramRow &row = nv[{r.domain, r.threadId, r.depth}];
            if (row.items.empty()) {
                row.type = ProgramRow::Nvtx;
                row.height = kNvtxHeight;
                row.threadId = r.threadId;
                row.depth = r.depth;
                const QString dom = r.domain.empty() ? QStringLiteral("NVTX") : QString::fromStdString(r.domain);
                row.label = r.depth == 0 ? QStringLiteral("%1 · thread %2").arg(dom).arg(r.threadId)
                                         : QStringLiteral("%1  %2 ▸ depth %3").arg(QString(r.depth * 2, QLatin1Char(' ')), dom).arg(r.depth);
            }
            row.items.push_back({r.start, std::max(r.end, r.start), ProgramItem::Nvtx, std::int32_t(i)});
        }
        for (auto &[key, row] : nv)
            add(std::move(row));
    }
    if (opt.showApi && !p->apiSpans.empty()) {
        std::map<std::uint32_t, ProgramRow> api;
        for (std::size_t i = 0; i < p->apiSpans.size(); ++i) {
            const ws::ApiSpan &a = p->apiSpans[i];
            ProgramRow &row = api[a.threadId];
            if (row.items.empty()) {
                row.type = ProgramRow::Api;
                row.height = kApiHeight;
                row.threadId = a.threadId;
                row.label = QStringLiteral("CUDA API · thread %1").arg(a.threadId);
            }
            row.items.push_back({a.start, std::max(a.end, a.start), ProgramItem::Api, std::int32_t(i)});
        }
        for (auto &[key, row] : api)
            add(std::move(row));
    }

    // Device N ▸ stream S
    std::map<std::pair<std::uint32_t, std::uint32_t>, ProgramRow> streams;  // (context, stream)
    for (std::size_t i = 0; i < p->kernels.size(); ++i) {
        const ws::KernelLaunch &k = p->kernels[i];
        ProgramRow &row = streams[{k.contextId, k.streamId}];
        row.streamId = k.streamId;
        row.items.push_back({k.start, std::max(k.end, k.start), ProgramItem::Kernel, std::int32_t(i)});
    }
    for (std::size_t i = 0; i < p->memOps.size(); ++i) {
        const ws::MemOp &m = p->memOps[i];
        ProgramRow &row = streams[{m.contextId, m.streamId}];
        row.streamId = m.streamId;
        row.items.push_back({m.start, std::max(m.end, m.start), ProgramItem::MemOp, std::int32_t(i)});
    }
    if (!streams.empty()) {
        ProgramRow header;
        header.type = ProgramRow::DeviceHeader;
        header.height = kHeaderHeight;
        header.label = QStringLiteral("Device %1").arg(p->run.deviceOrdinal);
        if (!p->run.device.name.empty())
            header.label += QStringLiteral("  %1").arg(QString::fromStdString(p->run.device.name));
        add(std::move(header));
    }
    for (auto &[key, row] : streams) {
        row.type = ProgramRow::Stream;
        row.height = kStreamHeight;
        QString name;
        for (const ws::StreamInfo &s : p->streams)
            if (s.streamId == key.second && s.contextId == key.first) {
                name = s.name.empty() ? (s.isDefault ? QStringLiteral("default") : QString()) : QString::fromStdString(s.name);
                break;
            }
        row.label = QStringLiteral("  ▸ stream %1").arg(key.second);
        if (!name.isEmpty())
            row.label += QStringLiteral(" (%1)").arg(name);
        add(std::move(row));
    }
    m_pos[ProgramItem::Kernel].assign(p->kernels.size(), {-1, -1});
    m_pos[ProgramItem::MemOp].assign(p->memOps.size(), {-1, -1});
    m_pos[ProgramItem::Nvtx].assign(p->nvtx.size(), {-1, -1});
    m_pos[ProgramItem::Api].assign(p->apiSpans.size(), {-1, -1});
    for (int r = 0; r < int(m_rows.size()); ++r) {
        const auto &items = m_rows[std::size_t(r)].items;
        for (int i = 0; i < int(items.size()); ++i)
            m_pos[items[std::size_t(i)].kind][std::size_t(items[std::size_t(i)].index)] = {r, i};
    }
}

int ProgramLayout::rowAt(int y) const
{
    if (y < 0 || y >= m_total)
        return -1;
    auto it = std::upper_bound(m_rows.begin(), m_rows.end(), y, [](int v, const ProgramRow &r) { return v < r.top; });
    return int(it - m_rows.begin()) - 1;
}

std::pair<int, int> ProgramLayout::rowOfKernel(int k) const { return rowOf(ProgramItem::Kernel, k); }

std::pair<int, int> ProgramLayout::rowOf(ProgramItem::Kind kind, int index) const
{
    const auto &v = m_pos[kind];
    if (index < 0 || index >= int(v.size()))
        return {-1, -1};
    return v[std::size_t(index)];
}

namespace programpalette {

QColor familyColor(const std::string &family)
{
    // Paul Tol's muted and light schemes (colour-blind safe); no entry is close to the memory-operation colours.
    static const QColor pal[] = {
        QColor(0x88, 0xCC, 0xEE), QColor(0x44, 0xAA, 0x99), QColor(0x11, 0x77, 0x33), QColor(0x33, 0x22, 0x88),
        QColor(0xDD, 0xCC, 0x77), QColor(0x99, 0x99, 0x33), QColor(0xCC, 0x66, 0x77), QColor(0x88, 0x22, 0x55),
        QColor(0xAA, 0x44, 0x99), QColor(0x77, 0xAA, 0xDD), QColor(0xEE, 0x88, 0x66), QColor(0xFF, 0xAA, 0xBB),
        QColor(0x44, 0xBB, 0x99), QColor(0xBB, 0xCC, 0x33), QColor(0x99, 0xDD, 0xFF), QColor(0xAA, 0xAA, 0x00)};
    std::uint32_t h = 2166136261u;  // FNV-1a: the same family gets the same colour in every run and session
    for (unsigned char c : family) {
        h ^= c;
        h *= 16777619u;
    }
    return pal[h % (sizeof(pal) / sizeof(pal[0]))];
}

QColor memOpColor(ws::MemOpKind kind)
{
    switch (kind) {  // Tol's high-contrast scheme, darker than every kernel colour
    case ws::MemOpKind::HtoD: return QColor(0x00, 0x44, 0x88);
    case ws::MemOpKind::DtoH: return QColor(0xBB, 0x55, 0x66);
    case ws::MemOpKind::DtoD: return QColor(0xDD, 0xAA, 0x33);
    case ws::MemOpKind::Memset: return QColor(0x55, 0x55, 0x55);
    default: return QColor(0x99, 0x99, 0x99);
    }
}

QString memOpLabel(ws::MemOpKind kind)
{
    switch (kind) {
    case ws::MemOpKind::HtoD: return QStringLiteral("Copy host → device");
    case ws::MemOpKind::DtoH: return QStringLiteral("Copy device → host");
    case ws::MemOpKind::DtoD: return QStringLiteral("Copy device → device");
    case ws::MemOpKind::Memset: return QStringLiteral("Memset");
    default: return QStringLiteral("Memory operation");
    }
}

QColor nvtxColor(const ws::NvtxRange &r)
{
    if (r.color != 0)
        return QColor::fromRgb(r.color | 0xFF000000u);
    const QColor c = familyColor(r.name);
    return QColor::fromHsl(c.hslHue(), std::min(c.hslSaturation(), 90), std::max(c.lightness(), 200));
}

QColor apiColor() { return QColor(0xBB, 0xBB, 0xBB); }
QColor idleGapColor() { return QColor(0xE8, 0x6A, 0x3A, 38); }
QColor idleGapHatch() { return QColor(0xD0, 0x50, 0x20, 90); }
QColor idleGapText() { return QColor(0xA0, 0x3A, 0x10); }
QColor arrowColor() { return QColor(0xD0, 0x4A, 0x02); }
QColor arrowColorFaint() { return QColor(0x50, 0x58, 0x66, 110); }

}  // namespace programpalette
