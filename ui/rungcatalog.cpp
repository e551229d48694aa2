#include "rungcatalog.h"

#include <QFile>
#include <QRegularExpression>

static void wsInitResourcesOnce()
{
    static bool done = false;
    if (done)
        return;
    done = true;
    Q_INIT_RESOURCE(warpstage);
    Q_INIT_RESOURCE(warpstage_kernels);
}

namespace ws::ui {

void initResources()
{
    wsInitResourcesOnce();
}

static QString readResource(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll());
}

const QVector<RungText>& rungCatalog()
{
    static const QVector<RungText> catalog = [] {
        initResources();
        const QStringList names = {QStringLiteral("sync"),          QStringLiteral("tma_sync"),
                                   QStringLiteral("multistage"),    QStringLiteral("warp_specialized"),
                                   QStringLiteral("cooperative"),   QStringLiteral("pingpong"),
                                   QStringLiteral("streamk")};
        QVector<RungText> out;
        int level = 1;
        for (const QString& n : names) {
            RungText r;
            r.name = n;
            r.level = level++;
            r.markdown = readResource(QStringLiteral(":/teaching/%1.md").arg(n));
            const auto m = QRegularExpression(QStringLiteral("^#\\s+(.+)$"),
                                              QRegularExpression::MultilineOption)
                               .match(r.markdown);
            r.title = m.hasMatch() ? m.captured(1).trimmed() : n;
            out.push_back(r);
        }
        return out;
    }();
    return catalog;
}

static RungText readRungText(const QString& name, int level)
{
    RungText r;
    r.name = name;
    r.level = level;
    r.markdown = readResource(QStringLiteral(":/teaching/%1.md").arg(name));
    const auto m = QRegularExpression(QStringLiteral("^#\\s+(.+)$"), QRegularExpression::MultilineOption).match(r.markdown);
    r.title = m.hasMatch() ? m.captured(1).trimmed() : name;
    return r;
}

const QVector<RungText>& lceCatalog()
{
    static const QVector<RungText> catalog = [] {
        initResources();
        QVector<RungText> out;
        int level = 0;
        for (const char* n : {"lce_original", "lce_decomposed", "lce_padded", "lce_fused_epilogue", "lce_persistent"})
            out.push_back(readRungText(QString::fromLatin1(n), level++));
        return out;
    }();
    return catalog;
}

const QVector<RungText>* catalogOf(const QString& name)
{
    for (const auto* c : {&rungCatalog(), &lceCatalog()})
        for (const RungText& r : *c)
            if (r.name == name)
                return c;
    return nullptr;
}

const RungText* findRungText(const QString& name)
{
    for (const auto* c : {&rungCatalog(), &lceCatalog()})
        for (const RungText& r : *c)
            if (r.name == name)
                return &r;
    return nullptr;
}

int rungIndex(const QString& name)
{
    const auto* c = catalogOf(name);
    for (int i = 0; c && i < c->size(); ++i)
        if ((*c)[i].name == name)
            return i;
    return -1;
}

QString rungSourcePath(const QString& rung)
{
    initResources();
    const QString p = QStringLiteral(":/kernels/%1.cu").arg(rung);
    return QFile::exists(p) ? p : QString();
}

QString rungSource(const QString& rung)
{
    const QString p = rungSourcePath(rung);
    return p.isEmpty() ? QString() : readResource(p);
}

QString kernelSourceText(const QString& fileName)
{
    initResources();
    if (fileName.isEmpty() || fileName.contains(QLatin1Char('/')))
        return {};
    const QString p = QStringLiteral(":/kernels/%1").arg(fileName);
    return QFile::exists(p) ? readResource(p) : QString();
}

}  // namespace ws::ui
