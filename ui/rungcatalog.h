// The kernel ladder as the viewer knows it: rung names in ladder order, their
// titles and teaching texts (resources/teaching/<rung>.md) and bundled CUDA
// sources (kernels/src/<rung>.cu embedded at build time). The GUI never links
// the CUDA ladder (kernels/): everything here comes from Qt resources.
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>

namespace ws::ui {

struct RungText {
    QString name;      // "warp_specialized"
    int level = 0;     // 1..7
    QString title;     // first "# " line of the teaching text
    QString markdown;  // the whole teaching text
};

// Registers the icons, teaching texts and kernel sources compiled into
// warpstage_ui (a static library needs Q_INIT_RESOURCE). Idempotent.
void initResources();

// All rungs, bottom to top.
const QVector<RungText>& rungCatalog();
// The linear-compression family (issue 11), rung 0 to 4: lce_original, lce_decomposed, lce_padded,
// lce_fused_epilogue, lce_persistent (the variants warpstage-record --rungs lce:... gives its runs; level = rung).
const QVector<RungText>& lceCatalog();
// The catalogue `name` belongs to (rungCatalog() or lceCatalog()), nullptr if none.
const QVector<RungText>* catalogOf(const QString& name);
// nullptr if unknown (either family).
const RungText* findRungText(const QString& name);
// Index in its family's catalogue (catalogOf(name)), -1 if unknown.
int rungIndex(const QString& name);

// Resource path of the rung's bundled CUDA source (":/kernels/<rung>.cu"), or
// an empty string if it was not bundled in this build.
QString rungSourcePath(const QString& rung);
// The text of that source, or an empty string.
QString rungSource(const QString& rung);
// The text of a bundled kernel source file by name ("pingpong.cu", "hopper.cuh"), or "".
QString kernelSourceText(const QString& fileName);

}  // namespace ws::ui
