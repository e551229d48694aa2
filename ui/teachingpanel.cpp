#include "teachingpanel.h"

#include "rungcatalog.h"

#include <QComboBox>
#include <QFile>
#include <QRegularExpression>
#include <QFontInfo>

#include <cmath>
#include <QHBoxLayout>
#include <QIcon>
#include <QSignalBlocker>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextCursor>
#include <QToolButton>
#include <QVBoxLayout>

namespace ws::ui {

TeachingPanel::TeachingPanel(QWidget* parent) : QWidget(parent)
{
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(4, 4, 4, 4);
    auto* row = new QHBoxLayout;
    m_prev = new QToolButton;
    m_prev->setIcon(QIcon(QStringLiteral(":/icons/tour-prev.svg")));
    m_prev->setToolTip(tr("Guided tour: previous rung"));
    m_next = new QToolButton;
    m_next->setIcon(QIcon(QStringLiteral(":/icons/tour-next.svg")));
    m_next->setText(tr("Next rung"));
    m_next->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_next->setToolTip(tr("Guided tour: next rung of the ladder"));
    m_pick = new QComboBox;
    m_pick->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_pick->setMinimumContentsLength(14);
    for (const RungText& r : rungCatalog())
        m_pick->addItem(r.title, r.name);
    // The second family (issue 11): its own tour, after a separator.
    m_pick->insertSeparator(m_pick->count());
    for (const RungText& r : lceCatalog())
        m_pick->addItem(QStringLiteral("lce · ") + r.title, r.name);
    row->addWidget(m_prev);
    row->addWidget(m_pick, 1);
    row->addWidget(m_next);
    m_whatIfButton = new QToolButton;
    m_whatIfButton->setText(tr("What if…"));
    m_whatIfButton->setObjectName(QStringLiteral("tourWhatIf"));
    m_whatIfButton->setToolTip(tr("Guided tour: this rung's what-if step (replay it with other parameters)"));
    m_whatIfButton->setCheckable(true);
    row->addWidget(m_whatIfButton);
    lay->addLayout(row);
    m_text = new QTextBrowser;
    m_text->setObjectName(QStringLiteral("teachingText"));
    m_text->setOpenExternalLinks(true);
    m_text->document()->setDocumentMargin(8);
    lay->addWidget(m_text, 1);

    connect(m_whatIfButton, &QToolButton::clicked, this, [this](bool on) {
        if (on)
            showWhatIf();
        else
            setRung(m_rung);
    });
    connect(m_prev, &QToolButton::clicked, this, &TeachingPanel::previous);
    connect(m_next, &QToolButton::clicked, this, &TeachingPanel::next);
    connect(m_pick, &QComboBox::activated, this, [this](int i) {
        const QString r = m_pick->itemData(i).toString();
        setRung(r);
        emit rungRequested(r);
    });
    setRung(rungCatalog().isEmpty() ? QString() : rungCatalog().first().name);
}

// Markdown headings render huge by default: scale them to the panel
static void scaleHeadings(QTextBrowser* m_text)
{
    for (QTextBlock b = m_text->document()->begin(); b.isValid(); b = b.next()) {
        const int level = b.blockFormat().headingLevel();
        if (level == 0)
            continue;
        QTextCursor c(b);
        c.select(QTextCursor::BlockUnderCursor);
        QTextCharFormat f;
        // QTextDocument sizes headings by FontSizeAdjustment (h1 = +3: "xx-large")
        f.setProperty(QTextFormat::FontSizeAdjustment, level == 1 ? 1 : 0);
        f.setFontWeight(QFont::DemiBold);
        if (level > 1)
            f.setForeground(QColor(0x1f, 0x4e, 0x79));
        c.mergeCharFormat(f);
    }
}

WhatIfStep whatIfStep(const QString& rung)
{
    WhatIfStep out;
    if (rung.isEmpty() || rung.contains(QLatin1Char('/')))
        return out;
    initResources();
    QFile f(QStringLiteral(":/teaching/whatif/%1.md").arg(rung));
    if (!f.open(QIODevice::ReadOnly))
        return out;
    QString text = QString::fromUtf8(f.readAll());
    static const QRegularExpression line(QStringLiteral("^<!--\\s*whatif:([^>]*)-->\\s*\\n"));
    const auto m = line.match(text);
    if (m.hasMatch()) {
        for (const QString& kv : m.captured(1).split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
            const QString k = kv.section(QLatin1Char('='), 0, 0), v = kv.section(QLatin1Char('='), 1);
            if (k == QLatin1String("stages"))
                out.params.stages = v.toInt();
            else if (k == QLatin1String("load-latency"))
                out.params.loadLatency = v.toDouble();
            else if (k == QLatin1String("mma"))
                out.params.mmaTime = v.toDouble();
            else if (k == QLatin1String("epilogue"))
                out.params.epilogueTime = v.toDouble();
            else if (k == QLatin1String("overlap"))
                out.params.epilogueOverlapped = v == QLatin1String("1");
            else if (k == QLatin1String("persistent"))
                out.params.persistent = v == QLatin1String("1");
            else if (k == QLatin1String("sms"))
                out.params.sms = v.toInt();
        }
        text.remove(0, m.capturedLength());
    }
    out.markdown = text;
    return out;
}

bool TeachingPanel::showWhatIf()
{
    const WhatIfStep st = whatIfStep(m_rung);
    if (st.markdown.isEmpty()) {
        m_whatIfButton->setChecked(false);
        return false;
    }
    m_text->setMarkdown(st.markdown);
    scaleHeadings(m_text);
    m_whatIf = true;
    m_whatIfButton->setChecked(true);
    emit whatIfRequested(m_rung, st.params);
    return true;
}

void TeachingPanel::setRung(const QString& rung)
{
    m_rung = rung;
    m_whatIf = false;
    if (m_whatIfButton) {
        m_whatIfButton->setChecked(false);
        m_whatIfButton->setEnabled(!whatIfStep(rung).markdown.isEmpty());
    }
    const RungText* t = findRungText(rung);
    {
        QSignalBlocker b(m_pick);
        m_pick->setCurrentIndex(t ? m_pick->findData(rung) : -1);
    }
    if (t && !t->markdown.isEmpty()) {
        m_text->setMarkdown(t->markdown);
        scaleHeadings(m_text);
    } else if (rung.isEmpty()) {
        m_text->setMarkdown(tr("Select a kernel of the ladder to read about its rung."));
    } else {
        m_text->setMarkdown(tr("**%1** is not a rung of the bundled ladder (a library kernel, or a kernel recorded "
                               "from another program): there is no teaching text for it.").arg(rung));
    }
    const int i = rungIndex(rung);
    const auto* cat = catalogOf(rung);
    m_prev->setEnabled(i > 0);
    m_next->setEnabled(i < 0 || (cat && i + 1 < cat->size()));
}

QString TeachingPanel::text() const
{
    return m_text->toPlainText();
}

void TeachingPanel::next()
{
    step(+1);
}

void TeachingPanel::previous()
{
    step(-1);
}

void TeachingPanel::step(int delta)
{
    // The tour walks the family of the rung shown (the GEMM ladder, or lce when an lce rung is shown).
    const auto& c = catalogOf(m_rung) ? *catalogOf(m_rung) : rungCatalog();
    if (c.isEmpty())
        return;
    int i = rungIndex(m_rung);
    i = i < 0 ? 0 : std::clamp(i + delta, 0, int(c.size()) - 1);
    setRung(c[i].name);
    emit rungRequested(c[i].name);
}

}  // namespace ws::ui
