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
                                                       tr("Images (*.png *.svg *.pdf)"));
        if (f.isEmpty())
            return;
        m_path->setText(f);
        const int i = m_format->findData(QFileInfo(f).suffix().toLower());
        if (i >= 0)
            m_format->setCurrentIndex(i);
    });
    const int i = m_format->findData(QFileInfo(defaultPath).suffix().toLower());
    if (i >= 0)
        m_format->setCurrentIndex(i);
    resize(520, sizeHint().height());
}

void ExportDialog::syncExtension()
{
    const QString ext = m_format->currentData().toString();
    QFileInfo fi(m_path->text());
    m_path->setText(fi.path() + QLatin1Char('/') + fi.completeBaseName() + QLatin1Char('.') + ext);
    m_dpi->setEnabled(ext == QLatin1String("png"));
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
