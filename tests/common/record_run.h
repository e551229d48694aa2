// Runs warpstage-record as a child process for the recorder's command-line tests (tst_record_cli, tst_lce_record).
#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

namespace ws::testing {

struct RecordRun {
    int code = -1;  // -1: it did not finish within 120 s, or it crashed
    QString out, err;
};

inline RecordRun runRecordExe(const QString& exe, const QStringList& args)
{
    QProcess p;
    p.start(exe, args);
    RecordRun r;
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

}  // namespace ws::testing
