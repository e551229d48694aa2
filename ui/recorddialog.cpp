#include "recorddialog.h"

#include "rungcatalog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QRegularExpression>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWidget>

namespace ws::ui {

QString findRecorder()
{
    const QString env = qEnvironmentVariable("WARPSTAGE_RECORD");
    if (!env.isEmpty() && QFileInfo(env).isExecutable())
        return env;
    const QString dir = QCoreApplication::applicationDirPath();
    for (const QString& c : {dir + QStringLiteral("/warpstage-record"), dir + QStringLiteral("/../record/warpstage-record"),
                             dir + QStringLiteral("/../../app/record/warpstage-record")}) {
        if (QFileInfo(c).isExecutable())
            return QFileInfo(c).canonicalFilePath();
    }
    return QStandardPaths::findExecutable(QStringLiteral("warpstage-record"));
}

QString findLceDriver(const QString& recorder)
{
    // The same places, in the same order, as warpstage-record's findLceProgram() (kernels/recorder/lce_record.cpp).
    const QString env = qEnvironmentVariable("WARPSTAGE_LCE");
    if (!env.isEmpty())
        return QFileInfo(env).isExecutable() && QFileInfo(env).isFile() ? env : QString();
    if (recorder.isEmpty())
        return {};
    const QString dir = QFileInfo(recorder).absolutePath();
    for (const QString& c : {dir + QStringLiteral("/lce"), dir + QStringLiteral("/../../kernels/lce/lce"),
                             dir + QStringLiteral("/../lib/warpstage/lce")}) {
        if (QFileInfo(c).isExecutable() && QFileInfo(c).isFile())
            return QFileInfo(c).canonicalFilePath();
    }
    return {};
}

QString recordUnavailableReason()
{
    if (!qEnvironmentVariableIsEmpty("WARPSTAGE_FAKE_GPU"))  // tests: pretend a GPU is present
        return findRecorder().isEmpty() ? QObject::tr("warpstage-record was not found next to warpstage or on PATH.")
                                        : QString();
    if (!QFileInfo::exists(QStringLiteral("/dev/nvidiactl")) && !QFileInfo::exists(QStringLiteral("/dev/nvidia0")))
        return QObject::tr("No NVIDIA GPU on this machine (/dev/nvidia0 does not exist). Record on a GPU server with "
                           "warpstage-record and open the file here.");
    if (QStandardPaths::findExecutable(QStringLiteral("nvidia-smi")).isEmpty())
        return QObject::tr("No NVIDIA driver tools on this machine (nvidia-smi is not on PATH).");
    if (findRecorder().isEmpty())
        return QObject::tr("warpstage-record was not found next to warpstage or on PATH (it is only built with "
                           "CUDA: configure with WARPSTAGE_WITH_CUDA=ON).");
    return {};
}

RecordProgress parseProgressLine(const QByteArray& line)
{
    RecordProgress p;
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(line.trimmed(), &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject()) {
        p.message = QString::fromUtf8(line).trimmed();
        return p;
    }
    // Protocol of warpstage-record --progress-json (docs/recording.md):
    //   {"type":"progress","rung":..,"pass":..,"step":..,"percent":..}
    //   {"type":"message","level":"warning","text":..}
    //   {"type":"run","rung":..,"run_id":..,"status":..}
    //   {"type":"done","exit_code":0,"output":..,"error":""}
    // Also accepted: a plain {"rung","pass","percent","message"} object.
    const QJsonObject o = doc.object();
    const QString type = o.value(QStringLiteral("type")).toString();
    p.rung = o.value(QStringLiteral("rung")).toString();
    p.pass = o.value(QStringLiteral("pass")).toString();
    for (const char* key : {"message", "step", "text"}) {
        p.message = o.value(QLatin1String(key)).toString();
        if (!p.message.isEmpty())
            break;
    }
    if (type == QLatin1String("run"))
        p.message = QObject::tr("run %1 stored (%2)")
                        .arg(o.value(QStringLiteral("run_id")).toInteger())
                        .arg(o.value(QStringLiteral("status")).toString());
    if (o.contains(QStringLiteral("percent")))
        p.percent = o.value(QStringLiteral("percent")).toDouble(-1);
    const QString ev = type.isEmpty() ? o.value(QStringLiteral("event")).toString() : type;
    p.done = o.value(QStringLiteral("done")).toBool() || ev == QLatin1String("done");
    const QString error = o.value(QStringLiteral("error")).toString();
    p.error = !error.isEmpty() || ev == QLatin1String("error") ||
              (type == QLatin1String("message") && o.value(QStringLiteral("level")).toString() == QLatin1String("error"));
    if (!error.isEmpty() && (p.message.isEmpty() || p.done))
        p.message = error;
    if (p.done && !p.error && p.message.isEmpty())
        p.message = QObject::tr("finished: %1 run(s) written, %2 failed")
                        .arg(o.value(QStringLiteral("runs_written")).toInt())
                        .arg(o.value(QStringLiteral("runs_failed")).toInt());
    return p;
}

RecordDialog::RecordDialog(const QString& defaultOutput, QWidget* parent) : QDialog(parent)
{
    setWindowTitle(tr("Record the kernel ladders"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/record.svg")));
    m_program = findRecorder();
    auto* lay = new QVBoxLayout(this);
    m_mode = new QComboBox;
    m_mode->addItem(tr("Record the kernel ladders (GEMM, linear compression)"));
    m_mode->addItem(tr("Record a program"));
    lay->addWidget(m_mode);

    m_programBox = new QGroupBox(tr("Program"));
    auto* pf = new QFormLayout(m_programBox);
    m_commandLine = new QLineEdit;
    m_commandLine->setPlaceholderText(tr("python3 train.py --steps 30"));
    m_commandLine->setToolTip(tr("Run as `warpstage-record -o FILE -- PROGRAM ARGS...`; quotes group words as in a shell"));
    pf->addRow(tr("Command line:"), m_commandLine);
    auto* wdRow = new QHBoxLayout;
    m_workDir = new QLineEdit;
    m_workDir->setPlaceholderText(QDir::currentPath());
    auto* wdBrowse = new QToolButton;
    wdBrowse->setText(QStringLiteral("…"));
    connect(wdBrowse, &QToolButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(this, tr("Working directory"), m_workDir->text());
        if (!d.isEmpty())
            m_workDir->setText(d);
    });
    wdRow->addWidget(m_workDir, 1);
    wdRow->addWidget(wdBrowse);
    pf->addRow(tr("Working directory:"), wdRow);
    m_kernelRegex = new QLineEdit;
    m_kernelRegex->setPlaceholderText(tr("all kernels (e.g. gemm|flash)"));
    m_kernelRegex->setToolTip(tr("--kernels REGEX: the kernels that get the expensive extras (stall pass, per-warp timeline)"));
    pf->addRow(tr("Kernel regex:"), m_kernelRegex);
    lay->addWidget(m_programBox);

    // The GEMM ladder: its rungs, its shape, and what a rung does with a shape it cannot take.
    auto* rungBox = m_rungBox = new QGroupBox(tr("GEMM ladder (bf16, C = A·Bᵀ)"));
    auto* rg = new QGridLayout(rungBox);
    int i = 0;
    for (const RungText& r : rungCatalog()) {
        auto* cb = new QCheckBox(r.title);
        cb->setProperty("rung", r.name);
        cb->setChecked(true);
        cb->setToolTip(tr("warpstage-record --rungs %1").arg(r.name));
        m_rungs << cb;
        rg->addWidget(cb, i / 2, i % 2);
        ++i;
    }
    auto* shape = new QHBoxLayout;
    auto mk = [&](QSpinBox*& sb) {
        sb = new QSpinBox;
        sb->setRange(1, 131072);
        sb->setSingleStep(128);
        sb->setValue(4096);
        shape->addWidget(sb);
    };
    shape->addWidget(new QLabel(tr("Shape M × N × K:")));
    mk(m_m);
    shape->addWidget(new QLabel(QStringLiteral("×")));
    mk(m_n);
    shape->addWidget(new QLabel(QStringLiteral("×")));
    mk(m_k);
    shape->addStretch(1);
    const int shapeRow = (i + 1) / 2;
    rg->addLayout(shape, shapeRow, 0, 1, 2);
    auto* gemmNote = new QLabel(tr("sync needs M and N multiples of 128 and K of 32; the other rungs take any M and N and a "
                                   "K that is a multiple of 8. A rung that cannot take the shape is skipped, and the log says why."));
    gemmNote->setWordWrap(true);
    rg->addWidget(gemmNote, shapeRow + 1, 0, 1, 2);
    lay->addWidget(rungBox);

    // The linear-compression family (issue 11): warpstage-record --rungs lce:... runs the `lce` driver once per rung.
    m_lceBox = new QGroupBox(tr("Linear compression (lce): out[b] = W_cand·E_cand[b] + W_user·E_user[u(b)], fp16"));
    auto* lceLay = new QVBoxLayout(m_lceBox);
    auto* lceInner = new QWidget;
    lceInner->setObjectName(QStringLiteral("lceInner"));
    auto* lg = new QGridLayout(lceInner);
    lg->setContentsMargins(0, 0, 0, 0);
    int j = 0;
    for (const RungText& r : lceCatalog()) {
        // "lce 3 · fused epilogue — add U in the GEMM's epilogue, ..." -> "lce:3 · fused epilogue", the rest as tooltip
        const QString shortTitle = r.title.section(QStringLiteral(" — "), 0, 0).replace(QStringLiteral("lce "), QStringLiteral("lce:"));
        auto* cb = new QCheckBox(shortTitle);
        cb->setProperty("lceRung", r.level);
        cb->setToolTip(tr("%1\nwarpstage-record --rungs lce:%2").arg(r.title).arg(r.level));
        m_lceRungs << cb;
        lg->addWidget(cb, j / 3, j % 3);
        ++j;
    }
    auto* lceAll = new QToolButton;
    lceAll->setText(tr("All five"));
    lceAll->setToolTip(tr("--rungs lce:all"));
    connect(lceAll, &QToolButton::clicked, this, [this] {
        for (auto* cb : m_lceRungs)
            cb->setChecked(true);
    });
    lg->addWidget(lceAll, (j - 1) / 3, 2, Qt::AlignRight);
    auto* lceShape = new QHBoxLayout;
    lceShape->addWidget(new QLabel(tr("Shape:")));
    const struct {
        const char* prefix;
        int value;
        const char* tip;
    } dims[] = {{"M ", 433, "rows of W_user and W_cand (and of each output)"},
                {"N ", 256, "columns of E and of each output; rungs 3-4 need a multiple of 8"},
                {"K user ", 1178, "inner dimension of the user GEMM"},
                {"K cand ", 866, "inner dimension of the candidate GEMM"},
                {"B ", 1024, "candidates"},
                {"per user ", 70, "candidates per user (B / this = users)"}};
    for (const auto& d : dims) {
        auto* sb = new QSpinBox;
        sb->setRange(1, 9999999);  // warpstage-record's --lce-shape: each 1..9999999
        sb->setPrefix(QString::fromUtf8(d.prefix));
        sb->setValue(d.value);
        sb->setToolTip(QString::fromUtf8(d.tip));
        m_lceShape << sb;
        lceShape->addWidget(sb);
    }
    lceShape->addStretch(1);
    lg->addLayout(lceShape, (j + 2) / 3, 0, 1, 3);
    m_lceShuffled = new QCheckBox(tr("Candidates mapped to users in shuffled order"));
    lg->addWidget(m_lceShuffled, (j + 2) / 3 + 1, 0, 1, 3);
    lceLay->addWidget(lceInner);
    m_lceNote = new QLabel;
    m_lceNote->setWordWrap(true);
    m_lceNote->setTextInteractionFlags(Qt::TextSelectableByMouse);
    lceLay->addWidget(m_lceNote);
    lay->addWidget(m_lceBox);

    auto* form = m_form = new QFormLayout;
    m_stalls = new QCheckBox(tr("Stall-sampling pass (CUPTI PC sampling on the untraced build)"));
    m_stalls->setChecked(true);
    form->addRow(QString(), m_stalls);
    auto* outRow = new QHBoxLayout;
    m_out = new QLineEdit(defaultOutput);
    auto* browse = new QToolButton;
    browse->setText(QStringLiteral("…"));
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString f = QFileDialog::getSaveFileName(this, tr("Record into"), m_out->text(),
                                                       tr("Warpstage traces (*.wstrace *.warpstage *.sqlite *.db)"),
                                                       nullptr, QFileDialog::DontConfirmOverwrite);
        if (!f.isEmpty())
            m_out->setText(f);
    });
    outRow->addWidget(m_out, 1);
    outRow->addWidget(browse);
    form->addRow(tr("Output file (a new run is appended):"), outRow);
    lay->addLayout(form);

    m_progress = new QProgressBar;
    m_progress->setRange(0, 100);
    m_progress->setValue(0);
    lay->addWidget(m_progress);
    m_status = new QLabel(m_program.isEmpty() ? tr("warpstage-record not found") : tr("Ready: %1").arg(m_program));
    m_status->setWordWrap(true);
    lay->addWidget(m_status);
    m_log = new QPlainTextEdit;
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(2000);
    m_log->setFont(QFont(QStringLiteral("monospace")));
    m_log->setMinimumHeight(120);
    lay->addWidget(m_log, 1);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    m_startButton = m_buttons->addButton(tr("Record"), QDialogButtonBox::AcceptRole);
    m_startButton->setIcon(QIcon(QStringLiteral(":/icons/record.svg")));
    connect(m_startButton, &QPushButton::clicked, this, &RecordDialog::start);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &RecordDialog::reject);
    lay->addWidget(m_buttons);
    connect(m_mode, &QComboBox::currentIndexChanged, this, [this](int i) { setMode(i == 1 ? Mode::Program : Mode::Ladder); });
    setMode(Mode::Ladder);
    setLceDriver(findLceDriver(m_program));
    resize(760, 720);
}

void RecordDialog::setLceDriver(const QString& driver)
{
    m_lceDriver = driver;
    if (driver.isEmpty() && !qEnvironmentVariableIsEmpty("WARPSTAGE_LCE"))
        m_lceReason = tr("Not available: WARPSTAGE_LCE names %1, which is not an executable file.").arg(qEnvironmentVariable("WARPSTAGE_LCE"));
    else if (driver.isEmpty())
        m_lceReason = tr("Not available: the lce driver was not found next to warpstage-record, in the build tree's kernels/lce/ "
                         "or in ../lib/warpstage/ (it is built with CUDA: build the target 'lce', or set WARPSTAGE_LCE to its path).");
    else
        m_lceReason.clear();
    if (auto* inner = m_lceBox->findChild<QWidget*>(QStringLiteral("lceInner")))
        inner->setEnabled(!driver.isEmpty());
    if (driver.isEmpty()) {
        m_lceNote->setText(lceUnavailableReason());
    } else {
        m_lceNote->setText(tr("Every rung of the family is run by the driver %1, one program recording per rung (rungs "
                              "3-4 with one traced launch). A rung that cannot take the shape (rungs 3-4: N not a "
                              "multiple of 8) is skipped.")
                               .arg(QDir::toNativeSeparators(driver)));
    }
}

QString RecordDialog::lceUnavailableReason() const
{
    return m_lceReason;
}

void RecordDialog::setLceRungChecked(int rung, bool on)
{
    if (rung >= 0 && rung < m_lceRungs.size())
        m_lceRungs[rung]->setChecked(on);
}

void RecordDialog::setGemmRungsChecked(bool on)
{
    for (auto* cb : m_rungs)
        cb->setChecked(on);
}

void RecordDialog::setLceShape(int m, int n, int kUser, int kCand, int b, int perUser)
{
    const int v[] = {m, n, kUser, kCand, b, perUser};
    for (int i = 0; i < 6 && i < m_lceShape.size(); ++i)
        m_lceShape[i]->setValue(v[i]);
}

void RecordDialog::setMode(Mode mode)
{
    const bool program = mode == Mode::Program;
    m_mode->setCurrentIndex(program ? 1 : 0);
    m_programBox->setVisible(program);
    m_rungBox->setVisible(!program);
    m_lceBox->setVisible(!program);
    m_stalls->setText(program ? tr("Stall-sampling pass for the kernels of the regex")
                              : tr("Stall-sampling pass (CUPTI PC sampling on the untraced build)"));
    setWindowTitle(program ? tr("Record a program") : tr("Record the kernel ladders"));
}

RecordDialog::Mode RecordDialog::mode() const { return m_mode->currentIndex() == 1 ? Mode::Program : Mode::Ladder; }
void RecordDialog::setCommandLine(const QString& commandLine) { m_commandLine->setText(commandLine); }
void RecordDialog::setWorkingDirectory(const QString& dir) { m_workDir->setText(dir); }
QString RecordDialog::workingDirectory() const { return m_workDir->text().trimmed(); }
void RecordDialog::setKernelRegex(const QString& regex) { m_kernelRegex->setText(regex); }
void RecordDialog::setStallPass(bool on) { m_stalls->setChecked(on); }

QString RecordDialog::validationError() const
{
    if (m_out->text().isEmpty())
        return tr("Choose an output file.");
    if (mode() == Mode::Ladder) {
        for (auto* cb : m_rungs)
            if (cb->isChecked())
                return {};
        if (!m_lceDriver.isEmpty())
            for (auto* cb : m_lceRungs)
                if (cb->isChecked())
                    return {};
        return tr("Choose at least one rung.");
    }
    if (QProcess::splitCommand(m_commandLine->text()).isEmpty())
        return tr("Enter the command line of the program to record.");
    const QString wd = workingDirectory();
    if (!wd.isEmpty() && !QFileInfo(wd).isDir())
        return tr("The working directory %1 does not exist.").arg(wd);
    const QString re = m_kernelRegex->text().trimmed();
    if (!re.isEmpty() && !QRegularExpression(re).isValid())
        return tr("The kernel regex is not valid: %1").arg(QRegularExpression(re).errorString());
    return {};
}

RecordDialog::~RecordDialog()
{
    if (m_proc && m_proc->state() != QProcess::NotRunning) {
        m_proc->terminate();
        if (!m_proc->waitForFinished(3000))
            m_proc->kill();
    }
}

int RecordDialog::progressValue() const
{
    return m_progress->value();
}

QString RecordDialog::statusText() const
{
    return m_status->text();
}

QString RecordDialog::logText() const
{
    return m_log->toPlainText();
}

QString RecordDialog::outputFile() const
{
    return m_out->text();
}

QStringList RecordDialog::arguments() const
{
    QStringList a;
    if (mode() == Mode::Program) {
        // warpstage-record [options] -o FILE -- PROGRAM [ARGS...] (docs/recording.md, "Record your program").
        // The recorder starts in the working directory: the output path is made absolute first.
        a << QStringLiteral("-o") << QFileInfo(m_out->text()).absoluteFilePath();
        const QString re = m_kernelRegex->text().trimmed();
        if (!re.isEmpty())
            a << QStringLiteral("--kernels") << re;
        if (!m_stalls->isChecked())
            a << QStringLiteral("--no-stalls");
        a << QStringLiteral("--progress-json") << QStringLiteral("--");
        a << QProcess::splitCommand(m_commandLine->text());
        return a;
    }
    QStringList rungs, lce;
    for (auto* cb : m_rungs)
        if (cb->isChecked())
            rungs << cb->property("rung").toString();
    if (!m_lceDriver.isEmpty())  // (a missing driver: the group is disabled, its ticks are ignored)
        for (auto* cb : m_lceRungs)
            if (cb->isChecked())
                lce << QStringLiteral("lce:%1").arg(cb->property("lceRung").toInt());
    // options of warpstage-record (docs/recording.md): "all" = every GEMM rung; "lce:all" = every lce rung
    QStringList list;
    if (!rungs.isEmpty())
        list << (rungs.size() == m_rungs.size() ? QStringList{QStringLiteral("all")} : rungs);
    if (!lce.isEmpty())
        list << (lce.size() == m_lceRungs.size() ? QStringList{QStringLiteral("lce:all")} : lce);
    a << QStringLiteral("--output") << m_out->text();
    a << QStringLiteral("--rungs") << list.join(QLatin1Char(','));
    if (!rungs.isEmpty())
        a << QStringLiteral("--shape") << QStringLiteral("%1x%2x%3").arg(m_m->value()).arg(m_n->value()).arg(m_k->value());
    if (!lce.isEmpty()) {
        QStringList dims;
        for (auto* sb : m_lceShape)
            dims << QString::number(sb->value());
        a << QStringLiteral("--lce-shape") << dims.join(QLatin1Char('x'));
        if (m_lceShuffled->isChecked())
            a << QStringLiteral("--lce-shuffled");
        a << QStringLiteral("--lce-program") << m_lceDriver;
    }
    if (!m_stalls->isChecked())
        a << QStringLiteral("--no-stalls");
    a << QStringLiteral("--progress-json");
    return a;
}

void RecordDialog::setRunning(bool running)
{
    m_startButton->setEnabled(!running);
    if (QPushButton* c = m_buttons->button(QDialogButtonBox::Cancel))
        c->setText(running ? tr("Stop") : tr("Close"));
    for (auto* cb : m_rungs)
        cb->setEnabled(!running);
    m_m->setEnabled(!running);
    m_n->setEnabled(!running);
    m_k->setEnabled(!running);
    m_lceBox->setEnabled(!running);
    m_stalls->setEnabled(!running);
    m_out->setEnabled(!running);
    m_mode->setEnabled(!running);
    m_programBox->setEnabled(!running);
}

void RecordDialog::start()
{
    if (m_program.isEmpty()) {
        m_status->setText(tr("Cannot record: %1").arg(recordUnavailableReason()));
        return;
    }
    if (const QString why = validationError(); !why.isEmpty()) {
        m_status->setText(why);
        return;
    }
    m_cancelled = false;
    m_buffer.clear();
    m_log->clear();
    m_progress->setValue(0);
    m_proc = new QProcess(this);
    m_proc->setProcessChannelMode(QProcess::SeparateChannels);
    if (mode() == Mode::Program && !workingDirectory().isEmpty())
        m_proc->setWorkingDirectory(workingDirectory());
    connect(m_proc, &QProcess::readyReadStandardOutput, this, &RecordDialog::onReadyRead);
    connect(m_proc, &QProcess::readyReadStandardError, this, [this] {
        m_log->appendPlainText(QString::fromUtf8(m_proc->readAllStandardError()).trimmed());
    });
    connect(m_proc, &QProcess::finished, this, &RecordDialog::onFinished);
    connect(m_proc, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) {
            m_status->setText(tr("Could not start %1: %2").arg(m_program, m_proc->errorString()));
            setRunning(false);
        }
    });
    m_log->appendPlainText(QStringLiteral("$ %1 %2").arg(m_program, arguments().join(QLatin1Char(' '))));
    setRunning(true);
    m_status->setText(tr("Recording…"));
    m_proc->start(m_program, arguments());
}

void RecordDialog::onReadyRead()
{
    m_buffer += m_proc->readAllStandardOutput();
    int nl;
    while ((nl = m_buffer.indexOf('\n')) >= 0) {
        const QByteArray line = m_buffer.left(nl);
        m_buffer.remove(0, nl + 1);
        if (line.trimmed().isEmpty())
            continue;
        const RecordProgress p = parseProgressLine(line);
        if (p.percent >= 0)
            m_progress->setValue(int(p.percent));
        QString s;
        if (!p.rung.isEmpty())
            s += p.rung + QStringLiteral(" · ");
        if (!p.pass.isEmpty())
            s += p.pass + QStringLiteral(" · ");
        s += p.message;
        m_status->setText(s);
        m_log->appendPlainText(s);
    }
}

void RecordDialog::onFinished(int code, QProcess::ExitStatus status)
{
    setRunning(false);
    m_proc->deleteLater();
    m_proc = nullptr;
    if (m_cancelled) {
        m_status->setText(tr("Cancelled. Runs committed before the cancel are intact in %1.").arg(m_out->text()));
        return;
    }
    // 6: finished, but at least one run is stored FAILED; 7: a program's run is stored INCOMPLETE (it
    // crashed or was stopped); 10: rungs that cannot take the shape were skipped, the others recorded: all
    // still worth opening
    if (status != QProcess::NormalExit || (code != 0 && code != 6 && code != 7 && code != 10)) {
        m_status->setText(tr("warpstage-record failed (exit code %1). See the log above.").arg(code));
        return;
    }
    m_progress->setValue(100);
    m_status->setText(code == 6   ? tr("Done; at least one run is stored as FAILED (see its notes).")
                      : code == 7 ? tr("Done; the program's run is stored INCOMPLETE (it crashed or was stopped).")
                      : code == 10 ? tr("Done; rungs that cannot take the shape were skipped (the log names them and says why).")
                                  : tr("Done."));
    emit recorded(mode() == Mode::Program ? QFileInfo(m_out->text()).absoluteFilePath() : m_out->text());
    accept();
}

void RecordDialog::cancel()
{
    if (!m_proc)
        return;
    m_cancelled = true;
    m_status->setText(tr("Cancelling…"));
    m_proc->terminate();  // SIGTERM: the recorder rolls back the run in progress
    QProcess* p = m_proc;
    QTimer::singleShot(5000, p, [p] {
        if (p->state() != QProcess::NotRunning)
            p->kill();
    });
}

void RecordDialog::reject()
{
    if (m_proc) {
        cancel();
        return;
    }
    QDialog::reject();
}

}  // namespace ws::ui
