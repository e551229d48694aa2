// fake_cuda_program: stands in for a CUDA program under `warpstage-record -- PROGRAM` on machines without a
// GPU (tests/recorder/tst_program_cli.cpp). It writes what libwarpstage-inject.so would write into
// $WARPSTAGE_SINK (warpstage/sink_encode.h): a process record, a device, kernels, API calls, NVTX; then ends
// the way the mode says. CUDA-free.
//   fake_cuda_program ok | exit N | kill | hang | child | nocuda | nvtxonly
#include "warpstage/sink_encode.h"

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
    const std::string mode = argc > 1 ? argv[1] : "ok";
    if (mode == "nocuda") return 0;
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
