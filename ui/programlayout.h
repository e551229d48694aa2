// ProgramLayout: the rows of the program view (ProgramView) built from a ws::ProgramTrace:
//   NVTX rows (one per domain x thread x nesting depth), optional CPU API rows (one per thread),
//   then a "Device N" header and one row per stream holding its kernels and memory operations.
// Each row keeps its records as a start-sorted array plus the running maximum of their ends, so the
// records of a viewport are found by binary search (ProgramLayout::firstVisible) whatever their number.
// Also: kernel colours by family (stable hash into a colour-blind-safe palette), memory-operation colours.
#pragma once

#include <warpstage/model.h>

#include <QColor>
#include <QString>

#include <cstdint>
#include <vector>

struct ProgramItem {
    enum Kind : std::uint8_t { Kernel, MemOp, Nvtx, Api };
    ws::TimeNs start = 0;
    ws::TimeNs end = 0;
    Kind kind = Kernel;
    std::int32_t index = 0;  // into ProgramTrace::kernels / memOps / nvtx / apiSpans
};

struct ProgramRow {
    enum Type { DeviceHeader, Nvtx, Api, Stream };
    Type type = Stream;
    QString label;
    int top = 0;       // px from the top of the rows
    int height = 0;
    std::uint32_t streamId = 0;
    std::uint32_t threadId = 0;
    int depth = 0;
    std::vector<ProgramItem> items;     // sorted by start
    std::vector<ws::TimeNs> maxEnd;     // maxEnd[i] = max(items[0..i].end)
    // First item that may overlap [t, ...): the first i with maxEnd[i] > t (items.size() if none).
    std::size_t firstVisible(ws::TimeNs t) const;
};

struct ProgramLayoutOptions {
    bool showNvtx = true;
    bool showApi = false;  // CPU launch spans (optional)
};

class ProgramLayout {
public:
    static constexpr int kHeaderHeight = 18;
    static constexpr int kNvtxHeight = 14;
    static constexpr int kApiHeight = 13;
    static constexpr int kStreamHeight = 24;

    void build(const ws::ProgramTrace *program, const ProgramLayoutOptions &options);
    const std::vector<ProgramRow> &rows() const { return m_rows; }
    int totalHeight() const { return m_total; }
    int rowAt(int y) const;  // y from the top of the rows; -1 if none
    // The row and position of kernel launch `k` (index into ProgramTrace::kernels); {-1,-1} if not shown.
    std::pair<int, int> rowOfKernel(int k) const;
    // The same for any record: a kernel, memory operation, NVTX range or API span ({-1,-1}: not shown).
    std::pair<int, int> rowOf(ProgramItem::Kind kind, int index) const;

private:
    std::vector<ProgramRow> m_rows;
    std::vector<std::pair<int, int>> m_pos[4];  // per ProgramItem::Kind, per record index: row, item
    int m_total = 0;
};

namespace programpalette {
QColor familyColor(const std::string &family);   // stable across runs and sessions
QColor memOpColor(ws::MemOpKind kind);
QString memOpLabel(ws::MemOpKind kind);          // "Host → device", ...
QColor nvtxColor(const ws::NvtxRange &r);        // the range's own colour if it has one, else by name
QColor apiColor();
QColor idleGapColor();     // the band over a device's rows where it ran nothing
QColor idleGapHatch();
QColor idleGapText();
QColor arrowColor();       // launch arrow of the selected / hovered record, and its partner's outline
QColor arrowColorFaint();  // launch arrows of every visible launch
}  // namespace programpalette
