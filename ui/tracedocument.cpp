#include "tracedocument.h"

#include "warpstage/synthetic.h"

#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <cmath>
#include <variant>

namespace ws::ui {

QString formatDuration(double ns)
{
    if (std::isnan(ns))
        return QStringLiteral("—");
    const double a = std::abs(ns);
    if (a >= 1e9)
        return QStringLiteral("%1 s").arg(ns / 1e9, 0, 'f', 3);
    if (a >= 1e6)
        return QStringLiteral("%1 ms").arg(ns / 1e6, 0, 'f', 3);
    if (a >= 1e3)
        return QStringLiteral("%1 µs").arg(ns / 1e3, 0, 'f', a >= 1e5 ? 1 : 2);
    return QStringLiteral("%1 ns").arg(ns, 0, 'f', 0);
}

static double kernelMetric(const std::vector<ws::Metric>& ms, ws::RowId kernelId, const char* name)
{
    for (const auto& m : ms)
        if (m.kernelId == kernelId && m.scope == "kernel" && m.name == name)
            return m.value;
    return std::numeric_limits<double>::quiet_NaN();
}

FileContents readFileContents(const QString& path)
{
    FileContents fc;
    fc.path = path;
    fc.store = std::make_shared<SharedStore>(ws::TraceStore::openReadOnly(path.toStdString()));
    std::lock_guard lock(fc.store->mutex);
    const ws::TraceStore& st = fc.store->store;
    bool allSynthetic = true;
    for (const ws::RunSummary& rs : st.runSummaries()) {
        RunEntry re;
        re.summary = rs;
        re.metrics = st.metrics(rs.info.id);
        allSynthetic = allSynthetic && rs.info.synthetic;
        for (const ws::KernelSummary& ks : st.kernelSummaries(rs.info.id)) {
            KernelEntry ke;
            ke.summary = ks;
            ke.tflops = kernelMetric(re.metrics, ks.launch.id, "achieved_tflops");
            ke.overlap = kernelMetric(re.metrics, ks.launch.id, "compute_overlap_share");
            const double dur = double(ks.launch.end - ks.launch.start);
            if (std::isnan(ke.tflops) && dur > 0 && rs.info.m > 0 && !ks.launch.variant.empty())
                ke.tflops = 2.0 * rs.info.m * double(rs.info.n) * rs.info.k / dur / 1e3;
            re.kernels.push_back(std::move(ke));
        }
        fc.runs.push_back(std::move(re));
    }
    fc.synthetic = !fc.runs.empty() && allSynthetic;
    return fc;
}

bool writeSyntheticLadder(const QString& path, QString* error, int ctas, int kstepsPerTile)
{
    struct Rung {
        ws::SyntheticPattern pattern;
        const char* name;
        int tiles;
    };
    const Rung rungs[] = {{ws::SyntheticPattern::Sync, "sync", 1},
                          {ws::SyntheticPattern::Multistage, "multistage", 1},
                          {ws::SyntheticPattern::WarpSpecialized, "warp_specialized", 2},
                          {ws::SyntheticPattern::Pingpong, "pingpong", 2}};
    try {
        ws::TraceStore store = ws::TraceStore::openForWriting(path.toStdString());
        std::uint64_t seed = 1;
        for (const Rung& r : rungs) {
            ws::SyntheticParams p;
            p.pattern = r.pattern;
            p.ctas = ctas;
            p.smCount = ctas;
            p.kstepsPerTile = kstepsPerTile;
            p.tilesPerCta = r.tiles;
            p.seed = seed++;
            ws::RunRecord rec = ws::generateSynthetic(p);
            rec.info.variant = r.name;
            rec.info.synthetic = true;
            for (auto& k : rec.kernels)
                if (!k.launch.variant.empty())
                    k.launch.variant = r.name;
            const ws::RowId runId = store.writeRun(rec);
            store.writeMetrics(runId, ws::computeRunMetrics(store, runId));
        }
        return true;
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
}

TraceDocument::TraceDocument(QObject* parent) : QObject(parent)
{
    qRegisterMetaType<std::shared_ptr<const ws::KernelTrace>>();
    qRegisterMetaType<std::shared_ptr<const ws::KernelMetrics>>();
    qRegisterMetaType<std::shared_ptr<const ws::ui::TraceFacts>>();
}

TraceDocument::~TraceDocument() = default;

const KernelEntry* TraceDocument::findKernel(qint64 kernelId) const
{
    for (const auto& r : m_contents.runs)
        for (const auto& k : r.kernels)
            if (k.summary.launch.id == kernelId)
                return &k;
    return nullptr;
}

const RunEntry* TraceDocument::findRunOfKernel(qint64 kernelId) const
{
    for (const auto& r : m_contents.runs)
        for (const auto& k : r.kernels)
            if (k.summary.launch.id == kernelId)
                return &r;
    return nullptr;
}

qint64 TraceDocument::firstKernelOfRung(const QString& rung) const
{
    const std::string rs = rung.toStdString();
    for (const auto& r : m_contents.runs)
        for (const auto& k : r.kernels)
            if (k.summary.launch.traced && (k.summary.launch.variant == rs ||
                                            (k.summary.launch.variant.empty() && r.summary.info.variant == rs)))
                return k.summary.launch.id;
    // untraced-only files: any launch of that rung
    for (const auto& r : m_contents.runs)
        for (const auto& k : r.kernels)
            if (k.summary.launch.variant == rs)
                return k.summary.launch.id;
    return 0;
}

void TraceDocument::beginJob(const QString& what)
{
    ++m_pending;
    emit busyChanged(true, what);
}

void TraceDocument::endJob()
{
    m_pending = std::max(0, m_pending - 1);
    if (m_pending == 0)
        emit busyChanged(false, QString());
}

namespace {
struct OpenResult {
    std::optional<FileContents> contents;
    QString error;
    bool needsMigration = false;
};

OpenResult doOpen(const QString& path, const QString& synthesizeInto)
{
    OpenResult r;
    if (!synthesizeInto.isEmpty()) {
        QString err;
        if (!writeSyntheticLadder(synthesizeInto, &err)) {
            r.error = QStringLiteral("Could not generate the synthetic trace: %1").arg(err);
            return r;
        }
    }
    try {
        r.contents = readFileContents(path);
    } catch (const ws::NeedsMigrationError& e) {
        r.error = QString::fromStdString(e.what());
        r.needsMigration = true;
    } catch (const std::exception& e) {
        r.error = QString::fromStdString(e.what());
    }
    return r;
}
}  // namespace

void TraceDocument::open(const QString& path)
{
    const quint64 gen = ++m_openGen;
    ++*m_kernelGen;  // any kernel load of the previous file is stale now
    ++m_analysisGen;
    beginJob(tr("Opening %1…").arg(QFileInfo(path).fileName()));
    auto* w = new QFutureWatcher<OpenResult>(this);
    connect(w, &QFutureWatcher<OpenResult>::finished, this, [this, w, gen, path] {
        OpenResult r = w->result();
        w->deleteLater();
        endJob();
        if (gen != m_openGen)
            return;  // superseded
        if (!r.contents) {
            emit openFailed(path, r.error, r.needsMigration);
            return;
        }
        m_contents = std::move(*r.contents);
        emit opened();
    });
    w->setFuture(QtConcurrent::run([path] { return doOpen(path, QString()); }));
}

void TraceDocument::openSynthetic(const QString& path)
{
    const quint64 gen = ++m_openGen;
    ++*m_kernelGen;
    ++m_analysisGen;
    beginJob(tr("Generating a synthetic trace…"));
    auto* w = new QFutureWatcher<OpenResult>(this);
    connect(w, &QFutureWatcher<OpenResult>::finished, this, [this, w, gen, path] {
        OpenResult r = w->result();
        w->deleteLater();
        endJob();
        if (gen != m_openGen)
            return;
        if (!r.contents) {
            emit openFailed(path, r.error, r.needsMigration);
            return;
        }
        m_contents = std::move(*r.contents);
        emit opened();
    });
    w->setFuture(QtConcurrent::run([path] { return doOpen(path, path); }));
}

LoadedKernel loadKernelNow(SharedStore& store, qint64 kernelId)
{
    LoadedKernel r;
    try {
        std::shared_ptr<ws::KernelTrace> t;
        {
            std::lock_guard lock(store.mutex);
            t = std::make_shared<ws::KernelTrace>(store.store.loadKernel(kernelId));
        }
        r.metrics = std::make_shared<ws::KernelMetrics>(ws::analyze(*t));
        r.facts = makeTraceFacts(*t);  // here, not on the GUI thread (tracefacts.h)
        r.trace = std::move(t);
    } catch (const std::exception& e) {
        r.error = QString::fromStdString(e.what());
    }
    return r;
}

void TraceDocument::loadKernel(qint64 kernelId)
{
    if (!m_contents.store)
        return;
    const quint64 gen = ++*m_kernelGen;
    ++m_analysisGen;
    auto store = m_contents.store;
    auto genPtr = m_kernelGen;
    beginJob(tr("Loading kernel %1…").arg(kernelId));
    auto* w = new QFutureWatcher<LoadedKernel>(this);
    connect(w, &QFutureWatcher<LoadedKernel>::finished, this, [this, w, gen, kernelId] {
        LoadedKernel r = w->result();
        w->deleteLater();
        endJob();
        if (gen != *m_kernelGen)
            return;  // a newer request superseded this one
        if (!r.trace) {
            emit kernelLoadFailed(kernelId, r.error);
            return;
        }
        emit kernelLoaded(kernelId, r.trace, r.metrics, r.facts);
    });
    w->setFuture(QtConcurrent::run([store, kernelId, gen, genPtr]() -> LoadedKernel {
        if (gen != *genPtr)  // dropped before it started: cheap exit
            return LoadedKernel{{}, {}, QStringLiteral("superseded")};
        return loadKernelNow(*store, kernelId);
    }));
}

void TraceDocument::analyze(std::shared_ptr<const ws::KernelTrace> trace, const ws::Selection& selection, int tag)
{
    if (!trace)
        return;
    const quint64 gen = ++m_analysisGen;
    beginJob(tr("Analysing selection…"));
    auto* w = new QFutureWatcher<std::shared_ptr<const ws::KernelMetrics>>(this);
    connect(w, &QFutureWatcher<std::shared_ptr<const ws::KernelMetrics>>::finished, this,
            [this, w, gen, tag, selection] {
                auto m = w->result();
                w->deleteLater();
                endJob();
                if (gen != m_analysisGen || !m)
                    return;
                emit analysisReady(tag, selection, m);
            });
    w->setFuture(QtConcurrent::run([trace, selection]() -> std::shared_ptr<const ws::KernelMetrics> {
        try {
            return std::make_shared<ws::KernelMetrics>(ws::analyze(*trace, selection));
        } catch (...) {
            return {};
        }
    }));
}

}  // namespace ws::ui
