// Tools ▸ Record…: runs `warpstage-record --progress-json` as a child process
// (rungs of the GEMM ladder and of the lce family, their shapes, stall pass), shows its
// progress with a cancel button, and reports the file to open when it finishes.
#pragma once

#include <QDialog>
#include <QProcess>
#include <QStringList>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QGroupBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QSpinBox;

namespace ws::ui {

// Path of the warpstage-record executable (next to this program, in the build
// tree's app/record, or on PATH); empty if none.
QString findRecorder();
// The linear-compression family's driver `lce` as warpstage-record looks for it ($WARPSTAGE_LCE, else next to
// the recorder, the build tree's kernels/lce/lce, or ../lib/warpstage/lce of an install); empty if none.
QString findLceDriver(const QString& recorder);
// Empty if recording is possible here, else a sentence saying why not
// ("No NVIDIA GPU: /dev/nvidia0 does not exist.").
QString recordUnavailableReason();

struct RecordProgress {
    QString rung, pass, message;
    double percent = -1;  // 0..100, -1 unknown
    bool done = false;
    bool error = false;
};
// Parses one --progress-json line; nullopt-like (message only) for non-JSON text.
RecordProgress parseProgressLine(const QByteArray& line);

class RecordDialog : public QDialog {
    Q_OBJECT
public:
    explicit RecordDialog(const QString& defaultOutput, QWidget* parent = nullptr);
    ~RecordDialog() override;

    // What to record: the bundled ladder's rungs, or a program of yours (`warpstage-record -o FILE -- PROGRAM ...`).
    enum class Mode { Ladder, Program };
    void setMode(Mode mode);
    Mode mode() const;
    // Program mode: the command line (split like a shell: quotes group words), the working directory the
    // program starts in ("" = the viewer's), the kernel regex for the per-kernel extras (--kernels), and the
    // stall pass (shared with the ladder mode).
    void setCommandLine(const QString& commandLine);
    void setWorkingDirectory(const QString& dir);
    QString workingDirectory() const;
    void setKernelRegex(const QString& regex);
    void setStallPass(bool on);
    // Empty if the dialog's fields can be recorded, else what is missing or wrong.
    QString validationError() const;

    // The lce family (issue 11, `--rungs lce:...`): its rungs are offered when the driver is found
    // (findLceDriver), else the group is disabled with a sentence saying why (lceUnavailableReason()).
    void setLceDriver(const QString& driver);
    QString lceUnavailableReason() const;
    void setLceRungChecked(int rung, bool on);
    void setGemmRungsChecked(bool on);
    // M, N, K_user, K_cand, B, candidates per user (the driver's shape: --lce-shape MxNxKUxKCxBxPER).
    void setLceShape(int m, int n, int kUser, int kCand, int b, int perUser);

    QStringList arguments() const;  // for the recorder, without the program
    QString outputFile() const;
    void setRecorder(const QString& program) { m_program = program; }
    // Starts the recorder (the Record button) / asks it to stop (Cancel while running).
    void startRecording() { start(); }
    void cancelRecording() { cancel(); }
    bool isRunning() const { return m_proc != nullptr; }
    int progressValue() const;
    QString statusText() const;
    QString logText() const;

signals:
    void recorded(const QString& file);

protected:
    void reject() override;

private:
    void start();
    void cancel();
    void onReadyRead();
    void onFinished(int code, QProcess::ExitStatus status);
    void setRunning(bool running);

    QComboBox* m_mode = nullptr;
    QGroupBox* m_rungBox = nullptr;
    QGroupBox* m_programBox = nullptr;
    QFormLayout* m_form = nullptr;
    QLineEdit* m_commandLine = nullptr;
    QLineEdit* m_workDir = nullptr;
    QLineEdit* m_kernelRegex = nullptr;
    QList<QCheckBox*> m_rungs;
    QSpinBox* m_m = nullptr;
    QSpinBox* m_n = nullptr;
    QSpinBox* m_k = nullptr;
    QGroupBox* m_lceBox = nullptr;
    QList<QCheckBox*> m_lceRungs;
    QList<QSpinBox*> m_lceShape;  // M, N, K_user, K_cand, B, per user
    QCheckBox* m_lceShuffled = nullptr;
    QLabel* m_lceNote = nullptr;
    QString m_lceDriver;
    QString m_lceReason;  // why not, from when the driver was looked for
    QCheckBox* m_stalls = nullptr;
    QLineEdit* m_out = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QPlainTextEdit* m_log = nullptr;
    QDialogButtonBox* m_buttons = nullptr;
    QPushButton* m_startButton = nullptr;
    QProcess* m_proc = nullptr;
    QString m_program;
    QByteArray m_buffer;
    bool m_cancelled = false;
};

}  // namespace ws::ui
