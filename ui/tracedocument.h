// TraceDocument: the open trace file of a viewer window and the worker-thread
// jobs that read it (open, load a kernel, analyse a selection, generate the
// synthetic fallback trace). Every job runs on Qt Concurrent's pool; each kind
// of job carries a generation number and a result whose generation is no
// longer the newest is dropped (RenderDoc-style: the newest request wins).
#pragma once

#include "warpstage/analysis.h"
#include "warpstage/model.h"
#include "warpstage/store.h"
#include "tracefacts.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace ws::ui {

struct KernelEntry {
    ws::KernelSummary summary;
    double tflops = std::numeric_limits<double>::quiet_NaN();   // stored "achieved_tflops" or computed
    double overlap = std::numeric_limits<double>::quiet_NaN();  // stored "compute_overlap_share"
};

struct RunEntry {
    ws::RunSummary summary;
    std::vector<KernelEntry> kernels;
    std::vector<ws::Metric> metrics;
};

// A store shared between the GUI and worker jobs; `mutex` serialises access.
struct SharedStore {
    explicit SharedStore(ws::TraceStore s) : store(std::move(s)) {}
    std::mutex mutex;
    ws::TraceStore store;
};

struct FileContents {
    QString path;
    std::shared_ptr<SharedStore> store;
    std::vector<RunEntry> runs;
    bool synthetic = false;  // every run is RunInfo::synthetic
};

// Synchronous helpers (also used by tests and the CLI).
// Reads the run/kernel summaries and metrics of `path`; throws ws::StoreError.
FileContents readFileContents(const QString& path);
// Writes a small synthetic ladder (sync, multistage, warp_specialized,
// pingpong; RunInfo::synthetic = true) with metrics into a new file `path`.
// Returns false and sets *error on failure.
bool writeSyntheticLadder(const QString& path, QString* error, int ctas = 66, int kstepsPerTile = 32);

// One loaded kernel with its whole-kernel analysis.
struct LoadedKernel {
    std::shared_ptr<const ws::KernelTrace> trace;
    std::shared_ptr<const ws::KernelMetrics> metrics;
    QString error;  // set when trace is null
    std::shared_ptr<const TraceFacts> facts;  // of trace, found on the worker (for TimelineWidget::setTrace)
};
// Loads and analyses one kernel and finds its TraceFacts (blocking; call on a worker thread). Never throws.
LoadedKernel loadKernelNow(SharedStore& store, qint64 kernelId);

class TraceDocument : public QObject {
    Q_OBJECT
public:
    explicit TraceDocument(QObject* parent = nullptr);
    ~TraceDocument() override;

    const FileContents& contents() const { return m_contents; }
    bool isOpen() const { return m_contents.store != nullptr; }
    const KernelEntry* findKernel(qint64 kernelId) const;
    const RunEntry* findRunOfKernel(qint64 kernelId) const;
    // Traced kernel of `rung` (variant), first found; 0 if none.
    qint64 firstKernelOfRung(const QString& rung) const;

    // Asynchronous jobs. Each supersedes the previous job of the same kind.
    void open(const QString& path);
    // Generates the synthetic ladder into `path`, then opens it.
    void openSynthetic(const QString& path);
    void loadKernel(qint64 kernelId);
    // `tag` comes back with the result so callers can tell their requests apart.
    void analyze(std::shared_ptr<const ws::KernelTrace> trace, const ws::Selection& selection, int tag = 0);

    int pendingJobs() const { return m_pending; }

signals:
    void opened();
    // `needsMigration`: the file is an older Warpstage schema (see store.h).
    void openFailed(const QString& path, const QString& message, bool needsMigration);
    void kernelLoaded(qint64 kernelId, std::shared_ptr<const ws::KernelTrace> trace,
                      std::shared_ptr<const ws::KernelMetrics> metrics, std::shared_ptr<const ws::ui::TraceFacts> facts);
    void kernelLoadFailed(qint64 kernelId, const QString& message);
    void analysisReady(int tag, const ws::Selection& selection, std::shared_ptr<const ws::KernelMetrics> metrics);
    // Busy state for the progress bar: `what` says what runs ("Opening trace.db").
    void busyChanged(bool busy, const QString& what);

private:
    void beginJob(const QString& what);
    void endJob();

    FileContents m_contents;
    quint64 m_openGen = 0;
    std::shared_ptr<std::atomic<quint64>> m_kernelGen = std::make_shared<std::atomic<quint64>>(0);
    quint64 m_analysisGen = 0;
    int m_pending = 0;
};

QString formatDuration(double ns);  // "1.23 ms", "456 µs", "78 ns", "—" for NaN

}  // namespace ws::ui

Q_DECLARE_METATYPE(std::shared_ptr<const ws::KernelTrace>)
Q_DECLARE_METATYPE(std::shared_ptr<const ws::KernelMetrics>)
Q_DECLARE_METATYPE(std::shared_ptr<const ws::ui::TraceFacts>)
