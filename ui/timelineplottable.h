// TimelinePlottable: the one QCustomPlot plottable that draws every row of the
// timeline (see TimelineLayout) from the trace's columnar lanes through the LOD
// index (ws::lod). Per frame it asks each visible row's index for ~2 buckets per
// device pixel and writes the pixels straight into a cached QImage (a stacked mix
// of kinds per pixel column, hatched stalls), then blits it once: the work is
// O(visible rows x pixels) whatever the number of intervals. It also paints the
// label column (left margin), the selection, hover, range selection and ruler.
#pragma once

#include "timelinelayout.h"
#include "whatifdata.h"

#include <warpstage/lod.h>
#include <warpstage/model.h>

#include <qcustomplot.h>

#include <QHash>
#include <QImage>
#include <QStaticText>

#include <memory>
#include <optional>

class TimelinePlottable : public QCPAbstractPlottable {
    Q_OBJECT
public:
    TimelinePlottable(QCPAxis *keyAxis, QCPAxis *valueAxis);

    void setTrace(std::shared_ptr<const ws::KernelTrace> trace, const TimelineLayout *layout);
    void setIndex(std::shared_ptr<const ws::lod::TraceIndex> index);
    const ws::lod::TraceIndex *index() const { return m_index.get(); }
    const TimelineLayout *layout() const { return m_layout; }
    void setOrigin(ws::TimeNs origin) { m_origin = origin; }
    ws::TimeNs origin() const { return m_origin; }
    void setScrollY(int y) { m_scrollY = y; }
    int scrollY() const { return m_scrollY; }
    void setIndexProgress(int percent) { m_progress = percent; }
    // Forget the cached lane pixels (layout, filter or collapse changed). Everything else that changes
    // the pixels (range, scroll, size, index, highlight, labels) is part of the cache key already.
    void invalidateRaster() { ++m_rasterVersion; }
    bool lastFrameReused() const { return m_lastReused; }
    void setIntervalLabels(bool on) { m_intervalLabels = on; }  // "k12 s3" text inside wide intervals
    bool intervalLabels() const { return m_intervalLabels; }

    void setHighlight(std::optional<QPair<ws::WarpRole, ws::IntervalKind>> h) { m_highlight = h; }
    void setSelectedInterval(int lane, qsizetype index) { m_selLane = lane; m_selIndex = index; }
    void setHoverInterval(int lane, qsizetype index) { m_hoverLane = lane; m_hoverIndex = index; }
    void setRangeSelection(std::optional<QPair<double, double>> r) { m_range = r; }  // relative ns
    std::optional<QPair<double, double>> rangeSelection() const { return m_range; }
    void setZoomBand(std::optional<QPair<double, double>> r) { m_zoomBand = r; }     // rubber band, relative ns
    struct Ruler {
        double t0, t1;  // relative ns
        double y0, y1;  // widget px
    };
    void setRuler(std::optional<Ruler> r) { m_ruler = r; }
    std::optional<Ruler> ruler() const { return m_ruler; }

    // What-if (timelinewhatif.cpp). The critical path: an outline over the warp lanes it runs through, joined
    // by thin lines where it moves from one warp to another; with a cause selected, that cause's segments are
    // emphasised and the others dimmed. The predicted timeline: ghost rows (layout) or a frame over each lane.
    void setCriticalPath(std::shared_ptr<const std::vector<ws::ui::PathSegment>> segments) { m_path = std::move(segments); }
    void setPathVisible(bool on) { m_pathVisible = on; }
    bool pathVisible() const { return m_pathVisible; }
    void setPathCause(int cause) { m_pathCause = cause; }  // -1: all causes alike
    int pathCause() const { return m_pathCause; }
    struct PathMark {
        QRectF rect;        // widget px
        int segment = -1;   // index into the path
        bool emphasised = false;
    };
    const std::vector<PathMark> &lastPathMarks() const { return m_pathMarks; }  // drawn in the last frame
    void setGhost(std::shared_ptr<const ws::ui::GhostLanes> ghost, bool overLanes);
    const ws::ui::GhostLanes *ghost() const { return m_ghost.get(); }
    bool ghostOver() const { return m_ghostOver; }

    struct Hit {
        int row = -1;
        TimelineRow::Type type = TimelineRow::Warp;
        bool inLabels = false;
        bool onArrow = false;     // on a header's collapse arrow / label
        int lane = -1;
        qsizetype index = -1;     // interval index in the lane (Warp rows); index into trace.scopes (Brackets)
        int cta = -1;
        int sm = -1;
        int category = -1;        // Loads: loads in flight (4 = 4+); CtaHeader: OverlapState
        ws::TimeNs segStart = 0, segEnd = 0;  // Loads/CtaHeader: the segment under the cursor (absolute)
        double t = 0;             // relative ns under the cursor
    };
    Hit hitTest(const QPointF &pos) const;
    QRect lanesRect() const;
    QRect laneRowRect(int lane) const;  // the lane's row in widget coordinates (may be outside the view); null if hidden
    QRect labelRect() const;

    // Last frame's statistics (benchmarks)
    int lastVisibleRows() const { return m_lastRows; }
    qint64 lastBuckets() const { return m_lastBuckets; }
    double lastDrawMs() const { return m_lastDrawMs; }      // draw() incl. labels
    double lastRasterMs() const { return m_lastRasterMs; }  // LOD queries + pixel writes

    // QCPAbstractPlottable
    double selectTest(const QPointF &, bool, QVariant *) const override { return -1; }
    QCPRange getKeyRange(bool &foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool &foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
                           const QCPRange &inKeyRange = QCPRange()) const override;

protected:
    void draw(QCPPainter *painter) override;
    void drawLegendIcon(QCPPainter *, const QRectF &) const override {}
    QRect clipRect() const override;

private:
    struct TextItem {
        QRectF rect;
        QString text;
        QColor color;
    };
    // Thread-safe for distinct rows (disjoint image rows; own mix and text list).
    void rasterRow(const TimelineRow &row, int y0, int y1, int width, double t0, double t1, double scale,
                   std::vector<TextItem> &texts, const QRect &ar, ws::lod::BucketMix &mix) const;
    // bracket rows (timelinebrackets.cpp): the lane's outer scopes, one level per depth
    void rasterBrackets(const TimelineRow &row, int y0, int y1, int width, double t0, double t1, double scale,
                        std::vector<TextItem> &texts, const QRect &ar) const;
    int bracketAt(const TimelineRow &row, double yInRow, double t) const;  // index into trace.scopes, -1 if none
    // ghost rows and frames (timelinewhatif.cpp): frame = only the top and bottom edges, over a measured lane
    void rasterGhost(int lane, int y0, int y1, int width, double t0, double t1, bool frame, ws::lod::BucketMix &mix) const;
    void drawPath(QCPPainter *painter, const QRect &ar);
    void drawLabels(QCPPainter *painter, const QRect &ar);
    void drawOverlays(QCPPainter *painter, const QRect &ar);
    QRectF intervalRect(int lane, qsizetype index, const QRect &ar) const;
    // drawText through a QStaticText cache (text elided to the rect's width), vertically centred
    void drawCached(QCPPainter *painter, const QRectF &rect, const QString &text, bool alignRight = false);

    std::shared_ptr<const ws::KernelTrace> m_trace;
    std::shared_ptr<const ws::lod::TraceIndex> m_index;
    const TimelineLayout *m_layout = nullptr;
    ws::lod::SeriesIndex m_raw;  // unbuilt: used while the index builds
    ws::TimeNs m_origin = 0;
    int m_scrollY = 0;
    int m_progress = 0;
    quint64 m_rasterVersion = 0;
    struct RasterKey {
        double t0 = 0, t1 = 0, scale = 0;
        int scrollY = 0, w = 0, h = 0, top = 0, left = 0;
        const void *trace = nullptr, *index = nullptr;
        quint64 version = 0;
        int hlRole = -1, hlKind = -1;
        bool labels = true;
        const void *ghost = nullptr;
        bool ghostOver = false;
        bool operator==(const RasterKey &) const = default;
    } m_lastKey;
    bool m_lastReused = false;
    struct CachedText {
        QRectF rect;
        QString text;
        QColor color;
    };
    std::vector<CachedText> m_lastTexts;
    bool m_intervalLabels = true;
    std::optional<QPair<ws::WarpRole, ws::IntervalKind>> m_highlight;
    int m_selLane = -1, m_hoverLane = -1;
    qsizetype m_selIndex = -1, m_hoverIndex = -1;
    std::optional<QPair<double, double>> m_range, m_zoomBand;
    std::optional<Ruler> m_ruler;

    std::shared_ptr<const std::vector<ws::ui::PathSegment>> m_path;
    bool m_pathVisible = false;
    int m_pathCause = -1;
    std::vector<PathMark> m_pathMarks;
    std::shared_ptr<const ws::ui::GhostLanes> m_ghost;
    bool m_ghostOver = false;

    QImage m_image;
    QHash<QString, QStaticText> m_textCache;
    ws::lod::BucketMix m_mix[2];  // one per raster thread
    int m_lastRows = 0;
    qint64 m_lastBuckets = 0;
    double m_lastDrawMs = 0, m_lastRasterMs = 0;
};
