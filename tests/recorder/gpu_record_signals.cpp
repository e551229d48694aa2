// GPU test: warpstage-record interrupted mid-recording (SIGINT, SIGTERM, SIGKILL) after its
// first run was committed. Every committed run must be intact and the file must open.
// Plain executable; exits 77 with "SKIP: ..." without a GPU.
#include "common/gpu_skip.h"
#include "common/gpu_check.h"
#include "warpstage/recorder.h"
#include "warpstage/store.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

// Starts the recorder, waits for its first {"type":"run"} line, sends `sig`, returns the wait status.
int recordAndSignal(const std::string& out, int sig, int& runLinesSeen)
{
    int pipefd[2];
    if (pipe(pipefd) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    std::vector<std::string> args = {WARPSTAGE_RECORD_EXE, "--progress-json", "-o", out, "-r", "all", "-s", "4096x4096x4096"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) return -1;
    close(pipefd[1]);
    FILE* f = fdopen(pipefd[0], "r");
    char line[4096];
    bool sent = false;
    runLinesSeen = 0;
    while (std::fgets(line, sizeof line, f)) {
        if (std::strstr(line, "\"type\":\"run\"")) {
            ++runLinesSeen;
            if (!sent) {
                kill(pid, sig);
                sent = true;
            }
        }
    }
    std::fclose(f);
    int status = 0;
    waitpid(pid, &status, 0);
    posix_spawn_file_actions_destroy(&fa);
    return status;
}

void checkFile(const std::string& path, const char* what)
{
    try {
        const auto store = ws::TraceStore::openReadOnly(path);
        const auto runs = store.runs();
        CHECK(!runs.empty(), "%s: no run survived", what);
        CHECK(runs.size() < 6, "%s: all 6 runs written: the signal came too late to test anything", what);
        for (const auto& r : runs) {
            CHECK(r.status == ws::RunStatus::Complete, "%s: run %s %s", what, r.variant.c_str(), r.failureReason.c_str());
            for (const auto& k : store.kernels(r.id))
                if (k.traced) {
                    const auto t = store.loadKernel(k.id);
                    CHECK(t.intervalCount() > 0, "%s: %s has no intervals", what, r.variant.c_str());
                }
        }
        std::printf("%s: file opens, %zu complete run(s) intact (first: %s)\n", what, runs.size(),
                    runs.empty() ? "-" : runs[0].variant.c_str());
    } catch (const std::exception& e) {
        CHECK(false, "%s: %s", what, e.what());
    }
}
}  // namespace

int main()
{
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    std::string msg;
    if (ws::rec::checkEnvironment(0, msg) != ws::rec::kExitOk)
        return ws::testing::gpuUnavailableExit("gpu_record_signals", msg);
    char tmpl[] = "/tmp/ws-gpu-signals-XXXXXX";
    const std::string dir = mkdtemp(tmpl);
    struct Case {
        int sig;
        const char* name;
    };
    for (const Case c : {Case{SIGINT, "SIGINT"}, Case{SIGTERM, "SIGTERM"}, Case{SIGKILL, "SIGKILL"}}) {
        const std::string out = dir + "/" + c.name + ".wstrace";
        int runLines = 0;
        const int st = recordAndSignal(out, c.sig, runLines);
        if (c.sig == SIGKILL) {
            CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "%s: wait status %d", c.name, st);
        } else {
            const int want = c.sig == SIGINT ? 130 : 143;
            CHECK(WIFEXITED(st) && WEXITSTATUS(st) == want, "%s: exit %d, want %d", c.name,
                  WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), want);
        }
        std::printf("%s: recorder reported %d committed run(s) before stopping\n", c.name, runLines);
        checkFile(out, c.name);
    }
    std::printf("%s: %d failure(s)\n", g_failures ? "FAILED" : "PASSED", g_failures);
    return g_failures ? 1 : 0;
}
