// Hand-built sink files for the sink and stall-pass tests (tst_sink, tst_stall_match): what
// libwarpstage-inject.so would write, record by record (warpstage/sink_encode.h).
#pragma once

#include "warpstage/sink_encode.h"

#include <QString>

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace ws::sink;

constexpr std::uint64_t kT0 = 1796000000000000000ull;  // a real CUPTI epoch (ns)

struct Builder {
    std::string out;
    std::uint32_t nextId = 1;
    std::map<std::string, std::uint32_t> ids;
    explicit Builder(std::int64_t pid, std::int64_t ppid = 1, std::vector<std::string> argv = {"./app", "--x"})
    {
        appendFileHeader(out);
        ProcessRec p{};
        p.pid = pid;
        p.ppid = ppid;
        p.realtimeNs = kT0;
        p.cuptiNs = kT0;
        appendProcess(out, p, "/usr/bin/app", "/work", argv);
    }
    std::uint32_t str(const std::string& s)
    {
        auto it = ids.find(s);
        if (it != ids.end()) return it->second;
        ids[s] = nextId;
        appendString(out, nextId, s);
        return nextId++;
    }
    void device(std::uint32_t id, const std::string& name)
    {
        DeviceRec d{};
        d.id = id;
        d.nameId = str(name);
        d.ccMajor = 9;
        d.smCount = 132;
        d.uuid[0] = 0xab;
        d.uuid[15] = 0x01;
        appendPod(out, RecType::Device, d);
        ContextRec c{id + 1, id, 7, 0};
        appendPod(out, RecType::Context, c);
    }
    void kernel(const std::string& name, std::uint64_t start, std::uint64_t dur, std::uint32_t corr, std::uint32_t dev = 0,
                std::uint32_t stream = 7, std::uint32_t graph = 0)
    {
        KernelRec k{};
        k.start = kT0 + start;
        k.end = kT0 + start + dur;
        k.deviceId = dev;
        k.contextId = dev + 1;
        k.streamId = stream;
        k.correlationId = corr;
        k.graphId = graph;
        k.graphNodeId = graph ? 99 : 0;
        k.nameId = str(name);
        k.grid[0] = 132, k.grid[1] = 1, k.grid[2] = 1;
        k.block[0] = 384, k.block[1] = 1, k.block[2] = 1;
        k.cluster[0] = 2, k.cluster[1] = 1, k.cluster[2] = 1;
        k.registers = 168;
        k.dynamicSmem = 200000;
        appendPod(out, RecType::Kernel, k);
    }
    void mem(std::uint8_t kind, std::uint64_t start, std::uint32_t corr, std::uint32_t dev = 0)
    {
        MemRec m{};
        m.start = kT0 + start;
        m.end = kT0 + start + 100;
        m.bytes = 4096;
        m.deviceId = dev;
        m.contextId = dev + 1;
        m.streamId = 7;
        m.correlationId = corr;
        m.kind = kind;
        appendPod(out, RecType::Mem, m);
    }
    void api(const std::string& name, std::uint64_t start, std::uint32_t corr, bool driver = false, std::uint32_t tid = 11)
    {
        ApiRec a{};
        a.start = kT0 + start;
        a.end = kT0 + start + 5;
        a.cbid = driver ? 307 : 211;
        a.correlationId = corr;
        a.threadId = tid;
        a.nameId = str(name);
        a.driver = driver;
        appendPod(out, RecType::Api, a);
    }
    void nvtx(NvtxOp op, std::uint64_t ts, const std::string& name = "", std::uint32_t tid = 11, const std::string& domain = "",
              std::uint64_t rangeId = 0)
    {
        NvtxRec n{};
        n.timestamp = kT0 + ts;
        n.op = std::uint8_t(op);
        n.threadId = tid;
        n.nameId = name.empty() ? 0 : str(name);
        n.domainId = domain.empty() ? 0 : str(domain);
        n.rangeId = rangeId;
        n.color = op == NvtxOp::Push ? 0xff00ff00u : 0;
        appendPod(out, RecType::Nvtx, n);
    }
    void flush(std::uint64_t dropped = 0)
    {
        FlushRec f{kT0, dropped, 10, 0};
        appendPod(out, RecType::Flush, f);
    }
    void end(EndReason r = EndReason::Exit, int sig = 0)
    {
        EndRec e{kT0, kT0, std::uint32_t(r), sig};
        appendPod(out, RecType::End, e);
    }
    // the stall pass's records (RecType 50-59)
    void stallSample(const std::string& kernel, std::uint32_t index, std::uint64_t pc, const std::string& reason, std::uint64_t count,
                     std::uint32_t dev = 0, std::uint64_t crc = 77, const std::string& function = "")
    {
        StallSampleRec x{};
        x.pcOffset = pc;
        x.cubinCrc = crc;
        x.count = count;
        x.nameId = str(kernel);
        x.launchIndex = index;
        x.deviceId = dev;
        x.functionId = str(function.empty() ? kernel : function);
        x.reasonId = str(reason);
        appendPod(out, RecType::StallSample, x);
    }
    void stallLaunch(const std::string& kernel, std::uint32_t index, std::uint32_t dev = 0, std::uint64_t total = 0)
    {
        StallLaunchRec l{};
        l.nameId = str(kernel);
        l.launchIndex = index;
        l.deviceId = dev;
        l.totalSamples = total;
        appendPod(out, RecType::StallLaunch, l);
    }
    void stallCount(const std::string& kernel, std::uint32_t launches, std::uint32_t sampled, std::uint32_t dev = 0)
    {
        StallCountRec c{str(kernel), dev, launches, sampled};
        appendPod(out, RecType::StallCount, c);
    }
    std::string save(const QString& dir, const std::string& name) const
    {
        const std::string path = dir.toStdString() + "/" + name;
        std::ofstream(path, std::ios::binary) << out;
        return path;
    }
};

}  // namespace
