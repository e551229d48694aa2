// Program mode of warpstage-record: spawn the program with the injection library, wait, read the
// per-process sink files, store one run per process and device. See warpstage/program_record.h.
#include "warpstage/program_record.h"

#include "host_info.h"
#include "path_util.h"

#include "cupti_api.h"
#include "pc_sampling_session.h"
#include "warpstage/program_stages.h"
#include "warpstage/sink_reader.h"
#include "warpstage/stage_map.h"
#include "warpstage/stall_match.h"
#include "warpstage/store.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <tuple>
#include <sstream>
#include <thread>

extern char** environ;

// Where `cmake --install` puts the injection library, relative to bin/ (cmake/WarpstageInstall.cmake sets it).
#ifndef WARPSTAGE_INJECT_RELDIR
#define WARPSTAGE_INJECT_RELDIR "../lib/warpstage"
#endif

namespace ws::rec {

namespace {

// Asks libcuda (dlopen, no CUDA runtime) whether a GPU is usable. "" if yes, else why not.
std::string gpuProblem()
{
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return "no CUDA driver (libcuda.so.1 not found)";
    using InitFn = int (*)(unsigned);
    using CountFn = int (*)(int*);
    auto init = reinterpret_cast<InitFn>(dlsym(h, "cuInit"));
    auto count = reinterpret_cast<CountFn>(dlsym(h, "cuDeviceGetCount"));
    if (!init || !count) return "libcuda.so.1 lacks cuInit/cuDeviceGetCount";
    if (const int r = init(0); r != 0) return "cuInit failed with CUDA error " + std::to_string(r) + " (no usable GPU)";
    int n = 0;
    if (count(&n) != 0 || n == 0) return "no CUDA device found";
    return "";
}

std::uint64_t dirBytes(const std::string& dir)
{
    std::uint64_t total = 0;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            struct stat st{};
            if (e->d_name[0] != '.' && ::stat((dir + "/" + e->d_name).c_str(), &st) == 0) total += std::uint64_t(st.st_size);
        }
        closedir(d);
    }
    return total;
}

void removeDir(const std::string& dir)
{
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d))
            if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) ::unlink((dir + "/" + e->d_name).c_str());
        closedir(d);
    }
    ::rmdir(dir.c_str());
}

const char* sigName(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGKILL: return "SIGKILL";
    case SIGABRT: return "SIGABRT";
    case SIGSEGV: return "SIGSEGV";
    default: return "a signal";
    }
}

struct Spawned {
    bool started = false;
    std::string error;
    sink::ProgramOutcome outcome;
    std::string startedAt;
};

// Runs the program once with the injection library and waits for it: own process group, SIGINT/SIGTERM
// forwarded, --timeout (SIGTERM, then SIGKILL after the grace period), workers of the program given a moment
// to flush. `extraEnv`: more variables for the injection library (the stall pass's).
Spawned runProgram(const ProgramOptions& o, const std::string& exe, const std::string& inject, const std::string& sinkDir,
                   const std::vector<std::string>& extraEnv, const std::string& pass,
                   const std::function<void(const std::string&, const std::string&)>& msg,
                   const std::function<void(const std::string&, const std::string&, double)>& progress, const std::atomic<bool>& stop,
                   const std::atomic<int>& stopSignal)
{
    Spawned sp;
    // Environment and spawn (own process group: --timeout and forwarded signals reach every worker).
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string s = *e;
        for (const char* k : {"CUDA_INJECTION64_PATH=", "NVTX_INJECTION64_PATH=", "WARPSTAGE_SINK=", "WARPSTAGE_DURATION_S=",
                              "WARPSTAGE_STALL_KERNELS=", "WARPSTAGE_STALL_RANGE=", "WARPSTAGE_TRACE_KERNELS=",
                              "WARPSTAGE_TRACE_LAUNCHES=", "WARPSTAGE_TRACE_EVENTS="})
            if (s.rfind(k, 0) == 0) {
                if (std::strncmp(k, "WARPSTAGE_", 10) != 0) msg("warning", "replacing " + s.substr(0, s.find('=')) + " of the environment for the program");
                goto skip;
            }
        env.push_back(s);
    skip:;
    }
    env.push_back("CUDA_INJECTION64_PATH=" + inject);
    env.push_back("NVTX_INJECTION64_PATH=" + inject);
    env.push_back("WARPSTAGE_SINK=" + sinkDir);
    if (o.durationSeconds > 0) env.push_back("WARPSTAGE_DURATION_S=" + std::to_string(o.durationSeconds));
    for (const auto& e : extraEnv) env.push_back(e);
    std::vector<char*> envp, argv;
    for (auto& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = o.program;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);

    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t def, none;
    sigfillset(&def);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &def);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t pid = 0;
    sp.startedAt = isoNowUtc();
    const int src = posix_spawn(&pid, exe.c_str(), nullptr, &attr, argv.data(), envp.data());
    posix_spawnattr_destroy(&attr);
    if (src != 0) {
        sp.error = "cannot start '" + exe + "': " + std::strerror(src);
        return sp;
    }
    sp.started = true;
    const std::string what = pass == "stalls" ? "stall pass: running " : "recording ";
    msg("info", what + exe + " (pid " + std::to_string(pid) + ")");
    progress(pass, "running (pid " + std::to_string(pid) + ")", pass == "stalls" ? 50 : 0);

    // 6. Wait: forward SIGINT/SIGTERM, enforce --timeout (SIGTERM, then SIGKILL after the grace period).
    sink::ProgramOutcome& outcome = sp.outcome;
    outcome.rootPid = pid;
    outcome.timeoutSeconds = o.timeoutSeconds;
    const auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    double termSentAt = -1, lastProgress = 0;
    int status = 0;
    for (;;) {
        const pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) {
            status = 0;
            break;
        }
        const double t = elapsed();
        if (termSentAt < 0 && stop.load()) {
            outcome.interrupted = true;
            const int sig = stopSignal.load() ? stopSignal.load() : SIGTERM;
            kill(-pid, sig);
            termSentAt = t;
            msg("warning", std::string("interrupted: ") + sigName(sig) + " forwarded to the program");
        }
        if (termSentAt < 0 && o.timeoutSeconds > 0 && t >= o.timeoutSeconds) {
            outcome.timedOut = true;
            kill(-pid, SIGTERM);
            termSentAt = t;
            msg("warning", "timeout after " + std::to_string(int(o.timeoutSeconds)) + " s: SIGTERM sent to the program");
        }
        if (termSentAt >= 0 && t - termSentAt > o.killGraceSeconds) {
            kill(-pid, SIGKILL);
            termSentAt = 1e300;  // sent once
            msg("warning", "the program did not stop: SIGKILL sent");
        }
        if (t - lastProgress >= 1.0) {
            lastProgress = t;
            char b[128];
            std::snprintf(b, sizeof b, "running (pid %d, %.0f s, %.1f MiB recorded)", int(pid), t, double(dirBytes(sinkDir)) / (1 << 20));
            progress(pass, b, pass == "stalls" ? 50 : 0);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (WIFEXITED(status)) outcome.exitCode = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) outcome.exitSignal = WTERMSIG(status);
    // Workers of the program that outlive it (same process group): give them a moment to flush.
    for (int i = 0; i < 100 && kill(-pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (outcome.timedOut || outcome.interrupted) kill(-pid, SIGKILL);  // nothing of it may outlive the recording

    return sp;
}

// A fresh folder for sink files next to the output (same file system). "" and `error` if it cannot be made.
std::string makeSinkDir(const std::string& output, const std::string& suffix, std::string* error)
{
    const std::string base = output.substr(output.find_last_of('/') == std::string::npos ? 0 : output.find_last_of('/') + 1);
    std::string tmpl = dirOf(output) + "/." + base + suffix + "-XXXXXX";
    std::vector<char> tbuf(tmpl.begin(), tmpl.end());
    tbuf.push_back('\0');
    if (!mkdtemp(tbuf.data())) {
        *error = "cannot create the sink folder " + tmpl + ": " + std::strerror(errno);
        return "";
    }
    return tbuf.data();
}

}  // namespace

std::string findInjectLibrary()
{
    if (const char* e = std::getenv("WARPSTAGE_INJECT_LIB"); e && *e) return isFile(e) ? std::string(e) : std::string();
    const std::string dir = selfExeDir();
    return dir.empty() ? std::string() : findInjectLibraryFrom(dir);
}

std::string findInjectLibraryFrom(const std::string& exeDir)
{
    for (const std::string& c : {exeDir + "/libwarpstage-inject.so",                               // build tree
                                 exeDir + "/" WARPSTAGE_INJECT_RELDIR "/libwarpstage-inject.so"})  // installed
        if (isFile(c)) return c;
    return "";
}

std::string resolveProgram(const std::string& program, std::string& why)
{
    auto check = [&](const std::string& p) -> int {  // 0 ok, 1 missing, 2 not executable
        struct stat st{};
        if (::stat(p.c_str(), &st) != 0) return 1;
        if (!S_ISREG(st.st_mode) || access(p.c_str(), X_OK) != 0) return 2;
        return 0;
    };
    if (program.empty()) {
        why = "no program given after '--'";
        return "";
    }
    if (program.find('/') != std::string::npos) {
        const int c = check(program);
        if (c == 1) why = "program '" + program + "' not found";
        if (c == 2) why = "program '" + program + "' is not an executable file";
        return c == 0 ? program : "";
    }
    const char* path = std::getenv("PATH");
    std::stringstream ss(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    std::string d;
    bool sawNonExec = false;
    while (std::getline(ss, d, ':')) {
        const std::string p = (d.empty() ? "." : d) + "/" + program;
        const int c = check(p);
        if (c == 0) return p;
        if (c == 2) sawNonExec = true;
    }
    why = sawNonExec ? "program '" + program + "' is not an executable file" : "program '" + program + "' not found in PATH";
    return "";
}

namespace {

// Runs the program a second time under the stall pass and attaches its samples to the timeline runs.
// Problems (it cannot start, it fails, the runs do not match) become warnings and notes: the timeline runs
// are written whatever happens here.
void stallPass(const ProgramOptions& o, const std::string& exe, const std::string& inject, const cupti::Api& api,
               const std::vector<sink::SinkProcess>& timelineSinks, std::vector<RunRecord>& runs,
               const std::function<void(const std::string&, const std::string&)>& msg,
               const std::function<void(const std::string&, const std::string&, double)>& progress, const std::atomic<bool>& stop,
               const std::atomic<int>& stopSignal)
{
    auto noteAll = [&](const std::string& text) {
        msg("warning", text);
        for (auto& r : runs) r.info.notes += "; " + text;
    };
    const std::string range = o.launchFirst >= 0 ? std::to_string(o.launchFirst) + ":" + std::to_string(o.launchLast) : std::string();
    msg("info", "stall pass: running the program a second time, with PC sampling for the launches of kernels matching '" + o.kernelsRegex
                    + "'" + (range.empty() ? std::string() : " (launches " + range + ")"));
    std::string dirErr;
    const std::string dir = makeSinkDir(o.output, ".stalls", &dirErr);
    if (dir.empty()) return noteAll("stalls: not recorded (" + dirErr + ")");
    std::vector<std::string> env = {"WARPSTAGE_STALL_KERNELS=" + o.kernelsRegex};
    if (!range.empty()) env.push_back("WARPSTAGE_STALL_RANGE=" + range);
    const Spawned second = runProgram(o, exe, inject, dir, env, "stalls", msg, progress, stop, stopSignal);
    if (!second.started) {
        removeDir(dir);
        return noteAll("stalls: not recorded (the second run did not start: " + second.error + ")");
    }
    progress("stalls", "matching the stall samples to the timeline's launches", 85);
    const auto stallSinks = sink::readSinkDir(dir);
    sink::StallMatchOptions mo;
    mo.kernelsRegex = o.kernelsRegex;
    mo.launchFirst = o.launchFirst;
    mo.launchLast = o.launchLast;
    mo.sourceDirs = o.sourceDirs;
    if (const char* d = std::getenv("WARPSTAGE_SOURCE_DIR"); d && *d) mo.sourceDirs.push_back(d);
    // SASS -> source on the host. CUPTI is asked after cuInit (the recorder itself initialises no CUDA otherwise;
    // whether the lookup needs it is not documented); failures other than "no line info" are counted and said.
    if (void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL))
        if (auto init = reinterpret_cast<int (*)(unsigned)>(dlsym(h, "cuInit"))) init(0);
    std::map<std::tuple<const sink::SinkProcess*, std::uint64_t, std::string, std::uint64_t>, std::pair<std::string, int>> lines;
    std::map<int, int> lookupErrors;  // CUptiResult -> lookups
    const sink::StallMatchResult m = sink::attachStalls(
        runs, timelineSinks, stallSinks, mo, [&](StallSample& smp, std::uint64_t crc, const sink::SinkProcess& from) {
            if (!decode::keepStallReason(smp.reason)) return false;
            smp.reasonLabel = decode::stallReasonLabel(smp.reason);
            const auto key = std::make_tuple(&from, crc, smp.functionName, smp.pcOffset);
            auto it = lines.find(key);
            if (it == lines.end()) {
                auto c = from.cubins.find(crc);
                std::pair<std::string, int> src{"", 0};
                if (c != from.cubins.end()) {
                    CUptiResult r = CUPTI_SUCCESS;
                    src = pcs::sourceOf(api, c->second, smp.functionName, smp.pcOffset, &r);
                    if (r != CUPTI_SUCCESS) ++lookupErrors[int(r)];
                }
                it = lines.emplace(key, src).first;
            }
            smp.sourceFile = it->second.first;
            smp.line = it->second.second;
            return true;
        });
    for (const auto& w : m.warnings) msg("warning", w);
    for (const auto& [code, n] : lookupErrors)
        noteAll("stall pass: the SASS -> source lookup failed for " + std::to_string(n) + " pc(s): "
                + cupti::resultText(api, CUptiResult(code)));
    const auto& so = second.outcome;
    if (so.interrupted || so.timedOut || so.exitSignal || so.exitCode != 0)
        noteAll("stall run: the program " + std::string(so.timedOut ? "hit --timeout and " : "")
                + (so.exitSignal ? std::string("was killed by ") + sigName(so.exitSignal) : "exited with code " + std::to_string(so.exitCode))
                + " (samples kept for the launches it made)");
    msg("info", "stall pass: " + std::to_string(m.samples) + " samples on " + std::to_string(m.launchesWithSamples) + " launch(es) of "
                    + std::to_string(m.kernelsSampled) + " kernel(s)" + (m.mismatch ? "; the two runs do not match everywhere (see the warnings)" : ""));
    if (o.keepSinks)
        msg("info", "stall-pass sink files kept in " + dir);
    else
        removeDir(dir);
}

}  // namespace

Result recordProgram(const ProgramOptions& o, const Callbacks& cb, const std::atomic<bool>& stop, const std::atomic<int>& stopSignal)
{
    Result res;
    auto msg = [&](const std::string& level, const std::string& text) {
        if (cb.message) cb.message(level, text);
    };
    auto fail = [&](int code, const std::string& text) {
        res.exitCode = code;
        res.error = text;
        msg("error", text);
        return res;
    };
    auto progress = [&](const std::string& pass, const std::string& step, double pct) {
        if (!cb.progress) return;
        ProgressEvent e;
        e.rung = o.program.empty() ? "" : o.program.front();
        e.rungIndex = 1;
        e.rungCount = 1;
        e.pass = pass;
        e.step = step;
        e.percent = pct;
        cb.progress(e);
    };

    if (o.output.empty()) return fail(kExitUsage, "no output file given");
    // 1. The output: an existing file must be a Warpstage file of this version; a new one's folder writable.
    if (const std::string why = outputProblem(o.output); !why.empty()) return fail(kExitOutput, why);
    // 2. The program.
    std::string why;
    const std::string exe = resolveProgram(o.program.empty() ? "" : o.program.front(), why);
    if (exe.empty()) return fail(kExitProgramNotRunnable, why + ": nothing run, nothing written");
    // 3. CUPTI and the injection library (the program would run unrecorded without them).
    std::string cuptiErr;
    const cupti::Api* api = cupti::load(&cuptiErr);
    if (!api) return fail(kExitNoCupti, cuptiErr);
    const std::string inject = o.injectLibrary.empty() ? findInjectLibrary() : o.injectLibrary;
    if (inject.empty() || !isFile(inject))
        return fail(kExitInternal, "libwarpstage-inject.so not found next to warpstage-record or in its " WARPSTAGE_INJECT_RELDIR
                                   "/ (or set WARPSTAGE_INJECT_LIB): installation problem");
    std::string cuptiVersion;
    if (api->cuptiGetVersion) {
        std::uint32_t v = 0;
        if (api->cuptiGetVersion(&v) == CUPTI_SUCCESS) cuptiVersion = "CUPTI API " + std::to_string(v);
    }

    // 4. The sink folder, next to the output (same file system; kept if writing fails).
    std::string dirErr;
    const std::string sinkDir = makeSinkDir(o.output, ".sinks", &dirErr);
    if (sinkDir.empty()) return fail(kExitOutput, dirErr);

    // 5-6. The timeline run. Instrumented kernels (<warpstage/trace.cuh>): which launches get trace buffers
    // (inject/trace_buffers.cpp; the same --kernels / --launch-range as the stall pass).
    std::vector<std::string> traceEnv = {"WARPSTAGE_TRACE_EVENTS=" + std::to_string(o.traceEvents)};
    if (!o.kernelsRegex.empty()) traceEnv.push_back("WARPSTAGE_TRACE_KERNELS=" + o.kernelsRegex);
    if (o.launchFirst >= 0) traceEnv.push_back("WARPSTAGE_TRACE_LAUNCHES=" + std::to_string(o.launchFirst) + ":" + std::to_string(o.launchLast));
    Spawned first = runProgram(o, exe, inject, sinkDir, traceEnv, "program", msg, progress, stop, stopSignal);
    if (!first.started) {
        removeDir(sinkDir);
        return fail(kExitProgramNotRunnable, first.error + ": nothing written");
    }
    const sink::ProgramOutcome outcome = first.outcome;
    const std::string startedAt = first.startedAt;

    // 7. Read the sinks, convert, write.
    progress(o.stalls && !o.kernelsRegex.empty() ? "program" : "write", "reading the sinks", o.stalls && !o.kernelsRegex.empty() ? 45 : 90);
    const auto sinks = sink::readSinkDir(sinkDir);
    sink::ConvertOptions co;
    co.outcome = outcome;
    co.durationSeconds = o.durationSeconds;
    co.sourceDirs = o.sourceDirs;
    if (const char* d = std::getenv("WARPSTAGE_SOURCE_DIR"); d && *d) co.sourceDirs.push_back(d);
    co.nvtxRange = o.nvtxRange;
    co.commandLine = o.commandLine;
    co.host = hostName();
    co.startedAt = startedAt;
    co.driverVersion = driverModuleVersion();
    co.cuptiVersion = cuptiVersion;
    sink::ConvertResult conv = sink::toRuns(sinks, co);
    for (const auto& w : conv.warnings) msg("warning", w);
    const std::string how = outcome.exitSignal ? std::string("was killed by ") + sigName(outcome.exitSignal)
                                               : "exited with code " + std::to_string(outcome.exitCode);
    if (conv.runs.empty()) {
        const bool sawSinks = !sinks.empty();
        removeDir(sinkDir);
        if (outcome.interrupted) return fail(stopSignal.load() == SIGTERM ? 128 + SIGTERM : kExitInterrupted, "interrupted before the program recorded anything");
        if (!o.nvtxRange.empty() && sawSinks)
            return fail(kExitNoCudaCall, "nothing recorded inside NVTX ranges named '" + o.nvtxRange + "' (the program " + how + ")");
        std::string text = "the program made no CUDA call, nothing recorded (it " + how + "); " + o.output + " untouched";
        if (const std::string g = gpuProblem(); !g.empty()) return fail(kExitNoGpu, text + "; and this machine has no usable GPU: " + g);
        return fail(kExitNoCudaCall, text);
    }
    // 8. The stall pass: the program once more, PC sampling for the --kernels launches only.
    if (!o.stalls || o.kernelsRegex.empty() || outcome.interrupted || stop.load()) {
        const std::string why = !o.stalls ? "--no-stalls"
            : o.kernelsRegex.empty()      ? "no --kernels: the stall pass samples only the kernels --kernels names"
                                          : "the recording was interrupted";
        for (auto& r : conv.runs) r.info.notes += "; stalls: not recorded (" + why + ")";
    } else {
        stallPass(o, exe, inject, *api, sinks, conv.runs, msg, progress, stop, stopSignal);
        // Role and stage of the samples, from the source texts stored with each run and its traced launches
        // (warpstage/program_stages.h; the ladder's pass 2 does the same with its built-in sources).
        for (auto& r : conv.runs)
            if (const auto ps = decode::assignProgramStages(r); !ps.note.empty()) {
                r.info.notes += "; " + ps.note;
                msg("info", ps.note);
            }
    }

    for (auto& r : conv.runs) {  // a family rung's label (warpstage-record --rungs lce:...)
        if (!o.runVariant.empty()) r.info.variant = o.runVariant;
        if (!o.runNotes.empty()) r.info.notes = o.runNotes + (r.info.notes.empty() ? "" : "; " + r.info.notes);
    }
    progress("write", "writing " + std::to_string(conv.runs.size()) + " run(s)", 95);
    int incomplete = 0, failed = 0;
    try {
        TraceStore store = TraceStore::openForWriting(o.output);
        for (const auto& r : conv.runs) {
            const RowId id = store.writeRun(r);
            ++res.runsWritten;
            if (r.info.status == RunStatus::Incomplete) ++incomplete;
            if (r.info.status == RunStatus::Failed) ++failed;  // a traced launch's buffer overflowed, ...
            if (cb.runWritten) cb.runWritten(r.info, id);
        }
    } catch (const std::exception& e) {
        return fail(kExitOutput, o.output + ": writing the runs failed (" + std::to_string(res.runsWritten) + " of "
                                     + std::to_string(conv.runs.size()) + " written): " + e.what() + "; the raw records are kept in "
                                     + sinkDir + " (sink files)");
    }
    if (o.keepSinks)
        msg("info", "sink files kept in " + sinkDir);
    else
        removeDir(sinkDir);
    res.runsFailed = incomplete + failed;
    if (outcome.interrupted) {
        res.exitCode = stopSignal.load() == SIGTERM ? 128 + SIGTERM : kExitInterrupted;
        res.error = "interrupted; what was recorded is stored as INCOMPLETE";
    } else if (incomplete > 0) {
        res.exitCode = kExitProgramIncomplete;
        res.error = std::to_string(incomplete) + " run(s) stored INCOMPLETE: the program " + (outcome.timedOut ? "hit --timeout and " : "") + how;
        msg("warning", res.error);
    } else if (failed > 0) {
        res.exitCode = kExitRunFailed;
        std::string why;
        for (const auto& r : conv.runs)
            if (r.info.status == RunStatus::Failed && why.empty()) why = r.info.failureReason;
        res.error = std::to_string(failed) + " run(s) stored FAILED: " + why;
        msg("warning", res.error);
    }
    return res;
}

}  // namespace ws::rec
