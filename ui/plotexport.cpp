#include "plotexport.h"

#include <qcustomplot.h>

#include <QFile>
#include <QFileInfo>
#include <QSvgGenerator>

#include <cmath>

namespace plotexport {

QSize logicalSize(QSize sizePx, double dpi)
{
    const double scale = std::max(0.25, dpi / 96.0);
    return QSize(std::max(200, int(sizePx.width() / scale + 0.5)), std::max(150, int(sizePx.height() / scale + 0.5)));
}

bool checkArguments(const QString &path, QSize sizePx, double dpi, QString *error)
{
    auto fail = [&](const QString &why) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, why);
        return false;
    };
    if (sizePx.width() < 16 || sizePx.height() < 16 || sizePx.width() > 20000 || sizePx.height() > 20000)
        return fail(QStringLiteral("image size %1x%2 is out of range (16..20000)").arg(sizePx.width()).arg(sizePx.height()));
    if (!(dpi >= 24 && dpi <= 1200))
        return fail(QStringLiteral("dpi %1 is out of range (24..1200)").arg(dpi));
    return true;
}

QImage render(QCustomPlot *plot, QSize sizePx, double dpi)
{
    const double scale = std::max(0.25, dpi / 96.0);
    const QSize logical = logicalSize(sizePx, dpi);
    QImage img = plot->toPixmap(logical.width(), logical.height(), scale).toImage().convertToFormat(QImage::Format_RGB32);
    if (img.size() != sizePx)
        img = img.scaled(sizePx, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
    const int dpm = int(std::lround(dpi / 0.0254));
    img.setDotsPerMeterX(dpm);
    img.setDotsPerMeterY(dpm);
    return img;
}

bool write(const QString &path, QSize sizePx, double dpi, const QString &title,
           const std::function<QCustomPlot *(QSize logical)> &makePlot, QString *error)
{
    auto fail = [&](const QString &why) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, why);
        return false;
    };
    if (!checkArguments(path, sizePx, dpi, error))
        return false;
    const QString ext = QFileInfo(path).suffix().toLower();
    const QSize logical = logicalSize(sizePx, dpi);
    if (ext == QLatin1String("png") || ext == QLatin1String("jpg") || ext == QLatin1String("jpeg")) {
        const QImage img = render(makePlot(logical), sizePx, dpi);
        if (!img.save(path, nullptr, ext == QLatin1String("png") ? -1 : 92))
            return fail(QStringLiteral("could not write the image (directory missing or not writable?)"));
        return true;
    }
    if (ext == QLatin1String("svg")) {
        QCustomPlot *plot = makePlot(logical);
        QSvgGenerator gen;
        gen.setFileName(path);
        gen.setSize(logical);
        gen.setViewBox(QRect(QPoint(0, 0), logical));
        gen.setResolution(96);
        gen.setTitle(title);
        gen.setDescription(QStringLiteral("Warpstage timeline"));
        QCPPainter p;
        if (!p.begin(&gen))
            return fail(QStringLiteral("could not write the SVG file"));
        plot->toPainter(&p, logical.width(), logical.height());
        p.end();
    } else if (ext == QLatin1String("pdf")) {
        QCustomPlot *plot = makePlot(logical);
        if (!plot->savePdf(path, logical.width(), logical.height(), QCP::epNoCosmetic, QStringLiteral("Warpstage"), title))
            return fail(QStringLiteral("could not write the PDF file"));
        // Qt writes the wall clock into /CreationDate (D:YYYYMMDDhhmmss...) and has no setter for it: put a
        // fixed date of the same length in its place (the xref offsets stay valid).
        QFile f(path);
        if (!f.open(QIODevice::ReadWrite))
            return fail(QStringLiteral("could not write the PDF file"));
        QByteArray pdf = f.readAll();
        const QByteArray key("/CreationDate (D:");
        const qsizetype at = pdf.indexOf(key);
        if (at >= 0 && at + key.size() + 14 <= pdf.size()) {
            pdf.replace(at + key.size(), 14, QByteArray("19700101000000"));
            if (!f.seek(0) || f.write(pdf) != pdf.size())
                return fail(QStringLiteral("could not write the PDF file"));
        }
    } else {
        return fail(QStringLiteral("unknown image type '.%1' (use .png, .svg or .pdf)").arg(ext));
    }
    if (!QFileInfo::exists(path) || QFileInfo(path).size() == 0)
        return fail(QStringLiteral("could not write the file"));
    return true;
}

}  // namespace plotexport
