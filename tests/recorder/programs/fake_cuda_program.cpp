// fake_cuda_program: stands in for a CUDA program under `warpstage-record -- PROGRAM` on machines without a
// GPU (tests/recorder/tst_program_cli.cpp). It writes what libwarpstage-inject.so would write into
// $WARPSTAGE_SINK (warpstage/sink_encode.h): a process record, a device, kernels, API calls, NVTX; then ends
// the way the mode says. CUDA-free.
//   fake_cuda_program ok | exit N | kill | hang | child | nocuda | nvtxonly | nondet
// Under the stall pass (WARPSTAGE_STALL_KERNELS set) it writes what the injection library's stall pass would:
// for each of its launches of fake() that the regex and WARPSTAGE_STALL_RANGE select, samples and a
// StallLaunch record; a module that is not a cubin (no source lines); the launch counts at the end. "nondet"
// launches fake() 3 times in the timeline run and 4 times in the stall run.
#include "warpstage/sink_encode.h"

#include <regex>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;
using namespace ws::sink;

namespace {
int g_fd = -1;
void put(const std::string& s)
{
    if (g_fd >= 0 && write(g_fd, s.data(), s.size()) != ssize_t(s.size())) std::exit(90);
}
void writeSink(bool cuda, int kernels)
{
    const char* dir = std::getenv("WARPSTAGE_SINK");
    if (!dir) return;
    const std::string path = std::string(dir) + "/" + std::to_string(getpid()) + "-1.wsink";
    g_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    std::string out;
    appendFileHeader(out);
    ProcessRec p{};
    p.pid = getpid();
    p.ppid = getppid();
    appendProcess(out, p, "/fake/exe", "/fake/cwd", {"fake_cuda_program"});
    appendString(out, 1, "_Z4fakev");
    appendString(out, 2, "cudaLaunchKernel");
    appendString(out, 3, "fake-range");
    appendString(out, 4, "FAKE GPU");
    NvtxRec n{};
    n.timestamp = 1000;
    n.op = std::uint8_t(NvtxOp::Push);
    n.nameId = 3;
    appendPod(out, RecType::Nvtx, n);
    if (cuda) {
        DeviceRec d{};
        d.nameId = 4;
        appendPod(out, RecType::Device, d);
        for (int i = 0; i < kernels; ++i) {
            ApiRec a{};
            a.start = 2000 + 100 * i;
            a.end = a.start + 10;
            a.correlationId = i + 1;
            a.nameId = 2;
            appendPod(out, RecType::Api, a);
            KernelRec k{};
            k.start = 5000 + 100 * i;
            k.end = k.start + 50;
            k.correlationId = i + 1;
            k.nameId = 1;
            appendPod(out, RecType::Kernel, k);
        }
    }
    FlushRec f{};
    appendPod(out, RecType::Flush, f);
    put(out);
}
// The stall run: `launches` launches of fake() (mangled _Z4fakev).
void writeStallSink(int launches)
{
    const char* dir = std::getenv("WARPSTAGE_SINK");
    if (!dir) return;
    const std::string path = std::string(dir) + "/" + std::to_string(getpid()) + "-1.wsink";
    g_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    std::string out;
    appendFileHeader(out);
    ProcessRec p{};
    p.pid = getpid();
    p.ppid = getppid();
    appendProcess(out, p, "/fake/exe", "/fake/cwd", {"fake_cuda_program"});
    appendString(out, 1, "_Z4fakev");
    appendString(out, 5, "smsp__pcsamp_warps_issue_stalled_long_scoreboard");
    appendString(out, 6, "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued");
    const bool match = std::regex_search(std::string("fake()"), std::regex(std::getenv("WARPSTAGE_STALL_KERNELS")));
    long long first = -1, last = -1;
    if (const char* r = std::getenv("WARPSTAGE_STALL_RANGE"); r && std::strchr(r, ':')) {
        first = std::atoll(r);
        last = std::atoll(std::strchr(r, ':') + 1);
    }
    std::uint32_t sampled = 0;
    for (int i = 0; match && i < launches; ++i) {
        if (first >= 0 && (i < first || i > last)) continue;
        ++sampled;
        if (sampled == 1) appendStallCubin(out, 77, "not a cubin");
        for (std::uint32_t reason : {5u, 6u}) {
            StallSampleRec x{};
            x.pcOffset = 0x10 * std::uint64_t(i + 1);
            x.cubinCrc = 77;
            x.count = 100 + std::uint64_t(i);
            x.nameId = 1;
            x.launchIndex = std::uint32_t(i);
            x.functionId = 1;
            x.reasonId = reason;
            appendPod(out, RecType::StallSample, x);
        }
        StallLaunchRec l{};
        l.nameId = 1;
        l.launchIndex = std::uint32_t(i);
        l.totalSamples = 200;
        appendPod(out, RecType::StallLaunch, l);
    }
    if (match) {
        StallCountRec c{};
        c.nameId = 1;
        c.launches = std::uint32_t(launches);
        c.sampled = sampled;
        appendPod(out, RecType::StallCount, c);
    }
    put(out);
}
void end()
{
    std::string out;
    NvtxRec n{};
    n.timestamp = 90000;
    n.op = std::uint8_t(NvtxOp::Pop);
    appendPod(out, RecType::Nvtx, n);
    EndRec e{};
    appendPod(out, RecType::End, e);
    put(out);
}
}  // namespace

int main(int argc, char** argv)
{
    std::string mode = argc > 1 ? argv[1] : "ok";
    if (mode == "nocuda") return 0;
    if (std::getenv("WARPSTAGE_STALL_KERNELS")) {  // the stall pass's run
        writeStallSink(mode == "nondet" ? 4 : 3);
        end();
        return mode == "exit" ? (argc > 2 ? std::atoi(argv[2]) : 1) : 0;
    }
    if (mode == "nondet") mode = "ok";
    if (mode == "nvtxonly") {
        writeSink(false, 0);
        end();
        return 0;
    }
    writeSink(true, 3);
    if (mode == "ok") {
        end();
        return 0;
    }
    if (mode == "exit") {
        end();
        return argc > 2 ? std::atoi(argv[2]) : 1;
    }
    if (mode == "kill") raise(SIGKILL);
    if (mode == "hang") {
        std::printf("hanging\n");
        std::fflush(stdout);
        for (;;) pause();
    }
    if (mode == "child") {
        char* args[] = {argv[0], const_cast<char*>("ok"), nullptr};
        pid_t pid = 0;
        if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, args, environ) != 0) return 4;
        int st = 0;
        waitpid(pid, &st, 0);
        end();
        return 0;
    }
    return 2;
}
