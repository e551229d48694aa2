#include "warpstage/runfamily.h"

#include "warpstage/program.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <regex>
#include <sstream>

namespace ws {

namespace {

constexpr std::string_view kTagStart = "[ws-rung ";

bool parseDouble(const std::string& s, double* out)
{
    if (s.empty())
        return false;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (*end || !std::isfinite(v) || v < 0)
        return false;
    *out = v;
    return true;
}

bool parseInt(const std::string& s, int* out)
{
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
        return false;
    *out = std::atoi(s.c_str());
    return true;
}

std::string baseName(const std::string& p)
{
    const auto s = p.find_last_of('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}

}  // namespace

std::string formatRungTag(const RungTag& t)
{
    char num[64];
    std::ostringstream o;
    o << kTagStart << "family=" << t.family << " rung=" << t.rung << " name=" << t.rungName;
    std::snprintf(num, sizeof num, " flops=%.6g bytes=%.6g compulsory=%.6g", t.usefulFlops, t.bytesMoved, t.compulsoryBytes);
    o << num << " warmup=" << t.warmup << " iters=" << t.iterations;
    if (!t.shape.empty())
        o << " shape=" << t.shape;
    if (!t.setupKernels.empty()) {
        o << " setup=";
        for (std::size_t i = 0; i < t.setupKernels.size(); ++i)
            o << (i ? "," : "") << t.setupKernels[i];
    }
    o << "]";
    return o.str();
}

std::optional<RungTag> parseRungTag(std::string_view notes)
{
    const auto b = notes.find(kTagStart);
    if (b == std::string_view::npos)
        return std::nullopt;
    const auto e = notes.find(']', b);
    if (e == std::string_view::npos)
        return std::nullopt;
    std::istringstream in(std::string(notes.substr(b + kTagStart.size(), e - b - kTagStart.size())));
    RungTag t;
    std::string tok;
    bool haveRung = false, haveFlops = false, haveBytes = false;
    while (in >> tok) {
        const auto eq = tok.find('=');
        if (eq == std::string::npos)
            return std::nullopt;
        const std::string k = tok.substr(0, eq), v = tok.substr(eq + 1);
        bool ok = true;
        if (k == "family") ok = !(t.family = v).empty();
        else if (k == "rung") ok = haveRung = parseInt(v, &t.rung);
        else if (k == "name") t.rungName = v;
        else if (k == "flops") ok = haveFlops = parseDouble(v, &t.usefulFlops);
        else if (k == "bytes") ok = haveBytes = parseDouble(v, &t.bytesMoved);
        else if (k == "compulsory") ok = parseDouble(v, &t.compulsoryBytes);
        else if (k == "warmup") ok = parseInt(v, &t.warmup);
        else if (k == "iters") ok = parseInt(v, &t.iterations);
        else if (k == "shape") t.shape = v;
        else if (k == "setup") {
            std::stringstream ss(v);
            std::string s;
            while (std::getline(ss, s, ','))
                if (!s.empty())
                    t.setupKernels.push_back(s);
        }  // unknown keys: from a newer recorder, ignored
        if (!ok)
            return std::nullopt;
    }
    if (t.family.empty() || !haveRung || !haveFlops || !haveBytes)
        return std::nullopt;
    return t;
}

RunFamilyInfo familyOf(const RunInfo& info)
{
    RunFamilyInfo f;
    if (const auto tag = parseRungTag(info.notes); tag && tag->family == "lce") {
        f.family = RunFamily::Lce;
        f.rung = tag->rung;
        f.rungName = tag->rungName;
        return f;
    }
    if (info.kind == RunKind::Ladder) {
        f.family = RunFamily::GemmLadder;
        f.rungName = info.variant;
        return f;
    }
    // A file recorded before the tag existed: `warpstage-record -- lce --rung N ...`.
    if (baseName(info.program) == "lce" || info.variant == "lce") {
        static const std::regex rungArg(R"((^|\s)--rung\s+([0-4])(\s|$))");
        std::smatch m;
        if (std::regex_search(info.commandLine, m, rungArg)) {
            f.family = RunFamily::Lce;
            f.rung = m[2].str()[0] - '0';
            static const char* names[] = {"original", "decomposed", "padded", "fused-epilogue", "persistent"};
            f.rungName = names[f.rung];
            return f;
        }
    }
    f.family = RunFamily::Program;
    return f;
}

std::string_view familyTitle(RunFamily family)
{
    switch (family) {
    case RunFamily::GemmLadder: return "GEMM ladder";
    case RunFamily::Lce: return "Linear compression (lce)";
    case RunFamily::Program: return "Programs";
    }
    return "?";
}

std::string_view familyKey(RunFamily family)
{
    switch (family) {
    case RunFamily::GemmLadder: return "gemm";
    case RunFamily::Lce: return "lce";
    case RunFamily::Program: return "program";
    }
    return "?";
}

std::vector<std::pair<TimeNs, TimeNs>> rungIterations(const std::vector<KernelLaunch>& launches, const RungTag& tag)
{
    const int groups = tag.warmup + tag.iterations;
    if (groups <= 0 || tag.iterations <= 0)
        return {};
    std::vector<const KernelLaunch*> rung;
    for (const KernelLaunch& k : launches) {
        const std::string fam = kernelFamily(k.name);
        bool setup = false;
        for (const auto& s : tag.setupKernels)
            setup = setup || fam == s || fam.ends_with("::" + s);
        if (!setup)
            rung.push_back(&k);
    }
    if (rung.empty() || rung.size() % std::size_t(groups) != 0)
        return {};
    std::stable_sort(rung.begin(), rung.end(), [](const KernelLaunch* a, const KernelLaunch* b) { return a->start < b->start; });
    const std::size_t per = rung.size() / std::size_t(groups);
    std::vector<std::pair<TimeNs, TimeNs>> out;
    for (int g = 0; g < groups; ++g) {
        TimeNs s = std::numeric_limits<TimeNs>::max(), e = std::numeric_limits<TimeNs>::min();
        for (std::size_t i = std::size_t(g) * per; i < std::size_t(g + 1) * per; ++i) {
            s = std::min(s, rung[i]->start);
            e = std::max(e, rung[i]->end);
        }
        out.emplace_back(s, e);
    }
    return out;
}

std::vector<double> rungIterationNs(const std::vector<KernelLaunch>& launches, const RungTag& tag)
{
    const auto it = rungIterations(launches, tag);
    std::vector<double> out;
    for (std::size_t g = std::size_t(tag.warmup); g < it.size(); ++g)
        out.push_back(double(it[g].second - it[g].first));
    return out;
}

double medianOf(std::vector<double> v)
{
    if (v.empty())
        return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

RooflinePoint roofline(double flops, double bytes, double seconds, const RooflineLimits& l)
{
    RooflinePoint p;
    p.seconds = seconds;
    if (!(seconds > 0))
        return p;
    p.tflops = flops / seconds * 1e-12;
    p.tbps = bytes / seconds * 1e-12;
    p.intensity = bytes > 0 ? flops / bytes : std::numeric_limits<double>::infinity();
    p.ridge = l.flopsPerSecond / l.bytesPerSecond;
    p.computeBound = p.intensity >= p.ridge;
    p.roofTflops = std::min(l.flopsPerSecond, p.intensity * l.bytesPerSecond) * 1e-12;
    p.fractionOfRoof = p.roofTflops > 0 ? p.tflops / p.roofTflops : 0;
    p.boundSeconds = std::max(flops / l.flopsPerSecond, bytes / l.bytesPerSecond);
    return p;
}

std::string rooflineText(const RooflinePoint& p, const RooflineLimits& l, int iterations)
{
    char buf[400];
    const double bytes = p.tbps * 1e12 * p.seconds;
    std::snprintf(buf, sizeof buf,
                  "%.4f ms per iteration%s: %.1f TFLOP/s, %.0f MB moved (%.2f TB/s); intensity %.0f FLOP/B, ridge %.0f: "
                  "%s-bound, %.1f %% of the %.0f TFLOP/s roof (the limit allows %.3f ms)",
                  p.seconds * 1e3, iterations > 0 ? (" (median of " + std::to_string(iterations) + ")").c_str() : "", p.tflops,
                  bytes * 1e-6, p.tbps, p.intensity, p.ridge, p.computeBound ? "compute" : "memory", p.fractionOfRoof * 100,
                  p.roofTflops, p.boundSeconds * 1e3);
    (void)l;
    return buf;
}

RungReport rungReport(const RunInfo& run, const std::vector<KernelLaunch>& launches, const RooflineLimits& limits)
{
    RungReport r;
    const auto tag = parseRungTag(run.notes);
    if (!tag)
        return r;
    r.tagged = true;
    r.tag = *tag;
    const std::string head = tag->family + " rung " + std::to_string(tag->rung) + " (" + tag->rungName + ")";
    r.iterationNs = rungIterationNs(launches, *tag);
    if (r.iterationNs.empty()) {
        r.text = head + ": the launches do not split into the " + std::to_string(tag->warmup) + " + " + std::to_string(tag->iterations)
                 + " iterations the driver ran; no roofline";
        return r;
    }
    r.ok = true;
    std::size_t setup = 0;
    for (const KernelLaunch& k : launches) {
        const std::string fam = kernelFamily(k.name);
        for (const auto& s : tag->setupKernels)
            if (fam == s || fam.ends_with("::" + s)) {
                ++setup;
                break;
            }
    }
    r.launchesPerIteration = int((launches.size() - setup) / std::size_t(tag->warmup + tag->iterations));
    r.point = roofline(tag->usefulFlops, tag->bytesMoved, medianOf(r.iterationNs) * 1e-9, limits);
    r.text = head + ", " + std::to_string(r.launchesPerIteration) + (r.launchesPerIteration == 1 ? " launch" : " launches")
             + " per iteration: " + rooflineText(r.point, limits, int(r.iterationNs.size()));
    return r;
}

}  // namespace ws
