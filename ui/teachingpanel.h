// Teaching panel: the current rung's explanation (what changed from the rung
// below, what to look for, which metric proves it) and a guided tour that
// steps through the ladder.
#pragma once

#include <QWidget>

class QComboBox;
class QLabel;
class QTextBrowser;
class QToolButton;

namespace ws::ui {

class TeachingPanel : public QWidget {
    Q_OBJECT
public:
    explicit TeachingPanel(QWidget* parent = nullptr);

    // Shows the text of `rung` (no signal). Unknown rungs show a note.
    void setRung(const QString& rung);
    QString rung() const { return m_rung; }
    QString text() const;  // plain text shown (tests)

    // Guided tour: step to the next / previous rung and ask for its kernel.
    void next();
    void previous();

signals:
    void rungRequested(const QString& rung);

private:
    void step(int delta);
    QComboBox* m_pick = nullptr;
    QToolButton* m_prev = nullptr;
    QToolButton* m_next = nullptr;
    QTextBrowser* m_text = nullptr;
    QString m_rung;
};

}  // namespace ws::ui
