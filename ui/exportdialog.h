// File ▸ Export image…: PNG (size + DPI), SVG or PDF of the current timeline view, or the kernel as a
// trace for other tools (Chrome JSON, gzip or not, or Perfetto; docs/interop.md).
#pragma once

#include <QDialog>
#include <QSize>

class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QSpinBox;

namespace ws::ui {

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    ExportDialog(const QString& defaultPath, const QString& defaultTitle, QWidget* parent = nullptr);

    QString path() const;
    QSize sizePx() const;
    double dpi() const;
    QString title() const;

    // "png", "json.gz", "perfetto-trace", ... of a file name (lower case).
    static QString formatOf(const QString& path);

private:
    void syncExtension();
    QComboBox* m_format = nullptr;
    QLineEdit* m_path = nullptr;
    QSpinBox* m_w = nullptr;
    QSpinBox* m_h = nullptr;
    QDoubleSpinBox* m_dpi = nullptr;
    QLineEdit* m_title = nullptr;
};

}  // namespace ws::ui
