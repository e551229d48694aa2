// The ladder's built-in sources: lookup and the stage map from them. See warpstage/ladder_sources.h.
#include "warpstage/ladder_sources.h"

#include "warpstage/sink_reader.h"  // sha256Hex

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

namespace ws::ladder {

namespace {

std::string dirOf(std::string_view p)
{
    const auto slash = p.rfind('/');
    return slash == std::string_view::npos ? std::string() : std::string(p.substr(0, slash));
}

bool readFile(const std::string& p, std::string& text)
{
    struct stat st{};
    if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    std::ifstream f(p, std::ios::binary);
    text.assign((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return f.good() || f.eof();
}

SourceFile sourceFile(std::string path, std::string text)
{
    SourceFile f;
    f.path = std::move(path);
    f.sha256 = sink::sha256Hex(text);
    f.text = std::move(text);
    return f;
}

}  // namespace

const EmbeddedSource* embeddedSource(std::string_view path)
{
    const auto& all = embeddedSources();
    for (const auto& e : all)
        if (e.path == path) return &e;
    return nullptr;
}

LadderSources ladderSources(const std::string& rungPath, const std::string& sourceDir)
{
    LadderSources out;
    const std::string dir = dirOf(rungPath);
    if (!sourceDir.empty()) {
        out.origin = sourceDir;
        std::string text;
        if (!readFile(sourceDir + "/" + rungPath, text)) {
            out.problem = "source " + rungPath + " not found in " + sourceDir;
            return out;
        }
        out.files.push_back(sourceFile(rungPath, std::move(text)));
        // The helpers the built-in set knows in that folder, read from the checkout instead.
        for (const auto& e : embeddedSources())
            if (dirOf(e.path) == dir && e.path.ends_with(".cuh") && readFile(sourceDir + "/" + std::string(e.path), text))
                out.files.push_back(sourceFile(std::string(e.path), std::move(text)));
        return out;
    }
    out.origin = "built in";
    const EmbeddedSource* rung = embeddedSource(rungPath);
    if (!rung) {
        out.problem = "source " + rungPath + " is not built into this recorder";
        return out;
    }
    out.files.push_back(sourceFile(rungPath, std::string(rung->text)));
    for (const auto& e : embeddedSources())
        if (dirOf(e.path) == dir && e.path.ends_with(".cuh")) out.files.push_back(sourceFile(std::string(e.path), std::string(e.text)));
    return out;
}

decode::StageMap ladderStageMap(const LadderSources& src)
{
    if (src.files.empty()) return decode::StageMap::fromSource({}, {});
    decode::StageMap map = decode::StageMap::fromSource(src.files.front().path, src.files.front().text);
    for (std::size_t i = 1; i < src.files.size(); ++i) map.addHelperSource(src.files[i].path, src.files[i].text);
    return map;
}

}  // namespace ws::ladder
