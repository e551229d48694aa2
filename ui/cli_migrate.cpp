// `warpstage migrate FILE --out COPY`: a migrated copy of an older-schema trace, without the GUI (the other
// headless commands refuse such a file with exit 4 and point here). The source is opened read-only and never
// changed; COPY must not exist (TraceStore::migrateCopy, docs/schema.md "File identity and versions").
#include "cli.h"

#include "warpstage/store.h"

#include <QFileInfo>

#include <cstdio>
#include <string>

namespace ws::ui {

namespace {

int usage(const QString& s)
{
    cliError(s);
    std::fputs("usage: warpstage migrate FILE --out COPY.wstrace   (warpstage --help for more)\n", stderr);
    return ExitUsage;
}

}  // namespace

int runMigrateCommand(const QStringList& args)
{
    QString file, out;
    for (int i = 0; i < args.size(); ++i) {
        const QString a = args[i];
        if (a == QLatin1String("--out") || a == QLatin1String("-o")) {
            if (i + 1 >= args.size())
                return usage(QStringLiteral("migrate: %1 needs a file name").arg(a));
            out = args[++i];
        } else if (a.startsWith(QLatin1Char('-'))) {
            return usage(QStringLiteral("migrate: unknown option '%1'").arg(a));
        } else if (file.isEmpty()) {
            file = a;
        } else {
            return usage(QStringLiteral("migrate: one FILE only ('%1' is a second)").arg(a));
        }
    }
    if (file.isEmpty())
        return usage(QStringLiteral("migrate: missing FILE"));
    if (out.isEmpty())
        return usage(QStringLiteral("migrate: missing --out COPY (the file itself is never rewritten here)"));
    if (QFileInfo::exists(out)) {
        cliError(QStringLiteral("%1: already exists (migrate writes a new file; remove it or choose another name)").arg(out));
        return ExitFailure;
    }
    try {
        const ws::FileCheck check = ws::TraceStore::checkFile(file.toStdString());
        if (!check.needsMigration) {
            cliError(QStringLiteral("%1: already at the current schema (%2); nothing to migrate").arg(file).arg(ws::kSchemaVersion));
            return ExitFailure;
        }
        const ws::MigrationResult r = ws::TraceStore::migrateCopy(file.toStdString(), out.toStdString());
        const std::string packed = r.intervalsMigrated > 0 ? ", " + std::to_string(r.intervalsMigrated) + " intervals packed" : std::string();
        std::printf("%s: schema %d -> %d%s, written to %s\n", file.toLocal8Bit().constData(), r.fromVersion, r.toVersion,
                    packed.c_str(), out.toLocal8Bit().constData());
        return ExitOk;
    } catch (const ws::StoreError& e) {
        cliError(QString::fromStdString(e.what()));
        return ExitBadFile;
    } catch (const std::exception& e) {
        cliError(QStringLiteral("%1: %2").arg(file, QString::fromStdString(e.what())));
        return ExitFailure;
    }
}

}  // namespace ws::ui
