// `warpstage query FILE "SQL" [--csv|--json]`: one read-only SQL statement on a trace, with the virtual
// tables intervals, loads and chunk_metrics (docs/schema.md, "Virtual tables"). The work is ws::runQuery
// (core, Qt-free); this file parses the command line and maps failures to exit codes.
#include "cli.h"

#include "warpstage/query.h"

#include <cstdio>
#include <iostream>
#include <string>

namespace ws::ui {

namespace {


int queryUsage(const std::string& s)
{
    cliError(s);
    std::fprintf(stderr, "Try 'warpstage --help'.\n");
    return ExitUsage;
}

}  // namespace

int runQueryCommand(const QStringList& args)
{
    QString file, sql;
    int positional = 0;
    QueryFormat format = QueryFormat::Table;
    QString formatOption;
    for (const QString& a : args) {
        if (a == QLatin1String("--csv") || a == QLatin1String("--json") || a == QLatin1String("--table")) {
            if (!formatOption.isEmpty() && formatOption != a)
                return queryUsage(("query: " + formatOption + " and " + a + " cannot be combined").toStdString());
            formatOption = a;
            format = a == QLatin1String("--csv") ? QueryFormat::Csv
                   : a == QLatin1String("--json") ? QueryFormat::Json : QueryFormat::Table;
        } else if (a.startsWith(QLatin1String("--")) && positional < 2) {
            return queryUsage(("query: unknown option '" + a + "'").toStdString());
        } else if (positional == 0) {
            file = a;
            ++positional;
        } else if (positional == 1) {
            sql = a;
            ++positional;
        } else {
            return queryUsage(("query: more than one SQL argument given ('" + a
                               + "'); quote the statement as one argument").toStdString());
        }
    }
    if (positional == 0)
        return queryUsage("query: missing FILE");
    if (positional == 1)
        return queryUsage("query: missing SQL (e.g. warpstage query FILE \"SELECT * FROM runs\")");
    try {
        std::ios::sync_with_stdio(false);
        ws::runQuery(file.toStdString(), sql.toStdString(), format, std::cout);
        std::cout.flush();
        return ExitOk;
    } catch (const ws::QueryError& e) {
        std::cout.flush();
        cliError(std::string("query: ") + e.what());
        return ExitFailure;
    } catch (const ws::NeedsMigrationError& e) {
        cliError(e.what());
        cliError(migrateHint(QString::fromStdString(e.path())).toStdString());
        return ExitNeedsMigration;
    } catch (const ws::StoreError& e) {
        cliError(e.what());
        return ExitBadFile;
    } catch (const std::exception& e) {
        cliError(file.toStdString() + ": " + e.what());
        return ExitBadFile;
    }
}

}  // namespace ws::ui
