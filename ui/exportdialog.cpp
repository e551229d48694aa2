#include "exportdialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolButton>

namespace ws::ui {

ExportDialog::ExportDialog(const QString& defaultPath, const QString& defaultTitle, QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Export image"));
    auto* form = new QFormLayout(this);
    m_format = new QComboBox;
    m_format->addItem(tr("PNG (raster)"), QStringLiteral("png"));
    m_format->addItem(tr("SVG (vector)"), QStringLiteral("svg"));
    m_format->addItem(tr("PDF (vector)"), QStringLiteral("pdf"));
    // Trace formats for other tools (docs/interop.md): the whole kernel, every warp.
    m_format->addItem(tr("Chrome trace JSON (chrome://tracing, Perfetto)"), QStringLiteral("json"));
    m_format->addItem(tr("Chrome trace JSON, gzip"), QStringLiteral("json.gz"));
    m_format->addItem(tr("Perfetto trace (ui.perfetto.dev)"), QStringLiteral("perfetto-trace"));
    form->addRow(tr("Format:"), m_format);
    auto* pr = new QHBoxLayout;
    m_path = new QLineEdit(defaultPath);
    auto* browse = new QToolButton;
    browse->setText(QStringLiteral("…"));
    pr->addWidget(m_path, 1);
    pr->addWidget(browse);
    form->addRow(tr("File:"), pr);
    auto* sr = new QHBoxLayout;
    m_w = new QSpinBox;
    m_w->setRange(200, 16384);
    m_w->setValue(1600);
    m_h = new QSpinBox;
    m_h->setRange(150, 16384);
    m_h->setValue(900);
    sr->addWidget(m_w);
    sr->addWidget(new QLabel(QStringLiteral("×")));
    sr->addWidget(m_h);
    sr->addWidget(new QLabel(tr("px")));
    sr->addStretch(1);
    form->addRow(tr("Size:"), sr);
    m_dpi = new QDoubleSpinBox;
    m_dpi->setRange(48, 1200);
    m_dpi->setValue(96);
    m_dpi->setDecimals(0);
    form->addRow(tr("DPI:"), m_dpi);
    m_title = new QLineEdit(defaultTitle);
    form->addRow(tr("Title:"), m_title);
    auto* bb = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    form->addRow(bb);
    connect(bb, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(bb, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_format, &QComboBox::currentIndexChanged, this, &ExportDialog::syncExtension);
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString f = QFileDialog::getSaveFileName(this, tr("Export image"), m_path->text(),
                                                       tr("Images and traces (*.png *.svg *.pdf *.json *.json.gz *.perfetto-trace)"));
        if (f.isEmpty())
            return;
        m_path->setText(f);
        const int i = m_format->findData(formatOf(f));
        if (i >= 0)
            m_format->setCurrentIndex(i);
    });
    const int i = m_format->findData(formatOf(defaultPath));
    if (i >= 0)
        m_format->setCurrentIndex(i);
    resize(520, sizeHint().height());
}

QString ExportDialog::formatOf(const QString& path)
{
    const QString p = path.toLower();
    if (p.endsWith(QLatin1String(".json.gz")))
        return QStringLiteral("json.gz");
    return QFileInfo(p).suffix();
}

void ExportDialog::syncExtension()
{
    const QString ext = m_format->currentData().toString();
    QString base = m_path->text();
    const QString old = formatOf(base);
    if (!old.isEmpty() && base.toLower().endsWith(QLatin1Char('.') + old))
        base.chop(old.size() + 1);
    m_path->setText(base + QLatin1Char('.') + ext);
    const bool image = ext == QLatin1String("png") || ext == QLatin1String("svg") || ext == QLatin1String("pdf");
    m_dpi->setEnabled(ext == QLatin1String("png"));
    m_w->setEnabled(image);
    m_h->setEnabled(image);
    m_title->setEnabled(image);
}

QString ExportDialog::path() const
{
    return m_path->text();
}

QSize ExportDialog::sizePx() const
{
    return {m_w->value(), m_h->value()};
}

double ExportDialog::dpi() const
{
    return m_dpi->value();
}

QString ExportDialog::title() const
{
    return m_title->text();
}

}  // namespace ws::ui
