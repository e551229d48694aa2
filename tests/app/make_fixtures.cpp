// Writes the files the headless CLI tests run on, into the directory argv[1]:
//   synthetic.warpstage  a small synthetic ladder (RunInfo::synthetic = true)
//   text.warpstage       plain text (not SQLite)
//   empty.warpstage      zero bytes
//   truncated.warpstage  the first 1000 bytes of synthetic.warpstage
//   other.sqlite         an SQLite database that is not a Warpstage trace
//   program.warpstage    a synthetic program run (ws::writeSyntheticProgram: 3 steps of 200 launches)
#include "tracedocument.h"

#include <warpstage/store.h>
#include <warpstage/synthetic.h>

#include <sqlite3.h>

#include <QCoreApplication>
#include <QDir>
#include <QFile>

#include <cstdio>

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_fixtures DIR\n");
        return 2;
    }
    QDir dir(QString::fromLocal8Bit(argv[1]));
    dir.mkpath(QStringLiteral("."));
    for (const char* n : {"synthetic.warpstage", "text.warpstage", "empty.warpstage", "truncated.warpstage", "other.sqlite", "program.warpstage"})
        dir.remove(QString::fromLatin1(n));
    QString err;
    const QString synth = dir.filePath(QStringLiteral("synthetic.warpstage"));
    if (!ws::ui::writeSyntheticLadder(synth, &err, 8, 8)) {
        std::fprintf(stderr, "make_fixtures: %s\n", qPrintable(err));
        return 1;
    }
    try {
        ws::TraceStore ps = ws::TraceStore::openForWriting(dir.filePath(QStringLiteral("program.warpstage")).toStdString());
        ws::SyntheticProgramParams pp;
        pp.steps = 3;
        pp.launchesPerStep = 200;
        ws::writeSyntheticProgram(ps, pp);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "make_fixtures: program.warpstage: %s\n", e.what());
        return 1;
    }
    auto write = [&](const char* name, const QByteArray& bytes) {
        QFile f(dir.filePath(QString::fromLatin1(name)));
        return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
    };
    QFile s(synth);
    if (!s.open(QIODevice::ReadOnly))
        return 1;
    const QByteArray head = s.read(1000);
    if (!write("text.warpstage", "this is a text file, not a trace\n") || !write("empty.warpstage", {}) ||
        !write("truncated.warpstage", head))
        return 1;
    sqlite3* db = nullptr;
    if (sqlite3_open(qPrintable(dir.filePath(QStringLiteral("other.sqlite"))), &db) != SQLITE_OK)
        return 1;
    sqlite3_exec(db, "CREATE TABLE shopping(item TEXT); INSERT INTO shopping VALUES('milk');", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    return 0;
}
