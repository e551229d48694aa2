#include "programcompare.h"

#include "comparepickers.h"
#include "programload.h"
#include "programview.h"
#include "runsmodel.h"
#include "warpstage/program.h"
#include "warpstage/runfamily.h"

#include <QComboBox>
#include <QFutureWatcher>
#include <QGridLayout>
#include <QLabel>
#include <QSplitter>
#include <QTextDocument>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <limits>

namespace ws::ui {

ProgramCompare::ProgramCompare(QWidget* parent) : QWidget(parent)
{
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(0, 0, 0, 0);
    auto* grid = new QGridLayout;
    auto* split = new QSplitter(Qt::Vertical);
    const char* names[2] = {"A", "B"};
    for (int s = 0; s < 2; ++s) {
        addComparePickerRow(grid, s, this, m_pick[s], m_label[s], [this](int side, qint64 id) { load(side, id); },
                            QStringLiteral("programComparePick"));
        m_view[s] = new ProgramView;
        m_view[s]->setObjectName(QStringLiteral("compareProgram%1").arg(QLatin1String(names[s])));
        split->addWidget(m_view[s]);
        connect(m_view[s], &ProgramView::visibleRangeChanged, this, [this, s](ws::TimeNs t0, ws::TimeNs t1) { syncFrom(s, t0, t1); });
    }
    grid->setColumnStretch(2, 1);
    lay->addLayout(grid);
    lay->addWidget(split, 1);
}

void ProgramCompare::setContents(const FileContents* contents)
{
    m_contents = contents;
    qint64 lceRung0 = 0, lceRung4 = 0;
    for (int s = 0; s < 2; ++s) {
        resetComparePicker(m_pick[s]);
        if (contents)
            for (const auto& r : contents->runs) {
                const ws::RunInfo& info = r.summary.info;
                if (info.kind != ws::RunKind::Program)
                    continue;
                const ws::RunFamilyInfo fam = ws::familyOf(info);
                const QString what = fam.family == ws::RunFamily::Lce
                                         ? QStringLiteral("lce rung %1 · %2").arg(fam.rung).arg(QString::fromStdString(fam.rungName))
                                         : QString::fromStdString(info.variant);
                m_pick[s]->addItem(tr("Run %1 · %2 · %L3 launches").arg(info.id).arg(what).arg(r.summary.kernelCount), qint64(info.id));
                if (fam.family == ws::RunFamily::Lce && fam.rung == 0 && !lceRung0)
                    lceRung0 = qint64(info.id);
                if (fam.family == ws::RunFamily::Lce && fam.rung == 4 && !lceRung4)
                    lceRung4 = qint64(info.id);
            }
        m_program[s].reset();
        m_requested[s] = 0;
        ++m_gen[s];
        m_label[s]->clear();
        m_view[s]->setProgram(nullptr);
    }
    // Loaded when the page is first shown (showEvent), not on every file open.
    m_defaultA = lceRung0 && lceRung4 ? lceRung0 : 0;
    m_defaultB = lceRung0 && lceRung4 ? lceRung4 : 0;
    if (isVisible() && m_defaultA)
        compare(m_defaultA, m_defaultB);
}

void ProgramCompare::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (m_defaultA && m_requested[0] == 0 && m_requested[1] == 0)
        compare(m_defaultA, m_defaultB);
}

void ProgramCompare::compare(qint64 a, qint64 b)
{
    selectComparePair(m_pick, m_requested, a, b, [this](int side, qint64 id) { load(side, id); });
}

bool ProgramCompare::isLoaded() const
{
    for (int s = 0; s < 2; ++s)
        if (m_requested[s] != 0 && (!m_program[s] || qint64(m_program[s]->run.id) != m_requested[s]))
            return false;
    return true;
}

QString ProgramCompare::labelText(int side) const
{
    QTextDocument d;
    d.setHtml(m_label[side]->text());
    return d.toPlainText();
}

ws::TimeNs ProgramCompare::alignmentPoint(const ws::ProgramTrace& p)
{
    if (const auto tag = ws::parseRungTag(p.run.notes)) {
        const auto it = ws::rungIterations(p.kernels, *tag);
        if (!it.empty())
            return it[std::min(it.size() - 1, std::size_t(tag->warmup))].first;
    }
    ws::TimeNs t = 0;
    bool any = false;
    for (const auto& k : p.kernels)
        if (!any || k.start < t) {
            t = k.start;
            any = true;
        }
    return any ? t : p.firstStart();
}

void ProgramCompare::load(int side, qint64 runId)
{
    const quint64 gen = ++m_gen[side];
    m_requested[side] = runId;
    if (runId == 0 || !m_contents || !m_contents->store) {
        m_program[side].reset();
        m_view[side]->setProgram(nullptr);
        m_label[side]->clear();
        return;
    }
    m_label[side]->setText(tr("loading…"));
    emit busyChanged(true, tr("Loading the program view of run %1 for comparison…").arg(runId));
    auto store = m_contents->store;
    auto* w = new QFutureWatcher<LoadedProgram>(this);
    connect(w, &QFutureWatcher<LoadedProgram>::finished, this, [this, w, gen, side] {
        const LoadedProgram r = w->result();
        w->deleteLater();
        emit busyChanged(false, QString());
        if (gen != m_gen[side])
            return;  // superseded
        m_program[side] = r.program;
        if (!r.program) {
            m_label[side]->setText(tr("<span style='color:#c62828'>%1</span>").arg(r.error.toHtmlEscaped()));
            m_view[side]->setProgram(nullptr);
        } else {
            onSideLoaded(side);
        }
        if (isLoaded())
            emit loaded();
    });
    w->setFuture(QtConcurrent::run([store, runId] { return loadProgramNow(*store, runId); }));
}

void ProgramCompare::onSideLoaded(int side)
{
    const ws::ProgramTrace& p = *m_program[side];
    m_view[side]->setProgram(m_program[side]);
    const auto gaps = ws::idleGaps(p, ProgramView::kDefaultIdleGapNs);
    const ws::RungReport rr = ws::rungReport(p.run, p.kernels);
    QString text = tr("%L1 launches · %2 kernels · %3 idle gaps ≥ 100 µs")
                       .arg(qint64(p.kernels.size()))
                       .arg(qint64(ws::kernelStats(p).size()))
                       .arg(qint64(gaps.size()));
    if (rr.ok)
        text += tr(" · <b>%1 per iteration</b>, %2 ms, %3 TFLOP/s, %4 (%5 % of roof)")
                    .arg(rr.launchesPerIteration == 1 ? tr("1 kernel") : tr("%1 kernels").arg(rr.launchesPerIteration))
                    .arg(rr.point.seconds * 1e3, 0, 'f', 4)
                    .arg(rr.point.tflops, 0, 'f', 1)
                    .arg(rr.point.computeBound ? tr("compute-bound") : tr("memory-bound"))
                    .arg(rr.point.fractionOfRoof * 100, 0, 'f', 0);
    m_label[side]->setText(text);
    m_label[side]->setToolTip(QString::fromStdString(rr.text));
    // Align both sides at their rung start and show the same length: two iterations of the slower side.
    if (!m_program[0] || !m_program[1])
        return;
    // (never longer than either side has after its alignment point: the view would clamp that side alone)
    ws::TimeNs len = 0, avail = std::numeric_limits<ws::TimeNs>::max();
    for (int s = 0; s < 2; ++s) {
        const ws::ProgramTrace& q = *m_program[s];
        const ws::RungReport r = ws::rungReport(q.run, q.kernels);
        const ws::TimeNs it = r.ok ? ws::TimeNs(r.point.seconds * 1e9) : (q.lastEnd() - alignmentPoint(q)) / 2;
        len = std::max(len, 2 * it + it / 4);
        avail = std::min(avail, q.lastEnd() - alignmentPoint(q));
    }
    len = std::min(len, avail);
    if (len <= 0)
        return;
    m_syncing = true;
    for (int s = 0; s < 2; ++s) {
        const ws::TimeNs a = alignmentPoint(*m_program[s]) - len / 40;
        m_view[s]->setVisibleRange(a, a + len);
    }
    m_syncing = false;
}

void ProgramCompare::syncFrom(int side, ws::TimeNs t0, ws::TimeNs t1)
{
    if (m_syncing || !m_program[0] || !m_program[1])
        return;
    const ws::TimeNs o = alignmentPoint(*m_program[side]);
    const ws::TimeNs p = alignmentPoint(*m_program[1 - side]);
    m_syncing = true;
    m_view[1 - side]->setVisibleRange(p + (t0 - o), p + (t1 - o));
    m_syncing = false;
}

}  // namespace ws::ui
