// warpstage: the viewer (GUI by default) and its headless subcommands.
// Subcommands are dispatched before any QApplication exists, so `info`,
// `--help` and `--version` never need a display; see ws::ui::runHeadless.
#include "cli.h"
#include "mainwindow.h"
#include "rungcatalog.h"
#include "teachingpanel.h"
#include "timelinewidget.h"
#include "whatifpanel.h"

#include <memory>
#include <QApplication>
#include <QIcon>

#include <cstdio>
#include <QFileInfo>
#include <QPixmap>
#include <QTimer>
#include <cstring>

int main(int argc, char** argv)
{
    if (ws::ui::isHeadlessCommand(argc, argv))
        return ws::ui::runHeadless(argc, argv);
    // --screenshot IMAGE [FILE]: open FILE (or the bundled sample), wait until its first
    // kernel is drawn, save a picture of the whole window and quit. Used by scripts/run.sh
    // on machines without a display (under Xvfb) and for the README's pictures.
    // With it, --rung NAME shows the first kernel of that ladder rung, and --what-if opens that rung's guided-tour
    // what-if step (What-if panel, predicted timeline, critical path) and waits for its prediction.
    QString screenshot, screenshotRung;
    bool screenshotWhatIf = false;
    std::vector<char*> args(argv, argv + argc);
    for (std::size_t i = 1; i < args.size(); ++i) {
        if (std::strcmp(args[i], "--screenshot") == 0) {
            if (i + 1 >= args.size()) {
                std::fprintf(stderr, "warpstage: --screenshot needs an IMAGE path\nTry 'warpstage --help'.\n");
                return ws::ui::ExitUsage;
            }
            screenshot = QString::fromLocal8Bit(args[i + 1]);
            args.erase(args.begin() + i, args.begin() + i + 2);
            break;
        }
    }
    for (std::size_t i = 1; !screenshot.isEmpty() && i < args.size();) {
        if (std::strcmp(args[i], "--rung") == 0) {
            if (i + 1 >= args.size()) {
                std::fprintf(stderr, "warpstage: --rung needs a rung name (sync ... pingpong)\nTry 'warpstage --help'.\n");
                return ws::ui::ExitUsage;
            }
            screenshotRung = QString::fromLocal8Bit(args[i + 1]);
            args.erase(args.begin() + i, args.begin() + i + 2);
        } else if (std::strcmp(args[i], "--what-if") == 0) {
            screenshotWhatIf = true;
            args.erase(args.begin() + i);
        } else {
            ++i;
        }
    }
    argc = int(args.size());
    args.push_back(nullptr);
    argv = args.data();

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
    if (!screenshot.isEmpty()) {
        auto save = [&w, screenshot] {
            QApplication::processEvents();
            const bool ok = w.grab().save(screenshot);
            std::fprintf(ok ? stdout : stderr, ok ? "warpstage: saved %s\n" : "warpstage: cannot write %s\n",
                         qPrintable(screenshot));
            QApplication::exit(ok ? 0 : 1);
        };
        // Save once the first kernel is shown and its level-of-detail index is ready; a program run without a
        // per-warp timeline (nothing traced) is saved once its program view is drawn.
        auto kernelSeen = std::make_shared<bool>(false);
        QObject::connect(&w, &ws::ui::MainWindow::programShown, &w, [&w, save, kernelSeen] {
            QTimer::singleShot(1500, &w, [save, kernelSeen] {
                if (!*kernelSeen)
                    save();
            });
        });
        auto saveWhenReady = [&w, save, screenshotWhatIf] {
            TimelineWidget* tl = w.timeline();
            auto whatIfThenSave = [&w, save, screenshotWhatIf] {
                if (!screenshotWhatIf)
                    return save();
                ws::ui::WhatIfPanel* panel = w.whatIfPanel();
                QObject::connect(panel, &ws::ui::WhatIfPanel::predicted, &w, [save] { QTimer::singleShot(500, save); },
                                 Qt::SingleShotConnection);
                if (!w.teachingPanel()->showWhatIf()) {
                    std::fprintf(stderr, "warpstage: --what-if: the rung has no what-if step\n");
                    QApplication::exit(1);
                }
            };
            if (tl->indexReady()) {
                QTimer::singleShot(300, &w, whatIfThenSave);
                return;
            }
            QObject::connect(tl, &TimelineWidget::indexReadyChanged, &w, [&w, whatIfThenSave](bool ready) {
                if (ready)
                    QTimer::singleShot(300, &w, whatIfThenSave);
            });
        };
        QObject::connect(&w, &ws::ui::MainWindow::kernelShown, &w, [&w, saveWhenReady, kernelSeen, screenshotRung] {
            if (*kernelSeen)
                return;
            const auto tr = w.currentTrace();
            const QString variant = tr ? QString::fromStdString(tr->launch.variant) : QString();
            if (!screenshotRung.isEmpty() && variant != screenshotRung) {
                const qint64 id = w.document()->firstKernelOfRung(screenshotRung);
                if (id <= 0) {
                    std::fprintf(stderr, "warpstage: --rung: no kernel of rung '%s' in the file\n", qPrintable(screenshotRung));
                    QApplication::exit(3);
                    return;
                }
                w.selectKernel(id);
                return;
            }
            *kernelSeen = true;
            saveWhenReady();
        });
        QObject::connect(&w, &ws::ui::MainWindow::fileOpenFailed, &w, [](const QString&, const QString& msg) {
            std::fprintf(stderr, "warpstage: %s\n", qPrintable(msg));
            QApplication::exit(3);
        });
        QTimer::singleShot(60000, &w, [] {
            std::fprintf(stderr, "warpstage: --screenshot: nothing was drawn within 60 s\n");
            QApplication::exit(1);
        });
    }
    return app.exec();
}
