#include "comparepickers.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QGridLayout>
#include <QLabel>
#include <QSignalBlocker>

namespace ws::ui {

void addComparePickerRow(QGridLayout* grid, int side, QObject* context, QComboBox*& pick, QLabel*& label,
                         const std::function<void(int, qint64)>& load, const QString& objectNamePrefix)
{
    const QLatin1String name(side == 0 ? "A" : "B");
    grid->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(name)), side, 0);
    pick = new QComboBox;
    if (!objectNamePrefix.isEmpty())
        pick->setObjectName(objectNamePrefix + name);
    pick->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    pick->setMinimumContentsLength(34);
    grid->addWidget(pick, side, 1);
    label = new QLabel;
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    grid->addWidget(label, side, 2);
    QComboBox* p = pick;
    QObject::connect(p, &QComboBox::currentIndexChanged, context,
                     [p, side, load](int i) { load(side, i >= 0 ? p->itemData(i).toLongLong() : 0); });
}

void resetComparePicker(QComboBox* pick)
{
    QSignalBlocker b(pick);
    pick->clear();
    pick->addItem(QCoreApplication::translate("ws::ui::ComparePickers", "(none)"), qint64(0));
}

void selectComparePair(QComboBox* const (&pick)[2], const qint64 (&requested)[2], qint64 a, qint64 b,
                       const std::function<void(int, qint64)>& load)
{
    const qint64 ids[2] = {a, b};
    for (int s = 0; s < 2; ++s) {
        const int i = pick[s]->findData(ids[s]);
        if (i >= 0 && i != pick[s]->currentIndex())
            pick[s]->setCurrentIndex(i);  // loads through the signal
        else if (i >= 0 && requested[s] != ids[s])
            load(s, ids[s]);
    }
}

}  // namespace ws::ui
