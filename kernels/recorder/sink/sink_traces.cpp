// Traced launches of users' instrumented kernels (<warpstage/trace.cuh>, issue 10): the buffers the
// injection library streamed into the sink (kernels/recorder/inject/trace_buffers.cpp) decoded into
// the KernelRecords of a program run. See warpstage/sink_reader.h (attachTraces) and
// docs/your-kernels.md. Qt-free, CUDA-free.
#include "warpstage/decode.h"
#include "warpstage/sink_reader.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sys/stat.h>

namespace ws::sink {

// SHA-256 (FIPS 180-4) of a byte string, as lowercase hex: SourceFile::sha256.
std::string sha256Hex(const std::string& msg)
{
    static const std::uint32_t K[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
        0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
        0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
        0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
        0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
        0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::string m = msg;
    const std::uint64_t bits = std::uint64_t(msg.size()) * 8;
    m.push_back(char(0x80));
    while (m.size() % 64 != 56) m.push_back('\0');
    for (int i = 7; i >= 0; --i) m.push_back(char((bits >> (8 * i)) & 0xff));
    auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
    for (std::size_t blk = 0; blk < m.size(); blk += 64) {
        std::uint32_t w[64];
        for (int i = 0; i < 16; ++i)
            w[i] = (std::uint32_t(std::uint8_t(m[blk + 4 * i])) << 24) | (std::uint32_t(std::uint8_t(m[blk + 4 * i + 1])) << 16)
                | (std::uint32_t(std::uint8_t(m[blk + 4 * i + 2])) << 8) | std::uint32_t(std::uint8_t(m[blk + 4 * i + 3]));
        for (int i = 16; i < 64; ++i) {
            const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int i = 0; i < 64; ++i) {
            const std::uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
            const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
    }
    char out[65];
    for (int i = 0; i < 8; ++i) std::snprintf(out + 8 * i, 9, "%08x", h[i]);
    return std::string(out, 64);
}

namespace {

constexpr std::uint64_t kMaxSourceBytes = 2u << 20;  // larger files are named, not stored

bool isFile(const std::string& p)
{
    struct stat st{};
    return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dirOf(const std::string& p)
{
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? std::string() : slash == 0 ? std::string("/") : p.substr(0, slash);
}

}  // namespace

std::string findSource(const std::string& path, const SinkProcess& s, const std::vector<std::string>& sourceDirs, int* tried)
{
    int n = 0;
    auto hit = [&](const std::string& p) { ++n; return isFile(p); };
    std::string found;
    if (path.empty()) {
    } else if (path[0] == '/') {
        if (hit(path)) found = path;
    } else {
        std::vector<std::string> bases;
        if (!s.cwd.empty()) bases.push_back(s.cwd);
        for (std::string d : {dirOf(s.exe), s.argv.empty() ? std::string() : dirOf(s.argv[0])}) {
            if (!d.empty() && d[0] != '/' && !s.cwd.empty()) d = s.cwd + "/" + d;
            for (int up = 0; up <= 4 && !d.empty(); ++up) {
                bases.push_back(d);
                d = d == "/" ? std::string() : dirOf(d);
            }
        }
        for (const auto& b : bases)
            if (hit(b + "/" + path)) { found = b + "/" + path; break; }
    }
    if (found.empty() && !path.empty()) {
        std::string rel = path;
        while (rel.rfind("../", 0) == 0 || rel.rfind("./", 0) == 0) rel = rel.substr(rel[1] == '.' ? 3 : 2);
        while (!rel.empty() && rel[0] == '/') rel = rel.substr(1);
        const auto slash = path.rfind('/');
        const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
        for (const auto& d : sourceDirs) {
            if (hit(d + "/" + rel)) { found = d + "/" + rel; break; }
            if (hit(d + "/" + name)) { found = d + "/" + name; break; }
        }
    }
    if (tried) *tried = n;
    return found;
}

// A source file found by findSource(), read (at most kMaxSourceBytes).
bool readSource(const std::string& path, const SinkProcess& s, const std::vector<std::string>& dirs, std::string& text,
                std::string& why)
{
    int tried = 0;
    const std::string full = findSource(path, s, dirs, &tried);
    if (full.empty()) {
        why = "source " + path + " not found (looked in " + std::to_string(tried)
            + " places: the process's folder, its executable's folders, --source-dir)";
        return false;
    }
    struct stat st{};
    ::stat(full.c_str(), &st);
    if (std::uint64_t(st.st_size) > kMaxSourceBytes) {
        why = "source " + path + " not stored (" + std::to_string(st.st_size) + " bytes, more than " + std::to_string(kMaxSourceBytes) + ")";
        return false;
    }
    std::ifstream f(full, std::ios::binary);
    text.assign((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (!f.good() && !f.eof()) {
        why = "source " + path + " unreadable";
        return false;
    }
    return true;
}

int attachTraces(const SinkProcess& s, std::uint32_t deviceId, RunRecord& run, const std::vector<std::string>& sourceDirs)
{
    std::vector<std::string> notes;
    std::vector<std::string> failures;
    std::map<std::uint32_t, KernelRecord*> byCorr;
    for (auto& k : run.kernels) byCorr[k.launch.correlationId] = &k;
    std::set<std::string> sourcesSeen;
    int decoded = 0;
    for (const auto& t : s.traces) {
        if (t.rec.deviceId != deviceId) continue;
        auto it = byCorr.find(t.rec.correlationId);
        const std::string name = demangle(t.kernel);
        const std::string which = name + " (correlation " + std::to_string(t.rec.correlationId) + ")";
        if (it == byCorr.end()) {
            notes.push_back("trace of " + which + " has no kernel record in this run (outside the window, or CUPTI dropped it)");
            continue;
        }
        KernelRecord& k = *it->second;
        const std::string what = k.launch.name + " #" + std::to_string(k.launch.launchIndex);
        if (!t.complete()) {
            failures.push_back("trace of " + what + " is cut short (" + std::to_string(t.received) + " of "
                               + std::to_string(t.rec.bufferBytes) + " bytes reached the sink)");
            continue;
        }
        decode::DecodeOptions opt;
        opt.phaseNames = t.phaseNames;
        opt.roleNames = t.roleNames;
        opt.keepUndeclaredWarps = true;
        if (run.info.device.smClockKHz > 0) opt.deviceNsPerCycle = 1e6 / run.info.device.smClockKHz;
        decode::DecodeReport rep;
        ladder::TraceGeometry geom;
        geom.numCtas = t.rec.numCtas;
        geom.warpsPerCta = t.rec.warpsPerCta;
        geom.eventsPerWarp = t.rec.eventsPerWarp;
        geom.bufferBytes = t.rec.bufferBytes;
        try {
            KernelRecord d = decode::decodeTrace(t.data.data(), t.data.size(), geom, k.launch, opt, rep);
            KernelLaunch keep = k.launch;
            k = std::move(d);
            k.launch = keep;
            k.launch.traced = true;
            k.launch.alignResidualNs = rep.alignment.residualNs;
            k.launch.droppedEvents = rep.droppedEvents;
            ++decoded;
        } catch (const decode::DecodeError& e) {
            failures.push_back("trace of " + what + " cannot be decoded: " + e.what());
            continue;
        }
        std::string line = "traced " + what + ": " + std::to_string(k.ctas.size()) + " CTAs, " + std::to_string(k.warps.size())
            + " warps, " + std::to_string(k.intervals.size()) + " intervals, capacity " + std::to_string(t.rec.eventsPerWarp)
            + " events per warp";
        if (!rep.undeclaredByWarp.empty() && !rep.noRoleDeclared) {
            // Per warp index: which warps of the CTAs said nothing (shown as empty "no role" lanes).
            int n = 0;
            std::string which;
            for (const auto& [w, ctas] : rep.undeclaredByWarp) {
                n += ctas;
                which += (which.empty() ? "" : ", ") + std::string("warp ") + std::to_string(w) + " in " + std::to_string(ctas)
                    + (ctas == 1 ? " CTA" : " CTAs");
            }
            line += "; " + std::to_string(n) + " warps declared no role (shown as '" + decode::kNoRoleName + "' lanes, empty): " + which;
        }
        for (const auto& w : rep.warnings) line += "; " + w;
        notes.push_back(line);
        if (!rep.ok) failures.push_back("trace of " + what + ": " + rep.failureReason);
        // The kernel's source file, once per run.
        if (!t.sourcePath.empty() && sourcesSeen.insert(t.sourcePath).second) {
            std::string text, why;
            if (readSource(t.sourcePath, s, sourceDirs, text, why)) {
                SourceFile f;
                f.path = t.sourcePath;
                f.sha256 = sha256Hex(text);
                f.text = std::move(text);
                run.sources.push_back(std::move(f));
            } else {
                notes.push_back(why);
            }
        }
    }
    for (const auto& n : s.traceNotes)
        if (n.deviceId == deviceId || n.correlationId == 0) {
            notes.push_back(n.text);
            // A kernel --kernels selected but built with another header version is not traced: the run fails with
            // that message, so that warpstage-record says it and exits 6, instead of a quiet untraced launch.
            if (n.text.find(kTraceNoteVersionMismatch) != std::string::npos) failures.push_back(n.text);
        }
    for (const auto& n : notes) run.info.notes += "; " + n;
    if (!failures.empty()) {
        run.info.status = RunStatus::Failed;
        std::string r = run.info.failureReason;
        for (const auto& f : failures) r += (r.empty() ? "" : "; ") + f;
        run.info.failureReason = r;
    }
    return decoded;
}

}  // namespace ws::sink
