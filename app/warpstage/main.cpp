// warpstage: the viewer (GUI by default) and its headless subcommands.
// Subcommands are dispatched before any QApplication exists, so `info`,
// `--help` and `--version` never need a display; see ws::ui::runHeadless.
#include "cli.h"
#include "mainwindow.h"
#include "rungcatalog.h"

#include <QApplication>
#include <QIcon>

#include <cstdio>
#include <QFileInfo>
#include <QTimer>

int main(int argc, char** argv)
{
    if (ws::ui::isHeadlessCommand(argc, argv))
        return ws::ui::runHeadless(argc, argv);
    if (argc > 1 && argv[1][0] == '-' && argv[1][1] != '\0') {
        std::fprintf(stderr, "warpstage: unknown option '%s'\nTry 'warpstage --help'.\n", argv[1]);
        return ws::ui::ExitUsage;
    }
    if (argc > 2) {
        std::fprintf(stderr, "warpstage: the viewer opens one FILE at a time\nTry 'warpstage --help'.\n");
        return ws::ui::ExitUsage;
    }

    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Warpstage"));
    QApplication::setOrganizationName(QStringLiteral("Warpstage"));
    QApplication::setApplicationVersion(QStringLiteral(WARPSTAGE_VERSION));
    ws::ui::initResources();
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/warpstage.svg")));

    ws::ui::MainWindow w;
    w.show();
    const QString file = argc > 1 ? QString::fromLocal8Bit(argv[1]) : QString();
    QTimer::singleShot(0, &w, [&w, file] {
        if (file.isEmpty())
            w.openDefault();
        else
            w.openFile(QFileInfo(file).absoluteFilePath());
    });
    return app.exec();
}
