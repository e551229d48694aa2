// ProgramPlottable: the one QCustomPlot plottable that draws every row of the program view
// (ProgramLayout): kernels coloured by family, memory operations by direction (hatched), NVTX ranges,
// CPU API spans. Per row it binary-searches the first record of the viewport (ProgramRow::firstVisible)
// and, where records are narrower than a pixel, jumps to the next pixel column by another binary search:
// a frame costs O(visible rows x pixels x log n), not O(records). Also paints the label column, the
// selection, the highlighted kernel (others faded), hover, the range selection and the ruler; the GPU idle
// gaps (a hatched band over the device's rows) and the launch arrows from an API call span to the kernel or
// copy it launched: for the selected and the hovered record always, for every launch whose start and whose
// call's start are both in view when few enough are there to stay readable (kMaxAllArrows).
#pragma once

#include "programlayout.h"
#include "programlinks.h"

#include <qcustomplot.h>

#include <memory>
#include <optional>

class ProgramPlottable : public QCPAbstractPlottable {
    Q_OBJECT
public:
    static constexpr int kLabelWidth = 200;

    ProgramPlottable(QCPAxis *keyAxis, QCPAxis *valueAxis);

    // At most this many arrows are drawn for "every visible launch" (also at most one per 16 px of width).
    static constexpr int kMaxAllArrows = 48;

    void setProgram(std::shared_ptr<const ws::ProgramTrace> program, const ProgramLayout *layout);
    void setLinks(const ProgramLinks *links) { m_links = links; }
    void setGaps(const std::vector<GapInfo> *gaps) { m_gaps = gaps; }
    void setOrigin(ws::TimeNs origin) { m_origin = origin; }
    void setScrollY(int y) { m_scrollY = y; }
    int scrollY() const { return m_scrollY; }
    // Kernel name whose launches are highlighted (others faded); empty: none.
    void setHighlightName(const std::string &name) { m_highlight = name; }
    const std::string &highlightName() const { return m_highlight; }
    void setSelected(int row, int item) { m_selRow = row; m_selItem = item; }
    void setHover(int row, int item) { m_hoverRow = row; m_hoverItem = item; }
    void setRangeSelection(std::optional<QPair<double, double>> r) { m_range = r; }  // relative ns
    std::optional<QPair<double, double>> rangeSelection() const { return m_range; }
    void setZoomBand(std::optional<QPair<double, double>> r) { m_zoomBand = r; }
    void setRuler(std::optional<QPair<double, double>> r) { m_ruler = r; }         // relative ns
    std::optional<QPair<double, double>> ruler() const { return m_ruler; }

    struct Hit {
        int row = -1;
        int item = -1;        // index into the row's items
        bool inLabels = false;
        double t = 0;         // relative ns under the cursor
    };
    Hit hitTest(const QPointF &pos) const;
    QRect lanesRect() const;
    QRectF itemRect(int row, int item) const;  // widget px
    // The idle gap (index into the gaps set by setGaps) under a widget position on a device or stream
    // row, -1 if none.
    int gapAt(const QPointF &pos) const;

    // The arrows of the last frame: API span -> launch, in widget px (tests).
    struct Arrow {
        int api = -1;
        LaunchRef launch;
        QLineF line;
        bool focus = false;  // of the selected / hovered record (drawn darker)
    };
    const std::vector<Arrow> &lastArrows() const { return m_arrows; }
    // Records outlined as the partner of the selected / hovered one (row, item) in the last frame.
    const std::vector<std::pair<int, int>> &lastPartners() const { return m_partners; }

    // Last frame's statistics (benchmarks, tests)
    qint64 lastItemsVisited() const { return m_lastVisited; }
    qint64 lastItemsDrawn() const { return m_lastDrawn; }
    double lastDrawMs() const { return m_lastDrawMs; }

    double selectTest(const QPointF &, bool, QVariant *) const override { return -1; }
    QCPRange getKeyRange(bool &foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth) const override;
    QCPRange getValueRange(bool &foundRange, QCP::SignDomain inSignDomain = QCP::sdBoth,
                           const QCPRange &inKeyRange = QCPRange()) const override;

protected:
    void draw(QCPPainter *painter) override;
    void drawLegendIcon(QCPPainter *, const QRectF &) const override {}
    QRect clipRect() const override;

private:
    QColor itemColor(const ProgramItem &it) const;
    QString itemText(const ProgramItem &it) const;
    bool faded(const ProgramItem &it) const;
    void drawRow(QCPPainter *p, const ProgramRow &row, const QRect &rr, double t0, double t1, const QRect &ar);
    void drawGaps(QCPPainter *p, const ProgramRow &row, const QRect &rr, double t0, double t1);
    void drawArrows(QCPPainter *p, double t0, double t1, const QRect &ar);
    void addArrowsOf(int row, int item, bool focus, std::vector<Arrow> &out);
    bool arrowFor(int api, LaunchRef launch, bool focus, Arrow &out) const;

    std::shared_ptr<const ws::ProgramTrace> m_program;
    const ProgramLayout *m_layout = nullptr;
    const ProgramLinks *m_links = nullptr;
    const std::vector<GapInfo> *m_gaps = nullptr;
    std::vector<Arrow> m_arrows;
    std::vector<std::pair<int, int>> m_partners;
    std::vector<std::string> m_families;  // per kernel index
    ws::TimeNs m_origin = 0;
    int m_scrollY = 0;
    std::string m_highlight;
    int m_selRow = -1, m_selItem = -1, m_hoverRow = -1, m_hoverItem = -1;
    std::optional<QPair<double, double>> m_range, m_zoomBand, m_ruler;
    qint64 m_lastVisited = 0, m_lastDrawn = 0;
    double m_lastDrawMs = 0;
};
