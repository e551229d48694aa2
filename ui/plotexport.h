// Writing a QCustomPlot figure to PNG / SVG / PDF with deterministic bytes (shared by the warp view and
// the program view): the caller makes a fresh, never-shown plot laid out at the logical size; PNG is
// rendered at sizePx with fonts scaled by dpi/96 and the DPI in the file; SVG and PDF are vector (the lanes
// one image); the PDF's /CreationDate is fixed.
#pragma once

#include <QImage>
#include <QSize>
#include <QString>

#include <functional>

class QCustomPlot;

namespace plotexport {

// The logical (96-dpi) size a figure of sizePx at dpi is laid out at.
QSize logicalSize(QSize sizePx, double dpi);
// Checks size and dpi; sets *error ("PATH: why") and returns false when out of range.
bool checkArguments(const QString &path, QSize sizePx, double dpi, QString *error);
// Renders plot (already laid out at logicalSize) into an RGB32 image of sizePx with the DPI set.
QImage render(QCustomPlot *plot, QSize sizePx, double dpi);
// Writes path (by extension). makePlot(logical) returns a plot laid out at `logical` that stays alive
// until the call returns (the owner keeps it).
bool write(const QString &path, QSize sizePx, double dpi, const QString &title,
           const std::function<QCustomPlot *(QSize logical)> &makePlot, QString *error);

}  // namespace plotexport
