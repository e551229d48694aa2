// warpstage-record: records rungs of the kernel ladder under CUPTI into a Warpstage file.
// Qt-free; runs on a GPU server. `warpstage-record --help` and docs/recording.md.
#include "warpstage/decode.h"
#include "warpstage/ladder.h"
#include "warpstage/lce_record.h"
#include "warpstage/program_record.h"
#include "warpstage/recorder.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#ifndef WARPSTAGE_VERSION
#define WARPSTAGE_VERSION "0"
#endif

namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

void onSignal(int sig)
{
    g_signal.store(sig);
    g_stop.store(true);
}

const char* kHelp =
    "Usage: warpstage-record [options] -o FILE                       (the bundled kernel ladder)\n"
    "       warpstage-record [options] -o FILE -- PROGRAM [ARGS...]    (record your program)\n"
    "\n"
    "Program mode runs PROGRAM (python3 script.py, a native binary, a launcher such as torchrun) with\n"
    "the recorder injected through CUPTI (CUDA_INJECTION64_PATH); the program is not changed. Every\n"
    "kernel launch, memcpy/memset, NVTX range and the API call that launched each kernel is stored,\n"
    "one run per process and device; child processes are followed.\n"
    "  --kernels REGEX        kernels that get the expensive extras: a second run of the program\n"
    "                         samples their stall reasons (PC sampling, serialized), and\n"
    "                         instrumented ones (<warpstage/trace.cuh>) get per-warp timelines (without\n"
    "                         --kernels: every instrumented kernel; traced launches are serialized)\n"
    "  --launch-range A:B     which launches of those (0-based per kernel name, inclusive)\n"
    "  --trace-events N       trace capacity per warp and traced launch, in events (default 2048)\n"
    "  --source-dir DIR       where else to look for instrumented kernels' sources (repeatable)\n"
    "  --duration S           keep only the first S seconds of each process\n"
    "  --nvtx-range NAME      keep only what happens inside NVTX ranges named NAME\n"
    "  --timeout S            stop the program after S seconds (SIGTERM, SIGKILL 5 s later)\n"
    "  --keep-sinks           keep the raw per-process sink files next to FILE\n"
    "  --no-stalls, --progress-json, -o as below\n"
    "\n"
    "Ladder mode:\n"
    "Runs rungs of the bf16 GEMM kernel ladder on the GPU under CUPTI and stores one run per\n"
    "rung in a Warpstage trace file: per-warp timelines from the traced build (pass 1) and\n"
    "PC-sampling stall reasons of the untraced build (pass 2, in a child process).\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE      trace file to create, or to append the new runs to\n"
    "  -r, --rungs LIST       'all' (default) or a comma list, e.g. sync,pingpong (see --list-rungs);\n"
    "                         lce:all, lce:0,lce:3, ...: the linear-compression family (below)\n"
    "  -s, --shape MxNxK      problem shape (default 4096x4096x4096)\n"
    "  -n, --repetitions N    traced + untraced launches recorded per rung (default 1)\n"
    "      --ctas LIST        keep only these CTAs (linear block index), e.g. 0-31,100\n"
    "      --sms LIST         keep only CTAs that ran on these SMs, e.g. 0-7\n"
    "      --no-stalls        skip pass 2 (PC sampling)\n"
    "      --stall-samples N  aim for about N PC samples per rung (default 300000)\n"
    "      --no-check         skip the spot check of C against host fp64 dot products\n"
    "      --device N         CUDA device index, 0..1023 (default 0)\n"
    "      --progress-json    one JSON object per line on stdout for each step (for the GUI)\n"
    "      --list-rungs       print the rungs (both families) and exit\n"
    "  -h, --help             this text\n"
    "  -V, --version          version\n"
    "\n"
    "The linear-compression family (--rungs lce:...) is recorded through program mode: the `lce` driver\n"
    "(kernels/lce; next to warpstage-record, in the build tree or ../lib/warpstage/) runs once per rung\n"
    "(--time: warmup + timed iterations), one run per rung labelled lce_<rung>; rungs 3-4 get one traced launch\n"
    "(--kernels <their kernel> --launch-range 0:0 --trace-events 8192) and its stall samples.\n"
    "      --lce-shape S      MxNxKUxKCxBxPER (default 433x256x1178x866x1024x70, the benchmark point)\n"
    "      --lce-shuffled     candidates mapped to users in shuffled order\n"
    "      --lce-iters W:I    the driver's warmup and timed iterations (default 2:5)\n"
    "      --lce-program PATH the lce driver to run (default: found as above, or $WARPSTAGE_LCE)\n"
    "      --trace-events N   also sets the traced launch's capacity per warp (default 8192 here)\n"
    "\n  Numbers are plain decimal numbers in range ('abc', '1x', ' 1', '+1' are refused: exit 2).\n"
    "\n"
    "Exit codes:\n"
    "  0   all runs recorded and stored complete\n"
    "  1   internal error\n"
    "  2   bad command line (unknown rung, a shape no selected rung can take, ...)\n"
    "  3   no CUDA driver or no suitable GPU (nothing written)\n"
    "  4   CUPTI not found or unusable (nothing written)\n"
    "  5   the output file cannot be created, is not a Warpstage file, or a write failed\n"
    "  6   finished, but at least one run is stored as FAILED (overflow, kernel fault, wrong result)\n"
    "  7   program mode: recorded, but the program did not end normally (exit code != 0, killed,\n"
    "      --timeout) or a process's records are cut short: those runs are stored INCOMPLETE\n"
    "  8   program mode: the program made no CUDA call: nothing recorded, the file untouched\n"
    "  9   program mode: the program does not exist or is not executable: nothing run or written\n"
    "  10  finished, every run stored complete, but selected rungs that cannot take the shape (e.g. a GEMM\n"
    "      rung with K not a multiple of 8, lce:3-4 with N not a multiple of 8) were skipped, each named with\n"
    "      why (6 and 7 win over 10; when no selected rung can take the shape: 2, nothing run)\n"
    "  130 interrupted (SIGINT/SIGTERM): runs committed before are intact, the file opens\n"
    "      (program mode: the signal is forwarded to the program, what it recorded is stored INCOMPLETE;\n"
    "      143 for SIGTERM)\n"
    "\n"
    "Each run records the device, clocks, driver/CUDA/CUPTI versions, host, date and this command line.\n"
    "A run whose trace buffer overflowed or whose kernel faulted is stored with status FAILED and the reason.\n";

std::string jsonEscape(const std::string& s)
{
    std::string o;
    for (char c : s) {
        switch (c) {
        case '"': o += "\\\""; break;
        case '\\': o += "\\\\"; break;
        case '\n': o += "\\n"; break;
        case '\t': o += "\\t"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char b[8];
                std::snprintf(b, sizeof b, "\\u%04x", c);
                o += b;
            } else {
                o += c;
            }
        }
    }
    return o;
}

std::string shellQuote(const std::string& a)
{
    if (!a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./,:+@%") == std::string::npos)
        return a;
    std::string o = "'";
    for (char c : a) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return o + "'";
}

// Whole string a decimal number in [lo, hi]: no sign, no blanks, no trailing junk, no overflow
// ("abc", "3x", " 3", "+3", "" and "99999999999999999999" are all refused).
bool parseNumber(const char* s, long long lo, long long hi, long long* out)
{
    if (!s || !*s) return false;
    long long v = 0;
    for (const char* p = s; *p; ++p) {
        if (*p < '0' || *p > '9') return false;
        if (v > (hi - (*p - '0')) / 10) return false;  // would exceed hi (and so overflow)
        v = v * 10 + (*p - '0');
    }
    if (v < lo || v > hi) return false;
    *out = v;
    return true;
}

constexpr long long kMaxDevice = 1023;

// "MxNxK", each a number in 1..kMaxDim.
constexpr long long kMaxDim = 1 << 20;
bool parseShape(const std::string& s, ws::ladder::Shape* shape)
{
    long long d[3] = {};
    std::size_t pos = 0;
    for (int i = 0; i < 3; ++i) {
        const std::size_t x = i < 2 ? s.find('x', pos) : s.size();
        if (x == std::string::npos) return false;
        if (!parseNumber(s.substr(pos, x - pos).c_str(), 1, kMaxDim, &d[i])) return false;
        pos = x + 1;
    }
    shape->m = int(d[0]);
    shape->n = int(d[1]);
    shape->k = int(d[2]);
    return true;
}

int usage(const std::string& problem)
{
    std::cerr << "warpstage-record: " << problem << "\nTry 'warpstage-record --help'.\n";
    return ws::rec::kExitUsage;
}

}  // namespace

int main(int argc, char** argv)
{
    if (const int rc = ws::rec::maybeRunStallPass(argc, argv); rc >= 0) return rc;

    ws::rec::Options o;
    bool json = false;
    for (int i = 0; i < argc; ++i) o.commandLine += (i ? " " : "") + shellQuote(argv[i]);
    // Program mode: everything after "--" is the program and its arguments.
    int dashdash = -1;
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--") {
            dashdash = i;
            break;
        }
    ws::rec::ProgramOptions po;
    bool ladderOption = false;
    ws::rec::LceOptions lce;      // --rungs lce:...
    bool lceOption = false, gemmRungs = true;
    if (dashdash >= 0) {
        for (int i = dashdash + 1; i < argc; ++i) po.program.push_back(argv[i]);
        if (po.program.empty()) return usage("no program after '--'");
        argc = dashdash;  // the options are parsed below, program-mode ones here
    }
    auto parseSeconds = [](const char* s, double* out) {
        if (!s || !*s) return false;
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(s, &end);
        if (errno || *end || !(v > 0) || v > 1e7 || std::isspace(static_cast<unsigned char>(*s)) || *s == '+') return false;
        *out = v;
        return true;
    };
    auto need = [&](int& i, const char* opt) -> const char* {
        if (i + 1 >= argc) return nullptr;
        (void)opt;
        return argv[++i];
    };
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            const char* v = nullptr;
            if (a == "-h" || a == "--help") {
                std::cout << kHelp;
                return 0;
            } else if (a == "-V" || a == "--version") {
                std::cout << "warpstage-record " << WARPSTAGE_VERSION << "\n";
                return 0;
            } else if (a == "--list-rungs") {
                // Each line starts with what --rungs takes.
                std::cout << "GEMM ladder, bf16 C = A*B^T (--rungs all, or names: sync,pingpong; shape: --shape MxNxK):\n";
                for (const auto& r : ws::ladder::rungs()) {
                    std::string n = r.name;
                    n.resize(std::max<std::size_t>(n.size(), 17), ' ');
                    std::cout << "  " << n << " rung " << r.level << ": " << r.title << "\n";
                }
                std::cout << "\nLinear compression, lce (issue 11; --rungs lce:all, or lce:0,lce:3; shape: --lce-shape\n"
                             "MxNxKUxKCxBxPER; recorded through the lce driver, one program run per rung):\n";
                for (const auto& l : ws::rec::lceRungLines()) std::cout << "  " << l << "\n";
                std::cout << "\nA selected rung that cannot take the shape is skipped with the reason (exit 10); both\n"
                             "families mix in one list (--rungs sync,lce:all).\n";
                return 0;
            } else if (a == "-o" || a == "--output") {
                if (!(v = need(i, "-o"))) return usage(a + " needs a file name");
                o.output = v;
            } else if (a == "-r" || a == "--rungs") {
                ladderOption = true;
                if (!(v = need(i, "-r"))) return usage(a + " needs 'all' or a list of rungs");
                o.rungs.clear();
                ws::rec::RungSelection sel;
                const std::string err = ws::rec::parseRungList(v, &sel, [](const std::string& r) { return ws::ladder::findRung(r) != nullptr; });
                if (!err.empty()) {
                    std::string known;
                    for (const auto& x : ws::ladder::rungs()) known += (known.empty() ? "" : ", ") + x.name;
                    return usage(err + " (known: " + known + ", lce:0 .. lce:4, lce:all)");
                }
                if (!sel.gemmAll) o.rungs = sel.gemm;  // empty: every rung
                lce.rungs = sel.lce;
                gemmRungs = sel.gemmAll || !sel.gemm.empty();
            } else if (a == "--lce-shape") {
                lceOption = true;
                if (!(v = need(i, "--lce-shape"))) return usage(a + " needs MxNxKUxKCxBxPER");
                if (const std::string err = ws::rec::parseLceShape(v, &lce.shape); !err.empty()) return usage(err);
            } else if (a == "--lce-shuffled") {
                lceOption = true;
                lce.shape.shuffled = true;
            } else if (a == "--lce-iters") {
                lceOption = true;
                long long w = 0, it = 0;
                const std::string r = (v = need(i, "--lce-iters")) ? v : "";
                const auto c = r.find(':');
                if (c == std::string::npos || !parseNumber(r.substr(0, c).c_str(), 0, 1000, &w)
                    || !parseNumber(r.substr(c + 1).c_str(), 1, 10000, &it))
                    return usage("bad --lce-iters '" + r + "' (W:I, warmup 0..1000 and timed iterations 1..10000)");
                lce.warmup = int(w);
                lce.iterations = int(it);
            } else if (a == "--lce-program") {
                lceOption = true;
                if (!(v = need(i, "--lce-program"))) return usage(a + " needs a path");
                lce.program = v;
            } else if (a == "-s" || a == "--shape") {
                ladderOption = true;
                if (!(v = need(i, "-s"))) return usage(a + " needs MxNxK");
                if (!parseShape(v, &o.shape))
                    return usage(std::string("bad shape '") + v + "' (expected MxNxK, each 1.." + std::to_string(kMaxDim)
                                 + ", e.g. 4096x4096x4096)");
            } else if (a == "-n" || a == "--repetitions") {
                ladderOption = true;
                if (!(v = need(i, "-n"))) return usage(a + " needs a number");
                long long n = 0;
                if (!parseNumber(v, 1, 100, &n)) return usage(std::string("bad repetitions '") + v + "' (1..100)");
                o.repetitions = int(n);
            } else if (a == "--ctas") {
                ladderOption = true;
                if (!(v = need(i, "--ctas"))) return usage(a + " needs a list");
                o.keepCtas = ws::decode::parseIndexList(v);
            } else if (a == "--sms") {
                ladderOption = true;
                if (!(v = need(i, "--sms"))) return usage(a + " needs a list");
                o.keepSms = ws::decode::parseIndexList(v);
            } else if (a == "--no-stalls") {
                o.stalls = false;
            } else if (a == "--no-check") {
                ladderOption = true;
                o.checkResults = false;
            } else if (a == "--stall-samples") {
                ladderOption = true;
                if (!(v = need(i, "--stall-samples"))) return usage(a + " needs a number");
                long long n = 0;
                if (!parseNumber(v, 1000, 100000000, &n))
                    return usage(std::string("bad --stall-samples '") + v + "' (1000..100000000)");
                o.stallTargetSamples = n;
            } else if (a == "--device") {
                ladderOption = true;
                if (!(v = need(i, "--device"))) return usage(a + " needs a number");
                long long d = 0;
                if (!parseNumber(v, 0, kMaxDevice, &d))
                    return usage(std::string("bad --device '") + v + "' (a device index 0.." + std::to_string(kMaxDevice) + ")");
                o.device = int(d);
            } else if (a == "--progress-json") {
                json = true;
            } else if (a == "--kernels") {
                if (!(v = need(i, "--kernels"))) return usage(a + " needs a regular expression");
                try {
                    std::regex re(v);
                } catch (const std::regex_error& e) {
                    return usage(std::string("bad --kernels regular expression '") + v + "': " + e.what());
                }
                po.kernelsRegex = v;
            } else if (a == "--launch-range") {
                if (!(v = need(i, "--launch-range"))) return usage(a + " needs A:B");
                const std::string r = v;
                const auto c = r.find(':');
                long long x = 0, y = 0;
                if (c == std::string::npos || !parseNumber(r.substr(0, c).c_str(), 0, 1000000000, &x)
                    || !parseNumber(r.substr(c + 1).c_str(), 0, 1000000000, &y) || y < x)
                    return usage("bad --launch-range '" + r + "' (A:B, launch indices 0..1000000000 with A <= B)");
                po.launchFirst = x;
                po.launchLast = y;
            } else if (a == "--source-dir") {
                if (!(v = need(i, "--source-dir"))) return usage("--source-dir needs a folder");
                po.sourceDirs.push_back(v);
            } else if (a == "--trace-events") {
                if (!(v = need(i, "--trace-events")) || !parseNumber(v, 16, 1 << 24, &po.traceEvents))
                    return usage(std::string("bad --trace-events '") + (v ? v : "") + "' (16..16777216 events per warp)");
            } else if (a == "--duration") {
                if (!(v = need(i, "--duration")) || !parseSeconds(v, &po.durationSeconds))
                    return usage(std::string("bad --duration '") + (v ? v : "") + "' (seconds > 0)");
            } else if (a == "--timeout") {
                if (!(v = need(i, "--timeout")) || !parseSeconds(v, &po.timeoutSeconds))
                    return usage(std::string("bad --timeout '") + (v ? v : "") + "' (seconds > 0)");
            } else if (a == "--nvtx-range") {
                if (!(v = need(i, "--nvtx-range")) || !*v) return usage(a + " needs a range name");
                po.nvtxRange = v;
            } else if (a == "--keep-sinks") {
                po.keepSinks = true;
            } else {
                return usage("unknown option '" + a + "'");
            }
        }
    } catch (const std::exception& e) {  // parseIndexList: std::invalid_argument
        return usage(e.what());
    }
    if (o.output.empty()) return usage("no output file (-o FILE)");
    if (lceOption && lce.rungs.empty()) return usage("--lce-shape, --lce-shuffled, --lce-iters and --lce-program need lce rungs (--rungs lce:all, ...)");
    if (!lce.rungs.empty() && po.traceEvents != 2048) {
        lce.traceEvents = po.traceEvents;
        po.traceEvents = 2048;
    }
    if (dashdash < 0 && (!po.kernelsRegex.empty() || po.launchFirst >= 0 || po.durationSeconds > 0 || po.timeoutSeconds > 0
                         || !po.nvtxRange.empty() || po.keepSinks || po.traceEvents != 2048 || !po.sourceDirs.empty()))
        return usage("--kernels, --launch-range, --trace-events, --duration, --timeout, --nvtx-range and --keep-sinks need a program: -- PROGRAM [ARGS...]");
    if (dashdash >= 0 && ladderOption)
        return usage("ladder options (--rungs, --shape, --repetitions, --ctas, --sms, --stall-samples, --no-check, --device) "
                     "cannot be combined with a program");
    po.output = o.output;
    po.commandLine = o.commandLine;
    po.stalls = o.stalls;
    lce.output = o.output;
    lce.commandLine = o.commandLine;
    lce.stalls = o.stalls;

    struct sigaction sa{};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);

    ws::rec::Callbacks cb;
    cb.progress = [&](const ws::rec::ProgressEvent& e) {
        if (json) {
            std::printf("{\"type\":\"progress\",\"rung\":\"%s\",\"rung_index\":%d,\"rung_count\":%d,\"pass\":\"%s\",\"step\":\"%s\","
                        "\"percent\":%.1f}\n",
                        jsonEscape(e.rung).c_str(), e.rungIndex, e.rungCount, jsonEscape(e.pass).c_str(),
                        jsonEscape(e.step).c_str(), e.percent);
            std::fflush(stdout);
        } else {
            std::fprintf(stderr, "[%d/%d] %-17s %-8s %-36s %5.1f%%\n", e.rungIndex, e.rungCount, e.rung.c_str(), e.pass.c_str(),
                         e.step.c_str(), e.percent);
        }
    };
    cb.message = [&](const std::string& level, const std::string& text) {
        if (json) {
            std::printf("{\"type\":\"message\",\"level\":\"%s\",\"text\":\"%s\"}\n", level.c_str(), jsonEscape(text).c_str());
            std::fflush(stdout);
        }
        std::fprintf(stderr, "warpstage-record: %s%s\n", level == "info" ? "" : (level + ": ").c_str(), text.c_str());
    };
    cb.runWritten = [&](const ws::RunInfo& r, ws::RowId id) {
        if (json) {
            std::printf("{\"type\":\"run\",\"rung\":\"%s\",\"run_id\":%lld,\"status\":\"%s\",\"has_stalls\":%s}\n",
                        jsonEscape(r.variant).c_str(), static_cast<long long>(id),
                        r.status == ws::RunStatus::Complete ? "complete" : r.status == ws::RunStatus::Incomplete ? "incomplete" : "failed",
                        r.hasStalls ? "true" : "false");
            std::fflush(stdout);
        } else {
            if (r.kind == ws::RunKind::Program)
                std::fprintf(stderr, "warpstage-record: %s pid %lld device %d: run %lld stored (%s%s%s)\n", r.variant.c_str(),
                             static_cast<long long>(r.pid), r.deviceOrdinal, static_cast<long long>(id),
                             r.status == ws::RunStatus::Complete ? "complete" : "INCOMPLETE", r.failureReason.empty() ? "" : ": ",
                             r.failureReason.c_str());
            else
                std::fprintf(stderr, "warpstage-record: %s: run %lld stored (%s%s)\n", r.variant.c_str(), static_cast<long long>(id),
                             r.status == ws::RunStatus::Complete ? "complete" : "FAILED", r.hasStalls ? ", with stalls" : "");
        }
    };

    ws::rec::Result res;
    try {
        if (dashdash >= 0) {
            res = ws::rec::recordProgram(po, cb, g_stop, g_signal);
        } else if (lce.rungs.empty()) {
            res = ws::rec::record(o, cb, g_stop);
        } else {
            // The GEMM ladder's rungs first (if any were named), then the lce family; each run is its own
            // transaction, so a failure later loses nothing written before.
            // GEMM rungs that cannot take --shape are skipped (10), also all of them (2 with rungsSkipped > 0):
            // the lce rungs still run.
            ws::rec::Result g;
            if (gemmRungs) g = ws::rec::record(o, cb, g_stop);
            const bool gemmAllSkipped = g.exitCode == ws::rec::kExitUsage && g.rungsSkipped > 0 && g.runsWritten == 0;
            if (!gemmRungs || g.exitCode == 0 || g.exitCode == ws::rec::kExitRunFailed || g.exitCode == ws::rec::kExitRungsSkipped
                || gemmAllSkipped) {
                if (gemmAllSkipped) g.exitCode = ws::rec::kExitRungsSkipped;
                res = ws::rec::recordLce(lce, cb, g_stop, g_signal);
                res.runsWritten += g.runsWritten;
                res.runsFailed += g.runsFailed;
                res.rungsSkipped += g.rungsSkipped;
                // The more serious code wins; a skipped rung (10) only over a clean 0.
                if ((res.exitCode == 0 || res.exitCode == ws::rec::kExitRungsSkipped) && g.exitCode != 0
                    && !(res.exitCode == ws::rec::kExitRungsSkipped && g.exitCode == ws::rec::kExitRungsSkipped)) {
                    res.exitCode = g.exitCode;
                    res.error = g.error;
                }
            } else {
                res = g;
            }
        }
    } catch (const std::exception& e) {
        res.exitCode = ws::rec::kExitInternal;
        res.error = std::string("internal error: ") + e.what();
        std::fprintf(stderr, "warpstage-record: %s\n", res.error.c_str());
    }
    if (res.exitCode == ws::rec::kExitInterrupted && g_signal.load() == SIGTERM) res.exitCode = 128 + SIGTERM;

    if (json) {
        std::printf("{\"type\":\"done\",\"exit_code\":%d,\"runs_written\":%d,\"runs_failed\":%d,\"output\":\"%s\",\"error\":\"%s\"}\n",
                    res.exitCode, res.runsWritten, res.runsFailed, jsonEscape(o.output).c_str(), jsonEscape(res.error).c_str());
        std::fflush(stdout);
    } else if (res.exitCode == 0 || res.exitCode == ws::rec::kExitRunFailed || res.exitCode == ws::rec::kExitRungsSkipped
               || ((dashdash >= 0 || !lce.rungs.empty()) && res.runsWritten > 0)) {
        std::fprintf(stderr, "warpstage-record: %d run(s) written to %s%s\n", res.runsWritten, o.output.c_str(),
                     res.runsFailed ? (", " + std::to_string(res.runsFailed) + (dashdash >= 0 ? " INCOMPLETE" : " FAILED")).c_str() : "");
    }
    return res.exitCode;
}
