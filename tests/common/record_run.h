// Runs a program as a child process for the command-line tests: warpstage-record (tst_record_cli, tst_lce_record)
// and warpstage (tst_cli_export, with its own environment).
#pragma once

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace ws::testing {

struct RecordRun {
    int code = -1;  // -1: it did not finish within 120 s, or it crashed
    QString out, err;
};

// env: the child's whole environment (default: this process's).
inline RecordRun runRecordExe(const QString& exe, const QStringList& args,
                              const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
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
