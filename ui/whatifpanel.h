// What-if panel (issue 13): the replay's parameters as sliders and spin boxes (ring stages, load latency ×,
// MMA time ×, epilogue × or overlapped, persistent, SMs), the predicted time against the measured one, the
// prediction's attribution, and the toggle for the predicted timeline (ghost lanes beside or over the
// measured lanes). Every change re-predicts: the replay runs on a worker thread (the Predictor), a change
// made while one runs is kept and run next (only the newest), and a result for older parameters is dropped.
// Closing the panel (or another kernel) cancels a running replay and does not wait for it: the worker owns
// everything it reads.
#pragma once

#include "whatifdata.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QWidget>

#include <functional>
#include <memory>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGridLayout;
class QLabel;
class QPushButton;
class QSlider;
class QSpinBox;
class QTimer;

namespace ws::ui {

class AttributionBar;

class WhatIfPanel : public QWidget {
    Q_OBJECT
public:
    // Runs on a worker thread; must be safe to call concurrently with the GUI (it owns what it reads).
    // withTimeline: the predicted timeline (ghost lanes) is wanted too (only while they are shown).
    // cancel: set when the panel no longer wants the answer (another kernel, or the panel closes).
    using Predictor = WhatIfPredictor;
    using GhostMode = ws::ui::GhostMode;

    explicit WhatIfPanel(QWidget* parent = nullptr);
    ~WhatIfPanel() override;

    // A kernel to replay: its measured time, the stage count and SM count it was recorded with (the
    // controls start there), and the predictor. A null predictor disables the panel with `why`.
    void setKernel(Predictor predictor, TimeNs measuredNs, int recordedStages, int recordedSms);
    void setUnavailable(const QString& why);
    void clear();

    WhatIfParams params() const;          // what the controls say (0 / 1.0 / false where as recorded)
    void setParams(const WhatIfParams& p);  // moves the controls (re-predicts once)
    void reset();                         // back to as recorded

    std::shared_ptr<const Prediction> prediction() const { return m_shown; }
    bool busy() const { return m_running; }
    int predictionsRun() const { return m_runs; }
    double lastLatencyMs() const { return m_lastLatencyMs; }  // change → result shown, of the last result
    GhostMode ghostMode() const;
    void setGhostMode(GhostMode m);
    AttributionBar* attributionBar() const { return m_bar; }
    QString resultText() const;           // the measured → predicted line (tests)

    // the controls (tests drive them like a user)
    QSpinBox* stagesBox() const { return m_stages; }
    QSlider* stagesSlider() const { return m_stagesSlider; }
    QDoubleSpinBox* loadLatencyBox() const { return m_load; }
    QDoubleSpinBox* mmaBox() const { return m_mma; }
    QDoubleSpinBox* epilogueBox() const { return m_epi; }
    QCheckBox* overlapBox() const { return m_overlap; }
    QCheckBox* persistentBox() const { return m_persistent; }
    QSpinBox* smsBox() const { return m_sms; }
    QSpinBox* ctasPerSmBox() const { return m_ctasPerSm; }
    QCheckBox* noSyncBox() const { return m_noSync; }
    QCheckBox* producerWarpBox() const { return m_producerWarp; }
    QCheckBox* sharedResourcesBox() const { return m_sharedResources; }
    QCheckBox* loadBandwidthBox() const { return m_loadBandwidth; }
    QComboBox* tileOrderBox() const { return m_tileOrder; }
    QCheckBox* ghostBox() const { return m_ghost; }

signals:
    void predicted(std::shared_ptr<const ws::ui::Prediction> prediction);  // a new result is shown
    void ghostModeChanged(ws::ui::GhostMode mode);
    void causeClicked(int cause);  // on the prediction's attribution bar

private:
    void changed();                 // a control moved
    void startNext();
    void onFinished();
    void showPrediction(std::shared_ptr<const Prediction> p);
    void setControlsEnabled(bool on);
    QDoubleSpinBox* factorRow(QGridLayout* grid, int row, const QString& label, const QString& tip, QSlider** slider);

    Predictor m_predictor;
    TimeNs m_measuredNs = 0;
    int m_recordedStages = 0, m_recordedSms = 0;
    bool m_updating = false;        // controls moved by code: one re-predict at the end

    QLabel* m_header = nullptr;
    QSpinBox* m_stages = nullptr;
    QSlider* m_stagesSlider = nullptr;
    QDoubleSpinBox* m_load = nullptr;
    QDoubleSpinBox* m_mma = nullptr;
    QDoubleSpinBox* m_epi = nullptr;
    QSlider* m_loadSlider = nullptr;
    QSlider* m_mmaSlider = nullptr;
    QSlider* m_epiSlider = nullptr;
    QCheckBox* m_overlap = nullptr;
    QCheckBox* m_persistent = nullptr;
    QSpinBox* m_sms = nullptr;
    QSpinBox* m_ctasPerSm = nullptr;
    QCheckBox* m_noSync = nullptr;
    QCheckBox* m_producerWarp = nullptr;
    QCheckBox* m_sharedResources = nullptr;
    QCheckBox* m_loadBandwidth = nullptr;
    QComboBox* m_tileOrder = nullptr;
    QPushButton* m_reset = nullptr;
    QLabel* m_result = nullptr;
    QLabel* m_timing = nullptr;
    QLabel* m_note = nullptr;
    AttributionBar* m_bar = nullptr;
    QCheckBox* m_ghost = nullptr;
    QComboBox* m_ghostWhere = nullptr;

    QFutureWatcher<std::shared_ptr<const Prediction>>* m_watcher = nullptr;
    bool m_running = false;
    std::shared_ptr<std::atomic<bool>> m_cancel;  // the running replay's: set when its answer is not wanted
    bool m_pending = false;         // a change arrived while running
    quint64 m_kernelGen = 0, m_runningGen = 0;
    QElapsedTimer m_sinceChange;    // started at the first change not yet shown
    bool m_changeOpen = false;
    double m_lastLatencyMs = 0;
    int m_runs = 0;
    std::shared_ptr<const Prediction> m_shown;
};

}  // namespace ws::ui
