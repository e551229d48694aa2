// Temporary skeleton; the real implementation follows.
#include "figureexport.h"

bool exportFigure(const FigureOptions &opt, QString *error)
{
    if (error)
        *error = opt.file + QStringLiteral(": figure export is not implemented yet");
    return false;
}

bool exportFigure(std::shared_ptr<const ws::KernelTrace>, const FigureOptions &opt, QString *error)
{
    if (error)
        *error = opt.out + QStringLiteral(": figure export is not implemented yet");
    return false;
}
