// Teaching panel: the current rung's explanation (what changed from the rung
// below, what to look for, which metric proves it) and a guided tour that
// steps through the ladder.
#pragma once

#include "whatifdata.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QTextBrowser;
class QToolButton;

namespace ws::ui {

// A rung's what-if step: its text (the parameter line removed) and the parameters it suggests, from a first
// line "<!-- whatif: stages=2 load-latency=0.5 mma=0.5 epilogue=0.3 overlap=1 persistent=1 sms=66 -->".
struct WhatIfStep {
    QString markdown;   // empty: the rung has no what-if step
    WhatIfParams params;
};
WhatIfStep whatIfStep(const QString& rung);

class TeachingPanel : public QWidget {
    Q_OBJECT
public:
    explicit TeachingPanel(QWidget* parent = nullptr);

    // Shows the text of `rung` (no signal). Unknown rungs show a note.
    void setRung(const QString& rung);
    QString rung() const { return m_rung; }
    QString text() const;  // plain text shown (tests)

    // The tour's "what if" step of the current rung (resources/teaching/whatif/<rung>.md): shows it and emits
    // whatIfRequested with the parameters it suggests. False (nothing shown) for a rung without one.
    bool showWhatIf();
    bool whatIfShown() const { return m_whatIf; }

    // Guided tour: step to the next / previous rung and ask for its kernel.
    void next();
    void previous();

signals:
    void rungRequested(const QString& rung);
    void whatIfRequested(const QString& rung, const ws::ui::WhatIfParams& suggested);

private:
    void step(int delta);
    QComboBox* m_pick = nullptr;
    QToolButton* m_prev = nullptr;
    QToolButton* m_next = nullptr;
    QToolButton* m_whatIfButton = nullptr;
    bool m_whatIf = false;
    QTextBrowser* m_text = nullptr;
    QString m_rung;
};

}  // namespace ws::ui
