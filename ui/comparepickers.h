// The two run pickers ("A" above "B") of the Compare pages: ComparePanel's Warp view (two kernels) and
// ProgramCompare (two program runs). Both build the same grid rows, refill them the same way and choose a pair
// through the same loop; the loading itself stays in each panel.
#pragma once

#include <QtGlobal>

#include <functional>

class QComboBox;
class QGridLayout;
class QLabel;
class QObject;
class QString;

namespace ws::ui {

// Adds row `side` (0: "A", 1: "B") to grid: the bold letter, a picker and a selectable summary label. Picking an
// item calls load(side, the item's id) (0 for "(none)"). A non-empty objectNamePrefix names the picker
// prefix + "A" / "B" (tests find it by that name).
void addComparePickerRow(QGridLayout* grid, int side, QObject* context, QComboBox*& pick, QLabel*& label,
                         const std::function<void(int, qint64)>& load, const QString& objectNamePrefix);

// Empties a picker, without emitting, down to its "(none)" item (id 0), ready for the file's entries.
void resetComparePicker(QComboBox* pick);

// Chooses ids[s] in pick[s] for both sides: moving a picker loads through its signal; a picker already on that
// id whose side has not requested it yet (requested[s] != ids[s]) is loaded directly. An id the picker does not
// hold leaves that side alone.
void selectComparePair(QComboBox* const (&pick)[2], const qint64 (&requested)[2], qint64 a, qint64 b,
                       const std::function<void(int, qint64)>& load);

}  // namespace ws::ui
